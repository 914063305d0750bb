# The README's two commands. Both set up from nothing: a venv in .venv, the local
# CPU torch wheel first (never a CUDA build), then the project and its extras.
# An install leaves a stamp in .venv, so it runs again only when pyproject.toml
# (or the example plugin's) is newer than the stamp: a second `make run` starts at once.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501
INSTALL := $(BIN)/pip install --quiet torch==2.13.0

.PHONY: setup setup-dev system-deps run test fuzz bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Order-only on the interpreter: its mtime says nothing about what is installed.
$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(INSTALL) -e .
	touch $@

# The dev install holds everything the app needs, so it stamps both.
$(VENV)/.installed-dev: pyproject.toml examples/plugin/pyproject.toml | $(BIN)/python
	$(INSTALL) -e '.[dev]' -e examples/plugin
	touch $@ $(VENV)/.installed-run

setup: $(VENV)/.installed-run

setup-dev: system-deps $(VENV)/.installed-dev

# Debian's chromium for the browser tests (Playwright cannot download a browser here), and
# Tesseract with its English model for OCR of scanned PDF pages (nothing is downloaded at run time).
SYSTEM_PACKAGES := chromium tesseract-ocr tesseract-ocr-eng

system-deps:
	@MISSING=$$(for p in $(SYSTEM_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$MISSING" ]; then \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$MISSING; \
	fi

run: setup
	HF_HUB_OFFLINE=1 $(BIN)/streamlit run app.py --server.port $(PORT) --server.headless true

test: setup-dev
	HF_HUB_OFFLINE=1 $(BIN)/pytest -n 2 --dist loadgroup

fuzz: setup-dev
	HF_HUB_OFFLINE=1 HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -m fuzz -p no:xdist

# The peers come from the bench extra; fpdf2 (dev) typesets the corpus PDF.
bench: setup
	$(INSTALL) -e '.[dev,bench]'
	HF_HUB_OFFLINE=1 $(BIN)/python benchmarks/run.py

lint: setup-dev
	$(BIN)/ruff check core ui pages app.py tests

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
