#!/usr/bin/env bash
# The model fuzzer can fail, and what it saves replays (ctest model_fuzz_can_fail):
# - an injected std::logic_error in every simulation: exit 1, one replayable
#   fail-<seed>-<n>.yaml per run, with the error in its first comment line;
#   each saved file is a valid experiment (vsocksim check) that vsocksim run
#   runs cleanly (the failure was injected), and --replay of it fails again
#   with the injection and passes without;
# - a crash (abort) is reported as a signal, a hang as a hang (--timeout), a
#   leak in a simulation as a sanitizer report (in an ASan build);
# - the same experiments in the same order whatever --jobs (input digest);
# - bad arguments exit 2.
#   tests/fuzz/model_fuzz_test.sh MODEL_FUZZ VSOCKSIM
set -euo pipefail
fuzz="$1"
vsocksim="$2"
work=$(mktemp -d /tmp/model-fuzz-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "model_fuzz_test: FAILED: $*" >&2; exit 1; }

# An injected exception: every run is a failure, each saved.
status=0
"$fuzz" --seed 7 --runs 6 --jobs 2 --out "$work/found" --inject-failure throw > "$work/out.txt" 2> "$work/err.txt" ||
  status=$?
cat "$work/out.txt"
[ "$status" -eq 1 ] || fail "injected throw: exit $status, expected 1"
grep -q 'exception std::logic_error; first: .*injected failure' "$work/out.txt" || fail "no logic_error in the summary"
shopt -s nullglob
saved=("$work"/found/fail-7-*.yaml)
refused=$(sed -n 's/^  refused: *\([0-9]*\).*/\1/p' "$work/out.txt")
[ $((${#saved[@]} + refused)) -eq 6 ] ||
  fail "expected 6 findings or refusals, got ${#saved[@]} files, $refused refused"
[ ${#saved[@]} -ge 1 ] || fail "no failure saved"
for f in "${saved[@]}"; do
  first='^# model_fuzz --seed 7: experiment [0-9]*, point [0-9]* iteration [0-9]*: '
  first+='exception std::logic_error: injected failure'
  head -1 "$f" | grep -q "$first" ||
    fail "$f: first line does not hold the error: $(head -1 "$f")"
  "$vsocksim" check "$f" > /dev/null || fail "$f: vsocksim check refuses the saved experiment"
done
# The saved experiment itself runs (the failure was injected), and replays.
"$vsocksim" run "${saved[0]}" -q > /dev/null || fail "vsocksim run ${saved[0]} failed"
status=0
"$fuzz" --replay "${saved[@]}" --inject-failure throw > "$work/replay.txt" 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "replay with the injection: exit $status, expected 1"
grep -q "FAILED: *${#saved[@]} " "$work/replay.txt" || fail "replay did not fail every file: $(cat "$work/replay.txt")"
"$fuzz" --replay "${saved[@]}" > "$work/replay-clean.txt" 2>&1 || fail "clean replay: $(cat "$work/replay-clean.txt")"

# A crash is a signal; a hang is caught by the timeout.
status=0
"$fuzz" --seed 3 --runs 2 --jobs 1 --out "$work/crash" --inject-failure crash > "$work/crash.txt" 2>&1 || status=$?
[ "$status" -eq 1 ] && grep -q 'signal SIGABRT' "$work/crash.txt" ||
  fail "crash not reported: $(cat "$work/crash.txt")"
status=0
"$fuzz" --seed 3 --runs 2 --jobs 2 --timeout 0.5 --out "$work/hang" --inject-failure hang > "$work/hang.txt" 2>&1 ||
  status=$?
[ "$status" -eq 1 ] && grep -q 'hang; first: .*no result after 0.5 s' "$work/hang.txt" ||
  fail "hang not reported: $(cat "$work/hang.txt")"

# A leak in a simulation, where LeakSanitizer looks (the ASan build of scripts/sanitize.sh).
if "$fuzz" --help | grep -q 'built with AddressSanitizer'; then
  status=0
  "$fuzz" --seed 3 --runs 1 --out "$work/leak" --inject-failure leak > "$work/leak.txt" 2>&1 || status=$?
  [ "$status" -eq 1 ] && grep -q 'sanitizer LeakSanitizer' "$work/leak.txt" ||
    fail "leak not reported: $(cat "$work/leak.txt")"
fi

# Deterministic: the same inputs with 1 or 2 jobs.
one=$("$fuzz" --seed 11 --runs 20 --jobs 1 --out "$work/j1" -q --inject-failure throw | grep '^  inputs:' || true)
two=$("$fuzz" --seed 11 --runs 20 --jobs 2 --out "$work/j2" -q --inject-failure throw | grep '^  inputs:' || true)
[ -n "$one" ] && [ "$one" = "$two" ] || fail "inputs differ with --jobs: '$one' vs '$two'"
listed=$("$fuzz" --list --seed 11 --runs 20 | sha256sum)
[ "$listed" = "$("$fuzz" --list --seed 11 --runs 20 | sha256sum)" ] || fail "--list is not deterministic"

# Bad arguments.
for args in "--runs x" "--jobs 0" "--timeout -1" "--replay" "--inject-failure maybe" "--bogus"; do
  status=0
  # shellcheck disable=SC2086
  "$fuzz" $args > /dev/null 2>&1 || status=$?
  [ "$status" -eq 2 ] || fail "'$args': exit $status, expected 2"
done
echo "model_fuzz_test: ok"
