"""What every layer may use: settings, the error vocabulary, metrics, token usage, logging and GC tuning."""
