#!/usr/bin/env python3
"""Fit platform-profile costs to published figures (developer tool).

Runs the calibration experiment with candidate `costs.*` values (through
--set), compares predicted with measured figures and minimises the mean
absolute relative error by coordinate descent in log space. Prints the best
values; copying them into transports/profiles.cpp is a deliberate, reviewed
step (docs/calibration.md records which rows each parameter was fitted on).

  scripts/calibrate.py experiments/calibration/hyperv-2019.yaml \
      --fit guest_send_syscall,host_signal_latency,... --rounds 3

Every value stays inside its cost's plausible range (`vsocksim describe
costs`, docs/cost-sources.md): a start outside it is moved to the nearest
bound, and a fitted value that ends at a bound is reported as a warning (the
profile is not done: the fit is standing in for a missing mechanism), with
the error 5% inside and 5% and 15% past the bound, which says whether the
bound holds the fit back (docs/calibration.md, "Costs at a bound").
--rounds 0 evaluates the start values only: with --fit naming the costs at
a bound, that diagnosis alone.

--hold-out KEY=VALUE[,KEY=VALUE...] (repeatable) keeps the rows that match
out of the fit and reports their error separately, so that a fit that only
reproduces its own rows shows:

  scripts/calibrate.py experiments/calibration/hyperv-2019.yaml \
      --fit host_dpc,host_signal_latency --hold-out hv_sock.sndbuf=64KiB

Uses short transfers (--bytes, default 20MB) and one iteration: the
simulated figures are steady-state rates, so they do not depend on the
transfer size beyond start-up effects (the calibration report in
docs/calibration.md is made at full size).
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("VSIM_BIN", os.path.join(ROOT, "build", "vsocksim"))  # a copy, to rebuild meanwhile


def load_rows(path):
    with open(path) as f:
        lines = [l for l in f if l.strip() and not l.startswith("#")]
    return list(csv.DictReader(lines))


def run(experiment, costs, extra_sets, nbytes, jobs, iterations=1):
    cmd = [BIN, "run", experiment, "--format", "json", "-q", "--jobs", str(jobs), "--set", f"iterations={iterations}"]
    if nbytes:
        cmd += ["--set", f"workload.total_bytes={nbytes}"]
    for k, v in sorted(costs.items()):
        cmd += ["--set", f"costs.{k}={v:.6g}"]
    for s in extra_sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    return json.loads(out.stdout)


def plausible_ranges():
    """{cost name: (min, max)} from `vsocksim describe costs`."""
    text = subprocess.run([BIN, "describe", "costs"], capture_output=True, text=True, check=True).stdout
    ranges, name = {}, None
    for line in text.splitlines():
        if line.startswith("costs."):
            name = line.strip()[len("costs."):]
        elif line.strip().startswith("plausible:") and name:
            lo, _, rest = line.split(":", 1)[1].strip().partition(" .. ")
            ranges[name] = (float(lo), float(rest.split()[0]))
    return ranges


def matches(row, filters):
    return all(row.get(k, "").lower() == v.lower() for k, v in filters)


def errors(result, rows, nbytes, extra_rows):
    errs = []
    for row in rows + extra_rows:
        keys = {k: v for k, v in row.items()
                if k not in ("metric", "min", "max", "mean", "median", "source", "scale_bytes") and v}
        match = [p for p in result["points"]
                 if all(str(p["params"].get(k)).lower() == v.lower() for k, v in keys.items())]
        if len(match) != 1:
            continue
        metric = row["metric"]
        predicted = match[0]["metrics"][metric]["mean"]
        if row.get("scale_bytes"):  # per-transfer figures (seconds) scale with the bytes moved
            predicted *= float(row["scale_bytes"]) / nbytes
        measured = float(row["mean"] or row["median"])
        errs.append((predicted - measured) / measured)
    return errs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("experiment")
    ap.add_argument("--fit", required=True, help="comma-separated cost names")
    ap.add_argument("--start", default="", help="k=v,... starting values")
    ap.add_argument("--set", action="append", default=[], help="extra --set for every run")
    ap.add_argument("--bytes", type=int, default=20_000_000)
    ap.add_argument("--keep-bytes", action="store_true", help="use the experiment's own total_bytes")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--step", type=float, default=0.5,
                    help="first round's step in log space (halved each round); smaller to refine a fit")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=1,
                    help="iterations per evaluation (1: fast; the experiment's own, e.g. 3, to compare with validate)")
    ap.add_argument("--extra", default="", help="CSV of extra rows (with scale_bytes column)")
    ap.add_argument("--hold-out", action="append", default=[],
                    help="KEY=VALUE[,KEY=VALUE...]: rows matching all pairs are not fitted, their error is reported")
    args = ap.parse_args()

    exp = os.path.abspath(args.experiment)
    meas = None
    with open(exp) as f:
        for line in f:
            if line.strip().startswith("measurements:"):
                meas = line.split(":", 1)[1].strip()
    all_rows = load_rows(os.path.join(os.path.dirname(exp), meas))
    holds = [[tuple(kv.split("=", 1)) for kv in h.split(",") if kv] for h in args.hold_out]
    held = [r for r in all_rows if any(matches(r, f) for f in holds)]
    rows = [r for r in all_rows if r not in held]
    if args.hold_out and not held:
        sys.exit("--hold-out matches no row")
    print(f"fitting on {len(rows)} row(s), {len(held)} held out", flush=True)
    extra_rows = load_rows(args.extra) if args.extra else []
    names = [n for n in args.fit.split(",") if n]
    costs = {}
    for kv in filter(None, args.start.split(",")):
        k, v = kv.split("=")
        costs[k] = float(v)

    def simulate(c):
        return run(exp, c, args.set, 0 if args.keep_bytes else args.bytes, args.jobs, args.iterations)

    def objective(c):
        e = errors(simulate(c), rows, args.bytes, extra_rows)
        return sum(abs(x) for x in e) / len(e), e

    # Start from the profile's values for the fitted names.
    desc = subprocess.run([BIN, "describe", "platforms"], capture_output=True, text=True).stdout
    platform = next((s.split("=", 1)[1] for s in args.set if s.startswith("platform=")), None)
    if platform is None:  # the experiment's own platform
        with open(exp) as f:
            platform = next((l.split(":", 1)[1].strip() for l in f if l.startswith("platform:")), None)
    if platform:  # only that profile's block of the listing
        blocks = desc.split("\n\n")
        desc = next((b for b in blocks if b.startswith(platform + "\n")), desc)
    for n in names:
        if n not in costs:
            for line in desc.splitlines():
                parts = line.split()
                if len(parts) >= 2 and parts[0] in (n, "costs." + n):
                    try:
                        costs[n] = float(parts[1])
                    except ValueError:
                        pass
            if n not in costs:
                sys.exit(f"no starting value for {n}: give --start {n}=V")
    ranges = plausible_ranges()
    for n in names:
        if n not in ranges:
            sys.exit(f"{n}: no plausible range declared (transports/*/costs.cpp)")
        lo, hi = ranges[n]
        if not lo <= costs[n] <= hi:
            print(f"  {n}: start {costs[n]:.4g} outside its plausible range {lo:g}..{hi:g}: moved to the bound",
                  flush=True)
            costs[n] = min(max(costs[n], lo), hi)
    best, errs = objective(costs)
    print(f"start: MAE {best*100:.2f}%", flush=True)
    step = args.step
    for rnd in range(args.rounds):
        for n in names:
            for direction in (1, -1):
                improved = True
                while improved:
                    trial = dict(costs)
                    lo, hi = ranges[n]
                    trial[n] = min(max(costs[n] * math.exp(direction * step), lo), hi)
                    if trial[n] == costs[n]:  # at the bound
                        break
                    try:
                        val, e = objective(trial)
                    except RuntimeError as ex:
                        print(f"  {n}={trial[n]:.4g}: {ex}", flush=True)
                        break
                    improved = val < best - 1e-4
                    if improved:
                        best, costs, errs = val, trial, e
                        print(f"  round {rnd} {n}={costs[n]:.4g}: MAE {best*100:.2f}%", flush=True)
        step /= 2
    print(f"best MAE {best*100:.2f}% on the {len(rows)} fitted row(s)")
    print("per-row errors: " + " ".join(f"{x*100:+.0f}%" for x in errs))
    if held:
        h = errors(simulate(costs), held, args.bytes, [])
        print(f"held-out MAE {sum(abs(x) for x in h) / len(h) * 100:.2f}% on {len(h)} row(s): "
              + " ".join(f"{x*100:+.0f}%" for x in h))
    for n in names:
        lo, hi = ranges[n]
        at_lo, at_hi = costs[n] <= lo * (1 + 1e-9), costs[n] >= hi * (1 - 1e-9)
        if not (at_lo or at_hi):
            continue
        # Diagnosis only (never adopted): the error with this cost 5% and
        # 15% past its bound says whether the bound holds the fit back (a
        # binding bound) or the best value merely lies near it; 5% inside
        # says whether the surface is flat there (within the evaluations'
        # noise, a fit started inside would not come back to the bound).
        beyond = []
        for label, factor in (("5% inside", 1 / 1.05), ("5% past", 1.05), ("15% past", 1.15)):
            trial = dict(costs)
            trial[n] = costs[n] / factor if at_lo else costs[n] * factor
            try:
                beyond.append(f"{label}: {objective(trial)[0] * 100:.2f}%")
            except RuntimeError as ex:
                beyond.append(f"{label}: not computed ({ex})")
        print(f"warning: {n} = {costs[n]:.4g} sits at a bound of its plausible range {lo:g}..{hi:g}: "
              f"the fit stands in for a mechanism; the profile is not done (MAE at the bound "
              f"{best * 100:.2f}%, {', '.join(beyond)})", flush=True)
    for n in names:
        print(f'{{"{n}", {costs[n]:.4g}}},')


if __name__ == "__main__":
    main()
