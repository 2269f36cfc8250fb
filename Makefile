# Server Configuration Service: every target installs what it needs itself (a fresh machine has Python,
# pip and Debian's packages). The Lambda runtime is Python 3.13; the Makefile looks for it, pyenv's included.
SHELL := /bin/bash
.DEFAULT_GOAL := help
.PHONY: help check-python tools checks checks-beside-pytest pytest-suite venv sam-venv node-tools clients-venv checkov-venv browser api-docs-layer run invoke test lint code-lint template-lint api-lint typecheck format build openapi openapi-check bench fuzz load clean checkov translate smoke

PYTHON313 ?= $(shell for p in python3.13 $$HOME/.pyenv/versions/3.13*/bin/python3.13 /root/.pyenv/versions/3.13*/bin/python3.13 /usr/local/bin/python3.13 /usr/bin/python3.13; do "$$p" -c 'import sys; assert sys.version_info[:2] == (3, 13)' >/dev/null 2>&1 && { echo "$$p"; break; }; done)
VENV := .venv
PY := $(VENV)/bin/python
SAM_VENV := .venv-sam
SAM := $(SAM_VENV)/bin/sam
# sam build looks for `python3.13` on PATH; pyenv's shim may not answer, the interpreter itself does.
SAM_ENV := PATH="$(dir $(PYTHON313)):$$PATH" SAM_CLI_TELEMETRY=0 AWS_DEFAULT_REGION=us-east-1
PIP_QUIET := --quiet --disable-pip-version-check
# uv installs the pinned requirements into each virtualenv: the same packages pip resolves (`pip freeze` compared,
# one to one), in seconds where pip takes minutes on a fresh machine. .venv's are compiled to .pyc as pip does (every
# test process imports them); the tools' virtualenvs are not: their processes compile the few modules they import.
# uv itself comes from the interpreter's pip into .venv-uv, and makes the other virtualenvs: `python -m venv` installs
# pip into each (ensurepip, 5 CPU-s a virtualenv), which nothing here uses.
UV_PIN := uv==0.13.8
UV_VENV := .venv-uv
UV := $(UV_VENV)/bin/uv
UV_VENV_NEW = $(UV) venv --quiet --allow-existing --python $(PYTHON313) $(1)
UV_INSTALL = $(UV) pip install --quiet $(3) --python $(1)/bin/python -r $(2)
# Some machines' pip configuration names local index folders that do not all exist, and pip warns once per
# package and folder ("WARNING: Location 'file:///…/simple/six/' is ignored: it is neither a file nor a
# directory."): a hundred lines that bury what matters. Exactly that warning is dropped; every other line
# of pip's, errors included, goes through, and pip's exit status is kept.
PIP_NOISE := ^WARNING: Location '[^']*' is ignored: it is neither a file nor a directory\.$$
PIP_FILTER = 2> >(grep -vE "$(PIP_NOISE)" >&2)
# Progress lines: every step longer than a few seconds says what it does (pip --quiet alone is a silent minute).
SAY = @printf '==> %s\n'
COUNT_PINS = $$(cat $(1) | grep -cE '^[A-Za-z0-9]')
SECONDS_SINCE = $$(( $$(date +%s) - $(1) ))

# The tests start hundreds of Python processes (the runner's sandboxes, make invoke's, schemathesis's, pytest's
# workers), each importing the layer and the tests: under PYTHONDONTWRITEBYTECODE (which some images set) every one
# compiles them again (a third of a sandbox's cold start) and each pytest worker rewrites every test module's
# asserts anew. The .pyc files go to __pycache__/, which git ignores.
unexport PYTHONDONTWRITEBYTECODE

# make run's port: $PORT, else local/settings.py's DEFAULT_PORT; `make help` prints it where a text says PORT_NOW.
PORT_NOW = $${PORT:-$$(sed -nE 's/^DEFAULT_PORT = ([0-9]+).*/\1/p' local/settings.py)}

help:  ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed "s/PORT_NOW/$(PORT_NOW)/g" | \
	  awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

check-python:
	@if [ -z "$(PYTHON313)" ]; then \
	  echo "Python 3.13 (the Lambda runtime) was not found on PATH or under ~/.pyenv/versions." >&2; \
	  echo "Install it (e.g. 'pyenv install 3.13') or run: make <target> PYTHON313=/path/to/python3.13" >&2; \
	  exit 1; fi

$(UV): | check-python
	$(PYTHON313) -m venv --without-pip $(UV_VENV)
	@$(PYTHON313) -m pip --python $(UV_VENV)/bin/python install $(PIP_QUIET) "$(UV_PIN)" $(PIP_FILTER)

$(VENV)/.installed: requirements.txt shared/requirements.txt | check-python $(UV)
	$(SAY) "creating the virtualenv .venv with $(PYTHON313)"
	$(call UV_VENV_NEW,$(VENV))
	$(SAY) "installing $(call COUNT_PINS,requirements.txt shared/requirements.txt) pinned packages and their dependencies into .venv with uv (seconds)"
	@started=$$(date +%s); $(call UV_INSTALL,$(VENV),requirements.txt,--compile-bytecode) && \
	  printf '==> .venv ready (%s s)\n' "$(call SECONDS_SINCE,$$started)"
	@touch $@

$(SAM_VENV)/.installed: requirements-sam.txt | check-python $(UV)
	$(SAY) "creating the virtualenv .venv-sam for SAM CLI (it pins boto3 and pydantic of its own)"
	$(call UV_VENV_NEW,$(SAM_VENV))
	$(SAY) "installing $(call COUNT_PINS,requirements-sam.txt) pinned package (aws-sam-cli) and its dependencies into .venv-sam with uv (seconds)"
	@started=$$(date +%s); $(call UV_INSTALL,$(SAM_VENV),requirements-sam.txt) && \
	  printf '==> .venv-sam ready (%s s)\n' "$(call SECONDS_SINCE,$$started)"
	@touch $@

# The API tools, pinned in package.json and package-lock.json: Redocly and Spectral (make api-lint),
# openapi-typescript and TypeScript (the generated-clients test), Swagger UI's assets (make run's /docs).
node_modules/.installed: package.json package-lock.json
	$(SAY) "npm ci: the pinned API tools (Redocly, Spectral, openapi-typescript, TypeScript, Swagger UI) into node_modules (about 20 s)"
	@npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# openapi-python-client in a virtualenv of its own: its dependencies (ruff, httpx, typer ...) keep clear of .venv's pins.
CLIENTS_VENV := .venv-clients
$(CLIENTS_VENV)/.installed: requirements-clients.txt | check-python $(UV)
	$(SAY) "creating .venv-clients with openapi-python-client (the generated-clients test)"
	$(call UV_VENV_NEW,$(CLIENTS_VENV))
	@$(call UV_INSTALL,$(CLIENTS_VENV),requirements-clients.txt)
	@touch $@

# checkov in a virtualenv of its own (make checkov): it pins boto3, networkx and many more of its own.
CHECKOV_VENV := .venv-checkov
$(CHECKOV_VENV)/.installed: requirements-checkov.txt | check-python $(UV)
	$(SAY) "creating .venv-checkov with checkov (make checkov)"
	$(call UV_VENV_NEW,$(CHECKOV_VENV))
	@started=$$(date +%s); $(call UV_INSTALL,$(CHECKOV_VENV),requirements-checkov.txt) && \
	  printf '==> .venv-checkov ready (%s s)\n' "$(call SECONDS_SINCE,$$started)"
	@touch $@

venv: $(VENV)/.installed  ## the development virtualenv (.venv, Python 3.13)

node-tools: node_modules/.installed  ## the pinned npm tools (npm ci)

clients-venv: $(CLIENTS_VENV)/.installed  ## openapi-python-client in .venv-clients

checkov-venv: $(CHECKOV_VENV)/.installed  ## checkov in .venv-checkov

# The /docs test drives Debian's Chromium with Playwright (no browser download): installed when missing.
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  printf '==> %s\n' "installing Debian's chromium for the /docs browser test (apt-get; a minute or two)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; fi

sam-venv: $(SAM_VENV)/.installed  ## SAM CLI in its own virtualenv (.venv-sam)

run: venv node-tools  ## the service on http://127.0.0.1:PORT_NOW (set PORT for another) with moto and the chat sandbox
	$(PY) -m local.run

invoke: venv  ## one function once with one event, no Docker: make invoke FN=<operation> [EVENT=events/<operation>.json]
	@$(PY) -m local.invoke $(FN) $(EVENT)

# lint's parts are targets of their own, so that `make -j` runs them side by side (mypy is the longest).
lint: typecheck checkov template-lint api-lint code-lint  ## ruff, mypy, Redocly, Spectral, cfn-lint, sam validate --lint, checkov

code-lint: venv  ## ruff (check and format) and the check that nothing reads a folder beside the repository
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m local.outside_paths  # the repository stands alone: nothing reads a folder beside it

template-lint: venv sam-venv  ## template.yaml: cfn-lint (informational rules too) and sam validate --lint
	@# Informational rules too (-c I): each one is judged in template.yaml (a DeletionPolicy or a retention made explicit).
	$(VENV)/bin/cfn-lint --include-checks I --non-zero-exit-code informational template.yaml
	$(SAY) "sam validate --lint (SAM CLI starts slowly: a few seconds)"
	$(SAM_ENV) $(SAM) validate --lint --template template.yaml

# What CloudFormation receives: SAM's translator (from .venv-sam), offline, parameters at their defaults.
TRANSLATED := .aws-sam/translated.json
translate: sam-venv  ## template.yaml through SAM's translator into .aws-sam/translated.json (offline)
	@mkdir -p .aws-sam
	@$(SAM_ENV) $(SAM_VENV)/bin/python tests/infrastructure/sam_translate.py template.yaml > $(TRANSLATED) \
	  2> >(grep -v "not available in Feature Toggle Config" >&2)

checkov: venv checkov-venv translate  ## checkov on the translated template against tests/infrastructure/checkov_baseline.toml
	$(SAY) "checkov on $(TRANSLATED) (a new finding, or a skip that matches nothing, fails)"
	$(PY) -m tests.infrastructure.checkov_gate $(TRANSLATED) --checkov $(CHECKOV_VENV)/bin/checkov

smoke: venv  ## a read-only check of a deployed stage through its public API: make smoke URL=<ApiBaseUrl> TOKEN=<bearer JWT>
	@if [ -z "$(URL)" ]; then echo "usage: make smoke URL=<the stack's ApiBaseUrl output> TOKEN=<a user's bearer JWT> [BOT_TOKEN=...]" >&2; exit 2; fi
	@$(PY) -m tests.infrastructure.smoke --url "$(URL)" $(if $(TOKEN),--token "$(TOKEN)") $(if $(BOT_TOKEN),--bot-token "$(BOT_TOKEN)")

api-lint: node-tools  ## openapi.json: Redocly (recommended, warnings fail too) and Spectral (spectral:oas)
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true node_modules/.bin/redocly lint --extends recommended-strict openapi.json
	node_modules/.bin/spectral lint --fail-severity warn openapi.json

typecheck: venv  ## mypy: strict on the layer (shared/svcconf); the handlers, local/ and bench/ in full
	$(SAY) "mypy on shared/svcconf, functions/, local/ and bench/ (the first run builds its cache: about 15 s)"
	$(VENV)/bin/mypy shared/svcconf functions local bench

format: venv  ## ruff fix and format
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

# ApiDocsLayer's content (template.yaml, EnableApiDocs): the page's Swagger UI assets and openapi.json.
API_DOCS_LAYER := .aws-sam/api-docs-layer/api-docs
api-docs-layer: node-tools
	@rm -rf $(API_DOCS_LAYER) && mkdir -p $(API_DOCS_LAYER)
	@cp openapi.json node_modules/swagger-ui-dist/swagger-ui.css node_modules/swagger-ui-dist/swagger-ui-bundle.js $(API_DOCS_LAYER)/

build: sam-venv api-docs-layer  ## sam build (no Docker needed: the local Python matches the runtime)
	$(SAY) "sam build: the layer's packages and $$(grep -c 'Type: AWS::Serverless::Function' template.yaml) functions into .aws-sam/build (about 30 s)"
	$(SAM_ENV) $(SAM) build --template template.yaml --build-dir .aws-sam/build

openapi: venv  ## regenerate openapi.json from the handlers
	$(PY) -m local.openapi

openapi-check: venv
	$(PY) -m local.openapi --check

# Every virtualenv and the npm tools, side by side: on a fresh machine they are independent downloads and installs.
tools:
	@$(MAKE) --no-print-directory -j5 venv sam-venv checkov-venv clients-venv node-tools

# What needs no server, side by side on the two cores (mypy alone is half a minute): each target's lines come
# together when it ends.
checks: tools
	@$(MAKE) --no-print-directory -j3 --output-sync=target lint build openapi-check

# make test runs the checks beside pytest at the lowest priority (nice 19) instead of two minutes before it: no test
# reads what they make, and they take the cores only when pytest's processes leave them (its tests wait on the
# platform's pace or the model's). Their lines, kept in .checks.log, come after pytest's; a failure fails make test.
CHECKS_LOG := .checks.log
checks-beside-pytest: tools
	@nice -n 19 $(MAKE) --no-print-directory checks > $(CHECKS_LOG) 2>&1

# pytest's workers: a third of the suite's time is waiting (the sandbox's rate limits at the platform's pace, the
# local model at a real model's), which four workers fill on two cores (three left a quarter of the cores idle in
# the last five minutes); the tests that measure time wait out what a busy machine delays (a runner's cold
# sandboxes) rather than fail on it. Files go to the workers in the collection's order (--no-loadscope-reorder):
# xdist's default sends the files with the most tests first, which left the long single-test files (the runner's,
# the fuzz gate's) for the end, one worker busy and the others idle; in order, tests/e2e's long files go first and
# the many quick files fill the ends.
TEST_WORKERS ?= 4
PYTEST_WORKERS = -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: tools  ## everything CI runs: lint, build, openapi check, all tests, the quick benchmarks, the mutation gate
	@$(MAKE) --no-print-directory -j2 pytest-suite checks-beside-pytest; status=$$?; \
	  printf '==> %s\n' "the checks that ran beside pytest (lint, build, the OpenAPI check):"; cat $(CHECKS_LOG); exit $$status
	@$(MAKE) --no-print-directory mutation-gate

pytest-suite: tools browser
	$(SAY) "pytest: unit, integration, infrastructure and end-to-end tests (the quick bench among them) on $(TEST_WORKERS) workers (ten minutes or so), the checks beside it"
	$(PY) -m pytest $(PYTEST_WORKERS) --durations=20

# The inner loop: unit + integration + e2e is every test (tests/infrastructure's quick ones run in the first two).
.PHONY: unit integration e2e hooks mutation mutation-gate mutation-baseline bench-quick
unit: venv  ## seconds: tests/unit and tests/infrastructure that start no server or process (those fail here)
	$(SAY) "pytest: tests/unit and tests/infrastructure, not those marked starts; one process, no server"
	SVC_TESTS_START_NOTHING=1 $(PY) -m pytest tests/unit tests/infrastructure -m "not starts" -n 0 -q

integration: venv node-tools  ## tests/integration and tests/infrastructure: moto, the sandbox, the local model (minutes)
	$(SAY) "pytest: tests/integration and tests/infrastructure on $(TEST_WORKERS) workers (moto, the chat-platform sandbox and the local model on loopback)"
	$(PY) -m pytest tests/integration tests/infrastructure $(PYTEST_WORKERS)

e2e: venv node-tools clients-venv browser  ## tests/e2e: make run and make invoke started by the tests, the fuzz gate (minutes)
	$(SAY) "pytest: tests/e2e on $(TEST_WORKERS) workers (each file starts the local runner)"
	$(PY) -m pytest tests/e2e $(PYTEST_WORKERS)

hooks: venv  ## install the pre-commit hooks: ruff, mypy and the quick checks before each commit
	$(VENV)/bin/pre-commit install

# mutmut, one run per module with the tests it needs (local/mutation/modules.toml); nice: the machine is shared.
MUTATE := nice -n 19 $(PY) -m local.mutation
mutation: venv  ## mutation testing: all of shared/svcconf/ (long) or MODULES="svcconf/codes.py ...", a report per module
	$(MUTATE) $(MODULES)

mutation-gate: venv  ## the mutation gate of make test: the guarantees' modules whose code or tests changed (FULL=1: all), failing on a survivor not in the baseline
	$(SAY) "mutation gate: $$(sed -n '/^\[gate\]/,/^\[modules\]/p' local/mutation/modules.toml | grep -c '^"svcconf/') modules of the layer; each runs under mutmut only if it or its tests changed since its last passing run (a minute or two each)"
	$(MUTATE) --gate $(if $(FULL),--full)

mutation-baseline: venv  ## rewrite local/mutation/baseline.toml from the gate's survivors (after merges), keeping reasons; SAVED=1: from the last runs
	$(MUTATE) --baseline $(if $(SAVED),--saved) $(MODULES)

bench: venv  ## benchmarks that print figures (all, or BENCH="init_time deploy")
	$(PY) -m bench $(BENCH)

# make test runs it as one of pytest's files (tests/e2e/test_bench_quick.py), beside the others.
bench-quick: venv  ## every benchmark once at a small size (BENCH_QUICK=1): a piece that breaks fails make test
	$(SAY) "bench: every piece once at a small size (BENCH_QUICK=1, under a minute)"
	BENCH_QUICK=1 $(PY) -m bench

FUZZ_CASES ?= 1000
fuzz: venv  ## the fuzz gate of make test, long: FUZZ_CASES (1000) cases per operation, FUZZ_SEED
	FUZZ_CASES=$(FUZZ_CASES) $(PY) -m pytest tests/e2e/test_fuzz_gate.py -p no:randomly -n 0 -q

load: venv  ## 2,000 requests at 50 concurrent through make run: 5xx, 429, backups lost, p50, p99
	$(PY) -m bench load

clean:
	rm -rf $(VENV) $(SAM_VENV) $(CLIENTS_VENV) $(CHECKOV_VENV) node_modules .artifacts .aws-sam .pytest_cache .ruff_cache .mypy_cache
