#!/usr/bin/env bash
# Installs the dependencies if needed, builds (Release) and runs the whole
# test suite through ctest, one process per test case.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test-deps
cd build
ctest --output-on-failure -j "$(nproc)"
