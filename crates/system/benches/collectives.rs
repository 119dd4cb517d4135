//! Collectives at pod scale on the flow and analytic models (issue 18, item 3): ring
//! all-reduce of 64 MiB and direct all-to-all of 16 MiB per rank on 3-D tori of 50 GB/s links,
//! as `podsim collective` runs them (functional check included). Criterion times the small
//! cases; the large ones are timed once each and printed (wall seconds, transfers per second),
//! since one run takes seconds: 1024-chip ring (flow and analytic), 512-chip all-to-all; with
//! `PODSIM_BENCH_POD=1` also the 4096-chip ring (both models) and the 1024-chip all-to-all
//! (minutes, GBs).

#![allow(missing_docs)] // criterion_group! generates undocumented functions

use criterion::{Criterion, criterion_group, criterion_main};
use podsim_collective::{Algorithm, Kind, ModelKind, Setup};
use podsim_topology::{KAryNCube, LinkKind, LinkSpec, Network};
use podsim_units::{Bandwidth, SimDuration};

fn torus(dims: &[u32]) -> Network {
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(50).expect("50 GB/s"),
        latency: SimDuration::ZERO,
    };
    Network::Cube(KAryNCube::new(dims.to_vec(), vec![true; dims.len()], link).expect("torus"))
}

fn setup(kind: Kind, bytes: u64, model: ModelKind) -> Setup {
    Setup {
        kind,
        algorithm: if kind == Kind::AllToAll {
            Algorithm::Direct
        } else {
            Algorithm::Ring
        },
        bytes,
        model,
        packets: podsim_net::Packetization::NONE,
        chunk: 0,
        ecmp: true,
        memory_limit: 64 << 30,
    }
}

/// Time one run and print it.
fn once(name: &str, dims: &[u32], s: Setup) {
    let net = torus(dims);
    let start = std::time::Instant::now();
    let m = podsim_system::measure(&net, &s).expect("the collective runs");
    let wall = start.elapsed().as_secs_f64();
    eprintln!(
        "{name}: {} transfers in {wall:.2} s wall = {:.0} transfers/s (simulated {:.4e} s, verified {})",
        m.transfers,
        m.transfers as f64 / wall,
        m.time_s,
        m.verified
    );
}

fn bench(c: &mut Criterion) {
    const MIB: u64 = 1 << 20;
    once(
        "flow ring all-reduce 64 MiB, 1024 chips (torus 8x8x16)",
        &[8, 8, 16],
        setup(Kind::AllReduce, 64 * MIB, ModelKind::Flow),
    );
    once(
        "flow all-to-all 16 MiB, 512 chips (torus 8x8x8)",
        &[8, 8, 8],
        setup(Kind::AllToAll, 16 * MIB, ModelKind::Flow),
    );
    once(
        "analytic ring all-reduce 64 MiB, 1024 chips (torus 8x8x16)",
        &[8, 8, 16],
        setup(Kind::AllReduce, 64 * MIB, ModelKind::Analytic),
    );
    if std::env::var_os("PODSIM_BENCH_POD").is_some() {
        once(
            "analytic ring all-reduce 64 MiB, 4096 chips (torus 16x16x16)",
            &[16, 16, 16],
            setup(Kind::AllReduce, 64 * MIB, ModelKind::Analytic),
        );
        once(
            "flow ring all-reduce 64 MiB, 4096 chips (torus 16x16x16)",
            &[16, 16, 16],
            setup(Kind::AllReduce, 64 * MIB, ModelKind::Flow),
        );
        once(
            "flow all-to-all 16 MiB, 1024 chips (torus 8x8x16)",
            &[8, 8, 16],
            setup(Kind::AllToAll, 16 * MIB, ModelKind::Flow),
        );
    }
    let mut g = c.benchmark_group("collectives");
    g.sample_size(10);
    let ring = torus(&[4, 8, 8]);
    g.bench_function("flow_ring_all_reduce_64MiB_256", |b| {
        b.iter(|| {
            podsim_system::measure(&ring, &setup(Kind::AllReduce, 64 * MIB, ModelKind::Flow))
                .expect("runs")
        })
    });
    let a2a = torus(&[4, 4, 8]);
    g.bench_function("flow_all_to_all_16MiB_128", |b| {
        b.iter(|| {
            podsim_system::measure(&a2a, &setup(Kind::AllToAll, 16 * MIB, ModelKind::Flow))
                .expect("runs")
        })
    });
    g.bench_function("analytic_ring_all_reduce_64MiB_256", |b| {
        b.iter(|| {
            podsim_system::measure(
                &ring,
                &setup(Kind::AllReduce, 64 * MIB, ModelKind::Analytic),
            )
            .expect("runs")
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
