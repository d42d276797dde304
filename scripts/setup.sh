#!/usr/bin/env bash
# Installs vsocksim's build dependencies from Debian 12's packages (idempotent,
# quiet when everything is already there), then configures and builds.
#   scripts/setup.sh               install + Release build into build/
#   scripts/setup.sh --deps        install only
#   scripts/setup.sh --test-deps   also install what the tests need beyond the
#                                  build (slurm-wlm and munge for the Slurm test,
#                                  clang-14, its libFuzzer/sanitizer runtime and
#                                  llvm-14's symbolizer for scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(g++ cmake make pkg-config libsimgrid-dev libboost-graph-dev libyaml-cpp-dev
      catch2 libcli11-dev libfmt-dev nlohmann-json3-dev libssl-dev gnuplot-nox git)

deps_only=0
for arg in "$@"; do
  case "$arg" in
    --deps) deps_only=1 ;;
    --test-deps) PKGS+=(slurm-wlm munge clang-14 libclang-rt-14-dev llvm-14) ;;
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
if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" &&
       cmake --build build -j "$(nproc)"; } > build/setup.log 2>&1; then
  tail -40 build/setup.log >&2
  echo "setup: build failed (full log: build/setup.log)" >&2
  exit 1
fi
