#!/usr/bin/env python3
"""Golden vectors for podsim-numerics, from the ml_dtypes package (PyPI) and numpy.

Run from the repository root:  pip install ml_dtypes "numpy<2.4"; python3 tools/golden_numerics.py
Writes crates/numerics/tests/golden/{codes,convert}.txt. The tests compare podsim's conversions
with these bit for bit; rerunning the script reproduces the files exactly (fixed seed).
"""
import ml_dtypes
import numpy as np

OUT = "crates/numerics/tests/golden/"
FORMATS = [
    ("bf16", ml_dtypes.bfloat16, np.uint16),
    ("fp16", np.float16, np.uint16),
    ("e4m3", ml_dtypes.float8_e4m3fn, np.uint8),
    ("e5m2", ml_dtypes.float8_e5m2, np.uint8),
]


def f32_bits(a):
    return np.asarray(a, dtype=np.float32).view(np.uint32)


def main():
    header = f"# ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}; tools/golden_numerics.py\n"
    # Every code of each 8-bit format, decoded to float32.
    with open(OUT + "codes.txt", "w") as f:
        f.write(header)
        f.write("# format code float32-bits-of-decoded-value\n")
        codes = np.arange(256, dtype=np.uint8)
        for name, t, _ in FORMATS:
            if np.dtype(t).itemsize != 1:
                continue
            vals = f32_bits(codes.view(t).astype(np.float32))
            for c, v in zip(codes, vals):
                f.write(f"{name} {c:02x} {v:08x}\n")
    # Random float32 values through each conversion (float32 -> format), plus the float32
    # value of the result.
    rng = np.random.default_rng(20261121)
    parts = [
        rng.integers(0, 2**32, size=1000, dtype=np.uint64).astype(np.uint32),  # any bits
        f32_bits(rng.standard_normal(1000) * 2.0 ** rng.integers(-30, 30, size=1000)),
        f32_bits(rng.standard_normal(1000) * 2.0 ** rng.integers(-20, 18, size=1000)),
    ]
    # Exact ties and near-ties around 8-bit codes (the rounding edge cases).
    edges = []
    for name, t, u in FORMATS:
        if np.dtype(t).itemsize != 1:
            continue
        v = np.arange(256, dtype=np.uint8).view(t).astype(np.float64)
        v = np.sort(v[np.isfinite(v)])
        mids = (v[:-1] + v[1:]) / 2
        edges += [mids, np.nextafter(mids.astype(np.float32), np.float32(np.inf)),
                  np.nextafter(mids.astype(np.float32), np.float32(-np.inf))]
    edges.append(np.array([448, 464, 465, 479, 480, 57344, 61440, 61439, 65504, 65519.99,
                           65520, 3.3895314e38, 3.4e38, 1e-45, 5.9604645e-08, 2.9802322e-08,
                           2.9802326e-08, 0.0, -0.0, np.inf, -np.inf]))
    parts.append(f32_bits(np.concatenate(edges).astype(np.float32)))
    x = np.concatenate(parts).view(np.float32)
    with open(OUT + "convert.txt", "w") as f:
        f.write(header)
        f.write("# float32-bits then, per format (" + " ".join(n for n, _, _ in FORMATS)
                + "), the code from astype\n")
        cols = []
        for _, t, u in FORMATS:
            with np.errstate(all="ignore"):
                cols.append(x.astype(t).view(u))
        for i, b in enumerate(x.view(np.uint32)):
            f.write(f"{b:08x} " + " ".join(f"{int(c[i]):x}" for c in cols) + "\n")


if __name__ == "__main__":
    main()
