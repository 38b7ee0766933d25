# The two commands of the README's quick start:
#   make demo   sets up .venv, installs glassrag, builds the demo index and asks demo questions
#   make test   sets up .venv with the test extras and runs the whole test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

.PHONY: install demo test bench clean
install: $(STAMP)

demo: $(STAMP)
	$(BIN)/glassrag demo

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/scifact_bm25.py

clean:
	rm -rf $(VENV) .glassrag .pytest_cache
