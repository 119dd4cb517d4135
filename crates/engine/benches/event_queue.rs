//! The "hold" benchmark of the pending-event set: P events pending; each step pops the earliest
//! and pushes one at now + U[1, 1000] cycles of a 1 GHz clock. Our timing wheel and
//! `std::collections::BinaryHeap` (keyed the same way: time, then sequence) run the same
//! random delays in the same process; criterion prints each one's events per second
//! ("thrpt", in elements/s; one element = one pop plus one push).

#![allow(missing_docs)] // criterion_group! generates undocumented functions

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use podsim_engine::{EventQueue, RngStreams, SimRng};
use podsim_units::SimTime;
use rand::Rng;

const CYCLE_PS: u64 = 1_000;
const STEPS: u64 = 100_000;

fn delay(rng: &mut SimRng) -> u64 {
    rng.random_range(1..=1000) * CYCLE_PS
}

fn hold(c: &mut Criterion) {
    let mut group = c.benchmark_group("hold");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(STEPS));
    for pending in [1_000usize, 100_000, 1_000_000] {
        let mut rng = RngStreams::new(7).stream("bench.hold");
        let mut wheel = EventQueue::new();
        for i in 0..pending {
            wheel.push(SimTime::from_ps(delay(&mut rng)), 0, i as u32);
        }
        group.bench_function(BenchmarkId::new("podsim_wheel", pending), |b| {
            b.iter(|| {
                for _ in 0..STEPS {
                    let (t, ev) = wheel.pop().expect("hold keeps P events pending");
                    wheel.push(
                        SimTime::from_ps(t.as_ps() + delay(&mut rng)),
                        0,
                        black_box(ev),
                    );
                }
            })
        });

        let mut rng = RngStreams::new(7).stream("bench.hold");
        let mut heap = BinaryHeap::new();
        let mut seq = 0u64;
        for i in 0..pending {
            heap.push(Reverse((delay(&mut rng), seq, i as u32)));
            seq += 1;
        }
        group.bench_function(BenchmarkId::new("std_binary_heap", pending), |b| {
            b.iter(|| {
                for _ in 0..STEPS {
                    let Reverse((t, _, ev)) = heap.pop().expect("hold keeps P events pending");
                    heap.push(Reverse((t + delay(&mut rng), seq, black_box(ev))));
                    seq += 1;
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, hold);
criterion_main!(benches);
