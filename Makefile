# Two entry points for a fresh machine: `make demo` and `make test`. Both create .venv first.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
# CMAKE_ARGS set in the environment (a GPU build, say) replaces the portable CPU build.
LLAMA_CMAKE_ARGS := $(or $(CMAKE_ARGS),-DGGML_NATIVE=OFF)
LLAMA_REQUIREMENT := $(shell grep -o '"llama-cpp-python[^"]*"' pyproject.toml)
LLAMA_WHEELS := $(HOME)/.cache/quire/llama-wheels/$(shell printf '%s %s' '$(LLAMA_CMAKE_ARGS)' '$(LLAMA_REQUIREMENT)' | sha1sum | cut -c1-12)

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	# torch first and pinned: left to the resolver, a bare torch pulls a multi-GB CUDA build.
	$(VENV)/bin/python -m pip install --quiet "torch==2.13.0"
	# llama.cpp built for any x86-64 rather than this CPU alone: built natively on a CPU with AMX,
	# llama-cpp-python 0.3.36 crashed in llama_decode on any prompt of more than a few tokens. The wheel
	# is kept in a folder named after its build flags, never taken from pip's cache, which keys wheels
	# by version alone and would hand back a build made with other flags.
	test -n "$$(ls $(LLAMA_WHEELS)/llama_cpp_python-*.whl 2>/dev/null)" || \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(VENV)/bin/python -m pip wheel --quiet --no-cache-dir --no-deps \
		--wheel-dir $(LLAMA_WHEELS) $(LLAMA_REQUIREMENT)
	$(VENV)/bin/python -m pip install --quiet $(LLAMA_WHEELS)/llama_cpp_python-*.whl
	$(VENV)/bin/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

.PHONY: setup demo app test test-fast lint bench package
setup: $(STAMP)

demo: $(STAMP)  ## ingest the bundled papers headless, show what was extracted, answer a question
	$(VENV)/bin/quire --home "$${QUIRE_HOME:-$$HOME/.quire-demo}" demo

app: $(STAMP)  ## open the desktop window
	$(VENV)/bin/quire-desktop

test: $(STAMP)  ## ruff, mypy, the import contracts (pyproject.toml), then the whole test suite (UI tests offscreen)
	$(VENV)/bin/ruff check engine ui desktop tests benchmarks scripts
	$(VENV)/bin/mypy engine ui desktop
	$(VENV)/bin/lint-imports
	QT_QPA_PLATFORM=offscreen $(VENV)/bin/python -m pytest -q

test-fast: $(STAMP)  ## the quick loop while working: lint, types, contracts, every test not marked slow (~5 min)
	$(VENV)/bin/ruff check engine ui desktop tests benchmarks scripts
	$(VENV)/bin/mypy engine ui desktop
	$(VENV)/bin/lint-imports
	QT_QPA_PLATFORM=offscreen $(VENV)/bin/python -m pytest -q -m "not slow"

bench: $(STAMP)
	$(VENV)/bin/python benchmarks/ingest.py

package: $(STAMP)  ## the standalone bundle (dist/quire-desktop/, self-tested) and the Debian package built from it; prints their sizes
	packaging/build_linux.sh
	packaging/build_deb.sh
