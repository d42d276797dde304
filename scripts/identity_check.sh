#!/usr/bin/env bash
# Byte-identity check for changes that must not change behaviour: runs every
# shipped experiment (experiments/*.yaml, calibration/, testset/,
# validation/) with --format json, plus `validate --markdown`, `validate
# experiments/testset --markdown` and `describe --markdown`, and writes
# each output to OUTDIR with the manifest's fields that must differ between
# two builds blanked: wall (started_utc, seconds), git_commit and
# command_line (the binary's path). Compare two such directories with
# `diff -r`.
#   scripts/identity_check.sh OUTDIR [VSOCKSIM]
set -euo pipefail
out="${1:?usage: identity_check.sh OUTDIR [VSOCKSIM]}"
bin="${2:-build/vsocksim}"
cd "$(dirname "$0")/.."
mkdir -p "$out"
# Done as text: the JSON is compared as printed, not as parsed.
strip_wall() {
  awk '/^    "wall": \{/ {print; skip=1; next} skip && /^ *\}/ {skip=0} !skip {print}' |
    sed -E 's/^(    "(git_commit|command_line)": ).*/\1(blanked)/'
}
for f in experiments/*.yaml experiments/calibration/*.yaml experiments/testset/*.yaml experiments/validation/*.yaml; do
  name="$(echo "${f#experiments/}" | tr / _)"
  if grep -q '^search:' "$f"; then # a search: `search` runs it, its front as JSON
    "$bin" search "$f" --format json -q --jobs "$(nproc)" | strip_wall > "$out/${name%.yaml}.json"
    echo "$f" >&2
    continue
  fi
  "$bin" run "$f" --format json -q --jobs "$(nproc)" --allow-large | strip_wall > "$out/${name%.yaml}.json"
  echo "$f" >&2
done
"$bin" validate --markdown -q --jobs "$(nproc)" > "$out/validate.md"
"$bin" validate experiments/testset --markdown -q --jobs "$(nproc)" > "$out/validate-testset.md"
"$bin" describe --markdown > "$out/describe.md"
