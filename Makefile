# The README's two commands. Both set up from nothing: a venv in .venv, the local
# CPU torch wheel first (never a CUDA build), then the project and its extras.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501

.PHONY: setup setup-dev system-deps run test fuzz bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

setup: $(BIN)/python
	$(BIN)/pip install --quiet torch==2.13.0 -e .

setup-dev: $(BIN)/python system-deps
	$(BIN)/pip install --quiet torch==2.13.0 -e '.[dev]' -e examples/plugin

# Debian's chromium for the browser tests (Playwright cannot download a browser here).
system-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; \
	fi

run: setup
	HF_HUB_OFFLINE=1 $(BIN)/streamlit run app.py --server.port $(PORT) --server.headless true

test: setup-dev
	HF_HUB_OFFLINE=1 $(BIN)/pytest -n 2 --dist loadgroup

fuzz: setup-dev
	HF_HUB_OFFLINE=1 HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -m fuzz -p no:xdist

# The peers come from the bench extra; fpdf2 (dev) typesets the corpus PDF.
bench: setup
	$(BIN)/pip install --quiet torch==2.13.0 -e '.[dev,bench]'
	HF_HUB_OFFLINE=1 $(BIN)/python benchmarks/run.py

lint: setup-dev
	$(BIN)/ruff check core ui pages app.py tests

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
