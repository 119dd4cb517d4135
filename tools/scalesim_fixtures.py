#!/usr/bin/env python3
"""Run SCALE-Sim v3 (PyPI `scalesim` 3.0.0; needs numpy < 2.4) on GEMM shapes and print what it
reports, as the fixture table in crates/compute/tests/scalesim_fixtures.txt.

  pip install scalesim "numpy<2.4"
  python3 tools/scalesim_fixtures.py > crates/compute/tests/scalesim_fixtures.txt

Each run uses the config below (64 kB SRAMs, CALC bandwidth mode: no stalls) with the array size
and dataflow of the row, and reads COMPUTE_REPORT.csv: the "Total Cycles" column, the mapping
efficiency and the compute utilisation.
"""
import csv
import os
import subprocess
import sys
import tempfile

CFG = """[general]
run_name = fixture

[architecture_presets]
ArrayHeight: {rows}
ArrayWidth: {cols}
IfmapSramSzkB: 64
FilterSramSzkB: 64
OfmapSramSzkB: 64
IfmapOffset: 0
FilterOffset: 10000000
OfmapOffset: 20000000
Dataflow: {df}
Bandwidth: 10
ReadRequestBuffer: 32
WriteRequestBuffer: 32

[layout]
IfmapCustomLayout: False
IfmapSRAMBankBandwidth: 10
IfmapSRAMBankNum: 10
IfmapSRAMBankPort: 2
FilterCustomLayout: False
FilterSRAMBankBandwidth: 10
FilterSRAMBankNum: 10
FilterSRAMBankPort: 2

[sparsity]
SparsitySupport: false
SparseRep: ellpack_block
OptimizedMapping: false
BlockSize: 8
RandomNumberGeneratorSeed: 40

[run_presets]
InterfaceBandwidth: CALC
UseRamulatorTrace: False
"""

SHAPES = [
    # rows, cols, dataflow, M, N, K
    (4, 4, "os", 8, 8, 8),
    (4, 4, "os", 5, 7, 3),
    (4, 4, "ws", 8, 8, 8),
    (4, 4, "ws", 5, 7, 3),
    (4, 4, "is", 8, 8, 8),
    (4, 4, "is", 5, 7, 3),
    (8, 4, "os", 20, 9, 13),
    (8, 4, "ws", 20, 9, 13),
    (8, 4, "is", 20, 9, 13),
    (4, 8, "os", 3, 17, 6),
    (4, 8, "ws", 3, 17, 6),
    (4, 8, "is", 3, 17, 6),
    (16, 16, "os", 64, 48, 40),
    (16, 16, "ws", 64, 48, 40),
    (16, 16, "is", 64, 48, 40),
    (32, 32, "os", 100, 70, 50),
    (32, 32, "ws", 100, 70, 50),
    (32, 32, "is", 100, 70, 50),
    (32, 32, "os", 256, 512, 1024),  # the timing case: about 30 s in SCALE-Sim here
]


def run(rows, cols, df, m, n, k):
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "scale.cfg"), "w") as f:
            f.write(CFG.format(rows=rows, cols=cols, df=df))
        with open(os.path.join(d, "gemm.csv"), "w") as f:
            f.write(f"Layer, M, N, K,\ng, {m}, {n}, {k},\n")
        with open(os.path.join(d, "layout.csv"), "w") as f:
            f.write("Layer,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,"
                    "Num Filter,Strides,\n")
        subprocess.run([sys.executable, "-m", "scalesim.scale", "-c", "scale.cfg", "-t",
                        "gemm.csv", "-l", "layout.csv", "-p", "out", "-i", "gemm", "-s", "N"],
                       cwd=d, check=True, capture_output=True)
        with open(os.path.join(d, "out", "fixture", "COMPUTE_REPORT.csv")) as f:
            rec = list(csv.reader(f))[1]
        return int(rec[2]), float(rec[5]), float(rec[6])


def main():
    print("# SCALE-Sim v3.0.0 (PyPI scalesim), CALC bandwidth; tools/scalesim_fixtures.py")
    print("# rows cols dataflow M N K total_cycles mapping_efficiency_% compute_util_%")
    for s in SHAPES:
        total, mapping, util = run(*s)
        print(" ".join(str(x) for x in s), total, f"{mapping:.6f}", f"{util:.6f}")


if __name__ == "__main__":
    main()
