#!/usr/bin/env bash
# clang-format (14, .clang-format at the top: 120 columns) over every C++
# source git tracks.
#   scripts/format.sh           reformat in place
#   scripts/format.sh --check   change nothing; list the files clang-format
#                               would change and exit 1 if there are any (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
fmt="$(command -v clang-format-14 || command -v clang-format || true)"
[ -n "$fmt" ] || { echo "format: clang-format not found (scripts/setup.sh --test-deps installs it)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    "$fmt" --dry-run -Werror "$f" >/dev/null 2>&1 || { echo "format: $f is not as clang-format writes it" >&2; bad=1; }
  done
  [ "$bad" = 0 ] && echo "format: ${#files[@]} C++ files as clang-format writes them"
  exit "$bad"
fi
"$fmt" -i "${files[@]}"
