#!/usr/bin/env bash
# The whole test suite (but the Slurm cluster test) built with
# AddressSanitizer and UndefinedBehaviorSanitizer, in build-asan/ (the
# simulated threads are C++20 coroutines, which ASan follows).
# LeakSanitizer is on: every test process that leaks fails. Simulations run
# by the runner's forked children end with _exit, which LSan does not check.
# Then two minutes of the model fuzzer (scripts/model_fuzz.sh) on the same build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --deps --test-deps
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1"
mkdir -p build-asan
if [ -f build-asan/CMakeCache.txt ] && ! grep -q "^CMAKE_CXX_COMPILER:.*clang++-14" build-asan/CMakeCache.txt; then
  rm -rf build-asan/CMakeCache.txt build-asan/CMakeFiles
fi
if ! { cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_CXX_FLAGS="$flags" \
         -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" &&
       cmake --build build-asan -j "$(nproc)"; } > build-asan/build.log 2>&1; then
  tail -40 build-asan/build.log >&2
  echo "sanitize: build failed (full log: build-asan/build.log)" >&2
  exit 1
fi
cd build-asan
# The stop test sends 10 of its 100 first-second moments here (and its three
# moments inside the run): each is a run and a resume, several times slower
# under the sanitizers.
VSIM_STOP_MOMENTS=10 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j "$(nproc)" -E slurm_job_array
# Then 2 minutes of the model fuzzer (scripts/model_fuzz.sh) on this build:
# a sanitizer report (or a leak) in any simulation is a failure; simulations
# are 5-10 times slower here, hence the longer timeout and shorter runs.
cd ..
MODEL_FUZZ_BUILD=build-asan MODEL_FUZZ_TIMEOUT=120 MODEL_FUZZ_MAX_MESSAGES=5000 ASAN_OPTIONS=detect_leaks=1 \
  UBSAN_OPTIONS=print_stacktrace=1 scripts/model_fuzz.sh 120 1000
