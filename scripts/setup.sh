#!/usr/bin/env bash
# Installs vsocksim's build dependencies from Debian 12's packages (idempotent,
# quiet when everything is already there), then configures and builds.
#   scripts/setup.sh               install + Release build into build/
#   scripts/setup.sh --deps        install only
#   scripts/setup.sh --test-deps   also install what the tests need beyond the
#                                  build (slurm-wlm and munge for the Slurm test,
#                                  clang-14's libFuzzer/sanitizer runtime and
#                                  llvm-14's symbolizer for scripts/fuzz.sh and
#                                  scripts/sanitize.sh, clang-format-14 for
#                                  scripts/format.sh --check)
set -euo pipefail
cd "$(dirname "$0")/.."

# clang-14 compiles the project: g++ 12 miscompiles some of its coroutines
# (see CMakeLists.txt); g++ stays for the C++ standard library it provides.
PKGS=(clang-14 g++ cmake make pkg-config libsimgrid-dev libboost-graph-dev libyaml-cpp-dev
      catch2 libcli11-dev libfmt-dev nlohmann-json3-dev libssl-dev libnlopt-cxx-dev libpagmo-dev libtbb-dev
      libeigen3-dev gnuplot-nox git)

deps_only=0
for arg in "$@"; do
  case "$arg" in
    --deps) deps_only=1 ;;
    --test-deps) PKGS+=(slurm-wlm munge libclang-rt-14-dev llvm-14 clang-format-14) ;;
    *) echo "setup: unknown option $arg (allowed: --deps, --test-deps)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "$deps_only" = 1 ] && exit 0

mkdir -p build
# A build directory configured with another compiler is configured afresh.
if [ -f build/CMakeCache.txt ] && ! grep -q "^CMAKE_CXX_COMPILER:.*clang++-14" build/CMakeCache.txt; then
  rm -rf build/CMakeCache.txt build/CMakeFiles
fi
if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" -DCMAKE_CXX_COMPILER=clang++-14 &&
       cmake --build build -j "$(nproc)"; } > build/setup.log 2>&1; then
  tail -40 build/setup.log >&2
  echo "setup: build failed (full log: build/setup.log)" >&2
  exit 1
fi
