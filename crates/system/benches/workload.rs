//! Workload executor throughput: 100,000 tasks (alternating compute on all 16 chips of a 4x4
//! torus and a ring of sends between them, each after the previous task, plus every tenth
//! task an 8-rank all-reduce on a list of chips) on the analytic model, and the same on the
//! flow model.

#![allow(missing_docs)] // criterion_group! generates undocumented functions

use criterion::{Criterion, criterion_group, criterion_main};
use podsim_collective::{Algorithm, Kind, ModelKind};
use podsim_net::Packetization;
use podsim_system::new_model;
use podsim_system::workload::{ChipSpec, Group, Task, Unit, Work, Workload, run};
use podsim_topology::{KAryNCube, LinkKind, LinkSpec, Network};
use podsim_units::{Bandwidth, Bytes, Flops, SimDuration};

/// `n` tasks on a 4x4 torus of TPU v4 chips.
pub fn tasks(n: usize) -> Workload {
    let mut tasks = Vec::with_capacity(n);
    for i in 0..n {
        let work = match i % 10 {
            9 => Work::Collective {
                kind: Kind::AllReduce,
                algorithm: Algorithm::Ring,
                bytes: Bytes(1 << 20),
            },
            k if k % 2 == 0 => Work::Compute {
                flops: Flops(1_000_000_000),
                efficiency: 0.5,
                unit: Unit::Matrix,
            },
            _ => Work::Send {
                to: (0..16).map(|c| (c + 1) % 16).collect(),
                bytes: Bytes(64 << 10),
            },
        };
        let group = if i % 10 == 9 {
            Group::List((0..8).collect())
        } else {
            Group::All
        };
        tasks.push(Task {
            name: format!("t{i}"),
            work,
            group,
            after: if i == 0 { vec![] } else { vec![i - 1] },
            repeat: 1,
        });
    }
    Workload { tasks }
}

fn torus() -> Network {
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(50).unwrap(),
        latency: SimDuration::from_ns(100),
    };
    Network::Cube(KAryNCube::new(vec![4, 4], vec![true, true], link).unwrap())
}

fn bench(c: &mut Criterion) {
    let net = torus();
    let chip = ChipSpec::preset("tpuv4").unwrap();
    let w = tasks(100_000);
    let mut g = c.benchmark_group("workload");
    g.sample_size(10);
    for model in [ModelKind::Analytic, ModelKind::Flow] {
        g.bench_function(format!("100k tasks, {}", model.name()), |b| {
            b.iter(|| {
                let mut m = new_model(&net, model, Packetization::NONE, false).unwrap();
                run(&w, &net, &chip, m.as_mut()).unwrap().time_s
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
