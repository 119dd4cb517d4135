use super::*;
use crate::chips::Chip;
use crate::lecture::{TensorCore, dot, os_completion_cycle, os_settle_cycle};
use crate::stationary::stationary_fold_cycles;
use podsim_numerics::Int;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Random int8 values, none zero (so that every product changes an accumulator).
fn nonzero(rng: &mut Xoshiro256PlusPlus, n: usize) -> Vec<i64> {
    (0..n)
        .map(|_| {
            let v: i64 = rng.random_range(-128..127);
            if v >= 0 { v + 1 } else { v }
        })
        .collect()
}

fn matmul(m: usize, n: usize, k: usize, a: &[i64], b: &[i64], out: Int) -> Vec<i64> {
    let mut d = vec![0; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut s: i128 = 0;
            for kk in 0..k {
                s += i128::from(a[i * k + kk] * b[kk * n + j]);
            }
            d[i * n + j] = out.wrap(s);
        }
    }
    d
}

#[test]
fn dot_wraps_in_the_output_width() {
    let w = Widths::INT8_INT32;
    // 4 x (-128 x -128) = 65536, plus c.
    assert_eq!(dot(w, &[-128; 4], &[-128; 4], 5), 65_541);
    // int32 wrap-around: 65536 + (2^31 - 1) wraps to -2^31 + 65535.
    assert_eq!(
        dot(w, &[-128; 4], &[-128; 4], i64::from(i32::MAX)),
        i64::from(i32::MIN) + 65_535
    );
    // A 16-bit accumulator: 65536 wraps to 0.
    let w16 = Widths {
        input: Int::I8,
        output: Int::I16,
    };
    assert_eq!(dot(w16, &[-128; 4], &[-128; 4], 0), 0);
}

#[test]
fn tensor_core_latency_two_cycles_throughput_one_per_cycle() {
    let w = Widths::INT8_INT32;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut tc = TensorCore::new(4, w);
    let inputs: Vec<_> = (0..6)
        .map(|_| {
            (
                nonzero(&mut rng, 16),
                nonzero(&mut rng, 16),
                (0..16)
                    .map(|_| rng.random_range(-1000..1000))
                    .collect::<Vec<i64>>(),
            )
        })
        .collect();
    let mut seen = vec![];
    for (a, b, c) in &inputs {
        tc.clock(a, b, c).unwrap();
        seen.push(tc.d().to_vec());
    }
    // After edge t+1 (cycle t+1) the registers hold cycle t's inputs; after edge t+2 d holds
    // D = A B + C of them: the output observed in cycle t + 2. seen[e] is cycle e + 1.
    assert_eq!(seen[0], vec![0; 16], "cycle 1: d still reset");
    for (t, (a, b, c)) in inputs.iter().enumerate().take(5) {
        let mut want = matmul(4, 4, 4, a, b, Int::I32);
        for (x, y) in want.iter_mut().zip(c) {
            *x = Int::I32.wrap(i128::from(*x) + i128::from(*y));
        }
        assert_eq!(
            seen[t + 1],
            want,
            "inputs of cycle {t} seen in cycle {}",
            t + 2
        );
    }
    assert_eq!(TensorCore::LATENCY_CYCLES, 2);
}

#[test]
fn os_array_matches_the_closed_form_on_random_shapes() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let w = Widths {
        input: Int::I8,
        output: Int::I32,
    };
    for _ in 0..300 {
        let (r, c, k) = (
            rng.random_range(1..9),
            rng.random_range(1..9),
            rng.random_range(1..20),
        );
        let a = nonzero(&mut rng, r * k);
        let b = nonzero(&mut rng, k * c);
        let run = run_os((r, c), k, w, &a, &b, false).unwrap();
        assert_eq!(run.d, matmul(r, c, k, &a, &b, w.output));
        for i in 0..r {
            for j in 0..c {
                assert_eq!(
                    run.settle[i * c + j],
                    os_settle_cycle(i, j, k),
                    "{r}x{c} k={k}"
                );
            }
        }
        let last = run.settle.iter().max().copied().unwrap();
        assert_eq!(last, os_completion_cycle(r, c, k));
    }
}

#[test]
fn os_array_s4_and_s8_complete_in_the_derived_cycle() {
    // Output (3, 3) of a 4x4 array with K = 4: 3 + 3 + 4 + 1 = 11; 8x8 with K = 8: 7+7+8+1 = 23.
    assert_eq!(os_completion_cycle(4, 4, 4), 11);
    assert_eq!(os_completion_cycle(8, 8, 8), 23);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    for (s, want) in [(4usize, 11u64), (8, 23)] {
        let a = nonzero(&mut rng, s * s);
        let b = nonzero(&mut rng, s * s);
        let run = run_os((s, s), s, Widths::INT8_INT32, &a, &b, true).unwrap();
        assert_eq!(run.settle.iter().max().copied(), Some(want));
        // The trace: cycle `want` holds the result, cycle want - 1 does not yet.
        assert_eq!(run.trace[want as usize], run.d);
        assert_ne!(run.trace[want as usize - 1], run.d);
        // Output (0, 0) is final in cycle 0 + 0 + K + 1.
        assert_eq!(run.settle[0], s as u64 + 1);
    }
}

#[test]
fn stationary_arrays_match_the_closed_form() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
    let w = Widths::INT8_INT32;
    for _ in 0..200 {
        let (r, c, t) = (
            rng.random_range(1..9),
            rng.random_range(1..9),
            rng.random_range(1..20),
        );
        let used = rng.random_range(1..=c);
        let s = nonzero(&mut rng, r * c);
        let x = nonzero(&mut rng, t * r);
        let run = stationary::run_stationary((r, c), w, &s, &x, t, used).unwrap();
        // y = x s (t x r times r x c), in the used columns (the run stops after them).
        let want = matmul(t, c, r, &x, &s, w.output);
        for m in 0..t {
            for j in 0..used {
                assert_eq!(run.y[m * c + j], want[m * c + j]);
                assert_eq!(run.ready[m * c + j], (2 * r + m + j + 1) as u64);
            }
        }
        assert_eq!(run.cycles, stationary_fold_cycles(r, t, used));
    }
}

#[test]
fn tiled_gemm_closed_form_equals_the_cycle_level_run() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let w = Widths::INT8_INT32;
    for i in 0..300 {
        let dataflow = [Dataflow::Os, Dataflow::Ws, Dataflow::Is][i % 3];
        let (r, c) = (rng.random_range(1..7), rng.random_range(1..7));
        let (m, n, k) = (
            rng.random_range(1..15),
            rng.random_range(1..15),
            rng.random_range(1..15),
        );
        let a = nonzero(&mut rng, m * k);
        let b = nonzero(&mut rng, k * n);
        let sim = simulate((r, c), dataflow, w, (m, n, k), &a, &b).unwrap();
        assert_eq!(sim.d, matmul(m, n, k, &a, &b, w.output), "{dataflow}");
        let rep = gemm(&GemmSpec {
            rows: r as u64,
            cols: c as u64,
            dataflow,
            m: m as u64,
            n: n as u64,
            k: k as u64,
            convention: Convention::Rtl,
            memory: MemorySpec::DEFAULT,
        })
        .unwrap();
        assert_eq!(
            (rep.cycles, rep.folds),
            (sim.cycles, sim.folds),
            "{dataflow} {r}x{c} m={m} n={n} k={k}"
        );
    }
}

#[test]
fn scalesim_convention_matches_scalesim_fixtures() {
    let fixtures = include_str!("../tests/scalesim_fixtures.txt");
    let mut seen = 0;
    for line in fixtures.lines().filter(|l| !l.starts_with('#')) {
        let v: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| v[i].parse::<u64>().unwrap();
        let spec = GemmSpec {
            rows: num(0),
            cols: num(1),
            dataflow: Dataflow::parse(v[2]).unwrap(),
            m: num(3),
            n: num(4),
            k: num(5),
            convention: Convention::ScaleSim,
            memory: MemorySpec::DEFAULT,
        };
        let rep = gemm(&spec).unwrap();
        assert_eq!(rep.cycles, num(6), "{line}");
        let mapping: f64 = v[7].parse().unwrap();
        assert!(
            (rep.mapping_efficiency * 100.0 - mapping).abs() < 1e-4,
            "{line}"
        );
        seen += 1;
    }
    assert!(seen >= 18);
}

#[test]
fn traffic_by_hand() {
    // os, 4x4 array, M = N = K = 8: 2 x 2 folds. A (64 elements) is streamed once per column
    // fold (2), B once per row fold (2): 128 + 128 reads; 64 output writes. Everything fits in
    // 64 KiB: DRAM = 64 + 64 bytes of int8 in, 64 x 4 bytes out = 384.
    let spec = GemmSpec {
        rows: 4,
        cols: 4,
        dataflow: Dataflow::Os,
        m: 8,
        n: 8,
        k: 8,
        convention: Convention::Rtl,
        memory: MemorySpec::DEFAULT,
    };
    let r = gemm(&spec).unwrap();
    assert_eq!(
        (r.sram_reads_a, r.sram_reads_b, r.sram_writes),
        (128, 128, 64)
    );
    assert_eq!(r.dram_bytes, 384);
    assert_eq!(r.macs, 512);
    // rtl cycles: 4 folds x (4 + 4 + 8) = 64; utilisation 512 / (64 x 16) = 0.5.
    assert_eq!(r.cycles, 64);
    assert!((r.utilization - 0.5).abs() < 1e-12);
    // With a 1 byte/cycle DRAM: 384 cycles of traffic, 64 of compute: the first fold's tiles
    // (4 x 8 of A + 4 x 8 of B = 64 bytes) plus 384 - 64 = 320 more cycles of stall.
    let mut slow = spec;
    slow.memory.dram_bytes_per_cycle = Some(1.0);
    let r = gemm(&slow).unwrap();
    assert_eq!(r.stall_cycles, 64 + 320);
    // A 16-byte A scratchpad (8 bytes per buffer) cannot hold A: it is fetched per column fold.
    let mut tiny = spec;
    tiny.memory.sram_a = 16;
    assert_eq!(gemm(&tiny).unwrap().dram_bytes, 384 + 64);
}

#[test]
fn chip_peaks() {
    // TPU v4: 2 x 4 x 128 x 128 MACs x 2 x 1.05 GHz = 275.25 TFLOPS (Table 4: 275).
    let tpu = Chip::preset("tpuv4").unwrap();
    assert_eq!(tpu.peak_matrix_flops(), 275.251_2e12);
    // Ridge point 275.25e12 / 1.2e12 = 229.4 FLOPs/byte.
    assert!((tpu.ridge_point() - 229.376).abs() < 1e-9);
    assert_eq!(tpu.roofline(10.0), 12e12);
    // D1: 354 x 4 x 64 x 2 x 2 GHz = 362.496 TFLOPS; FP32 354 x 32 x 2 GHz = 22.656 TFLOPS.
    let d1 = Chip::preset("d1").unwrap();
    assert_eq!(d1.peak_matrix_flops(), 362.496e12);
    assert_eq!(d1.peak_fp32_flops(), 22.656e12);
    // One node: 4 x 64 x 2 x 2 GHz = 1.024 TFLOPS.
    assert_eq!(
        Chip::preset("dojo-node").unwrap().peak_matrix_flops(),
        1.024e12
    );
}

#[test]
fn tpu_presets_carry_table4s_system_features() {
    // tpu-v4-isca2023.txt Table 4: HBM 32 GiB on both; CMEM 128 MiB on v4; ICI 6 links @ 50
    // GB/s (v4) and 4 links @ 70 GB/s (v3); 4 and 8 chips per CPU host; 4 and 2 SparseCores;
    // v4 builds a 3-D torus, v3 a 2-D one (section 3.6).
    let v4 = crate::chips::Chip::preset("tpuv4").unwrap().tpu.unwrap();
    let v3 = crate::chips::Chip::preset("tpuv3").unwrap().tpu.unwrap();
    assert_eq!(
        (
            v4.hbm_bytes,
            v4.cmem_bytes,
            v4.ici_links,
            v4.ici_link_bytes_per_s
        ),
        (32 << 30, 128 << 20, 6, 50_000_000_000)
    );
    assert_eq!(
        (
            v3.hbm_bytes,
            v3.cmem_bytes,
            v3.ici_links,
            v3.ici_link_bytes_per_s
        ),
        (32 << 30, 0, 4, 70_000_000_000)
    );
    assert_eq!(
        (v4.chips_per_host, v4.sparsecores, v4.torus_dims),
        (4, 4, 3)
    );
    assert_eq!(
        (v3.chips_per_host, v3.sparsecores, v3.torus_dims),
        (8, 2, 2)
    );
    assert!(crate::chips::Chip::preset("a100").unwrap().tpu.is_none());
}

#[test]
fn double_buffered_weights_hide_the_tile_load_by_hand() {
    use crate::gemm::{WeightLoad, gemm_loaded};
    // ws on a 4x4 array, K = N = 8: 2 row folds x 2 column folds = 4 folds, R = 4, the last
    // fold 4 columns wide.
    let spec = |m| GemmSpec {
        rows: 4,
        cols: 4,
        dataflow: Dataflow::Ws,
        m,
        n: 8,
        k: 8,
        convention: Convention::Rtl,
        memory: MemorySpec::DEFAULT,
    };
    let cycles = |m, load| gemm_loaded(&spec(m), load).unwrap().cycles;
    // T = M = 2 rows, fewer than R: serial, 4 x (2R + T) + Scf summed over folds
    // = 4 x (8 + 2) + 4 x 4 = 56; double-buffered, the first load (4), a fold every max(T, R)
    // = 4 cycles after it (3 x 4), the last fold's rows, partial sums and columns
    // (2 + 4 + 4): 4 + 12 + 10 = 26.
    assert_eq!(cycles(2, WeightLoad::Serial), 56);
    assert_eq!(cycles(2, WeightLoad::DoubleBuffered), 26);
    // T = 10 rows, more than R: the loads hide behind the rows, a fold every 10 cycles:
    // 4 + 3 x 10 + (10 + 4 + 4) = 52 against 4 x 18 + 16 = 88.
    assert_eq!(cycles(10, WeightLoad::Serial), 88);
    assert_eq!(cycles(10, WeightLoad::DoubleBuffered), 52);
    // One fold: nothing to overlap, the serial 2R + T + Scf = 8 + 3 + 4 = 15 either way.
    let one = GemmSpec {
        m: 3,
        n: 4,
        k: 4,
        ..spec(3)
    };
    for load in [WeightLoad::Serial, WeightLoad::DoubleBuffered] {
        assert_eq!(gemm_loaded(&one, load).unwrap().cycles, 15);
    }
    // The serial load is what `gemm` and the register-level arrays take.
    assert_eq!(gemm(&spec(2)).unwrap().cycles, 56);
    // Output-stationary has no stationary tile: unchanged (4 folds x (4 + 4 + 8) = 64).
    let os = GemmSpec {
        dataflow: Dataflow::Os,
        ..spec(8)
    };
    assert_eq!(
        gemm_loaded(&os, WeightLoad::DoubleBuffered).unwrap().cycles,
        64
    );
    // SCALE-Sim has no double-buffered array: refused, not guessed.
    let ss = GemmSpec {
        convention: Convention::ScaleSim,
        ..spec(2)
    };
    assert!(gemm_loaded(&ss, WeightLoad::DoubleBuffered).is_err());
}
