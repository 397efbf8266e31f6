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

.PHONY: help install book test unit notebooks clean

help:
	@echo "make book   build the book into _build/html"
	@echo "make test   run every test (unit, book build, built-HTML and browser checks)"
	@echo "make unit   run only the fast unit tests"
	@echo "make notebooks  rewrite book/*.ipynb from book/src/*.py (Jupytext)"
	@echo "make clean  remove _build (keeps .venv)"

install: $(STAMP) $(NPM_STAMP)

$(STAMP): pyproject.toml requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --disable-pip-version-check --no-deps -e .
	@# Colab ships ipywidgets 7.7: a copy beside the venv lets the tests run the widget code against it too
	$(PY) -m pip install --disable-pip-version-check --quiet --no-deps --upgrade --target $(VENV)/ipywidgets7 \
		"ipywidgets==7.7.5" "ipython_genutils==0.2.0"
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

notebooks: install
	$(PY) -m probdr_lite._notebooks sync

clean:
	rm -rf _build
