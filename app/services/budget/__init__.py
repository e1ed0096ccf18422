"""The fleet's provider budget: requests and tokens per minute and calls at once per provider, shared by
every process through PostgreSQL (gate.py: one provider in this process; fleet.py: all of them)."""
