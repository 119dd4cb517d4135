//! A `podsim dram` run of a full Wormhole at the packet level: the document's u-benchmark
//! (12 readers next to their banks, 8 blocks of 139,264 bytes each, about 50,000 NoC cycles of
//! the 10 x 12 grid's two-NoC routers, cycle by cycle). The bar: seconds, not minutes.
//! The same run on the top rows (congested, four times the cycles) and the DRAM-bound matmul
//! of Llama3-70B's FF1 shard sit beside it.

#![allow(missing_docs)] // criterion_group! generates undocumented functions

use criterion::{Criterion, criterion_group, criterion_main};
use podsim_tenstorrent::matmul::{self as tt_matmul, Matmul};
use podsim_tenstorrent::placement::Placement;
use podsim_tenstorrent::study::{Study, run};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("tt_dram");
    g.sample_size(10);
    let u = Study::u_benchmark(12e9);
    g.bench_function("u_benchmark_full_grid", |b| {
        b.iter(|| run(&u).expect("u-benchmark"))
    });
    let top = Study {
        placement: Placement::TopRows,
        ..u.clone()
    };
    g.bench_function("top_rows_full_grid", |b| {
        b.iter(|| run(&top).expect("top rows"))
    });
    let mm = Matmul::new(32, 8192, 3584, 12e9);
    g.bench_function("matmul_llama3_70b_ff1", |b| {
        b.iter(|| tt_matmul::run(&mm).expect("matmul"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
