#!/usr/bin/env bash
# A real single-node Slurm cluster on localhost (Debian's slurm-wlm and
# munge): munged, slurmctld and slurmd under a temporary directory, with free
# ports. Runs a small sweep as a 2-task job array through
# experiments/slurm/sweep.sbatch, merges the shards and checks the merged
# result equals a local unsharded run (outside manifest.wall and
# manifest.command_line). Stops its daemons on any exit.
#
#   tests/slurm/slurm_test.sh [PATH/TO/vsocksim]
#
# Exit 77 (skipped) without Slurm installed or without root (SlurmUser=root).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(readlink -f "${1:-$ROOT/build/vsocksim}")
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm_test: slurm-wlm and munge are not installed (scripts/setup.sh --test-deps): skipped"
  exit 77
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "slurm_test: needs root (SlurmUser=root): skipped"
  exit 77
fi

T=$(mktemp -d /tmp/vsocksim-slurm.XXXXXX)
chmod 755 "$T"
pids=()
cleanup() {
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
  rm -rf "$T"
}
trap cleanup EXIT

fail() {
  echo "slurm_test: $*" >&2
  for log in "$T"/*.log; do [ -f "$log" ] && { echo "--- $log" >&2; tail -20 "$log" >&2; }; done
  exit 1
}

# until TIMEOUT_SECONDS COMMAND...: retry every 0.2 s.
until_ok() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

free_port() {
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  return 1
}

# munge, with its own key, socket, pid and seed files.
mkdir -p "$T/munge"
chmod 755 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$T/munge/munge.key"
munged -F --socket="$T/munge/socket" --key-file="$T/munge/munge.key" --pid-file="$T/munge/pid" \
  --seed-file="$T/munge/seed" --log-file="$T/munged.log" > "$T/munged.out.log" 2>&1 &
pids+=($!)
until_ok 10 munge -n -S "$T/munge/socket" || fail "munged did not start"

CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
while [ "$SLURMD_PORT" = "$CTLD_PORT" ]; do SLURMD_PORT=$(free_port); done
mkdir -p "$T/state" "$T/spool"
cat > "$T/slurm.conf" <<CONF
ClusterName=vsocksim
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmUser=root
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$T/munge/socket
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=localhost CPUs=2 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"

slurmctld -D -c -f "$SLURM_CONF" > "$T/slurmctld.out.log" 2>&1 &
pids+=($!)
until_ok 30 bash -c 'scontrol ping | grep -q UP' || fail "slurmctld did not come up"
slurmd -D -f "$SLURM_CONF" > "$T/slurmd.out.log" 2>&1 &
pids+=($!)
until_ok 30 bash -c '[ "$(sinfo -h -N -o %T | head -1)" = idle ]' || fail "slurmd did not become idle"

# The sweep: tiny.yaml's two points, one per array task.
cd "$ROOT"
export EXPERIMENT="tests/data/cli/tiny.yaml" OUT="$T/out" VSOCKSIM="$BIN"
export VSOCKSIM_SETS="--set workload.total_bytes=200kB --set iterations=2"
sbatch --wait --array=0-1 --export=ALL --output="$T/job-%a.log" experiments/slurm/sweep.sbatch > "$T/sbatch.out" ||
  fail "the job array failed: $(cat "$T/sbatch.out")"
"$BIN" merge "$OUT/shard0" "$OUT/shard1" > "$T/merged.json" || fail "merge failed"
# shellcheck disable=SC2086
"$BIN" run "$EXPERIMENT" $VSOCKSIM_SETS --format json -q > "$T/local.json" || fail "local run failed"

# Compare outside the wall-clock facts and the command line (each a known
# block or line of the pretty-printed JSON).
strip() { sed -e '/"wall": {/,/}/d' -e '/"command_line":/d' "$1"; }
if ! diff <(strip "$T/merged.json") <(strip "$T/local.json") > "$T/diff.txt"; then
  head -40 "$T/diff.txt" >&2
  fail "the merged job array result differs from the local run"
fi
echo "slurm_test: job array of 2 tasks on a single-node Slurm cluster, merged: equal to the local run"
