# The two commands a newcomer needs (see README.md):
#   make book   build the whole book into _build/html (installs what it needs first)
#   make test   run every test: unit tests, the book build, checks of the built HTML
# A second run reinstalls nothing unless pyproject.toml, requirements.txt, package.json
# or package-lock.json changed.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.probdr-lite-installed
# The JavaScript the site serves itself (MathJax, require.js, the ipywidgets HTML
# manager), at the exact versions of package-lock.json; npm ci removes node_modules
# first, so this stamp inside it is rewritten only by a complete install.
NPM_STAMP := node_modules/.probdr-lite-installed

# Colab's kernel-side widget stack at the versions of Colab's published package list (2026-08-19):
# IPython 7.34.0, ipykernel 6.17.1, ipywidgets 7.7.1, traitlets 5.7.1, jupyter_client 7.4.9, and the
# pure-Python packages they need at Colab's versions. Installed without dependencies into a folder that
# tests/unit/test_ipywidgets7.py puts first on PYTHONPATH, so the widget tests run under them together
# (with the venv's numpy, matplotlib and torch, on the venv's Python rather than Colab's 3.13).
COLAB_WIDGETS := $(VENV)/colab-widgets
COLAB_PINS := ipython==7.34.0 ipykernel==6.17.1 ipywidgets==7.7.1 traitlets==5.7.1 jupyter_client==7.4.9 \
	ipython_genutils==0.2.0 backcall==0.2.0 pickleshare==0.7.5 decorator==4.4.2 entrypoints==0.4 nest_asyncio==1.6.0

.PHONY: help install book test unit clean

help:
	@echo "make book   build the book into _build/html"
	@echo "make test   run every test (unit, book build, built-HTML and browser checks)"
	@echo "make unit   run only the fast unit tests"
	@echo "make clean  remove _build (keeps .venv)"

install: $(STAMP) $(NPM_STAMP) $(COLAB_WIDGETS)/.installed

$(STAMP): pyproject.toml requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --disable-pip-version-check --no-deps -e .
	@touch $@

$(COLAB_WIDGETS)/.installed: Makefile | $(STAMP)
	rm -rf $(COLAB_WIDGETS)
	$(PY) -m pip install --disable-pip-version-check --quiet --no-deps --no-compile --target $(COLAB_WIDGETS) $(COLAB_PINS)
	@touch $@

$(NPM_STAMP): package.json package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "npm is needed to install the book's JavaScript (apt-get install npm)"; exit 1; }
	npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

book: install
	$(PY) tools/build_book.py

test: install
	$(PY) -m pytest

unit: install
	$(PY) -m pytest tests/unit

clean:
	rm -rf _build
