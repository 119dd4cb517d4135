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
    # The dict is `podsim collective --json`'s object, key for key (one typed struct serialized
    # for both): the check's reason, whether the bound replaced the time, the timing.
    for key in ("unverified_reason", "bound_applied", "link_latency_s", "link_latency_source",
                "endpoint", "endpoint_overhead_s", "kind", "model", "topology", "transfers"):
        assert key in r, (key, r)
    assert r["bound_applied"] is False and r["unverified_reason"] is None, r
    assert r["link_latency_source"] == "default" and r["endpoint"] is None, r
    # The analytic model sees no contention: below the bound, the bound is reported and says so.
    a = podsim.collective("all-to-all", "torus:4x4x4", "1 MiB", model="analytic")
    assert a["bound_applied"] is True and a["time_s"] == a["lower_bound_time_s"], a
    # A Tofu preset's timing: its link latency and default endpoint setting.
    t = podsim.collective("all-reduce", "tofu:2x1x1", "1 MiB")
    assert t["link_latency_source"] == "preset" and t["endpoint"] == "near-cmg", t
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
    g = podsim.gemm("32x32", "os", 32, 32, 32)
    assert g["macs"] == 32 ** 3 and g["folds"] == 1, g
    assert g["convention"] == "rtl" and g["stall_cycles"] == 0 and g["row_folds"] == 1, g
    # The arguments in the command's order (`podsim gemm --array 32x16 --dataflow ws --m 100
    # --n 60 --k 40`), by position or by name, give the same GEMM.
    by_position = podsim.gemm("32x16", "ws", 100, 60, 40)
    by_name = podsim.gemm(k=40, n=60, m=100, dataflow="ws", array="32x16")
    assert by_position == by_name and by_position["macs"] == 100 * 60 * 40, by_position
    assert by_position["array"] == "32x16", by_position
    assert by_position["dataflow"] == "ws" and by_position["m"] == 100, by_position
    # The old order (m, n, k first) is refused, naming the new one, not run as another GEMM.
    try:
        podsim.gemm(32, 32, 32, "32x32", "os")
    except TypeError as e:
        assert "gemm(array, dataflow, m, n, k)" in str(e), e
    else:
        raise AssertionError("gemm with m, n, k first should raise TypeError")
    # A workload file runs on its machine.
    w = podsim.workload(ROOT / "examples" / "workload-data-parallel.toml")
    assert w["time_s"] > 0 and w["tasks"], w
    assert w["chips"] > 0 and w["model"] and w["workload"] and w["machine"], w
    # The DRAM u-benchmark: 267 GB/s at 12 GT/s (the calibration point).
    d = podsim.dram()
    assert abs(d["bandwidth_bytes_per_s"] - 267e9) < 0.5e9, d
    assert d["chip"] == "wormhole" and d["placement"] == "next-to-bank" and d["noc"] == 0, d
    # With energy=True, `--energy`'s keys. The DRAM u-benchmark moves 13,369,344 B: at the
    # GDDR6 7.5 pJ/bit that is 13369344 x 8 x 7.5e-12 J of memory energy, and the board draws
    # its idle 19 W for the run, bytes over bandwidth seconds.
    assert "energy_j" not in d, d
    de = podsim.dram(energy=True)
    parts = de["energy_breakdown_j"]
    assert close(parts["memory"], 13369344 * 8 * 7.5e-12, 1e-9), de
    assert close(parts["idle"], 19.0 * de["bytes"] / de["bandwidth_bytes_per_s"], 1e-3), de
    assert close(sum(parts.values()), de["energy_j"], 1e-12), de
    # A workload's breakdown sums to its total, which is the mean power per chip over the run.
    we = podsim.workload(ROOT / "examples" / "workload-data-parallel.toml", energy=True)
    assert close(sum(we["energy_breakdown_j"].values()), we["energy_j"], 1e-12), we
    assert close(we["energy_j"], we["average_power_w"] * we["time_s"] * we["chips"], 1e-9), we
    assert we["time_s"] == w["time_s"], (we, w)
    # The links' energy needs the flow model: refused on the analytic one, as the command does.
    try:
        podsim.workload(ROOT / "examples" / "workload-data-parallel.toml", "analytic", True)
    except ValueError as e:
        assert "flow" in str(e), e
    else:
        raise AssertionError("energy on the analytic model should raise")
    # A missing workload file raises FileNotFoundError, as open() would, naming the file.
    missing = ROOT / "examples" / "no-such-workload.toml"
    try:
        podsim.workload(missing)
    except FileNotFoundError as e:
        assert e.filename == str(missing) and "no-such-workload.toml" in str(e), e
    else:
        raise AssertionError("a missing workload file should raise FileNotFoundError")
    # A directory is not a workload file: IsADirectoryError, as open() would raise.
    try:
        podsim.workload(ROOT / "examples")
    except IsADirectoryError as e:
        assert e.filename == str(ROOT / "examples"), e
    else:
        raise AssertionError("a directory should raise IsADirectoryError")
    # A workload file that is there but wrong is still a ValueError naming the file.
    try:
        podsim.workload(ROOT / "examples" / "machines" / "dgx-a100.toml")
    except ValueError as e:
        assert "dgx-a100.toml" in str(e), e
    else:
        raise AssertionError("a machine file is not a workload file")
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
