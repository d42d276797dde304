#!/usr/bin/env bash
# Fuzzes experiment loading, validation, --set parsing, sweep expansion,
# measurement matching and the estimate (what `vsocksim check` does) with
# libFuzzer under AddressSanitizer (leak checking on) and UBSan, for SECONDS
# (default 60). Builds tests/fuzz/fuzz_experiment.cpp with clang++-14 into
# build-fuzz/ (only the target and the libraries it links).
#   scripts/fuzz.sh [SECONDS]
# Exit status 0 when nothing was found; otherwise 1, with each finding (crash,
# leak, timeout, out-of-memory) kept under build-fuzz/findings/ and its path
# printed. Reproduce one with: build-fuzz/fuzz_experiment FILE
#
# The starting corpus is made afresh each run from experiments/, tests/data/
# (good, bad, cli) and tests/fuzz/seeds/ (inputs with --set lines); the
# dictionary tests/fuzz/experiment.dict lists the key paths, choices and
# metrics of `build/vsocksim describe`: add new parameters' names there (a
# warning names the parameters of docs/parameters.md it lacks).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
case "$seconds" in '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;; esac

scripts/setup.sh --deps --test-deps  # clang-14 and its libFuzzer runtime
mkdir -p build-fuzz
if ! { cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-14 -DVSIM_FUZZ=ON &&
       cmake --build build-fuzz -j "$(nproc)" --target fuzz_experiment; } > build-fuzz/build.log 2>&1; then
  tail -40 build-fuzz/build.log >&2
  echo "fuzz: build failed (full log: build-fuzz/build.log)" >&2
  exit 1
fi

# Parameters of docs/parameters.md (generated from the declarations, kept
# current by a test) that the dictionary lacks: fuzzing still works, less well.
missing=$(grep -o '^| `[a-z_.0-9]*`' docs/parameters.md | tr -d '|` ' |
          while read -r key; do grep -qxF "\"$key\"" tests/fuzz/experiment.dict || echo "$key"; done)
[ -z "$missing" ] || echo "fuzz: warning: tests/fuzz/experiment.dict lacks" $missing >&2

work=$(mktemp -d /tmp/vsim-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/fixture" build-fuzz/findings
# Seeds named after their path (experiments/calibration/hyperv-2019.yaml ->
# experiments_calibration_hyperv-2019.yaml): several files share a name.
while IFS= read -r f; do
  cp "$f" "$work/corpus/${f//\//_}"
done < <(find experiments tests/data/good tests/data/bad tests/data/cli tests/fuzz/seeds -type f \
           \( -name '*.yaml' -o -name '*.txt' \) | sort)
seeds=$(find "$work/corpus" -type f | wc -l)

# Findings are written as build-fuzz/findings/<kind>-<sha1>; the log says
# which ones this run wrote.
log="$work/fuzz.log"
status=0
VSIM_FUZZ_DIR="$work/fixture" \
ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer \
ASAN_OPTIONS="detect_leaks=1" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  build-fuzz/fuzz_experiment -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -dict=tests/fuzz/experiment.dict -print_final_stats=1 -artifact_prefix=build-fuzz/findings/ \
    "$work/corpus" > "$log" 2>&1 || status=$?
cp "$log" build-fuzz/fuzz.log

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
# Inputs libFuzzer keeps (the directory also holds ones it replaced since).
corpus=$(sed -n 's/.* DONE .* corp: \([0-9]*\)\/.*/\1/p' "$log" | tail -1)
[ -n "$corpus" ] || corpus=$(find "$work/corpus" -type f | wc -l)
mapfile -t found < <(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | grep -v '/slow-unit-' || true)
seed=$(sed -n 's/.*Seed: \([0-9]*\).*/\1/p' "$log" | head -1)
if [ "$status" -ne 0 ] || [ ${#found[@]} -gt 0 ]; then
  # The report: from its first line (sanitizer, uncaught exception, UBSan,
  # libFuzzer's own timeout/leak/OOM) on, at most 40 lines.
  first=$(grep -n -m1 -E '^==[0-9]+== ?ERROR|^terminate called|runtime error:|^ERROR: libFuzzer|^ALARM' "$log" |
          cut -d: -f1 || true)
  sed -n "${first:-1},$((${first:-1} + 39))p" "$log" >&2
  echo "fuzz: FAILED (libFuzzer exit $status, seed $seed): ${#found[@]} finding(s) after ${execs:-?} executions" >&2
  for f in "${found[@]}"; do echo "fuzz: finding kept in $f (reproduce: build-fuzz/fuzz_experiment $f)" >&2; done
  echo "fuzz: full log: build-fuzz/fuzz.log" >&2
  exit 1
fi
echo "fuzz: ${execs:-?} executions in ${seconds} s, corpus $corpus files (from $seeds seeds), 0 crashes (seed $seed)"
