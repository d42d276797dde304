#!/usr/bin/env bash
# Fuzzes the models: random valid experiments made from the parameter
# declarations, each simulated in its own process with a wall-clock timeout
# (tests/fuzz/model_fuzz.cpp says how they are made and judged), for SECONDS
# (default 180) or RUNS experiments (default 5000), whichever comes first.
#   scripts/model_fuzz.sh [SECONDS] [RUNS]
# Environment: MODEL_FUZZ_SEED (default: today's date, YYYYMMDD: the same
# inputs all day, new ones every day), MODEL_FUZZ_JOBS (default: nproc),
# MODEL_FUZZ_TIMEOUT (seconds per simulation, default 60), MODEL_FUZZ_MAX_MESSAGES
# (messages per connection at most, default 50000: shorter runs, more of them
# in a slow sanitizer build), MODEL_FUZZ_BUILD (a
# build directory to use as it is, e.g. build-asan; default: scripts/setup.sh
# builds build/).
# Exit status 0 when every run was ok or refused up front; 1 when a run
# failed: each failing point is kept as <build>/model-fuzz-findings/fail-<seed>-<n>.yaml
# (its first line holds the error), reproduced by <build>/vsocksim run FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-180}"
runs="${2:-5000}"
seed="${MODEL_FUZZ_SEED:-$(date +%Y%m%d)}"
jobs="${MODEL_FUZZ_JOBS:-$(nproc)}"
timeout="${MODEL_FUZZ_TIMEOUT:-60}"
max_messages="${MODEL_FUZZ_MAX_MESSAGES:-50000}"
for v in "$seconds" "$runs" "$seed" "$jobs" "$timeout" "$max_messages"; do
  case "$v" in '' | *[!0-9]*) echo "model_fuzz: SECONDS, RUNS and MODEL_FUZZ_* must be whole numbers, got '$v'" >&2
                               exit 2 ;; esac
done

if [ -n "${MODEL_FUZZ_BUILD:-}" ]; then
  build="$MODEL_FUZZ_BUILD"
  if ! cmake --build "$build" -j "$(nproc)" --target model_fuzz vsocksim > "$build/model-fuzz-build.log" 2>&1; then
    tail -40 "$build/model-fuzz-build.log" >&2
    echo "model_fuzz: build failed (full log: $build/model-fuzz-build.log)" >&2
    exit 1
  fi
else
  build=build
  scripts/setup.sh
fi

findings="$build/model-fuzz-findings"
rm -rf "$findings"
echo "model_fuzz: seed $seed, at most $runs runs or $seconds s, $jobs jobs, $timeout s per simulation," \
     "at most $max_messages messages per connection" >&2
status=0
"$build/model_fuzz" --seed "$seed" --runs "$runs" --time-limit "$seconds" --jobs "$jobs" --timeout "$timeout" \
  --max-messages "$max_messages" --out "$findings" || status=$?
if [ "$status" -eq 1 ]; then
  echo "model_fuzz: FAILED: the failing inputs are in $findings/; reproduce one with" \
       "$build/vsocksim run $findings/fail-$seed-N.yaml, all with $build/model_fuzz --replay $findings/*.yaml" >&2
fi
exit "$status"
