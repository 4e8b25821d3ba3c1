# Two commands set everything up on a fresh machine (Python 3.10+ with venv):
#   make demo   creates .venv, installs simhash-cli, runs `simhash dedupe sample_corpus/`
#   make test   the same install with the dev tools, then ruff, mypy and the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint unit fuzz bench bench-recall bench-seeds bench-whole bench-index bench-dask bench-versions clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,distributed,report,zstd]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/simhash dedupe sample_corpus/

lint: $(STAMP)
	$(BIN)/ruff check simhash_cli tests bench fuzz
	$(BIN)/ruff format --check simhash_cli tests bench fuzz
	$(BIN)/python -m mypy

# pytest exits 5 when it collects no test: that is our failure, never a pass. A worker per
# core (pytest-xdist; TEST_JOBS=0 runs in this process).
TEST_JOBS ?= auto
unit: $(STAMP)
	@$(BIN)/python -m pytest -n $(TEST_JOBS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi; \
	exit $$status

test: lint unit

# Not part of `make test`: arbitrary input against the readers and the tokenizer, at length
# (FUZZ_EXAMPLES=100000 make fuzz for a long run).
fuzz: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider fuzz

# Not part of `make test`: speed is measured side by side with peers, never in a timed test.
BENCH_SIMHASH := bench/.venv-simhash
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[bench]'
	test -x $(BENCH_SIMHASH)/bin/python || $(PYTHON) -m venv $(BENCH_SIMHASH)
	$(BENCH_SIMHASH)/bin/python -m pip install --quiet --disable-pip-version-check simhash
	$(BIN)/python bench/run.py --simhash-python $(BENCH_SIMHASH)/bin/python $(BENCH_ARGS)
	$(BIN)/python bench/index_bench.py
	$(BIN)/python bench/dask_bench.py
	$(BIN)/python bench/recall.py --sizes 100000 1000000
	$(BIN)/python bench/matrix.py
	$(BIN)/python bench/seeds.py
	$(BIN)/python bench/whole.py --sizes 100000 --big 1000000

# Recall at scale against MinHash peers, 100,000 documents (a few minutes; SIZES="100000
# 1000000" for both), then on every kind of text of bench/kinds.py against all-pairs truth
# (about 15 minutes the first time, which renders the manual pages): docs/benchmarks-recall.md.
SIZES ?= 100000
bench-recall: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[bench]'
	$(BIN)/python bench/recall.py --sizes $(SIZES)
	$(BIN)/python bench/matrix.py

# Recall at each of ten seeds on corpora with large families, and what clusters hold (about a
# minute): docs/benchmarks-seeds.md.
bench-seeds: $(STAMP)
	$(BIN)/python bench/seeds.py

# Fingerprinting as whole processes against simhash-pybind and the regex floor, at 100,000 and
# 1,000,000 documents (about 15 minutes): the "Fingerprinting, whole processes" section of
# docs/benchmarks.md.
bench-whole: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[bench]'
	$(BIN)/python bench/whole.py --sizes 100000 --big 1000000

# The persistent index alone (about a minute): docs/benchmarks-index.md.
bench-index: $(STAMP)
	$(BIN)/python bench/index_bench.py

# The dask engine against the local one (about 15 minutes, 1,000,000 prose records among
# them, made once into bench/.cache): docs/benchmarks-dask.md.
bench-dask: $(STAMP)
	$(BIN)/python bench/dask_bench.py

# Whole commands of an earlier commit against this tree (BASE=REV): same bytes, same speed?
bench-versions: $(STAMP)
	$(BIN)/python bench/versions.py --base $(BASE) $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(BENCH_SIMHASH) .mypy_cache .pytest_cache .hypothesis build *.egg-info
