#!/usr/bin/env python3
"""Compares sim.run_length auto against full on experiment files.

Runs each file twice (`run --format json`, then with
`--set sim.run_length=full`) and compares every iteration of every point:
  - throughput_MBps, per point: |mean auto / mean full - 1| over the
    iterations against the largest half-width its iterations state
    (run_length.half_width); per iteration the same against the
    iteration's own half-width is counted, not required (a 95% interval
    misses about one time in twenty);
  - every CPU figure (*_seconds, *_percent of CPUs, threads and the
    application) and every count per MB, per point (the mean over its
    iterations, what the tables show): |auto/full - 1| <= 1%, where
    figures below 5% of their kind's largest value in the run (a CPU idle
    at 0.01%) are compared on that floor instead (the monitor's own floor);
    per iteration the worst is reported, not required (each is judged by
    the monitor to a 95% interval of about 1%);
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
        worst_point = (0.0, "")  # (|mean diff| / largest half-width, where)
        worst_point_fig = (0.0, "")  # (|relative diff of the means|, where)
        misses = 0  # iterations outside their own half-width
        for pa, pf in zip(auto["points"], full["points"]):
            infos = pa["run_length"]["iterations"]
            hws = [i["half_width"] for i in infos if i.get("extrapolated")]
            if hws:
                ma = sum(i["throughput_MBps"] for i in pa["iterations"]) / len(pa["iterations"])
                mf = sum(i["throughput_MBps"] for i in pf["iterations"]) / len(pf["iterations"])
                r = abs(ma / mf - 1) / max(hws)
                if r > worst_point[0]:
                    worst_point = (r, f"point {pa['index']}: {abs(ma / mf - 1)*100:.3f}% against {max(hws)*100:.3f}%")
                if r > 1:
                    failed = True
                # Every CPU figure and count per MB, mean over the iterations.
                names = [n for n in pf["iterations"][0] if is_cpu(n) or n.endswith("_per_MB")]
                means_a = {n: sum(i[n] for i in pa["iterations"]) / len(pa["iterations"]) for n in names}
                means_f = {n: sum(i[n] for i in pf["iterations"]) / len(pf["iterations"]) for n in names}
                scale = {"cpu": 0.0, "count": 0.0}
                for n in names:
                    k = "cpu" if is_cpu(n) else "count"
                    scale[k] = max(scale[k], abs(means_f[n]))
                for n in names:
                    k = "cpu" if is_cpu(n) else "count"
                    base = max(abs(means_f[n]), 0.05 * scale[k])
                    if base == 0:
                        continue
                    r = abs(means_a[n] - means_f[n]) / base
                    if r > worst_point_fig[0]:
                        worst_point_fig = (r, f"point {pa['index']}: {n} {means_a[n]:.6g} vs {means_f[n]:.6g}")
                    if r > 0.01:
                        failed = True
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
                    misses += 1
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
                    base = max(abs(v), 0.05 * scale[kind])
                    if base == 0:
                        continue
                    r = abs(ia[name] - v) / base
                    if r > worst_fig[0]:
                        worst_fig = (r, f"{where}: {name} {ia[name]:.6g} vs {v:.6g}")
        rows.append((path, len(auto["points"]), iters, extrap, t_auto, t_full, worst_point, misses, worst_tp, worst_fig,
                     worst_point_fig))
        print(f"{path}: {iters} iterations, {extrap} extrapolated; auto {t_auto:.1f} s, full {t_full:.1f} s; "
              f"throughput per point worst {worst_point[0]:.2f} of the half-width ({worst_point[1]}); "
              f"{misses} iteration(s) outside their own half-width, worst {worst_tp[0]:.2f} ({worst_tp[1]}); "
              f"CPU and per-MB per point worst {worst_point_fig[0]*100:.3f}% ({worst_point_fig[1]}), "
              f"per iteration worst {worst_fig[0]*100:.3f}% ({worst_fig[1]})", flush=True)
    if args.md:
        print("\n| experiment | points | iterations | extrapolated | auto s | full s | throughput: worst point, error / half-width | iterations outside their own half-width | CPU or per-MB: worst point | worst iteration |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for path, pts, iters, extrap, ta, tf, wp, misses, wt, wf, wpf in rows:
            print(f"| `{path}` | {pts} | {iters} | {extrap} | {ta:.1f} | {tf:.1f} | {wp[0]:.2f} ({wp[1]}) | "
                  f"{misses} | {wpf[0]*100:.2f}% ({wpf[1]}) | {wf[0]*100:.2f}% |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
