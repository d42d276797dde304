#!/usr/bin/env python3
"""Compares sim.run_length auto against full on experiment files.

Runs each file twice (`run --format json`, then with
`--set sim.run_length=full`) and compares every iteration of every point:
  - throughput_MBps: |auto/full - 1| against the iteration's stated
    half-width (run_length.half_width), for extrapolated iterations;
  - every CPU figure (*_seconds, *_percent of CPUs, threads and the
    application) and every count per MB: |auto/full - 1| <= 1%, where
    figures below 0.1% of their kind's largest value in the run (a thread
    idle at 0.001%) are compared on that floor instead;
  - iterations not extrapolated must be identical.
Prints one line per file and the worst cases; exits 1 if a bound is broken.

usage: scripts/run_length_check.py [--bin build/vsocksim] [--jobs 2] [--md] FILE...
"""
import argparse
import json
import subprocess
import sys
import time


def run(binary, path, jobs, extra):
    cmd = [binary, "run", path, "--format", "json", "-q", "--jobs", str(jobs)] + extra
    t0 = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out), time.monotonic() - t0


def is_cpu(name):
    if name.endswith("_seconds"):
        return name != "elapsed_seconds"
    return name.endswith("_percent") and (name.startswith(("cpu.", "thread.")) or "cpu_percent" in name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/vsocksim")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--md", action="store_true", help="print a markdown table")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()

    failed = False
    rows = []
    for path in args.files:
        auto, t_auto = run(args.bin, path, args.jobs, [])
        full, t_full = run(args.bin, path, args.jobs, ["--set", "sim.run_length=full"])
        iters = extrap = 0
        worst_tp = (0.0, "")   # (|diff| / half-width, where)
        worst_tp_abs = (0.0, "")
        worst_fig = (0.0, "")  # (|relative diff|, where)
        for pa, pf in zip(auto["points"], full["points"]):
            infos = pa["run_length"]["iterations"]
            for i, (ia, iff) in enumerate(zip(pa["iterations"], pf["iterations"])):
                iters += 1
                where = f"point {pa['index']} iteration {i}"
                info = infos[i] if i < len(infos) else {}
                if not info.get("extrapolated"):
                    if ia != iff:
                        failed = True
                        print(f"{path}: {where}: not extrapolated, yet differs from full", file=sys.stderr)
                    continue
                extrap += 1
                hw = info["half_width"]
                d = abs(ia["throughput_MBps"] / iff["throughput_MBps"] - 1)
                if d / hw > worst_tp[0]:
                    worst_tp = (d / hw, f"{where}: {d*100:.3f}% against a half-width of {hw*100:.3f}%")
                if d > worst_tp_abs[0]:
                    worst_tp_abs = (d, where)
                if d > hw:
                    failed = True
                # Floors: a figure tiny against the largest of its kind is compared on that scale.
                scale = {"cpu": 0.0, "count": 0.0}
                for name, v in iff.items():
                    kind = "cpu" if is_cpu(name) else "count" if name.endswith("_per_MB") else None
                    if kind:
                        scale[kind] = max(scale[kind], abs(v))
                for name, v in iff.items():
                    kind = "cpu" if is_cpu(name) else "count" if name.endswith("_per_MB") else None
                    if not kind:
                        continue
                    base = max(abs(v), 1e-3 * scale[kind])
                    if base == 0:
                        continue
                    r = abs(ia[name] - v) / base
                    if r > worst_fig[0]:
                        worst_fig = (r, f"{where}: {name} {ia[name]:.6g} vs {v:.6g}")
                    if r > 0.01:
                        failed = True
        rows.append((path, len(auto["points"]), iters, extrap, t_auto, t_full, worst_tp, worst_tp_abs, worst_fig))
        print(f"{path}: {iters} iterations, {extrap} extrapolated; auto {t_auto:.1f} s, full {t_full:.1f} s; "
              f"throughput worst {worst_tp[0]:.2f} of the half-width ({worst_tp[1]}); "
              f"CPU and per-MB worst {worst_fig[0]*100:.3f}% ({worst_fig[1]})", flush=True)
    if args.md:
        print("\n| experiment | points | iterations | extrapolated | auto s | full s | worst throughput error / half-width | worst CPU or per-MB error |")
        print("|---|---|---|---|---|---|---|---|")
        for path, pts, iters, extrap, ta, tf, wt, wa, wf in rows:
            print(f"| `{path}` | {pts} | {iters} | {extrap} | {ta:.1f} | {tf:.1f} | {wt[0]:.2f} ({wt[1]}) | "
                  f"{wf[0]*100:.2f}% ({wf[1]}) |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
