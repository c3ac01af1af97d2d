#!/usr/bin/env python3
"""Plots of a `herald bench --json` result, for docs/performance.md.

    scripts/bench-plots.sh RESULT.json [OUT_DIR]      # the wrapper makes a venv with matplotlib

Writes OUT_DIR (default docs/images) /bench-lanes.png (events/s and deliveries/s by lanes) and
/bench-latency.png (publish→sent latency: cumulative distribution for each steady rate).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    result = json.load(open(sys.argv[1]))
    out = sys.argv[2] if len(sys.argv) > 2 else "docs/images"
    os.makedirs(out, exist_ok=True)
    title = f"{result['date'][:10]}, {result['machine']['cores']} cores, {result['build']} build"

    lanes = sorted(result.get("byLanes", []), key=lambda r: r["lanes"])
    if lanes:
        fig, ax = plt.subplots(figsize=(7, 4))
        xs = [str(r["lanes"]) for r in lanes]
        ax.bar([i - 0.2 for i in range(len(xs))], [r["eventRate"] for r in lanes], width=0.4, label="events/s")
        ax.bar([i + 0.2 for i in range(len(xs))], [r["deliveryRate"] for r in lanes], width=0.4, label="deliveries/s")
        ax.set_xticks(range(len(xs)), xs)
        ax.set_xlabel("lanes (worker.threads)")
        ax.set_ylabel("per second")
        ax.set_title(f"Herald pipeline throughput by lanes, null sender\n{title}")
        ax.legend()
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "bench-lanes.png"), dpi=120)
        print(os.path.join(out, "bench-lanes.png"))

    runs = [r for r in result.get("latency", []) if r.get("histogram")]
    if runs:
        fig, ax = plt.subplots(figsize=(7, 4))
        for run in runs:
            total = sum(b["count"] for b in run["histogram"])
            seen, xs, ys = 0, [], []
            for bucket in run["histogram"]:
                seen += bucket["count"]
                xs.append(bucket["upToMilliseconds"])
                ys.append(seen / total)
            ax.step(xs, ys, where="post",
                    label=f"{run['rate']} events/s: p50 {run['p50Milliseconds']:.1f} ms, p99 {run['p99Milliseconds']:.1f} ms")
        ax.set_xscale("log")
        ax.set_xlabel("publish → sent (ms, log scale)")
        ax.set_ylabel("share of deliveries")
        ax.set_title(f"Herald publish→sent latency, null sender\n{title}")
        ax.legend(loc="lower right")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "bench-latency.png"), dpi=120)
        print(os.path.join(out, "bench-latency.png"))


if __name__ == "__main__":
    main()
