//! PE updates per second of the cycle-level output-stationary array (the lecture's `mxu`),
//! 128x128 streaming a 128x128x1024 product: 128 x 128 PEs x 1279 edges = 20.96 M PE updates
//! per run.

#![allow(missing_docs)] // criterion_group! generates undocumented functions

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use podsim_compute::{Widths, run_os};

fn bench(c: &mut Criterion) {
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

criterion_group!(benches, bench);
criterion_main!(benches);
