# verigrad: `make demo` runs the main job end to end, `make test` runs the tests.
# Both set up everything they need on a fresh machine (a .venv with the package).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-slow bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: install
	$(BIN)/python -m verigrad.demo

test: install
	$(BIN)/python -m pytest -q -n 2

test-slow: install
	$(BIN)/python -m pytest -q -n 2 -m slow

bench: install
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
