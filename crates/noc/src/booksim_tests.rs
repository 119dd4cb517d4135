//! The BookSim router mode against hand calculations and against BookSim 2's own curves
//! (`tools/booksim/curves/`, made by BookSim 2 at commit 28f43299; summary in
//! `tools/booksim/curves/SUMMARY.md`).

use super::{lone_packet, run_general, run_reversed};
use crate::{
    Allocator, NocError, NocRouting, Pattern, RouterConfig, RouterMode, RunSpec, run, sweep,
};
use podsim_topology::{FatTree, KAryNCube, LinkKind, LinkSpec, Network};
use podsim_units::{Bandwidth, SimDuration};

fn link() -> LinkSpec {
    LinkSpec {
        kind: LinkKind::OnChip,
        bandwidth: Bandwidth::from_gbps(16).unwrap(),
        latency: SimDuration::from_ns(1),
    }
}

fn cube(dims: &[u32], wrap: bool) -> Network {
    Network::Cube(KAryNCube::new(dims.to_vec(), vec![wrap; dims.len()], link()).unwrap())
}

fn booksim(packet_flits: u32) -> RouterConfig {
    RouterConfig {
        router: RouterMode::Booksim,
        packet_flits,
        ..RouterConfig::default()
    }
}

fn spec(rate: f64, cycles: u64) -> RunSpec {
    RunSpec {
        cycles,
        ..RunSpec::new(Pattern::Uniform, rate)
    }
}

/// A lone packet's latency, by hand from BookSim's pipeline (tools/booksim/README.md, "Router
/// pipeline"): written by the source at cycle c, it reaches the first router at c + 2; each of
/// the H = D + 1 routers holds the head routing + VA + SA + crossbar delays; each of the D
/// links adds its latency L plus the cycle the channel latches; the ejection channel adds 2
/// from the send to the read, of which the crossbar's last cycle is already counted, so
/// T0 = H (R + VA + SA + X) + D L + 3, and the tail follows P - 1 cycles behind.
#[test]
fn a_lone_packet_takes_booksims_pipeline_latency() {
    let mesh = cube(&[8, 8], false);
    let torus = cube(&[8, 8], true);
    // Corner to corner on the mesh: D = 14, H = 15: 15 x 4 + 14 x 1 + 3 = 77.
    assert_eq!(lone_packet(&mesh, &booksim(1), 0, 63).unwrap(), (77, 14));
    // 4 flits: 3 more.
    assert_eq!(lone_packet(&mesh, &booksim(4), 0, 63).unwrap(), (80, 14));
    // To itself: one router, 1 x 4 + 3 = 7.
    assert_eq!(lone_packet(&mesh, &booksim(1), 9, 9).unwrap(), (7, 0));
    // Torus, (0,0) to (4,4): D = 8 (4 each way round, either way), L = 2: 9 x 4 + 16 + 3 = 55.
    assert_eq!(lone_packet(&torus, &booksim(1), 0, 36).unwrap(), (55, 8));
    // Torus, (1,0) to (7,0): 2 hops the short way round: 3 x 4 + 4 + 3 = 19.
    assert_eq!(lone_packet(&torus, &booksim(1), 1, 7).unwrap(), (19, 2));
    // Lookahead routing (routing_delay 0): 15 x 3 + 14 + 3 = 62 (BookSim's examples/mesh88_lat).
    let rd0 = RouterConfig {
        routing_delay: 0,
        ..booksim(1)
    };
    assert_eq!(lone_packet(&mesh, &rd0, 0, 63).unwrap(), (62, 14));
    // Every delay changed: R 2, VA 2, SA 3, crossbar 1 + 2, credit 1, links of 3 cycles; (0,0) to
    // (3,2): D = 5, H = 6: 6 x (2 + 2 + 3 + 3) + 5 x 3 + 3 = 78.
    let slow = RouterConfig {
        routing_delay: 2,
        vc_alloc_delay: 2,
        sw_alloc_delay: 3,
        st_prepare_delay: 1,
        st_final_delay: 2,
        credit_delay: 1,
        channel_latency: Some(3),
        ..booksim(1)
    };
    assert_eq!(lone_packet(&mesh, &slow, 0, 19).unwrap(), (78, 5));
}

/// Zero-load latency within 1 cycle of BookSim's exact T0 (tools/booksim/curves/SUMMARY.md,
/// "Zero-load latency and saturation throughput", column "exact T0"; the long BookSim runs of
/// curves/zeroload.csv agree within 0.1): 8x8 mesh 33.250 (1-flit) and 36.250 (4-flit), 8x8
/// torus 31.000 and 34.000. At 0.01 flits/node/cycle with 2000-cycle periods a run measures
/// 5,000-15,000 packets, so the sample mean is within ~0.3 of the true one.
#[test]
fn zero_load_latency_matches_booksims_t0_on_the_8x8_mesh_and_torus() {
    for (net, flits, t0) in [
        (cube(&[8, 8], false), 1, 33.25),
        (cube(&[8, 8], false), 4, 36.25),
        (cube(&[8, 8], true), 1, 31.0),
        (cube(&[8, 8], true), 4, 34.0),
    ] {
        let r = run(
            &net,
            NocRouting::DimensionOrder,
            &booksim(flits),
            &spec(0.01, 20_000),
        )
        .unwrap();
        assert!(!r.saturated);
        assert!(
            (r.average_latency_cycles - t0).abs() < 1.0,
            "{} {flits}-flit: {} vs BookSim's {t0}",
            net.shorthand(),
            r.average_latency_cycles
        );
    }
}

/// 16x16 mesh, 1-flit: BookSim's exact T0 is 60.125 (SUMMARY.md, row "16x16 mesh, 1-flit",
/// column "exact T0").
#[test]
fn zero_load_latency_matches_booksims_t0_on_the_16x16_mesh() {
    let r = run(
        &cube(&[16, 16], false),
        NocRouting::DimensionOrder,
        &booksim(1),
        &spec(0.005, 10_000),
    )
    .unwrap();
    assert!(
        (r.average_latency_cycles - 60.125).abs() < 1.0,
        "{}",
        r.average_latency_cycles
    );
}

/// Saturation throughput within 3% of BookSim's: past saturation the accepted rate is the
/// network's throughput. 8x8 mesh, 1-flit: BookSim saturates at 0.4182 (SUMMARY.md, row "8x8
/// mesh, 1-flit", bold column; curves/mesh8x8_p1.csv row 0.420) and calls 0.450 unstable (row
/// 0.450, saturated = true, accepted 0.4167). 8x8 torus, 1-flit: 0.5210 (row "8x8 torus, 1-flit";
/// curves/torus8x8_p1.csv row 0.530); at 0.550 BookSim's seeds split (3 of 5 unstable, SUMMARY.md
/// "spread over seeds"), accepted 0.504-0.520.
#[test]
fn saturation_throughput_matches_booksim_on_the_8x8_mesh_and_torus() {
    let mesh = run(
        &cube(&[8, 8], false),
        NocRouting::DimensionOrder,
        &booksim(1),
        &spec(0.45, 10_000),
    )
    .unwrap();
    assert!(mesh.saturated, "BookSim is unstable at 0.45");
    let rel = |got: f64, want: f64| (got - want).abs() / want;
    assert!(
        rel(mesh.accepted_flits_per_node_cycle, 0.4182) < 0.03,
        "mesh: accepted {}",
        mesh.accepted_flits_per_node_cycle
    );
    let torus = run(
        &cube(&[8, 8], true),
        NocRouting::DimensionOrder,
        &booksim(1),
        &spec(0.55, 10_000),
    )
    .unwrap();
    assert!(
        rel(torus.accepted_flits_per_node_cycle, 0.5210) < 0.03,
        "torus: accepted {}",
        torus.accepted_flits_per_node_cycle
    );
}

/// Latency within 5% of BookSim's below 80% of saturation: 8x8 mesh, 1-flit at 0.30: 38.039
/// (curves/mesh8x8_p1.csv row 0.300; seeds 1-5 give 37.9-38.0, SUMMARY.md); 8x8 torus, 1-flit
/// at 0.40: 35.620 (curves/torus8x8_p1.csv row 0.400; seeds 35.5-35.7).
#[test]
fn latency_under_load_matches_booksim() {
    for (net, rate, want) in [
        (cube(&[8, 8], false), 0.30, 38.039),
        (cube(&[8, 8], true), 0.40, 35.620),
    ] {
        let r = run(
            &net,
            NocRouting::DimensionOrder,
            &booksim(1),
            &spec(rate, 10_000),
        )
        .unwrap();
        assert!(!r.saturated);
        assert!(
            (r.average_latency_cycles - want).abs() / want < 0.05,
            "{} at {rate}: {} vs BookSim's {want}",
            net.shorthand(),
            r.average_latency_cycles
        );
        assert!((r.accepted_flits_per_node_cycle - rate).abs() / rate < 0.02);
    }
}

/// The same seed gives the same result; the separable input-first allocator is another
/// allocator (its own numbers) and a sweep gives each load's own run.
#[test]
fn booksim_runs_repeat_for_a_seed() {
    let net = cube(&[4, 4], true);
    let cfg = booksim(2);
    let s = spec(0.3, 2_000);
    let a = run(&net, NocRouting::DimensionOrder, &cfg, &s).unwrap();
    let b = run(&net, NocRouting::DimensionOrder, &cfg, &s).unwrap();
    assert_eq!(a, b);
    let sif = RouterConfig {
        allocator: Allocator::SeparableInputFirst,
        ..cfg.clone()
    };
    let c = run(&net, NocRouting::DimensionOrder, &sif, &s).unwrap();
    assert!((c.average_latency_cycles - a.average_latency_cycles).abs() < 5.0);
    let swept = sweep(
        &net,
        NocRouting::DimensionOrder,
        &cfg,
        &s,
        &[0.1, 0.3],
        true,
    )
    .unwrap();
    assert_eq!(swept[1], a);
}

/// BookSim's separable output-first allocator with round-robin arbiters is one round of iSLIP:
/// each output picks an asking input round-robin, each input one of the outputs that picked it,
/// both pointers move past a match (allocators/separable_output_first.cpp, islip.cpp,
/// arbiters/roundrobin_arb.cpp), and with BookSim's default priorities (`priority = none`)
/// nothing else differs. BookSim itself prints the same statistics for both
/// (`booksim mesh8x8_p4.cfg injection_rate=0.35` and `torus8x8_p1.cfg injection_rate=0.35`,
/// with and without `vc_allocator=separable_output_first sw_allocator=separable_output_first`:
/// every line the same; tools/booksim/README.md). So podsim's runs must be equal too, and, as
/// in BookSim, `alloc_iters` does not change a separable allocator.
#[test]
fn separable_output_first_decides_as_one_islip_round() {
    for (net, flits, rate) in [
        (cube(&[6, 6], false), 4, 0.35),
        (cube(&[6, 6], true), 1, 0.5),
        (cube(&[4, 4, 4], true), 2, 0.6),
    ] {
        let s = spec(rate, 2_000);
        let islip = run(&net, NocRouting::DimensionOrder, &booksim(flits), &s).unwrap();
        for iters in [1, 3] {
            let sof = RouterConfig {
                allocator: Allocator::SeparableOutputFirst,
                alloc_iters: iters,
                ..booksim(flits)
            };
            let got = run(&net, NocRouting::DimensionOrder, &sof, &s).unwrap();
            assert_eq!(got, islip, "{} at {rate}", net.shorthand());
        }
    }
    // A second iSLIP round is another allocator (its own numbers).
    let two = RouterConfig {
        alloc_iters: 2,
        ..booksim(1)
    };
    let net = cube(&[6, 6], true);
    let s = spec(0.6, 2_000);
    assert_ne!(
        run(&net, NocRouting::DimensionOrder, &two, &s).unwrap(),
        run(&net, NocRouting::DimensionOrder, &booksim(1), &s).unwrap()
    );
}

fn speedup(packet_flits: u32, si: u32, so: u32) -> RouterConfig {
    RouterConfig {
        input_speedup: si,
        output_speedup: so,
        ..booksim(packet_flits)
    }
}

/// A speedup adds crossbar ports, not pipeline stages: a lone packet meets no other, so it
/// takes the same T0 as without (`a_lone_packet_takes_booksims_pipeline_latency`: 77 cycles
/// corner to corner on the 8x8 mesh, 55 + 3 for 4 flits across the 8x8 torus).
#[test]
fn a_lone_packet_is_as_fast_with_speedups() {
    let mesh = cube(&[8, 8], false);
    let torus = cube(&[8, 8], true);
    for (si, so) in [(2, 1), (1, 2), (2, 2), (4, 3)] {
        assert_eq!(
            lone_packet(&mesh, &speedup(1, si, so), 0, 63).unwrap(),
            (77, 14)
        );
        assert_eq!(
            lone_packet(&torus, &speedup(4, si, so), 0, 36).unwrap(),
            (58, 8)
        );
    }
}

/// Input and output speedups of 2 against BookSim's own curves with them
/// (tools/booksim/configs/mesh8x8_p1_sp2.cfg, torus8x8_p4_sp2.cfg; curves/*_sp2.csv, made by
/// BookSim 2 at 28f43299): latency within 5% below 80% of saturation, accepted rate past
/// saturation within 3%. 8x8 mesh, 1-flit: 42.815 at 0.40 (row 0.400; 55.368 without the
/// speedups, curves/mesh8x8_p1.csv, so the speedups matter), 55.965 at 0.45 (row 0.450);
/// unstable at 0.55, accepted 0.4729 (row 0.550). 8x8 torus, 4-flit: 37.339 at 0.30, 42.432 at
/// 0.50 (rows 0.300, 0.500); unstable at 0.75, accepted 0.6733 (row 0.750).
#[test]
fn speedups_match_booksims_curves() {
    let mesh = cube(&[8, 8], false);
    let torus = cube(&[8, 8], true);
    let rel = |got: f64, want: f64| (got - want).abs() / want;
    let sp2 = |net: &Network, flits: u32, rate: f64| {
        let cfg = speedup(flits, 2, 2);
        run(net, NocRouting::DimensionOrder, &cfg, &spec(rate, 10_000)).unwrap()
    };
    for (net, flits, rate, want) in [
        (&mesh, 1, 0.40, 42.815),
        (&mesh, 1, 0.45, 55.965),
        (&torus, 4, 0.30, 37.339),
        (&torus, 4, 0.50, 42.432),
    ] {
        let r = sp2(net, flits, rate);
        assert!(!r.saturated);
        assert!(
            rel(r.average_latency_cycles, want) < 0.05,
            "{} at {rate}: {} vs BookSim's {want}",
            net.shorthand(),
            r.average_latency_cycles
        );
    }
    for (net, flits, rate, want) in [(&mesh, 1, 0.55, 0.4729), (&torus, 4, 0.75, 0.6733)] {
        let r = sp2(net, flits, rate);
        assert!(r.saturated, "BookSim is unstable at {rate}");
        assert!(
            rel(r.accepted_flits_per_node_cycle, want) < 0.03,
            "{} at {rate}: accepted {}",
            net.shorthand(),
            r.accepted_flits_per_node_cycle
        );
    }
}

/// Flits that cross to one output together leave it in the order BookSim queued them for the
/// switch, which follows each router's input ports (BookSim reads its inputs in port order), not
/// the order in which podsim happens to step the routers: the routers of a cycle stepped in the
/// reverse order give the same numbers, with output speedups (where that order shows) and
/// without, with credit delays.
#[test]
fn the_order_the_routers_step_in_changes_nothing() {
    for (net, cfg, rate) in [
        (cube(&[8, 8], false), speedup(1, 2, 2), 0.45),
        (
            cube(&[6, 6], true),
            RouterConfig {
                credit_delay: 1,
                ..speedup(4, 1, 3)
            },
            0.6,
        ),
        (
            cube(&[6, 6], false),
            RouterConfig {
                credit_delay: 2,
                vc_alloc_delay: 2,
                ..booksim(2)
            },
            0.4,
        ),
    ] {
        let s = spec(rate, 2_000);
        assert_eq!(
            run_reversed(&net, &cfg, &s).unwrap(),
            run_general(&net, &cfg, &s).unwrap(),
            "{} at {rate}",
            net.shorthand()
        );
    }
}

/// Bad settings name their key; networks and routings BookSim's router does not model are
/// refused, not run.
#[test]
fn booksim_settings_are_checked() {
    let net = cube(&[4, 4], false);
    let key = |cfg: RouterConfig, net: &Network, routing: NocRouting| -> String {
        match run(net, routing, &cfg, &spec(0.1, 1_000)) {
            Err(NocError::Config(e)) => e.key,
            other => panic!("expected a configuration error, got {other:?}"),
        }
    };
    let d = NocRouting::DimensionOrder;
    for (cfg, want) in [
        (
            RouterConfig {
                vc_alloc_delay: 0,
                ..booksim(1)
            },
            "vc_alloc_delay",
        ),
        (
            RouterConfig {
                sw_alloc_delay: 0,
                ..booksim(1)
            },
            "sw_alloc_delay",
        ),
        (
            RouterConfig {
                st_final_delay: 0,
                ..booksim(1)
            },
            "st_final_delay",
        ),
        (
            RouterConfig {
                channel_latency: Some(0),
                ..booksim(1)
            },
            "channel_latency",
        ),
        (
            RouterConfig {
                alloc_iters: 0,
                ..booksim(1)
            },
            "alloc_iters",
        ),
        (
            RouterConfig {
                routing_delay: 5_000,
                ..booksim(1)
            },
            "routing_delay",
        ),
        (speedup(1, 0, 1), "input_speedup"),
        (speedup(1, 1, 9), "output_speedup"),
    ] {
        assert_eq!(key(cfg, &net, d), want);
    }
    assert_eq!(key(booksim(1), &net, NocRouting::Minimal), "routing");
    let tree = Network::FatTree(FatTree::new(4, link()).unwrap());
    assert_eq!(key(booksim(1), &tree, NocRouting::Table), "router");
    let one_vc = RouterConfig {
        vcs: 1,
        ..booksim(1)
    };
    assert_eq!(key(one_vc, &cube(&[4, 4], true), d), "vcs");
    // The TOML keys are the field names.
    let cfg: RouterConfig = toml::from_str(
        "router = \"booksim\"\nrouting_delay = 0\nallocator = \"separable_input_first\"\n\
         channel_latency = 2\ncredit_delay = 1\n",
    )
    .unwrap();
    assert_eq!(cfg.router, RouterMode::Booksim);
    assert_eq!(cfg.routing_delay, 0);
    assert_eq!(cfg.allocator, Allocator::SeparableInputFirst);
    let cfg: RouterConfig = toml::from_str(
        "router = \"booksim\"\nallocator = \"separable-output-first\"\ninput_speedup = 2\n",
    )
    .unwrap();
    assert_eq!(cfg.allocator, Allocator::SeparableOutputFirst);
    assert_eq!((cfg.input_speedup, cfg.output_speedup), (2, 1));
    // A speedup is BookSim's router's: the podsim router does not run it.
    let podsim = RouterConfig {
        output_speedup: 2,
        ..RouterConfig::default()
    };
    assert_eq!(podsim.validate().unwrap_err().key, "output_speedup");
    let bad = toml::from_str::<RouterConfig>("router = \"bookism\"\n").unwrap_err();
    assert!(bad.to_string().contains("router"), "{bad}");
}

/// Where every stage takes one cycle the router keeps its stage queues as bit sets; that gives
/// the queues' numbers exactly, meshes and tori, 1- and 4-flit packets, lookahead routing, both
/// allocators and two iSLIP rounds, input and output speedups, below and past saturation; the
/// per-link counters (flits and cycles blocked on credits) included, as the results are compared
/// whole.
#[test]
fn the_one_cycle_fast_path_gives_the_stage_queues_numbers() {
    for (net, cfg, rate) in [
        (cube(&[8, 8], false), booksim(1), 0.3),
        (cube(&[8, 8], false), booksim(1), 0.6),
        (cube(&[8, 8], true), booksim(4), 0.5),
        (cube(&[8, 8], true), booksim(1), 0.7),
        (
            cube(&[4, 4, 4], true),
            RouterConfig {
                routing_delay: 0,
                ..booksim(2)
            },
            0.4,
        ),
        (
            cube(&[6, 6], false),
            RouterConfig {
                allocator: Allocator::SeparableInputFirst,
                vcs: 2,
                buffer_flits: 3,
                ..booksim(3)
            },
            0.5,
        ),
        (
            cube(&[6, 6], true),
            RouterConfig {
                alloc_iters: 2,
                credit_delay: 2,
                ..booksim(1)
            },
            0.6,
        ),
        // Speedups: the switch over crossbar ports, and with an output speedup the order
        // in which flits that crossed together leave.
        (cube(&[8, 8], false), speedup(1, 2, 2), 0.45),
        (cube(&[8, 8], false), speedup(1, 2, 2), 0.6),
        (cube(&[8, 8], true), speedup(4, 2, 1), 0.6),
        (cube(&[8, 8], true), speedup(4, 1, 2), 0.75),
        (
            cube(&[6, 6], false),
            RouterConfig {
                allocator: Allocator::SeparableInputFirst,
                credit_delay: 1,
                ..speedup(3, 3, 3)
            },
            0.5,
        ),
        (
            cube(&[4, 4, 4], true),
            RouterConfig {
                routing_delay: 0,
                alloc_iters: 2,
                ..speedup(2, 2, 2)
            },
            0.5,
        ),
    ] {
        let s = spec(rate, 3_000);
        let fast = run(&net, NocRouting::DimensionOrder, &cfg, &s).unwrap();
        assert_eq!(
            fast,
            run_general(&net, &cfg, &s).unwrap(),
            "{}",
            net.shorthand()
        );
    }
}

/// A small deterministic generator for the allocator tests (64-bit LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

fn scratch(n: usize) -> super::Scratch {
    super::Scratch {
        best_out: vec![u32::MAX; n],
        best_in: vec![u32::MAX; n],
        inmatch: vec![-1; n],
        outmatch: vec![-1; n],
        ..super::Scratch::default()
    }
}

/// The fast path's allocator on bit sets (`allocate_bits`) against the request-list allocator
/// of the general path (`allocate`): the same matches and the same pointers afterwards, for
/// random requests and pointers, iSLIP of 1 to 3 rounds and the separable allocator, 5 to 64
/// ports.
#[test]
fn the_bit_set_allocator_matches_the_request_list_allocator() {
    let mut rng = Lcg(7);
    for trial in 0..4000 {
        let n = [5, 7, 20, 64][trial % 4];
        let (kind, iters) = match trial / 4 % 4 {
            0 => (Allocator::Islip, 1),
            1 => (Allocator::Islip, 2),
            2 => (Allocator::Islip, 3),
            _ => (Allocator::SeparableInputFirst, 1),
        };
        let mut reqs = Vec::new();
        let (mut ins, mut outs) = (0u64, 0u64);
        let (mut req, mut col) = (vec![0u64; n], vec![0u64; n]);
        for _ in 0..1 + rng.below(3 * n / 2) {
            let (i, o) = (rng.below(n), rng.below(n));
            if req[i] >> o & 1 == 0 {
                reqs.push((i as u16, o as u16));
                req[i] |= 1 << o;
                col[o] |= 1 << i;
                ins |= 1 << i;
                outs |= 1 << o;
            }
        }
        let gptr: Vec<u16> = (0..n).map(|_| rng.below(n) as u16).collect();
        let aptr: Vec<u16> = (0..n).map(|_| rng.below(n) as u16).collect();
        let (mut g1, mut a1) = (gptr.clone(), aptr.clone());
        let mut s = scratch(n);
        super::allocate(
            kind,
            iters,
            n,
            n,
            &mut (&mut g1[..], &mut a1[..]),
            &reqs,
            &mut s,
        );
        let (mut g2, mut a2) = (gptr, aptr);
        let (mut grants, mut matched) = (vec![0u64; n], vec![0u8; n]);
        let won = super::allocate_bits(
            kind,
            iters,
            (n, n),
            &mut (&mut g2[..], &mut a2[..]),
            (ins, &req),
            (outs, &col),
            &mut grants,
            &mut matched,
        );
        for i in super::bits(ins) {
            let fast = if won >> i & 1 == 1 {
                i32::from(matched[i])
            } else {
                -1
            };
            assert_eq!(fast, s.inmatch[i], "trial {trial}: input {i} of {reqs:?}");
        }
        assert_eq!(won & !ins, 0);
        assert_eq!((g1, a1), (g2, a2), "trial {trial}: {reqs:?}");
    }
}

/// VC allocation at one output port with several heads on bit sets (`shared_port_bits`)
/// against the request-list allocator (`allocate`) over the requests (head, each VC it may
/// take), which is what the general path's `va_shared_port` and `va_port` compute: the same
/// grants, VCs and pointers, random heads, VC ranges and pointers (in one trial of three every
/// head may take the same VCs, as on a mesh), iSLIP of one to three rounds and the separable
/// allocator.
#[test]
fn the_bit_set_vc_allocation_matches_the_request_list_allocator() {
    let mut rng = Lcg(11);
    for trial in 0..6000 {
        let (ports, v) = [(5, 4), (5, 2), (7, 8), (3, 16)][trial % 4];
        // iSLIP of 1, 2 and 3 rounds, and the separable allocator (one pass).
        let (kind, iters) = [
            (Allocator::Islip, 1),
            (Allocator::SeparableInputFirst, 1),
            (Allocator::Islip, 2),
            (Allocator::Islip, 3),
        ][trial / 4 % 4];
        let nio = ports * v;
        let op = rng.below(ports);
        let mut heads = 0u64;
        while heads.count_ones() < 2 {
            heads |= 1 << rng.below(nio);
        }
        let mut free: Vec<u32> = (0..nio).map(|_| rng.below(1 << v) as u32).collect();
        if trial % 3 == 0 {
            let same = rng.below(1 << v) as u32;
            free.fill(same);
        }
        let mut reqs = Vec::new();
        for j in super::bits(heads) {
            for ov in super::bits(u64::from(free[j])) {
                reqs.push((j as u16, (op * v + ov) as u16));
            }
        }
        let gptr: Vec<u16> = (0..nio).map(|_| rng.below(nio) as u16).collect();
        let aptr: Vec<u16> = (0..nio).map(|_| rng.below(nio) as u16).collect();
        let (mut g1, mut a1) = (gptr.clone(), aptr.clone());
        let mut s = scratch(nio);
        super::allocate(
            kind,
            iters,
            nio,
            nio,
            &mut (&mut g1[..], &mut a1[..]),
            &reqs,
            &mut s,
        );
        let (mut g2, mut a2) = (gptr, aptr);
        let mut picks = [0u8; 64];
        let (won, lost) = super::shared_port_bits(
            kind,
            iters,
            (op, v),
            heads,
            |j| free[j],
            &mut g2,
            &mut a2,
            &mut picks,
        );
        assert_eq!(won | lost, heads);
        assert_eq!(won & lost, 0);
        for j in super::bits(heads) {
            let granted = s.inmatch[j] >= 0 && free[j] != 0;
            assert_eq!(
                won >> j & 1 == 1,
                granted,
                "trial {trial}: head {j} of {reqs:?}"
            );
            if granted {
                // The same VC.
                assert_eq!(
                    op * v + usize::from(picks[j]),
                    s.inmatch[j] as usize,
                    "trial {trial}"
                );
            }
        }
        assert_eq!((g1, a1), (g2, a2), "trial {trial}: {reqs:?}");
    }
}

/// The mesh route table against routes by hand: on the 8x8 mesh router r is (r % 8, r / 8),
/// ports 0/1 are +x/-x, 2/3 are +y/-y and 4 the terminal; on a 3x4x2 mesh (strides 1, 3, 12)
/// ports 4/5 are +z/-z. Beyond the table's size the same function runs untabulated.
#[test]
fn mesh_routes_go_in_dimension_order() {
    let spec = RunSpec::new(Pattern::Uniform, 0.1);
    let b = super::BookSim::new(&cube(&[8, 8], false), &booksim(1), &spec).unwrap();
    assert_eq!(b.mesh_ports.len(), 64 * 64);
    let port = |r: usize, d: usize| b.mesh_ports[r * 64 + d];
    assert_eq!(port(0, 63), 0); // (0,0) -> (7,7): +x first
    assert_eq!(port(63, 0), 1); // (7,7) -> (0,0): -x
    assert_eq!(port(8, 0), 3); // (0,1) -> (0,0): -y
    assert_eq!(port(3, 59), 2); // (3,0) -> (3,7): +y
    assert_eq!(port(9, 9), 4); // the terminal
    let b = super::BookSim::new(&cube(&[3, 4, 2], false), &booksim(1), &spec).unwrap();
    assert_eq!(b.mesh_ports[12], 4); // (0,0,0) -> (0,0,1): +z
    assert_eq!(b.mesh_ports[14 * 24 + 2], 5); // (2,0,1) -> (2,0,0): -z
    for (r, d) in [(0, 23), (23, 0), (5, 17), (11, 11)] {
        assert_eq!(b.mesh_ports[r * 24 + d], b.mesh_port(r, d));
    }
    let big = super::BookSim::new(&cube(&[33, 32], false), &booksim(1), &spec).unwrap();
    assert!(big.mesh_ports.is_empty());
    assert_eq!(big.mesh_port(0, 33 * 32 - 1), 0);
    assert_eq!(big.mesh_port(33 * 32 - 1, 32), 3);
}

/// The torus route table gives the computed routes: on tori (2-D, 3-D, odd and even radices)
/// and a network that wraps in one dimension only, for every router, destination, arrival
/// port, coin and dateline partition the packet brings, the table's port, VC range and the
/// packet's new partition equal those `compute_route_slow` derives from the coordinates.
#[test]
fn torus_route_table_gives_the_computed_routes() {
    let spec = RunSpec::new(Pattern::Uniform, 0.1);
    for (dims, wrap) in [
        (vec![8, 8], vec![true, true]),
        (vec![5, 4, 3], vec![true, true, true]),
        (vec![6, 5], vec![true, false]),
        (vec![4, 7], vec![false, true]),
    ] {
        let net = Network::Cube(KAryNCube::new(dims.clone(), wrap, link()).unwrap());
        let mut b = super::BookSim::new(&net, &booksim(1), &spec).unwrap();
        let routers = b.routers;
        assert_eq!(b.torus_steps.len(), routers * routers, "{dims:?}");
        let table = std::mem::take(&mut b.torus_steps);
        b.packets = vec![super::Packet::default()];
        for r in 0..routers {
            for dst in 0..routers {
                b.dst_of = vec![dst as u32];
                for in_port in 0..b.ports {
                    for coins in [0, u64::MAX, 0b010, 0b101] {
                        for ph in [0, 1] {
                            let start = super::Packet {
                                coins,
                                ph,
                                ..super::Packet::default()
                            };
                            b.packets[0] = start;
                            let slow = b.compute_route_slow(r, in_port, 0);
                            let slow_ph = b.packets[0].ph;
                            let mut p = start;
                            let fast = super::torus_route(
                                table[r * routers + dst],
                                in_port,
                                &mut p,
                                (b.ports, b.vcs),
                            );
                            assert_eq!(
                                (fast, p.ph),
                                (slow, slow_ph),
                                "{dims:?} r {r} dst {dst} in {in_port} coins {coins} ph {ph}"
                            );
                        }
                    }
                }
            }
        }
    }
    let big = super::BookSim::new(&cube(&[33, 32], true), &booksim(1), &spec).unwrap();
    assert!(big.torus_steps.is_empty());
}

/// A few packets on an idle network with the link counters running from cycle 0 until the
/// last tail is out: the counters of every network link (fast path, or the general stage
/// queues with `general`).
fn lone_packets_links(
    net: &Network,
    cfg: &RouterConfig,
    pairs: &[(usize, u32)],
    general: bool,
) -> Vec<crate::LinkStat> {
    let spec = RunSpec::new(Pattern::Uniform, 1e-300);
    let mut b = super::BookSim::new(net, cfg, &spec).unwrap();
    b.fast &= !general;
    for &(src, dst) in pairs {
        b.generate_to(src, dst, 0);
    }
    let mut log = None;
    while b.stats.packets < pairs.len() as u64 {
        b.step(&mut log).unwrap();
        assert!(b.now < 100_000, "the packets never arrived");
    }
    b.end_window();
    b.link_stats(net)
}

/// Lone packets on an idle 4x4 mesh (router (x, y) is x + 4y), routed x first then y:
/// 0 = (0,0) to 15 = (3,3) crosses 0->1, 1->2, 2->3 (+x), then 3->7, 7->11, 11->15 (+y);
/// 12 = (0,3) to 1 = (1,0) crosses 12->13 (+x), then 13->9, 9->5, 5->1 (-y). Each of those
/// ten links carries each flit once (1 or 4 per packet), the other 38 none, and with nothing
/// else in the network no flit ever waits for a credit.
#[test]
fn lone_packets_count_once_on_each_link_of_their_path() {
    let mesh = cube(&[4, 4], false);
    let path: [(u64, u64); 10] = [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 7),
        (7, 11),
        (11, 15),
        (12, 13),
        (13, 9),
        (9, 5),
        (5, 1),
    ];
    let slow = RouterConfig {
        vc_alloc_delay: 2,
        sw_alloc_delay: 2,
        credit_delay: 1,
        ..booksim(4)
    };
    for (cfg, flits) in [(booksim(1), 1), (booksim(4), 4), (slow, 4)] {
        for general in [false, true] {
            let links = lone_packets_links(&mesh, &cfg, &[(0, 15), (12, 1)], general);
            // 4 rows x 3 links x 2 directions x 2 dimensions.
            assert_eq!(links.len(), 48);
            for l in &links {
                let on_path = path.contains(&(l.from.0, l.to.0));
                let want = if on_path { flits } else { 0 };
                assert_eq!(l.flits, want, "{l:?} general {general}");
                assert_eq!(l.blocked_cycles, 0, "{l:?}");
            }
        }
    }
}

/// The link list comes out in the podsim mode's channel order with the same ends, so the two
/// modes' `--links` outputs line up: meshes (edge ports left out), tori (wrap links), a
/// 3-D mesh and a torus with a ring of 2 (two parallel links between the same routers).
#[test]
fn link_channels_are_the_podsim_modes() {
    for (dims, wrap) in [
        (&[4, 4][..], false),
        (&[4, 4][..], true),
        (&[3, 4, 2][..], false),
        (&[2, 3][..], true),
    ] {
        let net = cube(dims, wrap);
        let s = spec(0.05, 1_000);
        let podsim = run(
            &net,
            NocRouting::DimensionOrder,
            &RouterConfig::default(),
            &s,
        )
        .unwrap();
        let bs = run(&net, NocRouting::DimensionOrder, &booksim(1), &s).unwrap();
        let ends = |r: &crate::NocResult| -> Vec<_> {
            r.links
                .iter()
                .map(|l| (l.channel, l.kind, l.from, l.to))
                .collect()
        };
        assert!(!podsim.links.is_empty());
        assert_eq!(ends(&podsim), ends(&bs), "{dims:?} wrap {wrap}");
        // The podsim mode's window is its measured cycles.
        assert_eq!(podsim.window_cycles, 1_000);
    }
}

/// Over BookSim's measurement window the links' flits add up to the flit-hops counted in that
/// window by the separate `flit_hops` counter, on both paths and with packets of 1 and 4 flits
/// (mesh and torus, below and past saturation); the window is the accepted rate's:
/// accepted x routers x window = flits ejected then. Past saturation some flit waits for a
/// credit, and a link's blocked cycles never exceed the window.
#[test]
fn link_flits_add_up_to_the_windows_flit_hops() {
    for (net, rate) in [
        (cube(&[8, 8], false), 0.3),
        (cube(&[8, 8], false), 0.6),
        (cube(&[8, 8], true), 0.3),
        (cube(&[8, 8], true), 0.9),
    ] {
        for flits in [1, 4] {
            for general in [false, true] {
                let cfg = booksim(flits);
                let s = spec(rate, 10_000);
                let mut b = super::BookSim::new(&net, &cfg, &s).unwrap();
                b.fast &= !general;
                b.run(1_000, &mut None).unwrap();
                let links = b.link_stats(&net);
                let sum: u64 = links.iter().map(|l| l.flits).sum();
                assert_eq!(
                    sum, b.window_hops,
                    "rate {rate} flits {flits} general {general}"
                );
                assert!(sum > 0);
                let window = b.drain_time - b.reset_time;
                let blocked: u64 = links.iter().map(|l| l.blocked_cycles).sum();
                assert!(links.iter().all(|l| l.blocked_cycles <= window));
                if rate > 0.5 {
                    assert!(blocked > 0, "rate {rate} flits {flits} general {general}");
                }
                // The result's window is the same one.
                let r = if general {
                    run_general(&net, &cfg, &s).unwrap()
                } else {
                    run(&net, NocRouting::DimensionOrder, &cfg, &s).unwrap()
                };
                assert_eq!(r.window_cycles, window);
                assert_eq!(r.links, links);
            }
        }
    }
}

#[test]
fn round_robin_picks_by_rotation_match_the_definition() {
    // `rr_pick`: the lowest bit at or after the pointer, else the lowest (every non-empty mask
    // of 8 bits, every pointer below 64, and masks with bits near the top).
    let first_at_or_after = |mask: u64, from: usize| {
        (from..64)
            .chain(0..from)
            .find(|&i| mask >> i & 1 == 1)
            .unwrap()
    };
    let masks = (1u64..256).chain([1 << 63, 0x8000_0000_0000_0001, u64::MAX, 0xf0 << 56]);
    for mask in masks {
        for from in 0..64 {
            assert_eq!(
                super::rr_pick(mask, from),
                first_at_or_after(mask, from),
                "{mask:#x} from {from}"
            );
        }
    }
    // `nearest`: within the block of `v` VCs at `base`, the first free VC at or after the
    // pointer when the pointer is inside the block, else the lowest free one.
    for v in [1usize, 2, 3, 4, 8, 32] {
        let base = 2 * v;
        let frees: Vec<u32> = if v <= 8 {
            (1..1u32 << v).collect()
        } else {
            vec![1, 1 << 31, 0x8000_0001, u32::MAX, 0x00f0_0f00]
        };
        for free in frees {
            for from in 0..5 * v {
                let want = if (base..base + v).contains(&from) {
                    base + first_at_or_after(u64::from(free), from - base)
                } else {
                    base + free.trailing_zeros() as usize
                };
                assert_eq!(
                    super::nearest(free, from, base, v),
                    want,
                    "free {free:#x} from {from} v {v}"
                );
            }
        }
    }
}
