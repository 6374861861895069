# The book's entry points. `make serve` and `make test` are the README's two commands: each sets up
# what it needs (a virtualenv in .venv, npm packages in node_modules), idempotently, from a fresh clone.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000

.PHONY: setup build serve test test-fast dist bench clean

setup: $(VENV)/.installed node_modules/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

node_modules/.installed: package.json $(wildcard package-lock.json)
	if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
	touch $@

build: setup
	$(PY) build.py

serve: setup
	$(PY) -m builder.devserve --port $(PORT)

# The browser check comes first, with the system's Python alone: a machine without Chromium is
# told what to install within seconds, before anything is set up or built.
test:
	$(PYTHON) -m builder.browser
	$(MAKE) --no-print-directory build
	$(PY) -m pytest tests --durations=25

test-fast: setup
	$(PY) -m pytest tests --ignore=tests/browser

dist: build
	$(PY) -m builder.dist

bench: build
	$(PY) bench/run.py

clean:
	rm -rf _site dist
