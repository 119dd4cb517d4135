#!/usr/bin/env python3
"""Run `podsim noc --router booksim` at every injection rate of BookSim's reference curves
(tools/booksim/curves/NAME.csv) and side by side with BookSim's numbers print: the zero-load
latency (one long run at 0.005 flits/node/cycle with 40,000-cycle periods, as zeroload.sh runs
BookSim), the saturation throughput by SUMMARY.md's rule (the highest accepted rate below the
first unstable load) and each rate's packet latency and accepted rate.

    cargo build --release -p podsim
    python3 tools/booksim/compare.py [NAME...] > tools/booksim/curves/podsim-booksim-mode.txt
"""
import csv
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PODSIM = os.environ.get("PODSIM", os.path.join(ROOT, "target", "release", "podsim"))
CONFIGS = [
    ("mesh8x8_p1", "mesh:8x8", 1),
    ("mesh8x8_p4", "mesh:8x8", 4),
    ("torus8x8_p1", "torus:8x8", 1),
    ("torus8x8_p4", "torus:8x8", 4),
    ("mesh16x16_p1", "mesh:16x16", 1),
    ("mesh16x16_p4", "mesh:16x16", 4),
]


def run(topo, flits, rate, cycles=10000):
    out = subprocess.run(
        [PODSIM, "noc", "--router", "booksim", "--topology", topo, "--packet-flits",
         str(flits), "--rate", str(rate), "--cycles", str(cycles), "--json"],
        capture_output=True, text=True, cwd=ROOT, check=True)
    return json.loads(out.stdout)


def main(only):
    print(f"# podsim noc --router booksim against BookSim 2 (tools/booksim/curves/*.csv); {PODSIM}")
    for name, topo, flits in CONFIGS:
        if only and name not in only:
            continue
        with open(os.path.join(ROOT, "tools", "booksim", "curves", f"{name}.csv")) as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        zero = run(topo, flits, 0.005, 400000)
        best, first_unstable, lines = 0.0, None, []
        for r in rows:
            rate = float(r["injection_rate"])
            d = run(topo, flits, rate)
            lines.append((rate, float(r["packet_latency_avg"]), float(r["accepted_flit_rate"]),
                          r["saturated"], d["average_latency_cycles"],
                          d["accepted_flits_per_node_cycle"], str(d["saturated"]).lower()))
            if d["saturated"]:
                first_unstable = first_unstable or rate
            elif first_unstable is None:
                best = max(best, d["accepted_flits_per_node_cycle"])
        print(f"== {name}: zero-load {zero['average_latency_cycles']:.3f} "
              f"(hops {zero['average_hops']:.3f}, {zero['measured_packets']} packets); "
              f"saturation {best:.4f}; first unstable {first_unstable}")
        for line in lines:
            print("  rate %.3f  BookSim latency %8.2f accepted %.4f saturated %-5s | "
                  "podsim booksim mode latency %8.2f accepted %.4f saturated %s" % line)
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
