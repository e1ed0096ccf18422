"""`lightrag-service`: the command-line client of a running service (HTTP), plus `serve` and `worker`."""
