//! The compute models' speed (issue 18, item 5):
//! - `os_array`: PE updates per second of the cycle-level output-stationary array (the
//!   lecture's `mxu`), 128x128 streaming a 128x128x1024 product: 128 x 128 PEs x 1279 edges =
//!   20.96 M PE updates per run;
//! - `gemm_model`: the closed-form tiling model ([`podsim_compute::gemm`]), GEMMs evaluated per
//!   second over a fixed set of 3 dataflows x 2 conventions x 4 shapes on a 128x128 array with
//!   4 MiB scratchpads and a finite DRAM bandwidth (24 evaluations per iteration);
//! - `gemm_simulated`: the same GEMM run fold by fold on the register-level arrays
//!   ([`podsim_compute::simulate`]), 16x16 array, 40x40x64 (3 x 3 folds), MACs per second.

#![allow(missing_docs)] // criterion_group! generates undocumented functions

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use podsim_compute::{Convention, Dataflow, GemmSpec, MemorySpec, Widths, gemm, run_os, simulate};

fn os_array(c: &mut Criterion) {
    let (s, k) = (128usize, 1024usize);
    let a: Vec<i64> = (0..s * k).map(|i| (i % 251) as i64 - 125).collect();
    let b: Vec<i64> = (0..s * k).map(|i| (i % 241) as i64 - 120).collect();
    let edges = (2 * (s - 1) + k + 1) as u64;
    let mut g = c.benchmark_group("os_array");
    g.sample_size(10);
    g.throughput(Throughput::Elements((s * s) as u64 * edges));
    g.bench_function("128x128_k1024", |bch| {
        bch.iter(|| run_os((s, s), k, Widths::INT8_INT32, &a, &b, false).unwrap())
    });
    g.finish();
}

fn gemm_model(c: &mut Criterion) {
    let memory = MemorySpec {
        sram_a: 4 << 20,
        sram_b: 4 << 20,
        sram_d: 4 << 20,
        dram_bytes_per_cycle: Some(64.0),
        ..MemorySpec::DEFAULT
    };
    let mut specs = Vec::new();
    for dataflow in [Dataflow::Os, Dataflow::Ws, Dataflow::Is] {
        for convention in [Convention::Rtl, Convention::ScaleSim] {
            for (m, n, k) in [
                (128, 128, 128),
                (1000, 1000, 1000),
                (8192, 28672, 8192),
                (1, 4096, 4096),
            ] {
                specs.push(GemmSpec {
                    rows: 128,
                    cols: 128,
                    dataflow,
                    m,
                    n,
                    k,
                    convention,
                    memory,
                });
            }
        }
    }
    let mut g = c.benchmark_group("gemm_model");
    g.throughput(Throughput::Elements(specs.len() as u64));
    g.bench_function("24_gemms_128x128", |bch| {
        bch.iter(|| {
            specs
                .iter()
                .map(|s| gemm(std::hint::black_box(s)).unwrap().cycles)
                .sum::<u64>()
        })
    });
    g.finish();
}

fn gemm_simulated(c: &mut Criterion) {
    let (m, n, k) = (40usize, 40usize, 64usize);
    let a: Vec<i64> = (0..m * k).map(|i| (i % 13) as i64 - 6).collect();
    let b: Vec<i64> = (0..k * n).map(|i| (i % 11) as i64 - 5).collect();
    let mut g = c.benchmark_group("gemm_simulated");
    g.sample_size(10);
    g.throughput(Throughput::Elements((m * n * k) as u64));
    for (name, dataflow) in [
        ("os", Dataflow::Os),
        ("ws", Dataflow::Ws),
        ("is", Dataflow::Is),
    ] {
        g.bench_function(format!("16x16_{name}_40x40x64"), |bch| {
            bch.iter(|| {
                simulate((16, 16), dataflow, Widths::INT8_INT32, (m, n, k), &a, &b).unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, os_array, gemm_model, gemm_simulated);
criterion_main!(benches);
