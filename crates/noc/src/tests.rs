use super::*;
use podsim_engine::{RngStreams, SimError};
use podsim_net::{FlowModel, NetError, NetworkModel, Packetization};
use podsim_routing::Routing;
use podsim_topology::{FatTree, KAryNCube, LinkKind, LinkSpec, Network, NodeId, TtGrid};
use podsim_units::{Bandwidth, Bytes, SimDuration, SimTime};
use rand::RngCore;

fn link(gbps: u64, ns: u64) -> LinkSpec {
    LinkSpec {
        kind: LinkKind::OnChip,
        bandwidth: Bandwidth::from_gbps(gbps).unwrap(),
        latency: SimDuration::from_ns(ns),
    }
}

fn cube(dims: &[u32], wrap: bool) -> Network {
    Network::Cube(KAryNCube::new(dims.to_vec(), vec![wrap; dims.len()], link(16, 1)).unwrap())
}

fn cfg(stages: u32, link_cycles: u32, packet_flits: u32) -> RouterConfig {
    RouterConfig {
        pipeline_stages: stages,
        link_cycles: LinkCycles::all(link_cycles),
        packet_flits,
        ..RouterConfig::default()
    }
}

/// Run until idle (or `limit` cycles), returning every delivery.
fn drain(noc: &mut Noc, limit: u64) -> Vec<Delivered> {
    let mut out = Vec::new();
    for _ in 0..limit {
        if noc.is_idle() {
            break;
        }
        noc.step().unwrap();
        noc.take_delivered(&mut out);
    }
    out
}

/// Minimal hops between two nodes of a k x k grid, by hand: |dx| + |dy| on a mesh, each
/// dimension min(d, k - d) on a torus.
fn grid_hops(k: u64, wrap: bool, a: u64, b: u64) -> u64 {
    let d = |x: u64, y: u64| {
        let d = x.abs_diff(y);
        if wrap { d.min(k - d) } else { d }
    };
    d(a % k, b % k) + d(a / k, b / k)
}

#[test]
fn a_lone_packet_takes_the_closed_form_latency() {
    // T0 = S + h (S - 1 + L) + P (derived in the crate docs), for every pair of a 4x4 mesh and
    // torus, over pipelines of 1 to 3 stages, links of 1 to 3 cycles, packets of 1 to 5 flits.
    for wrap in [false, true] {
        let net = cube(&[4, 4], wrap);
        for (s, l, p) in [(1, 1, 1), (3, 1, 1), (1, 3, 4), (2, 2, 5), (3, 1, 4)] {
            let c = RouterConfig {
                buffer_flits: 8,
                ..cfg(s, l, p)
            };
            for src in 0..16 {
                for dst in 0..16 {
                    let mut noc = Noc::new(&net, NocRouting::DimensionOrder, &c).unwrap();
                    noc.inject(src, dst, p, 0).unwrap();
                    let got = drain(&mut noc, 1000);
                    let h = grid_hops(4, wrap, src as u64, dst as u64);
                    let want = u64::from(s) + h * u64::from(s - 1 + l) + u64::from(p);
                    assert_eq!(got.len(), 1);
                    assert_eq!(got[0].hops as u64, h, "{src}->{dst}");
                    assert_eq!(got[0].latency(), want, "{src}->{dst} S={s} L={l} P={p}");
                }
            }
        }
    }
}

#[test]
fn light_uniform_load_sits_just_above_the_zero_load_average() {
    // 8x8 mesh, uniform over all 64 destinations (self included): the average hop count is
    // 2 (k^2 - 1) / (3k) = 5.25, so T0 = S + P + 5.25 (S - 1 + L) = 1 + 1 + 5.25 = 7.25 cycles.
    let r = run(
        &cube(&[8, 8], false),
        NocRouting::DimensionOrder,
        &RouterConfig::default(),
        &RunSpec {
            cycles: 4000,
            ..RunSpec::new(Pattern::Uniform, 0.01)
        },
    )
    .unwrap();
    assert!((r.average_hops - 5.25).abs() < 0.1, "{}", r.average_hops);
    let t0 = 2.0 + r.average_hops;
    assert!(r.average_latency_cycles >= t0 - 1e-9);
    assert!(
        r.average_latency_cycles < t0 * 1.03,
        "{}",
        r.average_latency_cycles
    );
    assert!(!r.saturated);
}

#[test]
fn flits_are_conserved_at_every_sampled_cycle() {
    // Heavy load with 4-flit packets on a torus (dateline classes), every 7th cycle audited:
    // injected = ejected + buffered + on channels, nothing lost or duplicated; then everything
    // drains and every packet arrives exactly once, whole.
    let net = cube(&[4, 4], true);
    let c = RouterConfig {
        buffer_flits: 3,
        ..cfg(2, 2, 4)
    };
    let mut noc = Noc::new(&net, NocRouting::DimensionOrder, &c).unwrap();
    let mut rng = RngStreams::new(7).stream("test");
    let mut sent = 0u64;
    let mut got = Vec::new();
    for cycle in 0..6000 {
        for src in 0..16 {
            if rng.next_u64().is_multiple_of(4) {
                let dst = (rng.next_u64() % 16) as usize;
                noc.inject(src, dst, 4, sent).unwrap();
                sent += 1;
            }
        }
        noc.step().unwrap();
        noc.take_delivered(&mut got);
        if cycle % 7 == 0 {
            let a = noc.audit();
            assert!(a.conserved(), "cycle {cycle}: {a:?}");
        }
    }
    assert!(noc.audit().buffered > 0, "the test must load the network");
    got.extend(drain(&mut noc, 1_000_000));
    assert!(noc.is_idle());
    let a = noc.audit();
    assert!(
        a.conserved() && a.injected == a.ejected && a.injected == 4 * sent,
        "{a:?}"
    );
    let mut tags: Vec<u64> = got.iter().map(|d| d.tag).collect();
    tags.sort_unstable();
    assert_eq!(tags, (0..sent).collect::<Vec<_>>());
    assert!(got.iter().all(|d| d.flits == 4));
}

/// Tornado on an 8-node ring with 8-flit packets and 2-flit buffers: every packet heads the
/// same way round, and long packets span several routers.
fn ring_tornado(dateline: bool) -> Result<Noc, SimError> {
    let net = cube(&[8], true);
    let c = RouterConfig {
        vcs: 2,
        buffer_flits: 2,
        dateline,
        watchdog_cycles: 500,
        ..cfg(1, 1, 8)
    };
    let mut noc = Noc::new(&net, NocRouting::DimensionOrder, &c).unwrap();
    for _ in 0..3000 {
        for src in 0..8 {
            if noc.queued() < 64 {
                noc.inject(src, (src + 3) % 8, 8, 0).unwrap();
            }
        }
        noc.step()?;
    }
    Ok(noc)
}

#[test]
fn a_torus_without_dateline_classes_is_caught_deadlocked() {
    let Err(SimError::Deadlock { waiting, .. }) = ring_tornado(false) else {
        panic!("expected a deadlock");
    };
    // The cycle of waits goes round the whole ring (through the injection buffers whose
    // packets hold the VCs the ring's packets want).
    let routers: std::collections::BTreeSet<&str> = waiting
        .iter()
        .map(|w| w.split("<-").next().unwrap())
        .collect();
    assert_eq!(routers.len(), 8, "{waiting:?}");
    assert!(waiting.iter().any(|w| w.contains("<-n")), "{waiting:?}");
}

#[test]
fn dateline_classes_keep_the_same_torus_moving() {
    let mut noc = ring_tornado(true).unwrap();
    let got = drain(&mut noc, 100_000);
    assert!(noc.is_idle());
    assert!(got.len() > 100);
    assert!(noc.audit().conserved());
}

/// A route found ahead (`Fabric::find`, what the traffic driver does a cycle early, beside
/// the routers) is the route `route_found` caches without it: the same hops on every pair
/// of a torus and a mesh, and once cached, `find` gives the cached route itself.
#[test]
fn routes_found_ahead_are_the_routes_found_at_injection() {
    use crate::fabric::Found;
    for net in [cube(&[4, 4], true), cube(&[5, 3], false)] {
        let cfg = RouterConfig::default();
        let mut ahead = Fabric::new(&net, NocRouting::DimensionOrder, &cfg).unwrap();
        let mut plain = Fabric::new(&net, NocRouting::DimensionOrder, &cfg).unwrap();
        let n = net.endpoints() as u32;
        for s in 0..n {
            for d in 0..n {
                let found = ahead.find(s, d);
                assert!(matches!(found, Found::Paths(Ok(_))), "{s} -> {d}");
                let a = ahead.route_found(s, d, Some(&found)).unwrap();
                let b = plain.route_found(s, d, None).unwrap();
                let words = |f: &Fabric, r: crate::fabric::RouteRef| {
                    let at = r.start as usize..r.start as usize + r.len as usize * r.count as usize;
                    f.arena[at].to_vec()
                };
                assert_eq!((a.len, a.count), (b.len, b.count));
                assert_eq!(words(&ahead, a), words(&plain, b), "{s} -> {d}");
                match ahead.find(s, d) {
                    Found::Cached(c) => {
                        assert_eq!((c.start, c.len, c.count), (a.start, a.len, a.count))
                    }
                    other => panic!("{s} -> {d}: not cached: {other:?}"),
                }
            }
        }
    }
}

#[test]
fn dateline_rule_agrees_with_the_routing_layer() {
    // The fabric's rule (class 0 entering a dimension, 1 from the wrap-around hop on) gives the
    // classes `podsim-routing` gives dimension-ordered routes, on every pair.
    for dims in [vec![4, 4], vec![5, 3], vec![4, 4, 4], vec![8]] {
        let net = cube(&dims, true);
        let c = net.cube().unwrap().clone();
        let mut f =
            Fabric::new(&net, NocRouting::DimensionOrder, &RouterConfig::default()).unwrap();
        let n = c.node_count() as u32;
        for s in 0..n {
            for d in 0..n {
                let r = f.route_found(s, d, None).unwrap();
                let at = r.start as usize..r.start as usize + r.len as usize;
                let words = &f.arena[at];
                let links: Vec<u32> = words.iter().map(|w| w & !(1 << 31)).collect();
                let layer: Vec<u8> = Routing::dimension_order(dims.len())
                    .route(&c, NodeId(s.into()), NodeId(d.into()))
                    .iter()
                    .map(|h| h.vc.0)
                    .collect();
                let rule: Vec<u8> = f.with_dateline(&links).iter().map(|x| x.1).collect();
                assert_eq!(rule, layer, "{dims:?} {s}->{d}");
                let stored: Vec<u8> = words.iter().map(|w| (w >> 31) as u8).collect();
                assert_eq!(stored, layer);
            }
        }
    }
}

/// Drive `noc` with uniform traffic for `cycles` and return every delivery.
fn uniform_deliveries(mut noc: Noc, cycles: u64, rate_per_1000: u64) -> Vec<Delivered> {
    let mut rng = RngStreams::new(3).stream("order");
    let n = noc.fabric().endpoints();
    let mut got = Vec::new();
    for _ in 0..cycles {
        for src in 0..n {
            if rng.next_u64() % 1000 < rate_per_1000 {
                let dst = (rng.next_u64() % n as u64) as usize;
                noc.inject(src, dst, 2, 0).unwrap();
            }
        }
        noc.step().unwrap();
        noc.take_delivered(&mut got);
    }
    got
}

#[test]
fn the_order_routers_are_visited_in_does_not_matter() {
    let net = cube(&[4, 4], true);
    let c = cfg(2, 1, 2);
    let forward = Noc::new(&net, NocRouting::DimensionOrder, &c).unwrap();
    let mut backward = forward.clone();
    backward.reverse_visit = true;
    let a = uniform_deliveries(forward, 3000, 300);
    let b = uniform_deliveries(backward, 3000, 300);
    assert!(a.len() > 1000);
    assert!(a == b, "deliveries differ");
}

#[test]
fn runs_repeat_for_a_seed_and_parallel_sweeps_match_sequential_ones() {
    let net = cube(&[4, 4], true);
    let spec = RunSpec {
        cycles: 2000,
        sample_cycles: 500,
        ..RunSpec::new(Pattern::Uniform, 0.1)
    };
    let c = RouterConfig::default();
    let a = run(&net, NocRouting::DimensionOrder, &c, &spec).unwrap();
    let b = run(&net, NocRouting::DimensionOrder, &c, &spec).unwrap();
    assert_eq!(a, b);
    let other = run(
        &net,
        NocRouting::DimensionOrder,
        &c,
        &RunSpec {
            seed: 2,
            ..spec.clone()
        },
    );
    assert_ne!(a, other.unwrap());
    let rates = parse_rates("0.1:0.9:0.2").unwrap();
    let seq = sweep(&net, NocRouting::DimensionOrder, &c, &spec, &rates, false).unwrap();
    let par = sweep(&net, NocRouting::DimensionOrder, &c, &spec, &rates, true).unwrap();
    assert_eq!(seq, par);
}

/// The highest accepted load over a sweep in steps of 0.05, and whether it saturated.
fn saturation(net: &Network, packet_flits: u32) -> (f64, bool) {
    let spec = RunSpec {
        cycles: 3000,
        sample_cycles: 500,
        ..RunSpec::new(Pattern::Uniform, 0.05)
    };
    let c = RouterConfig {
        packet_flits,
        ..RouterConfig::default()
    };
    let rates = parse_rates("0.05:1.0:0.05").unwrap();
    let curve = sweep(net, NocRouting::DimensionOrder, &c, &spec, &rates, true).unwrap();
    let best = curve
        .iter()
        .map(|r| r.accepted_flits_per_node_cycle)
        .fold(0.0, f64::max);
    (best, curve.last().is_some_and(|r| r.saturated))
}

#[test]
fn uniform_traffic_saturates_below_the_channel_load_bound() {
    // Dimension-order routing under uniform traffic loads the bisection channels most: a k x k
    // mesh saturates at 4/k flits per node per cycle at best, a k x k torus at 8/k; an
    // interface injects at most 1. The documented margin: saturation at 50% of the bound or
    // more. What eats it: single-iteration separable allocators and head-of-line blocking
    // (the mesh reaches about 84%: 0.42 of 0.5), and on tori ties going Plus (a packet k/2
    // away always turns Plus, loading Plus channels with (1 + 2 + ... + k/2) / k = 1.25 flits
    // per flit injected on 8-ary rings, so DOR itself cannot pass 0.8) plus the dateline
    // halving the VCs each packet may use (the 8x8 torus reaches about 0.55).
    for (net, bound) in [
        (cube(&[8, 8], false), 4.0 / 8.0),
        (cube(&[8, 8], true), 8.0_f64 / 8.0),
        (cube(&[4, 4, 4], true), (8.0_f64 / 4.0).min(1.0)),
        (cube(&[16, 16], false), 4.0 / 16.0),
    ] {
        for flits in [1, 4] {
            let (best, saturated) = saturation(&net, flits);
            let name = net.shorthand();
            eprintln!("{name} P={flits}: {best}");
            assert!(
                best <= bound * 1.01,
                "{name} P={flits}: {best} above {bound}"
            );
            assert!(
                best >= 0.5 * bound,
                "{name} P={flits}: {best} far below {bound}"
            );
            assert!(saturated || best >= 0.95 * bound, "{name} P={flits}");
        }
    }
}

/// Run every transfer to completion on `m`; the makespan.
fn makespan(m: &mut dyn NetworkModel, sends: &[(u64, u64, u64)]) -> SimTime {
    for &(s, d, b) in sends {
        m.send(SimTime::ZERO, NodeId(s), NodeId(d), Bytes(b), 0)
            .unwrap();
    }
    let mut end = SimTime::ZERO;
    let mut n = 0;
    while let Some(t) = m.next_completion() {
        for c in m.advance(t) {
            end = end.max(c.end);
            n += 1;
        }
    }
    assert_eq!(n, sends.len());
    end
}

/// The makespan of `sends` on the flow model and on the packet level.
fn flow_and_packet(net: &Network, sends: &[(u64, u64, u64)]) -> (SimTime, SimTime) {
    let flow = makespan(
        &mut FlowModel::new(net.clone(), Packetization::NONE, false),
        sends,
    );
    let mut pm = PacketModel::new(
        net,
        NocRouting::DimensionOrder,
        &model_cfg(),
        Packetization::NONE,
    )
    .unwrap();
    (flow, makespan(&mut pm, sends))
}

fn model_cfg() -> RouterConfig {
    RouterConfig {
        packet_flits: 16,
        link_cycles: LinkCycles::default(),
        ..RouterConfig::default()
    }
}

#[test]
fn a_lone_transfer_matches_the_flow_model() {
    // 16 GB/s links with 1 ns latency and 16-byte flits: one cycle is 1 ns, links take one
    // cycle. 1 MiB from (0,0) to (3,0) on a 4x4 mesh: the flow model gives 65,536 ns + 3 ns;
    // the packet level adds only its pipeline fill, T0 - 1 - h = S + h (S - 1) + P - 1 cycles
    // on top of the 65,536 serialisation cycles plus the 3 link cycles, i.e. 1 + 0 + 16 - 1
    // + 1 (the interface's own channel) = 17 cycles more.
    let (flow, packet) = flow_and_packet(&cube(&[4, 4], false), &[(0, 3, 1 << 20)]);
    assert_eq!(flow.as_ps(), (65_536 + 3) * 1000);
    assert!(packet >= flow);
    assert!(
        packet.as_ps() - flow.as_ps() <= 17 * 1000,
        "{packet} vs {flow}"
    );
}

#[test]
fn under_load_the_packet_level_is_never_faster_than_the_flow_bound() {
    for net in [cube(&[4, 4], false), cube(&[4, 4], true)] {
        let cases: Vec<Vec<(u64, u64, u64)>> = vec![
            // Incast: three sources into one destination.
            vec![(0, 5, 65_536), (10, 5, 65_536), (15, 5, 65_536)],
            // A permutation (bit complement) and a transpose-like shift.
            (0..16).map(|s| (s, 15 - s, 32_768)).collect(),
            (0..16).map(|s| (s, (s + 5) % 16, 16_384)).collect(),
        ];
        for sends in cases {
            let (flow, packet) = flow_and_packet(&net, &sends);
            assert!(packet >= flow, "{}: {packet} < {flow}", net.shorthand());
        }
    }
}

#[test]
fn other_networks_route_and_conserve() {
    let tt = Network::Tenstorrent(TtGrid::grayskull());
    let ft = Network::FatTree(FatTree::new(4, link(16, 1)).unwrap());
    let tofu = Network::Tofu(podsim_topology::Tofu::fx100_chassis());
    for (net, routing) in [
        (tt.clone(), NocRouting::Noc0),
        (tt, NocRouting::Noc1),
        (ft, NocRouting::Table),
        (tofu, NocRouting::DimensionOrder),
        (cube(&[4, 4], true), NocRouting::Table),
    ] {
        let r = run(
            &net,
            routing,
            &cfg(1, 1, 2),
            &RunSpec {
                cycles: 1000,
                sample_cycles: 200,
                ..RunSpec::new(Pattern::Uniform, 0.05)
            },
        )
        .unwrap();
        assert!(
            !r.saturated && r.measured_packets > 0,
            "{}",
            net.shorthand()
        );
    }
}

#[test]
fn patterns_send_where_they_say() {
    let net = cube(&[4, 4], false);
    let dests = |p: Pattern| -> Vec<usize> {
        let mut d = traffic_dests(&p, &net);
        let mut rng = RngStreams::new(1).stream("p");
        (0..16).map(|s| d(s, &mut rng)).collect()
    };
    // Node ids are x + 4y.
    assert_eq!(dests(Pattern::BitComplement)[1], 14);
    assert_eq!(dests(Pattern::BitReverse)[1], 8);
    assert_eq!(dests(Pattern::Shuffle)[9], 3);
    assert_eq!(dests(Pattern::Transpose)[1], 4);
    // Tornado on k = 4 moves each coordinate by ceil(4/2) - 1 = 1, as neighbour does.
    assert_eq!(dests(Pattern::Tornado)[5], 10);
    assert_eq!(dests(Pattern::Neighbor)[15], 0);
    // All-to-all walks every other endpoint in turn.
    let mut d = traffic_dests(&Pattern::AllToAll, &net);
    let mut rng = RngStreams::new(1).stream("p");
    let walk: Vec<usize> = (0..15).map(|_| d(2, &mut rng)).collect();
    let mut sorted = walk.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..16).filter(|&x| x != 2).collect::<Vec<_>>());
    assert!(Pattern::parse("hotspot:3,5@0.5").is_ok());
    assert!(Pattern::parse("hotspot:x").is_err());
    assert!(
        Pattern::parse("diagonal")
            .unwrap_err()
            .why
            .contains("uniform")
    );
    let odd = cube(&[3, 3], false);
    assert!(spec::check(&Pattern::BitReverse, &odd).is_err());
}

fn traffic_dests(
    p: &Pattern,
    net: &Network,
) -> impl FnMut(usize, &mut podsim_engine::SimRng) -> usize {
    spec::dests_for_tests(p, net)
}

#[test]
fn bad_configurations_name_the_key() {
    let net = cube(&[4, 4], true);
    let one_vc = RouterConfig {
        vcs: 1,
        ..RouterConfig::default()
    };
    let e = Noc::new(&net, NocRouting::DimensionOrder, &one_vc).unwrap_err();
    assert!(e.to_string().contains("`vcs`"), "{e}");
    let zero = RouterConfig {
        buffer_flits: 0,
        ..RouterConfig::default()
    };
    assert!(
        Noc::new(&net, NocRouting::DimensionOrder, &zero)
            .unwrap_err()
            .to_string()
            .contains("`buffer_flits`")
    );
    let ft = Network::FatTree(FatTree::new(4, link(16, 1)).unwrap());
    let e = Noc::new(&ft, NocRouting::DimensionOrder, &RouterConfig::default()).unwrap_err();
    assert!(e.to_string().contains("`routing`"), "{e}");
    let e = run(
        &net,
        NocRouting::DimensionOrder,
        &RouterConfig::default(),
        &RunSpec::new(Pattern::Uniform, 1.5),
    );
    assert!(e.unwrap_err().to_string().contains("`rate`"));
    assert!(parse_rates("0.5:0.1:0.1").is_err());
    assert_eq!(
        parse_rates("0.05:0.2:0.05").unwrap(),
        vec![0.05, 0.1, 0.15, 0.2]
    );
}

#[test]
fn interfaces_per_node_follow_the_topology() {
    // Tofu: six TNIs per node (tofu-interconnect-d.txt); DOJO: one interface per node
    // (dojo-microarchitecture.txt, Network Interface).
    let tofu = Network::Tofu(
        podsim_topology::Tofu::new(
            podsim_topology::TofuGeneration::TofuD,
            [2, 2, 2],
            [true; 3],
            [2, 3, 2],
            SimDuration::ZERO,
            "tofud-small",
        )
        .unwrap(),
    );
    let f = Fabric::new(&tofu, NocRouting::DimensionOrder, &RouterConfig::default()).unwrap();
    assert_eq!(f.interfaces(), 6);
    let dojo = Network::Dojo(podsim_topology::Dojo::new(podsim_topology::DojoSpec::die()).unwrap());
    let f = Fabric::new(&dojo, NocRouting::Table, &RouterConfig::default()).unwrap();
    assert_eq!(f.interfaces(), 1);
    // Six interfaces inject six flits per cycle: a node sending to its six neighbours at once
    // gets all six packets' heads out in the same cycle.
    let mut noc = Noc::new(&tofu, NocRouting::DimensionOrder, &cfg(1, 1, 1)).unwrap();
    let c = tofu.cube().unwrap();
    let mut neighbours: Vec<usize> = c
        .ports(NodeId(0))
        .into_iter()
        .filter_map(|p| c.neighbor(NodeId(0), p))
        .map(|n| n.0 as usize)
        .collect();
    neighbours.sort_unstable();
    neighbours.dedup();
    for &d in neighbours.iter().take(6) {
        noc.inject(0, d, 1, 0).unwrap();
    }
    let got = drain(&mut noc, 100);
    assert_eq!(got.len(), neighbours.len().min(6));
    assert!(got.iter().all(|d| d.injected == 0), "{got:?}");
}

#[test]
fn a_deadlocked_packet_model_says_why() {
    // The ring tornado of `ring_tornado`, as transfers through the endpoint interface with
    // dateline classes off: the run stops, and `failure` names the deadlock.
    let net = cube(&[8], true);
    let c = RouterConfig {
        vcs: 2,
        buffer_flits: 2,
        dateline: false,
        watchdog_cycles: 500,
        flit_bytes: 16,
        packet_flits: 8,
        link_cycles: LinkCycles::default(),
        ..RouterConfig::default()
    };
    let mut m =
        PacketModel::new(&net, NocRouting::DimensionOrder, &c, Packetization::NONE).unwrap();
    for s in 0..8u64 {
        m.send(
            SimTime::ZERO,
            NodeId(s),
            NodeId((s + 3) % 8),
            Bytes(64 << 10),
            0,
        )
        .unwrap();
    }
    let mut done = 0;
    while let Some(t) = m.next_completion() {
        done += m.advance(t).len();
    }
    assert!(done < 8);
    let why = m.failure().expect("a failure");
    assert!(why.contains("deadlock"), "{why}");
}

#[test]
fn a_window_too_short_to_measure_is_refused_not_called_saturated() {
    // Regression: `--cycles 1` measured no packet and reported "saturated: yes".
    let net = cube(&[4, 4], false);
    let c = RouterConfig::default();
    for cycles in [1, MIN_WINDOW_CYCLES - 1] {
        let spec = RunSpec {
            cycles,
            ..RunSpec::new(Pattern::Uniform, 0.1)
        };
        let e = run(&net, NocRouting::DimensionOrder, &c, &spec).unwrap_err();
        assert!(e.to_string().contains("at least 100"), "{e}");
    }
    // At 0.1 flits/node/cycle on a 4x4 mesh (uniform, mean 8/3 hops: far from saturation)
    // a 100-cycle window measures about 160 packets and is not saturated.
    let spec = RunSpec {
        cycles: MIN_WINDOW_CYCLES,
        ..RunSpec::new(Pattern::Uniform, 0.1)
    };
    let r = run(&net, NocRouting::DimensionOrder, &c, &spec).unwrap();
    assert!(!r.saturated);
    assert!(r.measured_packets > 80, "{}", r.measured_packets);
}

#[test]
fn a_window_with_no_packet_is_an_error_not_a_zero_latency() {
    // At 1e-9 flits per node per cycle, the chance that either of 2 endpoints creates a packet
    // in a 100-cycle window is about 2e-7: there is nothing to measure.
    let net = cube(&[2], false);
    let spec = RunSpec {
        cycles: MIN_WINDOW_CYCLES,
        ..RunSpec::new(Pattern::Uniform, 1e-9)
    };
    let e = run(
        &net,
        NocRouting::DimensionOrder,
        &RouterConfig::default(),
        &spec,
    )
    .unwrap_err();
    assert!(e.to_string().contains("nothing to measure"), "{e}");
}

#[test]
fn a_huge_transfer_holds_a_few_packets_at_a_time() {
    // Regression: the packet model queued every packet of a transfer when it started, so a
    // 1 PiB send (2^50 B / 64 B flits / 16 flits = 2^40 packets) ran out of memory. Such a
    // send is now refused as days of work; the largest one allowed (10^9 flits, about 6 x 10^7
    // packets, gigabytes if queued at once) still holds a few packets at a time.
    let net = cube(&[4], true);
    let cfg = model_cfg();
    let mut pm =
        PacketModel::new(&net, NocRouting::DimensionOrder, &cfg, Packetization::NONE).unwrap();
    let e = pm
        .send(SimTime::ZERO, NodeId(0), NodeId(1), Bytes(1 << 50), 0)
        .unwrap_err();
    assert!(matches!(e, NetError::TooMuchWork { .. }), "{e}");
    let largest = crate::PACKET_FLIT_LIMIT * cfg.flit_bytes;
    pm.send(SimTime::ZERO, NodeId(0), NodeId(1), Bytes(largest), 0)
        .unwrap();
    let t = pm.noc().fabric().cycle().as_ps();
    assert!(pm.advance(SimTime::from_ps(10_000 * t)).is_empty());
    // A ring node has 2 interfaces: at most 2 packets wait in its source queue.
    assert!(pm.noc().queued() <= 2, "{}", pm.noc().queued());
    // 10,000 cycles moved about 10,000 flits over the one link at one flit per cycle (less
    // the few cycles the first flit takes to get there).
    let hops = pm.noc().flit_hops();
    assert!((9_000..=10_000).contains(&hops), "{hops}");
}

#[test]
fn lazily_handed_packets_take_the_paths_they_took_when_queued_at_once() {
    // Two transfers from the same source start together; each packet's number (which picks
    // the ejection interface) is what it was when all were queued at start, so the delivery
    // times equal those of the same sends split by hand into packets queued at once on a
    // bare `Noc` (the second fidelity here is the Noc itself).
    let net = cube(&[4, 4], true);
    let cfg = RouterConfig {
        flit_bytes: 64,
        ..model_cfg()
    };
    let mut pm =
        PacketModel::new(&net, NocRouting::DimensionOrder, &cfg, Packetization::NONE).unwrap();
    // 64 KiB = 1024 flits of 64 B = 64 packets of 16 flits each; 4 KiB = 4 packets.
    pm.send(SimTime::ZERO, NodeId(0), NodeId(5), Bytes(64 << 10), 0)
        .unwrap();
    pm.send(SimTime::ZERO, NodeId(0), NodeId(10), Bytes(4 << 10), 1)
        .unwrap();
    let mut ends = Vec::new();
    while let Some(t) = pm.next_completion() {
        for c in pm.advance(t) {
            ends.push((c.tag, c.end));
        }
    }
    ends.sort();
    let mut noc = Noc::new(&net, NocRouting::DimensionOrder, &cfg).unwrap();
    for _ in 0..64 {
        noc.inject(0, 5, 16, 0).unwrap();
    }
    for _ in 0..4 {
        noc.inject(0, 10, 16, 1).unwrap();
    }
    let mut last = [0u64; 2];
    for d in drain(&mut noc, 100_000) {
        last[d.tag as usize] = last[d.tag as usize].max(d.delivered);
    }
    let t = noc.fabric().cycle().as_ps();
    let want: Vec<(u64, SimTime)> = (0..2)
        .map(|i| (i as u64, SimTime::from_ps((last[i] + 1) * t)))
        .collect();
    assert_eq!(ends, want);
}

/// VC lanes: two 16-flit packets from nodes 0 and 1 of a 3-node line to node 2 share the link
/// 1 -> 2. Held to the same lane, one packet owns the lane's VC until its tail passes, so the
/// other's tail lands 16 or more cycles later (first come, first served); on different lanes
/// the switch alternates between them flit by flit and the tails land within a few cycles.
#[test]
fn lanes_serialize_or_interleave_packets() {
    let net = cube(&[3], false);
    let spread = |lanes: [u16; 2]| {
        let mut noc = Noc::new(&net, NocRouting::DimensionOrder, &cfg(1, 1, 16)).unwrap();
        noc.inject_lane(0, 2, 16, 0, lanes[0]).unwrap();
        noc.inject_lane(1, 2, 16, 1, lanes[1]).unwrap();
        let d = drain(&mut noc, 1000);
        assert_eq!(d.len(), 2);
        d[0].delivered.abs_diff(d[1].delivered)
    };
    assert!(spread([0, 0]) >= 15, "{}", spread([0, 0]));
    assert!(spread([0, 1]) <= 3, "{}", spread([0, 1]));
    // Any lane behaves as before: the router hands out free VCs, so the packets interleave.
    assert!(spread([ANY_LANE, ANY_LANE]) <= 3);
}

/// An endpoint that holds its credits (a DRAM bank with a bounded request queue): 40 one-flit
/// packets from node 0 to node 3 of a 4-node line, all on lane 0, fill the lane's ejection VC
/// (8 flits per interface) and then the lane's VCs upstream, and no more are delivered until the endpoint
/// accepts some. A probe from node 1 to node 2 on lane 0 queues behind that backlog on link
/// 1->2 and waits; on lane 1 it passes at once. Accepting every held packet lets the backlog
/// (and the probe behind it) through.
#[test]
fn held_credits_back_traffic_up_into_the_network() {
    let net = cube(&[4], false);
    let run = |probe_lane: u16| {
        let mut noc = Noc::new(&net, NocRouting::DimensionOrder, &cfg(1, 1, 1)).unwrap();
        noc.hold_credits(3);
        for t in 0..40 {
            noc.inject_lane(0, 3, 1, t, 0).unwrap();
        }
        let mut got = Vec::new();
        for _ in 0..300 {
            noc.step().unwrap();
            noc.take_delivered(&mut got);
        }
        // The lane's ejection VC, 8 slots on each of the node's interfaces, no more.
        assert_eq!(got.len(), 8 * net.interfaces() as usize);
        noc.inject_lane(1, 2, 1, 999, probe_lane).unwrap();
        for _ in 0..100 {
            noc.step().unwrap();
            noc.take_delivered(&mut got);
        }
        let probe_early = got.iter().any(|d| d.tag == 999);
        let mut accepted = 0;
        for _ in 0..2000 {
            while noc.accept(3) {
                accepted += 1;
            }
            noc.step().unwrap();
            noc.take_delivered(&mut got);
        }
        assert_eq!(accepted, 40);
        assert_eq!(got.len(), 41);
        assert!(noc.audit().conserved());
        probe_early
    };
    assert!(
        !run(0),
        "the probe should wait behind the held backlog on its lane"
    );
    assert!(run(1), "on another lane the probe should pass");
}

#[test]
fn the_order_routers_are_visited_in_does_not_matter_past_64_routers() {
    let net = cube(&[9, 9], false);
    let c = cfg(1, 1, 2);
    let forward = Noc::new(&net, NocRouting::DimensionOrder, &c).unwrap();
    let mut backward = forward.clone();
    backward.reverse_visit = true;
    let a = uniform_deliveries(forward, 2000, 150);
    let b = uniform_deliveries(backward, 2000, 150);
    assert!(a.len() > 1000);
    assert!(a == b, "deliveries differ");
}

/// The VC allocator's shortcuts (a lone request, two requests ordered without a sort) decide
/// as the general paths do: deliveries and link counters agree
/// with the shortcuts off, over arbitrations, pipelines, packet lengths and VC counts, on a
/// mesh and a torus (dateline classes).
#[test]
fn the_allocator_shortcuts_decide_as_the_general_paths() {
    for (wrap, arb, stages, flits, vcs, rate) in [
        (false, Arbitration::RoundRobin, 1, 1, 4, 350),
        (true, Arbitration::RoundRobin, 1, 2, 4, 250),
        (false, Arbitration::Fcfs, 1, 1, 2, 300),
        (true, Arbitration::Fcfs, 2, 3, 4, 150),
        (false, Arbitration::RoundRobin, 3, 4, 2, 120),
    ] {
        let net = cube(&[5, 5], wrap);
        let c = RouterConfig {
            arbitration: arb,
            vcs,
            ..cfg(stages, 1, flits)
        };
        let fast = Noc::new(&net, NocRouting::DimensionOrder, &c).unwrap();
        let mut general = fast.clone();
        general.fast_paths = false;
        let (mut a, mut b) = (fast, general);
        let mut rng = RngStreams::new(9).stream("shortcuts");
        let n = a.fabric().endpoints();
        let (mut got_a, mut got_b) = (Vec::new(), Vec::new());
        for _ in 0..3000 {
            for src in 0..n {
                if rng.next_u64() % 1000 < rate / flits as u64 {
                    let dst = (rng.next_u64() % n as u64) as usize;
                    a.inject(src, dst, flits, 0).unwrap();
                    b.inject(src, dst, flits, 0).unwrap();
                }
            }
            a.step().unwrap();
            b.step().unwrap();
            a.take_delivered(&mut got_a);
            b.take_delivered(&mut got_b);
        }
        assert!(got_a.len() > 1000, "{}", got_a.len());
        assert!(
            got_a == got_b,
            "deliveries differ ({wrap} {arb:?} {stages} {flits})"
        );
        assert_eq!(a.link_stats(), b.link_stats());
        assert_eq!(a.audit(), b.audit());
    }
}

/// Split into parts (each evaluated on its own thread), the routers decide as in one part:
/// the same deliveries in the same order, link counters and flit accounts, over
/// arbitrations, pipelines (buffer-ready times), packet lengths, VC lanes, endpoints that hold
/// their credits, a mesh and a torus (dateline classes), with parts of one or two routers and parts
/// that end inside a row; and backwards within each part too.
#[test]
fn routers_split_into_parts_decide_as_one() {
    for (wrap, arb, stages, flits, rate) in [
        (false, Arbitration::RoundRobin, 1, 1, 350),
        (true, Arbitration::RoundRobin, 1, 4, 250),
        (false, Arbitration::Fcfs, 2, 2, 300),
        (true, Arbitration::Fcfs, 3, 3, 150),
    ] {
        let net = cube(&[7, 6], wrap);
        let c = RouterConfig {
            arbitration: arb,
            ..cfg(stages, 1, flits)
        };
        let mut one = Noc::new(&net, NocRouting::DimensionOrder, &c).unwrap();
        one.set_parts(1);
        // Endpoint 5 holds its credits and accepts a packet every fourth cycle.
        one.hold_credits(5);
        let run = |mut noc: Noc| {
            let mut rng = RngStreams::new(11).stream("parts");
            let n = noc.fabric().endpoints();
            let mut got = Vec::new();
            for cycle in 0..2500u64 {
                for src in 0..n {
                    if rng.next_u64() % 1000 < rate / flits as u64 {
                        let dst = (rng.next_u64() % n as u64) as usize;
                        let lane = (rng.next_u64() % 3) as u16;
                        if lane == 2 {
                            noc.inject(src, dst, flits, cycle).unwrap();
                        } else {
                            noc.inject_lane(src, dst, flits, cycle, lane).unwrap();
                        }
                    }
                }
                if cycle % 4 == 0 {
                    noc.accept(5);
                }
                noc.step().unwrap();
                noc.take_delivered(&mut got);
            }
            (got, noc.link_stats(), noc.audit(), noc.flit_hops())
        };
        let reference = run(one.clone());
        assert!(reference.0.len() > 1000, "{}", reference.0.len());
        assert!(reference.2.conserved());
        for parts in [2, 3, 5, MAX_PARTS] {
            for backwards in [false, true] {
                let mut split = one.clone();
                split.set_parts(parts);
                split.reverse_visit = backwards;
                assert_eq!(split.parts(), parts);
                assert!(
                    run(split) == reference,
                    "{parts} parts ({wrap} {arb:?} {stages} {flits} {backwards})"
                );
            }
        }
    }
}

/// The fast engine (`lean.rs`, taken by `podsim noc` where the configuration allows) against
/// the general one, run by asking for a packet log (which only the general engine keeps):
/// the same results, counters of every link included, over meshes and tori, 1- and multi-flit
/// packets, few and many VCs, shallow buffers, slow links, light, heavy and saturating loads.
#[test]
fn the_fast_engine_decides_as_the_general_one() {
    let nets = [
        cube(&[4, 4], false),
        cube(&[4, 4], true),
        cube(&[5, 3], false),
        cube(&[3, 3, 2], true),
    ];
    let configs = [
        cfg(1, 1, 1),
        cfg(1, 1, 4),
        cfg(1, 3, 2),
        RouterConfig {
            vcs: 2,
            buffer_flits: 2,
            packet_flits: 3,
            ..RouterConfig::default()
        },
        RouterConfig {
            vcs: 3,
            cover_round_trip: true,
            ..cfg(1, 2, 1)
        },
    ];
    let mut fast = 0;
    for net in &nets {
        for c in &configs {
            let noc = Noc::new(net, NocRouting::DimensionOrder, c).unwrap();
            fast += usize::from(crate::lean::Lean::from_noc(noc, u64::MAX).is_ok());
            for (pattern, rate) in [
                (Pattern::Uniform, 0.1),
                (Pattern::Uniform, 0.45),
                (Pattern::Uniform, 0.95),
                (Pattern::BitComplement, 0.3),
            ] {
                let spec = RunSpec {
                    cycles: 1500,
                    sample_cycles: 300,
                    ..RunSpec::new(pattern, rate)
                };
                let mut log = PacketLog {
                    limit: 0,
                    kept: Vec::new(),
                    cut: 0,
                };
                let general = run_logged(net, NocRouting::DimensionOrder, c, &spec, Some(&mut log));
                let lean = run_logged(net, NocRouting::DimensionOrder, c, &spec, None);
                match (general, lean) {
                    (Ok(g), Ok(l)) => assert_eq!(g, l, "{c:?} {spec:?}"),
                    (g, l) => assert_eq!(
                        g.map(|_| ()).unwrap_err().to_string(),
                        l.map(|_| ()).unwrap_err().to_string()
                    ),
                }
            }
        }
    }
    // Every configuration above is one the fast engine takes; these are not (nor is a 3-D
    // torus with 8 VCs: its routers' 12 ports of 8 VCs would overflow a 64-bit mask, where a
    // 2-D mesh's 8 fit).
    assert_eq!(fast, nets.len() * configs.len());
    let eight = RouterConfig {
        vcs: 8,
        ..RouterConfig::default()
    };
    let torus = Noc::new(&cube(&[3, 3, 2], true), NocRouting::DimensionOrder, &eight);
    assert!(crate::lean::Lean::from_noc(torus.unwrap(), u64::MAX).is_err());
    let mesh = Noc::new(&cube(&[4, 4], false), NocRouting::DimensionOrder, &eight);
    assert!(crate::lean::Lean::from_noc(mesh.unwrap(), u64::MAX).is_ok());
    let net = cube(&[4, 4], false);
    // Nor one whose routers would not fit beside the general engine's state in the memory
    // limit.
    let noc = Noc::new(&net, NocRouting::DimensionOrder, &cfg(1, 1, 1)).unwrap();
    assert!(crate::lean::Lean::from_noc(noc, 100_000).is_err());
    for c in [
        cfg(2, 1, 1),
        RouterConfig {
            arbitration: Arbitration::Fcfs,
            ..RouterConfig::default()
        },
        RouterConfig {
            vcs: 16,
            ..RouterConfig::default()
        },
    ] {
        let noc = Noc::new(&net, NocRouting::DimensionOrder, &c).unwrap();
        assert!(crate::lean::Lean::from_noc(noc, u64::MAX).is_err(), "{c:?}");
    }
}

/// A run the fast engine finds stuck (here a watchdog shorter than a channel's latency, so
/// flits in flight look like no progress) runs again on the general engine, whose report of
/// the waits is the one returned.
#[test]
fn a_stuck_fast_run_reports_as_the_general_engine_does() {
    let net = cube(&[4, 4], false);
    let c = RouterConfig {
        watchdog_cycles: 2,
        ..cfg(1, 4, 1)
    };
    let spec = RunSpec {
        cycles: 1000,
        sample_cycles: 200,
        ..RunSpec::new(Pattern::Uniform, 0.05)
    };
    let mut log = PacketLog {
        limit: 0,
        kept: Vec::new(),
        cut: 0,
    };
    let general = run_logged(&net, NocRouting::DimensionOrder, &c, &spec, Some(&mut log));
    let lean = run_logged(&net, NocRouting::DimensionOrder, &c, &spec, None);
    let g = general.unwrap_err().to_string();
    assert!(g.contains("deadlock"), "{g}");
    assert_eq!(g, lean.unwrap_err().to_string());
}

/// The fast engine in parts, eight per thread (networks of 512 routers or more), decides as
/// in one part: the same results, link counters included, on 1, 2 and 3 threads, where a
/// 48x24 mesh's and a 48x24 torus's 1152 routers (18 words of 64) are one part, 16 parts (14
/// of 64 routers and two of 128: k x 18 / 16 words) and 18 parts of 64 (24 asked, 18 words);
/// and run from outside the pool (the pool's other threads kept looking for the parts' work
/// until the run ends), as on one thread.
#[test]
fn the_fast_engine_in_parts_decides_as_in_one() {
    for net in [cube(&[48, 24], false), cube(&[48, 24], true)] {
        let c = cfg(1, 1, 2);
        let spec = RunSpec {
            cycles: 600,
            sample_cycles: 200,
            ..RunSpec::new(Pattern::Uniform, 0.4)
        };
        let runs: Vec<(usize, NocResult)> = [1, 2, 3]
            .iter()
            .map(|&threads| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                pool.install(|| {
                    let noc = Noc::new(&net, NocRouting::DimensionOrder, &c).unwrap();
                    let parts = crate::lean::Lean::from_noc(noc, u64::MAX).map_or(0, |l| l.parts());
                    let r = run_logged(&net, NocRouting::DimensionOrder, &c, &spec, None).unwrap();
                    (parts, r)
                })
            })
            .collect();
        assert_eq!(runs.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 16, 18]);
        assert!(runs[0].1.flit_hops > 0);
        assert_eq!(runs[0].1, runs[1].1);
        assert_eq!(runs[0].1, runs[2].1);
        let outside = run_logged(&net, NocRouting::DimensionOrder, &c, &spec, None).unwrap();
        assert_eq!(runs[0].1, outside);
    }
}
