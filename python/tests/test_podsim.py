"""The Python bindings against closed forms and the command line's own figures.

Run after `pip install ./python`: python3 python/tests/test_podsim.py
"""

import pathlib
import sys

import podsim

ROOT = pathlib.Path(__file__).resolve().parents[2]


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b))


def main():
    # A ring all-reduce on ring:4 at 50 GB/s: 2 x 3 steps of bytes/4 = 1.5 x bytes / 50 GB/s.
    r = podsim.collective("all-reduce", "ring:4", "2 MiB")
    assert close(r["time_s"], 1.5 * 2097152 / 50e9), r
    assert r["verified"] is True and r["algorithm"] == "ring"
    # The example, on a 4x4x4 torus.
    r = podsim.collective("all-reduce", "torus:4x4x4", "64 MiB")
    assert r["time_s"] > 0 and r["ranks"] == 64, r
    # A 4x4 torus has 16 nodes and 32 bidirectional links (64 directed).
    m = podsim.machine("torus:4x4")
    assert m["nodes"] == 16, m
    # A packet-level point at a light load accepts what it is offered.
    n = podsim.noc("mesh:4x4", 0.1, cycles=2000)
    assert abs(n["accepted_flits_per_node_cycle"] - 0.1) < 0.02 and not n["saturated"], n
    # A 32x32 output-stationary array on a 32x32x32 GEMM: one fold of 32^3 MACs.
    g = podsim.gemm(32, 32, 32, array="32x32", dataflow="os")
    assert g["macs"] == 32 ** 3 and g["folds"] == 1, g
    # A workload file runs on its machine.
    w = podsim.workload(ROOT / "examples" / "workload-data-parallel.toml")
    assert w["time_s"] > 0 and w["tasks"], w
    # The DRAM u-benchmark: 267 GB/s at 12 GT/s (the calibration point).
    d = podsim.dram()
    assert abs(d["bandwidth_bytes_per_s"] - 267e9) < 0.5e9, d
    # Bad input raises ValueError naming what is wrong.
    try:
        podsim.collective("all-reduce", "torus:4x", "1 MiB")
    except ValueError as e:
        assert "torus:4x" in str(e), e
    else:
        raise AssertionError("a bad topology should raise")
    print("python bindings: all checks passed")


if __name__ == "__main__":
    sys.exit(main())
