# The two commands a newcomer needs (see README.md):
#   make book   build the whole book into _build/html (installs what it needs first)
#   make test   run every test: unit tests, the book build, checks of the built HTML
# and, for readers and maintainers:
#   make lab    open the chapters in JupyterLab (with MyST rendered) on 127.0.0.1
#   make lock   re-resolve requirements-lock.txt from pyproject.toml's ranges
#   make colab  run every reader notebook in a replica of Colab's runtime (part of make test)
# A second run reinstalls nothing unless pyproject.toml, requirements-lock.txt, package.json
# or package-lock.json changed.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.probdr-lite-installed
# The JavaScript the site serves itself (MathJax, require.js, the ipywidgets HTML
# manager) and the tools that build and check it (MathJax for Node, axe-core, Lighthouse),
# at the exact versions of package-lock.json; npm ci removes node_modules
# first, so this stamp inside it is rewritten only by a complete install.
NPM_STAMP := node_modules/.probdr-lite-installed
# The exact versions every install uses (the book's numbers depend on them); `make lock`
# writes it from the ranges in pyproject.toml, for Linux and macOS, Python 3.10 and later.
LOCK   := requirements-lock.txt
# make install TORCH=cpu: PyTorch's CPU-only wheels instead of PyPI's CUDA build on Linux
# (about 1.6 GB of .venv instead of 6.3 GB; the CUDA libraries of the lock are left out).
TORCH  ?= default
CPU_INDEX := https://download.pytorch.org/whl/cpu
UV_VERSION := 0.13.9
UV     ?= $(VENV)/bin/uv

# Colab's kernel-side widget stack at the versions of Colab's published package list (2026-08-19):
# IPython 7.34.0, ipykernel 6.17.1, ipywidgets 7.7.1, traitlets 5.7.1, jupyter_client 7.4.9, and the
# pure-Python packages they need at Colab's versions. Installed without dependencies into a folder that
# tests/unit/test_ipywidgets7.py puts first on PYTHONPATH, so the widget tests run under them together
# (with the venv's numpy, matplotlib and torch, on the venv's Python rather than Colab's 3.13).
COLAB_WIDGETS := $(VENV)/colab-widgets
COLAB_PINS := ipython==7.34.0 ipykernel==6.17.1 ipywidgets==7.7.1 traitlets==5.7.1 jupyter_client==7.4.9 \
	ipython_genutils==0.2.0 backcall==0.2.0 pickleshare==0.7.5 decorator==4.4.2 entrypoints==0.4 nest_asyncio==1.6.0

# The replica of Colab's runtime that tests/colab runs the reader notebooks in: Python 3.13 with Colab's
# versions (tools/colab_replica.py says what and why). Built once per machine, outside the checkout
# (~/.cache/probdr-lite/, 5 GiB), and rebuilt only when its inputs change, so a fresh clone reuses it.
# Python 3.13: $PROBDR_COLAB_PYTHON, else pyenv's 3.13.0, else python3.13 on PATH (.ci/run makes sure of one).
COLAB_REPLICA := $(PY) tools/colab_replica.py

# The unit suite a second time under another CPU vector path and thread count (.ci/run runs it after make test):
# PyTorch's portable kernels (ATEN_CPU_CAPABILITY=default), MKL's reproducible-anywhere path (MKL_CBWR=COMPATIBLE)
# and one thread. No test's outcome may depend on the CPU's instruction set, the BLAS kernels or the thread count.
# OPENBLAS_CORETYPE stays as the machine sets it (some processors need it).
OTHER_CPU := ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

.PHONY: help install book test unit unit-other-cpu lab lock notebooks clean colab colab-replica bench

help:
	@echo "make book   build the book into _build/html"
	@echo "make test   run every test (unit, book build, built-HTML and browser checks)"
	@echo "make unit   run only the fast unit tests"
	@echo "make unit-other-cpu  the unit tests on PyTorch's portable kernels, MKL's compatible path, one thread"
	@echo "make lab    open the chapters in JupyterLab on 127.0.0.1 (MyST rendered)"
	@echo "make lock   refresh requirements-lock.txt from pyproject.toml, then run make test"
	@echo "make colab  run the reader notebooks in a replica of Colab's runtime"
	@echo "make notebooks  rewrite book/*.ipynb and the reader notebooks (notebooks/) from book/src/*.py"
	@echo "make bench  run the benchmarks (speed and memory against their targets, Lighthouse per page; printed, nothing asserted)"
	@echo "make clean  remove _build (keeps .venv)"

install: $(STAMP) $(NPM_STAMP) $(COLAB_WIDGETS)/.installed

$(STAMP): pyproject.toml $(LOCK)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
ifeq ($(TORCH),cpu)
	grep -vE '^(nvidia-|cuda-|triton)' $(LOCK) > $(VENV)/lock-cpu.txt
	$(PY) -m pip install --disable-pip-version-check --extra-index-url $(CPU_INDEX) -r $(VENV)/lock-cpu.txt
else
	$(PY) -m pip install --disable-pip-version-check -r $(LOCK)
endif
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

# Every test, on every core: pytest-xdist's workers take whole modules (tests/conftest.py orders them, longest
# first). The book is built once for all of them, or not at all when make book built the same checkout
# (tests/book/conftest.py); PROBDR_FRESH_BUILD=1 builds it again anyway.
TEST_WORKERS ?= auto
test: install colab-replica
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

# The benchmarks: each prints its measurements with their ratios to the targets, from one run (nothing asserted).
# bench_lighthouse.py: Lighthouse's mobile audit of every page, this build beside the site before issue 44 (built once
# into ~/.cache/probdr-lite/ when it is not there; README's "Speed").
bench: install
	$(PY) benchmarks/bench_eigenmaps.py
	$(PY) benchmarks/bench_attention.py
	$(PY) benchmarks/bench_panel.py
	$(PY) benchmarks/bench_browser.py
	$(PY) benchmarks/bench_lighthouse.py

colab-replica: install
	nice -n 5 $(COLAB_REPLICA) build --optional

colab: install
	nice -n 5 $(COLAB_REPLICA) build
	$(PY) -m pytest tests/colab -s

unit: install
	$(PY) -m pytest tests/unit -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

unit-other-cpu: install
	@echo "this machine's vector path: $$($(PY) -c 'import torch; print(torch.backends.cpu.get_cpu_capability())');" \
		"now: $$(env $(OTHER_CPU) $(PY) -c 'import torch; print(torch.backends.cpu.get_cpu_capability())')," \
		"one thread"
	env $(OTHER_CPU) $(PY) -m pytest tests/unit -p no:cacheprovider -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

# JupyterLab and jupyterlab-myst come with make install (the tests drive JupyterLab too).
# Loopback only; Jupyter prints the URL with its token (and refuses root unless told).
lab: install
	$(VENV)/bin/jupyter lab --ip=127.0.0.1 --notebook-dir=book $$([ "$$(id -u)" -eq 0 ] && echo --allow-root)

# Re-resolve the lock from pyproject.toml's ranges (all extras), for every platform at once
# (uv's universal mode: environment markers choose per Python version and OS). pip's own
# site-wide constraint, where a machine sets one, is honoured so the lock names only releases
# pip there will install; its path is not written into the lock. Then run make test and
# commit both files: a newer dependency shows up as a diff and must pass the whole book.
lock:
	@test -x $(UV) || { test -x $(PY) || $(PYTHON) -m venv $(VENV); $(PY) -m pip install --quiet "uv==$(UV_VERSION)"; }
	$(UV) pip compile pyproject.toml --all-extras --universal --python-version 3.10 --quiet \
		$$($(PYTHON) -m pip config list 2>/dev/null | sed -n "s/^global\.constraint='\(.*\)'$$/--constraint \1/p") \
		--custom-compile-command "make lock" -o $(LOCK).new
	sed -E 's|-c /[^ ]*|-c (the pip constraint of the machine that locked)|' $(LOCK).new > $(LOCK)
	rm $(LOCK).new

# the chapters' notebooks (book/*.ipynb) and the reader notebooks (notebooks/), from book/src/*.py
notebooks: install
	$(PY) tools/notebooks.py sync

clean:
	rm -rf _build
