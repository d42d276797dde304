#!/usr/bin/env python3
"""Compares sim.run_length auto against full on experiment files.

Runs each file twice (`run --format json`, then with
`--set sim.run_length=full`) and compares every iteration of every point
(issue 37's criteria):
  - throughput_MBps, per point: |mean auto / mean full - 1| over the
    iterations within 1% (twice the default precision); its ratio to the
    largest half-width the iterations state (run_length.half_width) is
    reported, and per iteration the misses of the iteration's own
    half-width are counted, not required (a 95% interval misses about one
    time in twenty);
  - every CPU figure (*_seconds, the *_percent of CPUs, threads, sides and
    applications) and every count per MB, per point (the mean over its
    iterations, what the tables show): |auto - full| within 2% of the scale
    the monitor judges the figure on (sim/run_length.hpp figure_scales;
    docs/run-length.md "What each figure is held to"): the larger of itself
    and
      a category of a CPU's or thread's time: half its busy time's scale,
      a busy time, a side's or an application's CPU: half a CPU (50%),
      CPU seconds: half the elapsed seconds (half a CPU for the run),
      a count per MB: 5% of all the counts per MB together;
    the worst difference in CPU percentage points (seconds as a percentage
    of the elapsed time) and relative to the figure itself (figures of at
    least 1% of a CPU) are reported too, not required; per iteration the
    worst is reported, not required;
  - iterations not extrapolated must be identical.
Prints one line per file and the worst cases; exits 1 if a bound is broken.

usage: scripts/run_length_check.py [--bin build/vsocksim] [--jobs 2] [--md] FILE...
"""
import argparse
import json
import re
import subprocess
import sys
import time

THROUGHPUT_TOLERANCE = 0.01  # per point, relative
FIGURE_TOLERANCE = 0.02  # per point, of the figure's scale
PART_SHARE = 0.5  # RunLengthConfig::part_share
GROUP_SHARE = 0.05  # RunLengthConfig::group_share
CATEGORY = re.compile(r"^((?:cpu|thread)\.\w+)\.(user|sys|irq|hypervisor)_percent$")


def run(binary, path, jobs, extra):
    """The run's JSON and wall time. A run whose points failed (exit status 1,
    the other points printed) is compared on the points it has; the failures
    are reported and fail the check."""
    cmd = [binary, "run", path, "--format", "json", "-q", "--jobs", str(jobs)] + extra
    t0 = time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode not in (0, 1) or not res.stdout:
        sys.exit(f"{path}: {' '.join(cmd)} exited with {res.returncode}:\n{res.stderr}")
    return json.loads(res.stdout), time.monotonic() - t0


def is_cpu(name):
    if name.endswith("_seconds"):
        return name != "elapsed_seconds"
    if name.startswith("queue."):
        return False
    return name.endswith("_percent") and name.startswith(("cpu.", "thread.")) or "cpu_percent" in name


def is_count(name):
    return name.endswith("_per_MB")


def scales(fig):
    """The scale each CPU figure and count per MB of `fig` is judged on, as
    figure_scales computes it on a run's figures (one CPU = 100%)."""
    counts = sum(abs(v) for n, v in fig.items() if is_count(n))
    out = {}

    def scale(n):
        if n in out:
            return out[n]
        v = abs(fig[n])
        if n.endswith("_seconds"):
            s = max(v, PART_SHARE * abs(fig["elapsed_seconds"]))
        elif is_count(n):
            s = max(v, GROUP_SHARE * counts)
        elif m := CATEGORY.match(n):
            s = max(v, PART_SHARE * scale(m.group(1) + ".busy_percent"))
        else:
            s = max(v, PART_SHARE * 100)
        out[n] = s
        return s

    for n in fig:
        if is_cpu(n) or is_count(n):
            scale(n)
    return out


def in_cpu_percent(name, v, fig):
    """A CPU figure in percent of one CPU (seconds: of the elapsed time)."""
    return v / fig["elapsed_seconds"] * 100 if name.endswith("_seconds") else v


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
        failures = [f"point {p['index']} ({mode}): {p.get('failed', '?')}" for mode, r in (("auto", auto), ("full", full))
                    for p in r.get("failed_points", [])]
        for f in failures:
            failed = True
            print(f"{path}: {f}", file=sys.stderr)
        full_by_index = {p["index"]: p for p in full["points"]}
        worst_tp = (0.0, "")  # per iteration: (|diff| / its half-width, where)
        worst_point = (0.0, "")  # per point: (|mean diff|, where)
        worst_point_hw = 0.0  # per point: |mean diff| / largest half-width
        worst_point_fig = (0.0, "")  # per point: (|diff of the means| / scale, where)
        worst_pp = (0.0, "")  # per point: (|diff| in CPU percentage points, where)
        worst_rel = (0.0, "")  # per point: (|diff| / itself, CPU figures of at least 1% of a CPU)
        worst_fig = 0.0  # per iteration: |diff| / scale
        misses = 0  # iterations outside their own half-width
        for pa in auto["points"]:
            pf = full_by_index.get(pa["index"])
            if pf is None:
                continue
            infos = pa["run_length"]["iterations"]
            hws = [i["half_width"] for i in infos if i.get("extrapolated")]
            if hws:
                n_it = len(pa["iterations"])
                ma = sum(i["throughput_MBps"] for i in pa["iterations"]) / n_it
                mf = sum(i["throughput_MBps"] for i in pf["iterations"]) / n_it
                d = abs(ma / mf - 1)
                if d > worst_point[0]:
                    worst_point = (d, f"point {pa['index']}: {d*100:.3f}% (stated half-width {max(hws)*100:.3f}%)")
                worst_point_hw = max(worst_point_hw, d / max(hws))
                if d > THROUGHPUT_TOLERANCE:
                    failed = True
                # Every CPU figure and count per MB, mean over the iterations.
                names = [n for n in pf["iterations"][0] if is_cpu(n) or is_count(n)] + ["elapsed_seconds"]
                means_a = {n: sum(i[n] for i in pa["iterations"]) / n_it for n in names}
                means_f = {n: sum(i[n] for i in pf["iterations"]) / n_it for n in names}
                sc = scales(means_f)
                for n, base in sc.items():
                    if base == 0:
                        continue
                    r = abs(means_a[n] - means_f[n]) / base
                    if r > worst_point_fig[0]:
                        worst_point_fig = (r, f"point {pa['index']}: {n} {means_a[n]:.6g} vs {means_f[n]:.6g}")
                    if r > FIGURE_TOLERANCE:
                        failed = True
                    if is_cpu(n):
                        pa_ = in_cpu_percent(n, means_a[n], means_a)
                        pf_ = in_cpu_percent(n, means_f[n], means_f)
                        if abs(pa_ - pf_) > worst_pp[0]:
                            worst_pp = (abs(pa_ - pf_), f"point {pa['index']}: {n} {pa_:.4g} vs {pf_:.4g}")
                        if abs(pf_) >= 1 and abs(pa_ / pf_ - 1) > worst_rel[0]:
                            worst_rel = (abs(pa_ / pf_ - 1), f"point {pa['index']}: {n} {pa_:.4g} vs {pf_:.4g}")
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
                if d > hw:
                    misses += 1
                for n, base in scales(iff).items():
                    if base > 0:
                        worst_fig = max(worst_fig, abs(ia[n] - iff[n]) / base)
        n_failed = len({p["index"] for p in auto.get("failed_points", []) + full.get("failed_points", [])})
        rows.append((path, f"{len(auto['points']) + n_failed}" + (f" ({n_failed} failed)" if n_failed else ""), iters, extrap, t_auto, t_full, worst_point, worst_point_hw, misses,
                     worst_tp, worst_point_fig, worst_pp, worst_rel, worst_fig))
        print(f"{path}: {iters} iterations, {extrap} extrapolated; auto {t_auto:.1f} s, full {t_full:.1f} s; "
              f"throughput per point worst {worst_point[0]*100:.3f}% ({worst_point[1]}), "
              f"{worst_point_hw:.2f} of the stated half-width; "
              f"{misses} iteration(s) outside their own half-width, worst {worst_tp[0]:.2f} ({worst_tp[1]}); "
              f"CPU and per-MB per point worst {worst_point_fig[0]*100:.3f}% of the scale ({worst_point_fig[1]}), "
              f"CPU worst {worst_pp[0]:.3f} percentage points ({worst_pp[1]}), "
              f"{worst_rel[0]*100:.2f}% of itself ({worst_rel[1]}); per iteration worst {worst_fig*100:.3f}% of the scale",
              flush=True)
    if args.md:
        print("\n| experiment | points | iterations | extrapolated | auto s | full s | throughput: worst point "
              "| worst point / its half-width | iterations outside their own half-width "
              "| CPU or per-MB: worst point, of its scale | CPU: worst point, percentage points | worst iteration, of its scale |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for path, pts, iters, extrap, ta, tf, wp, wphw, misses, wt, wpf, wpp, wrel, wf in rows:
            print(f"| `{path}` | {pts} | {iters} | {extrap} | {ta:.1f} | {tf:.1f} | {wp[0]*100:.3f}% ({wp[1]}) | "
                  f"{wphw:.2f} | {misses} | {wpf[0]*100:.2f}% ({wpf[1]}) | {wpp[0]:.3f} ({wpp[1]}) | {wf*100:.2f}% |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
