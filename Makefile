# Two commands on a fresh machine with Python 3.11: `make run` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint openapi worker bench bench-quick clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)  ## install and serve the API on :9621 (embedded PostgreSQL unless DATABASE_URL is set)
	$(PY) -m app

worker: $(STAMP)  ## a standalone pipeline worker process (no HTTP)
	$(PY) -m app.worker

test: $(STAMP)  ## install and run lint + the test suite
	$(PY) -m ruff check .
	$(PY) -m pytest

lint: $(STAMP)
	$(PY) -m ruff check .

openapi: $(STAMP)  ## regenerate openapi.yaml from the app
	$(PY) -m app.openapi_export

bench: $(STAMP)  ## every benchmark of issue 8 (~15 min on 2 cores; `make bench-quick` for a smaller run)
	$(PY) -m bench.run_all

bench-quick: $(STAMP)
	$(PY) -m bench.run_all --quick

clean:
	rm -rf $(VENV)
