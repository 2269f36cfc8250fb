# Server Configuration Service: every target installs what it needs itself (a fresh machine has Python,
# pip and Debian's packages). The Lambda runtime is Python 3.13; the Makefile looks for it, pyenv's included.
SHELL := /bin/bash
.DEFAULT_GOAL := help
.PHONY: help check-python venv sam-venv run test lint format build openapi openapi-check bench fuzz load clean

PYTHON313 ?= $(shell for p in python3.13 $$HOME/.pyenv/versions/3.13*/bin/python3.13 /root/.pyenv/versions/3.13*/bin/python3.13 /usr/local/bin/python3.13 /usr/bin/python3.13; do "$$p" -c 'import sys; assert sys.version_info[:2] == (3, 13)' >/dev/null 2>&1 && { echo "$$p"; break; }; done)
VENV := .venv
PY := $(VENV)/bin/python
SAM_VENV := .venv-sam
SAM := $(SAM_VENV)/bin/sam
# sam build looks for `python3.13` on PATH; pyenv's shim may not answer, the interpreter itself does.
SAM_ENV := PATH="$(dir $(PYTHON313)):$$PATH" SAM_CLI_TELEMETRY=0 AWS_DEFAULT_REGION=us-east-1
PIP_QUIET := --quiet --disable-pip-version-check

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

check-python:
	@if [ -z "$(PYTHON313)" ]; then \
	  echo "Python 3.13 (the Lambda runtime) was not found on PATH or under ~/.pyenv/versions." >&2; \
	  echo "Install it (e.g. 'pyenv install 3.13') or run: make <target> PYTHON313=/path/to/python3.13" >&2; \
	  exit 1; fi

$(VENV)/.installed: requirements.txt shared/requirements.txt | check-python
	$(PYTHON313) -m venv $(VENV)
	$(PY) -m pip install $(PIP_QUIET) -r requirements.txt
	touch $@

$(SAM_VENV)/.installed: requirements-sam.txt | check-python
	$(PYTHON313) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install $(PIP_QUIET) -r requirements-sam.txt
	touch $@

venv: $(VENV)/.installed  ## the development virtualenv (.venv, Python 3.13)

sam-venv: $(SAM_VENV)/.installed  ## SAM CLI in its own virtualenv (.venv-sam)

run: venv  ## the service on http://127.0.0.1:$${PORT:-3000} with moto and the chat-platform sandbox
	$(PY) -m local.run

lint: venv sam-venv  ## ruff, cfn-lint and sam validate --lint
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m local.outside_paths  # the repository stands alone: nothing reads a folder beside it
	$(VENV)/bin/cfn-lint template.yaml
	$(SAM_ENV) $(SAM) validate --lint --template template.yaml

format: venv  ## ruff fix and format
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

build: sam-venv  ## sam build (no Docker needed: the local Python matches the runtime)
	$(SAM_ENV) $(SAM) build --template template.yaml --build-dir .aws-sam/build

openapi: venv  ## regenerate openapi.json from the handlers
	$(PY) -m local.openapi

openapi-check: venv
	$(PY) -m local.openapi --check

test: lint build openapi-check  ## everything CI runs: lint, build, openapi check, all tests
	$(PY) -m pytest -n 2 --dist loadfile

bench: venv  ## benchmarks that print figures
	$(PY) -m bench

FUZZ_CASES ?= 1000
fuzz: venv  ## the fuzz gate of make test, long: FUZZ_CASES (1000) cases per operation, FUZZ_SEED
	FUZZ_CASES=$(FUZZ_CASES) $(PY) -m pytest tests/e2e/test_fuzz_gate.py -p no:randomly -n 0 -q

load: venv  ## 2,000 requests at 50 concurrent through make run: 5xx, 429, backups lost, p50, p99
	$(PY) -m bench load

clean:
	rm -rf $(VENV) $(SAM_VENV) .aws-sam .pytest_cache .ruff_cache
