#![allow(missing_docs)]
//! Packet-level speed: flit-hops per second (criterion's elements per second) under uniform
//! random traffic, single-threaded, on podsim's own routers: an 8x8 mesh and an 8x8 torus at
//! 0.3 and a 16x16 torus at 0.2 flits/node/cycle (4 VCs x 8 flits, 1- and 4-flit packets); and
//! a sweep of 16 loads run sequentially and on every core.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use podsim_noc::{NocRouting, Pattern, RouterConfig, RunSpec, parse_rates, run, sweep};
use podsim_topology::{KAryNCube, LinkKind, LinkSpec, Network};
use podsim_units::{Bandwidth, SimDuration};

fn cube(dims: &[u32], wrap: bool) -> Network {
    let link = LinkSpec {
        kind: LinkKind::OnChip,
        bandwidth: Bandwidth::from_gbps(16).unwrap(),
        latency: SimDuration::from_ns(1),
    };
    Network::Cube(KAryNCube::new(dims.to_vec(), vec![wrap; dims.len()], link).unwrap())
}

fn spec(rate: f64) -> RunSpec {
    RunSpec {
        cycles: 5_000,
        sample_cycles: 1_000,
        ..RunSpec::new(Pattern::Uniform, rate)
    }
}

fn flit_hops(c: &mut Criterion) {
    for (name, net, rate) in [
        ("mesh8x8_uniform_0.3", cube(&[8, 8], false), 0.3),
        ("torus8x8_uniform_0.3", cube(&[8, 8], true), 0.3),
        ("torus16x16_uniform_0.2", cube(&[16, 16], true), 0.2),
    ] {
        for flits in [1, 4] {
            let cfg = RouterConfig {
                packet_flits: flits,
                ..RouterConfig::default()
            };
            let s = spec(rate);
            let once = run(&net, NocRouting::DimensionOrder, &cfg, &s).unwrap();
            let mut g = c.benchmark_group("flit_hops");
            g.throughput(Throughput::Elements(once.flit_hops));
            g.sample_size(10);
            g.bench_function(format!("{name}_{flits}flit"), |b| {
                b.iter(|| run(&net, NocRouting::DimensionOrder, &cfg, &s).unwrap())
            });
            g.finish();
        }
    }
}

fn sweeps(c: &mut Criterion) {
    let net = cube(&[8, 8], false);
    let cfg = RouterConfig::default();
    // 16 loads, all below the mesh's saturation, so every point runs.
    let rates = parse_rates("0.025:0.4:0.025").unwrap();
    assert_eq!(rates.len(), 16);
    let s = spec(0.1);
    let seq = sweep(&net, NocRouting::DimensionOrder, &cfg, &s, &rates, false).unwrap();
    let par = sweep(&net, NocRouting::DimensionOrder, &cfg, &s, &rates, true).unwrap();
    assert_eq!(
        seq, par,
        "a parallel sweep must give the sequential sweep's numbers"
    );
    let hops: u64 = seq.iter().map(|r| r.flit_hops).sum();
    let mut g = c.benchmark_group("sweep16_mesh8x8");
    g.throughput(Throughput::Elements(hops));
    g.sample_size(10);
    for parallel in [false, true] {
        let name = if parallel { "parallel" } else { "sequential" };
        g.bench_function(name, |b| {
            b.iter(|| sweep(&net, NocRouting::DimensionOrder, &cfg, &s, &rates, parallel).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, flit_hops, sweeps);
criterion_main!(benches);
