# The two commands a newcomer needs (see README.md):
#   make book   build the whole book into _build/html (installs what it needs first)
#   make test   run every test: unit tests, the book build, checks of the built HTML
# A second run reinstalls nothing unless pyproject.toml or requirements.txt changed.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.probdr-lite-installed

.PHONY: help install book test unit clean

help:
	@echo "make book   build the book into _build/html"
	@echo "make test   run every test (unit, book build, built-HTML and browser checks)"
	@echo "make unit   run only the fast unit tests"
	@echo "make clean  remove _build (keeps .venv)"

install: $(STAMP)

$(STAMP): pyproject.toml requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --disable-pip-version-check --no-deps -e .
	@touch $@

book: install
	$(PY) tools/build_book.py

test: install
	$(PY) -m pytest

unit: install
	$(PY) -m pytest tests/unit

clean:
	rm -rf _build
