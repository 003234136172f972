# The two commands of the quick start: `make serve` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: serve test install install-test migrate bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(TEST_STAMP)

install: $(STAMP)
install-test: $(TEST_STAMP)

serve: $(STAMP)
	$(BIN)/chatmem serve

migrate: $(STAMP)
	$(BIN)/chatmem migrate

test: $(TEST_STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/tree.py

clean:
	rm -rf $(VENV) data .pytest_cache
