#![allow(missing_docs)]
//! Packet-level speed: flit-hops per second (criterion's elements per second) under uniform
//! random traffic, single-threaded, on podsim's own routers: an 8x8 mesh and an 8x8 torus at
//! 0.3 and a 16x16 torus at 0.2 flits/node/cycle (4 VCs x 8 flits, 1- and 4-flit packets); a
//! sweep of 16 loads run sequentially and on every core; both router modes (`podsim`,
//! `booksim`) on the 8x8 mesh and torus at 0.3, with flit-hops per CPU-second; and podsim's
//! router on its two engines, the fast one `run` takes and the general one (taken when a
//! packet log is kept), on the 8x8 mesh at 0.3 and a 32x32 mesh at 0.3 (one thread each); the
//! booksim mode's sweeps of issue 38 (8x8 mesh and torus, 1 and 4 flits, 0.05 to 0.40) and 8
//! seeds of one load; and single booksim-mode runs of issue 38 item 3's configurations
//! (allocators, lookahead routing, credit delays, speedups).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use podsim_noc::{
    Allocator, NocRouting, PacketLog, Pattern, RouterConfig, RouterMode, RunSpec, parse_rates, run,
    run_logged, sweep, sweep_seeds,
};
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

/// CPU time of this thread so far, in seconds (Linux: `/proc/thread-self/schedstat`, whose first
/// field is nanoseconds on the CPU); `None` elsewhere.
fn thread_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

/// Both router modes on the 8x8 mesh and torus, uniform at 0.3 flits/node/cycle, 1-flit packets,
/// 4 VCs x 8 flits; 30,000 cycles for the booksim mode (its sample periods of 3,000 cycles), the
/// podsim mode's default protocol with a 10,000-cycle window. Prints flit-link-hops per
/// CPU-second of this thread for each, besides criterion's per-wall-second throughput.
fn router_modes(c: &mut Criterion) {
    let mut g = c.benchmark_group("router_modes");
    g.sample_size(10);
    for (name, net) in [
        ("mesh8x8", cube(&[8, 8], false)),
        ("torus8x8", cube(&[8, 8], true)),
    ] {
        for mode in [RouterMode::Podsim, RouterMode::Booksim] {
            let cfg = RouterConfig {
                router: mode,
                ..RouterConfig::default()
            };
            let s = RunSpec {
                cycles: if mode == RouterMode::Booksim {
                    30_000
                } else {
                    10_000
                },
                ..RunSpec::new(Pattern::Uniform, 0.3)
            };
            let start = thread_cpu_s();
            let wall = std::time::Instant::now();
            let once = run(&net, NocRouting::DimensionOrder, &cfg, &s).unwrap();
            let secs = match (start, thread_cpu_s()) {
                (Some(a), Some(b)) => b - a,
                _ => wall.elapsed().as_secs_f64(),
            };
            println!(
                "router_modes/{name}_{}: {} flit-hops in {secs:.3} CPU-s = {:.2} M flit-hops per \
                 CPU-second",
                mode.name(),
                once.flit_hops,
                once.flit_hops as f64 / secs / 1e6
            );
            g.throughput(Throughput::Elements(once.flit_hops));
            g.bench_function(format!("{name}_{}", mode.name()), |b| {
                b.iter(|| run(&net, NocRouting::DimensionOrder, &cfg, &s).unwrap())
            });
        }
    }
    g.finish();
}

/// Issue 38 item 2: the latency-throughput sweeps measured against BookSim 2 (the
/// `tools/bench-table.sh` rows "sweep, BookSim-exact router"): the booksim mode on the 8x8 mesh
/// and torus, 1- and 4-flit packets, uniform loads 0.05 to 0.40 in steps of 0.05, BookSim's
/// default sampling (10,000 cycles: periods of 1,000), one after another on this thread; and
/// 8 seeds of the 8x8 torus at 0.3 (`--seeds 8`). Prints the CPU-seconds of each, to set
/// against BookSim's sum over the same points (`tools/bench-table.sh --sweeps` runs both).
fn booksim_sweeps(c: &mut Criterion) {
    let mut g = c.benchmark_group("booksim_sweeps");
    g.sample_size(10);
    let rates = parse_rates("0.05:0.40:0.05").unwrap();
    assert_eq!(rates.len(), 8);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for (name, net) in [
        ("mesh8x8", cube(&[8, 8], false)),
        ("torus8x8", cube(&[8, 8], true)),
    ] {
        for flits in [1, 4] {
            let cfg = RouterConfig {
                router: RouterMode::Booksim,
                packet_flits: flits,
                ..RouterConfig::default()
            };
            let s = RunSpec::new(Pattern::Uniform, 0.1);
            let go = || sweep(&net, NocRouting::DimensionOrder, &cfg, &s, &rates, false).unwrap();
            let start = thread_cpu_s();
            let once = go();
            if let (Some(a), Some(b)) = (start, thread_cpu_s()) {
                println!("booksim_sweeps/{name}_p{flits}: {:.3} CPU-s", b - a);
            }
            g.throughput(Throughput::Elements(once.iter().map(|r| r.flit_hops).sum()));
            g.bench_function(format!("{name}_p{flits}"), |b| b.iter(go));
        }
    }
    let net = cube(&[8, 8], true);
    let cfg = RouterConfig {
        router: RouterMode::Booksim,
        ..RouterConfig::default()
    };
    let s = RunSpec::new(Pattern::Uniform, 0.3);
    let go = || {
        pool.install(|| sweep_seeds(&net, NocRouting::DimensionOrder, &cfg, &s, &[0.3], 8))
            .unwrap()
    };
    let once = go();
    g.throughput(Throughput::Elements(
        once[0].runs.iter().map(|r| r.flit_hops).sum(),
    ));
    g.bench_function("torus8x8_p1_seeds8_at_0.3", |b| b.iter(go));
    g.finish();
}

/// Issue 38 item 3: one booksim-mode run at 0.3 of each kind of configuration BookSim offers
/// (tools/booksim/configs_speed.py times the same against BookSim 2), flit-hops per second.
fn booksim_configs(c: &mut Criterion) {
    let mut g = c.benchmark_group("booksim_configs");
    g.sample_size(10);
    let booksim = |flits: u32| RouterConfig {
        router: RouterMode::Booksim,
        packet_flits: flits,
        ..RouterConfig::default()
    };
    let mesh = cube(&[8, 8], false);
    let torus = cube(&[8, 8], true);
    for (name, net, cfg) in [
        ("mesh8x8_p1_islip", &mesh, booksim(1)),
        ("torus8x8_p4_islip", &torus, booksim(4)),
        (
            "mesh8x8_p1_sif_rd0_cd2",
            &mesh,
            RouterConfig {
                allocator: Allocator::SeparableInputFirst,
                routing_delay: 0,
                credit_delay: 2,
                ..booksim(1)
            },
        ),
        (
            "mesh8x8_p4_sof",
            &mesh,
            RouterConfig {
                allocator: Allocator::SeparableOutputFirst,
                ..booksim(4)
            },
        ),
        (
            "mesh8x8_p1_islip2",
            &mesh,
            RouterConfig {
                alloc_iters: 2,
                ..booksim(1)
            },
        ),
        (
            "mesh8x8_p1_speedup2",
            &mesh,
            RouterConfig {
                input_speedup: 2,
                output_speedup: 2,
                ..booksim(1)
            },
        ),
        (
            "torus8x8_p4_speedup2",
            &torus,
            RouterConfig {
                input_speedup: 2,
                output_speedup: 2,
                ..booksim(4)
            },
        ),
    ] {
        let s = RunSpec::new(Pattern::Uniform, 0.3);
        let go = || run(net, NocRouting::DimensionOrder, &cfg, &s).unwrap();
        g.throughput(Throughput::Elements(go().flit_hops));
        g.bench_function(name, |b| b.iter(go));
    }
    g.finish();
}

/// podsim's router on the fast engine (`run`) and on the general one (`run_logged` with a
/// packet log that keeps nothing, which only the general engine offers): the same results, so
/// the ratio of the two is the fast engine's gain.
fn engines(c: &mut Criterion) {
    let mut g = c.benchmark_group("engines");
    g.sample_size(10);
    for (name, net, cycles, sample_cycles) in [
        ("mesh8x8", cube(&[8, 8], false), 10_000, 1_000),
        ("mesh32x32", cube(&[32, 32], false), 500, 250),
    ] {
        let cfg = RouterConfig::default();
        let s = RunSpec {
            cycles,
            sample_cycles,
            ..RunSpec::new(Pattern::Uniform, 0.3)
        };
        // One thread, so the 32x32 mesh (1,024 routers) is not split into parts.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let general = || {
            let mut log = PacketLog {
                limit: 0,
                kept: Vec::new(),
                cut: 0,
            };
            run_logged(&net, NocRouting::DimensionOrder, &cfg, &s, Some(&mut log)).unwrap()
        };
        let fast = || run(&net, NocRouting::DimensionOrder, &cfg, &s).unwrap();
        let once = pool.install(fast);
        assert_eq!(once, pool.install(general));
        g.throughput(Throughput::Elements(once.flit_hops));
        g.bench_function(format!("{name}_fast"), |b| b.iter(|| pool.install(fast)));
        g.bench_function(format!("{name}_general"), |b| {
            b.iter(|| pool.install(general))
        });
    }
    g.finish();
}

/// Issue 38 item 4: the fast engine on a large network on one thread (a pool of one) and on
/// all of the machine's (run from outside the pool, as `podsim noc` runs it: eight parts a
/// thread, the interfaces and the next cycle's draw beside them): the same results, so the
/// ratio of the two is the speed-up. Shorter runs than the command's (`tools/bench-table.sh
/// --threads` times those).
fn threads(c: &mut Criterion) {
    let mut g = c.benchmark_group("threads");
    g.sample_size(10);
    for (name, net, cycles) in [
        ("mesh32x32", cube(&[32, 32], false), 1_000),
        ("torus16x16x16", cube(&[16, 16, 16], true), 100),
    ] {
        let cfg = RouterConfig::default();
        let s = RunSpec {
            cycles,
            sample_cycles: cycles / 2,
            ..RunSpec::new(Pattern::Uniform, 0.3)
        };
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let go = || run(&net, NocRouting::DimensionOrder, &cfg, &s).unwrap();
        let once = one.install(go);
        assert_eq!(once, go());
        g.throughput(Throughput::Elements(once.flit_hops));
        g.bench_function(format!("{name}_1thread"), |b| b.iter(|| one.install(go)));
        g.bench_function(
            format!("{name}_{}threads", rayon::current_num_threads()),
            |b| b.iter(go),
        );
    }
    g.finish();
}

criterion_group!(
    benches,
    flit_hops,
    sweeps,
    router_modes,
    engines,
    booksim_sweeps,
    booksim_configs,
    threads
);
criterion_main!(benches);
