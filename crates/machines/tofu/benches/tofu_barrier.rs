//! The Tofu barrier across all of Fugaku (tofu:fugaku, 158,976 TofuD nodes, one process per
//! node): the hardware barrier's gate graph timed serialized and minimum, and the software
//! dissemination barrier on the same network, in one call. The bar: seconds. The
//! baseline in the same run is the one-node barrier of Table VI's 48 points.

#![allow(missing_docs)] // criterion_group! generates undocumented functions

use criterion::{Criterion, criterion_group, criterion_main};
use podsim_tofu::barrier::{Allocation, machine_barrier, node_barrier};
use podsim_topology::Tofu;

fn bench(c: &mut Criterion) {
    let fugaku = Tofu::fugaku();
    let mut g = c.benchmark_group("tofu_barrier");
    g.sample_size(10);
    g.bench_function("node_48_points", |b| {
        b.iter(|| node_barrier(48, Allocation::Test).expect("barrier"))
    });
    g.bench_function("fugaku_1_process_per_node", |b| {
        b.iter(|| machine_barrier(&fugaku, 1, Allocation::Mpi, u64::MAX).expect("barrier"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
