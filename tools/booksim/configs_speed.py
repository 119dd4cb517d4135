#!/usr/bin/env python3
"""Issue 38 item 3: single runs of every BookSim configuration, podsim against BookSim 2.

Usage: configs_speed.py PODSIM BOOKSIM [--baseline OLD_PODSIM] [--repeats N] [--rate R]

For each configuration below, BookSim 2 runs tools/booksim/configs/BASE.cfg with the
configuration's keys on its command line, and `podsim noc --topology ... --config FILE` runs
the same router (FILE holds the same keys in podsim's names), one load (default 0.3
flits/node/cycle), podsim's default --cycles 10000 against BookSim's sample_period = 1000.
The two (and the baseline podsim, when given) run in turn, A B A B ..., so that the machine's
drift falls on both; each row prints the medians of whole-process CPU seconds (user + system,
from the child's rusage) and the median of the pair-by-pair ratios BookSim / podsim.

Prints Markdown rows: what, podsim CPU-s, baseline CPU-s (or - where the baseline cannot run
the configuration), BookSim CPU-s, BookSim / podsim, target.
"""
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# name, BookSim base config, BookSim keys, podsim TOML keys
SIF = ["vc_allocator=separable_input_first", "sw_allocator=separable_input_first"]
SOF = ["vc_allocator=separable_output_first", "sw_allocator=separable_output_first"]
SP2 = ["input_speedup=2", "output_speedup=2"]
CONFIGS = [
    ("8x8 mesh, 1-flit, iSLIP (BookSim's defaults)", "mesh8x8_p1", [], ""),
    ("8x8 mesh, 4-flit, iSLIP", "mesh8x8_p4", [], "packet_flits = 4"),
    ("8x8 torus, 1-flit, iSLIP", "torus8x8_p1", [], ""),
    ("8x8 torus, 4-flit, iSLIP", "torus8x8_p4", [], "packet_flits = 4"),
    ("8x8 mesh, 1-flit, separable input-first", "mesh8x8_p1", SIF,
     'allocator = "separable-input-first"'),
    ("8x8 torus, 4-flit, separable input-first", "torus8x8_p4", SIF,
     'packet_flits = 4\nallocator = "separable-input-first"'),
    ("8x8 mesh, 4-flit, separable output-first", "mesh8x8_p4", SOF,
     'packet_flits = 4\nallocator = "separable-output-first"'),
    ("8x8 torus, 1-flit, separable output-first", "torus8x8_p1", SOF,
     'allocator = "separable-output-first"'),
    ("8x8 mesh, 1-flit, routing_delay 0", "mesh8x8_p1", ["routing_delay=0"], "routing_delay = 0"),
    ("8x8 torus, 4-flit, routing_delay 0", "torus8x8_p4", ["routing_delay=0"],
     "packet_flits = 4\nrouting_delay = 0"),
    ("8x8 mesh, 1-flit, credit_delay 1", "mesh8x8_p1", ["credit_delay=1"], "credit_delay = 1"),
    ("8x8 torus, 4-flit, credit_delay 2", "torus8x8_p4", ["credit_delay=2"],
     "packet_flits = 4\ncredit_delay = 2"),
    ("8x8 mesh, 1-flit, separable input-first, routing_delay 0, credit_delay 2", "mesh8x8_p1",
     SIF + ["routing_delay=0", "credit_delay=2"],
     'allocator = "separable-input-first"\nrouting_delay = 0\ncredit_delay = 2'),
    ("8x8 mesh, 1-flit, iSLIP 2 iterations", "mesh8x8_p1", ["alloc_iters=2"], "alloc_iters = 2"),
    ("8x8 mesh, 1-flit, speedups 2 in, 2 out", "mesh8x8_p1", SP2,
     "input_speedup = 2\noutput_speedup = 2"),
    ("8x8 torus, 4-flit, speedups 2 in, 2 out", "torus8x8_p4", SP2,
     "packet_flits = 4\ninput_speedup = 2\noutput_speedup = 2"),
]


def cpu(cmd):
    """CPU seconds of one run of `cmd` (output dropped), or None if it failed to run."""
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execvp(cmd[0], cmd)
    _, status, ru = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    # BookSim's exit status is inverted (255: finished); podsim's is 0.
    if cmd[0].endswith("booksim") or code == 0:
        return ru.ru_utime + ru.ru_stime
    return None


def main():
    args = sys.argv[1:]
    podsim, booksim = args[0], args[1]
    baseline, repeats, rate = None, 3, "0.3"
    i = 2
    while i < len(args):
        if args[i] == "--baseline":
            baseline = args[i + 1]
        elif args[i] == "--repeats":
            repeats = int(args[i + 1])
        elif args[i] == "--rate":
            rate = args[i + 1]
        else:
            sys.exit(f"configs_speed.py: unknown argument {args[i]}")
        i += 2
    tmp = tempfile.mkdtemp()
    for k, (name, base, keys, toml) in enumerate(CONFIGS):
        path = os.path.join(tmp, f"c{k}.toml")
        with open(path, "w") as f:
            f.write('router = "booksim"\n' + toml + "\n")
        topo = "mesh:8x8" if base.startswith("mesh") else "torus:8x8"
        run = ["noc", "--topology", topo, "--config", path, "--rate", rate, "--json", "--quiet"]
        bcmd = [booksim, os.path.join(HERE, "configs", base + ".cfg"), f"injection_rate={rate}"]
        bcmd += keys
        ps, bs, olds = [], [], []
        for _ in range(repeats):
            p = cpu([podsim] + run)
            if p is None:
                sys.exit(f"configs_speed.py: podsim failed on {name}")
            ps.append(p)
            bs.append(cpu(bcmd))
            if baseline:
                olds.append(cpu([baseline] + run))
        ratio = statistics.median(b / p for b, p in zip(bs, ps))
        old = "-"
        if baseline and all(o is not None for o in olds):
            old = f"{statistics.median(olds):.4f}"
        print(
            f"| {name} | {statistics.median(ps):.4f} | {old} | {statistics.median(bs):.3f} "
            f"| {ratio:.1f}x | >= 40x |",
            flush=True,
        )


if __name__ == "__main__":
    main()
