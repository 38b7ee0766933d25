#!/bin/bash
# Mutation testing (mutmut 3) of one package with its own tests, in a copy of the checkout
# outside the working tree (mutmut writes mutants/ beside the code it mutates).
#
#   scripts/mutation.sh PACKAGE [FILE...]     e.g. scripts/mutation.sh gate
#                                                  scripts/mutation.sh evaluate diagnose.py metrics.py
#
# Mutates src/glassrag/PACKAGE/ (or only the FILEs named), runs tests/PACKAGE/ against each
# mutant, and prints the survivors. Needs `.venv/bin/pip install mutmut` (3.8.1 or later under pytest 9;
# 3.8.0 made the first runs of docs/testing.md). Output: $OUT (default /tmp/glassrag-mutation)/NAME/{run.log,results.txt},
# NAME being $MUTATION_NAME or else PACKAGE.
#
# MUTATION_TESTS replaces the test selection (default tests/PACKAGE), as pytest arguments
# split at spaces, e.g. MUTATION_TESTS="tests/evaluate/test_compare.py tests/evaluate/test_runs.py -k compare".
# mutmut 3 runs a mutant against the tests that called the mutated function in-process, so
# tests that run the command line as a subprocess (tests/test_cli.py) can neither reach nor kill a mutant.
set -eu
pkg=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${OUT:-/tmp/glassrag-mutation}/${MUTATION_NAME:-$pkg}
rm -rf "$dir"; mkdir -p "$dir"
# experiments/: src/glassrag/data/experiments links to it
tar -C "$root" -c --exclude=__pycache__ src tests experiments pyproject.toml | tar -x -C "$dir"
only="\"src/glassrag/$pkg/*\""
if [ $# -gt 0 ]; then only=$(printf '"src/glassrag/'"$pkg"'/%s", ' "$@"); only=${only%, }; fi
tests=$(printf '"%s", ' ${MUTATION_TESTS:-tests/$pkg}); tests=${tests%, }
cat >> "$dir/pyproject.toml" <<EOT

[tool.mutmut]
source_paths = ["src/"]
only_mutate = [$only]
also_copy = ["src/glassrag/data"]
pytest_add_cli_args_test_selection = [$tests]
pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-x"]
EOT
cd "$dir"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
nice "$root/.venv/bin/mutmut" run --max-children 2 > run.log 2>&1 || true
"$root/.venv/bin/mutmut" results --all true > results.txt
grep -c ': killed' results.txt | sed 's/^/killed: /'
grep ': survived' results.txt | tee survivors.txt | wc -l | sed 's/^/survived: /'
grep -c ': no tests' results.txt | sed 's/^/no tests: /' || true
