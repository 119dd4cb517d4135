//! The flow model's exchanges against the flow-by-flow reference, and by hand.

use super::*;
use crate::{LinkTable, NetworkModel, Packetization};
use podsim_topology::{KAryNCube, LinkKind, LinkSpec, Network};
use podsim_units::{Bandwidth, Bytes};
use proptest::prelude::*;

fn cube(dims: &[u32], twist: Option<Vec<Vec<u32>>>, mbps: u64, latency_ns: u64) -> Network {
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_bytes_per_s(mbps * 1_000_000).unwrap(),
        latency: SimDuration::from_ns(latency_ns),
    };
    let c = KAryNCube::new(dims.to_vec(), vec![true; dims.len()], link).unwrap();
    Network::Cube(match twist {
        Some(t) => c.with_twist(t).unwrap(),
        None => c,
    })
}

/// Random tori of up to 3 dimensions (sizes 1 to 5), and the named twisted shapes.
fn shapes() -> impl Strategy<Value = (Vec<u32>, bool)> {
    prop_oneof![
        3 => prop::collection::vec(1u32..=5, 1..=3).prop_map(|d| (d, false)),
        1 => prop::sample::select(vec![
            vec![2, 4],
            vec![4, 2],
            vec![3, 6],
            vec![2, 2, 4],
            vec![2, 4, 2],
            vec![4, 2, 4],
            vec![3, 3, 6],
            vec![2, 4, 4],
        ])
        .prop_map(|d| (d, true)),
    ]
}

fn build(dims: &[u32], twisted: bool, mbps: u64, latency_ns: u64) -> Network {
    let twist = twisted.then(|| KAryNCube::named_twist(dims).unwrap());
    cube(dims, twist, mbps, latency_ns)
}

/// The exchange sent transfer by transfer on the flow-by-flow reference, as its completions
/// by id, with the model.
fn reference(
    net: &Network,
    p: Packetization,
    nodes: &[NodeId],
    bytes: u64,
) -> (Vec<Completion>, FlowModel) {
    let mut m = FlowModel::new(net.clone(), p, false).with_mode(FlowMode::FlowByFlow);
    let n = nodes.len();
    let at = SimTime::from_ps(1_000);
    let mut place = 0u64;
    for i in 0..n {
        for k in 1..n {
            m.send(at, nodes[i], nodes[(i + k) % n], Bytes(bytes), 100 + place)
                .unwrap();
            place += 1;
        }
    }
    let mut out = Vec::new();
    while let Some(t) = m.next_completion() {
        out.extend(m.advance(t));
    }
    out.sort_by_key(|c| c.id);
    (out, m)
}

/// The same exchange in one call, by classes.
fn by_classes(
    net: &Network,
    p: Packetization,
    nodes: &[NodeId],
    bytes: u64,
) -> (Vec<Completion>, FlowModel) {
    let mut m = FlowModel::new(net.clone(), p, false);
    let x = Exchange {
        at: SimTime::from_ps(1_000),
        nodes,
        bytes: Bytes(bytes),
        tag: 100,
    };
    let mut out = Vec::new();
    m.exchange(&x, &mut |c| out.push(*c))
        .expect("a torus takes exchanges")
        .unwrap();
    out.sort_by_key(|c| c.id);
    (out, m)
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Both ways agree: every transfer's ids, tags and ends; the exchange's time (its last
/// arrival) within 10⁻⁹ relative, each transfer's within 10⁻⁹ relative plus 1 ps (flow by
/// flow, translates can get shares one 36-bit rounding step apart, see the module docs,
/// and a drain time is rounded up to a whole picosecond); the report's counts exactly, its
/// peak load and every link's bytes within 10⁻⁹. Returns how many transfers ended at exactly
/// the same picosecond, and the two last arrivals.
fn compare(net: &Network, p: Packetization, nodes: &[NodeId], bytes: u64) -> (usize, u64, u64) {
    let (want, mut r) = reference(net, p, nodes, bytes);
    let (got, mut m) = by_classes(net, p, nodes, bytes);
    assert_eq!(want.len(), got.len());
    let mut same = 0;
    for (w, g) in want.iter().zip(&got) {
        assert_eq!(
            (w.id, w.tag, w.src, w.dst, w.bytes, w.start),
            (g.id, g.tag, g.src, g.dst, g.bytes, g.start)
        );
        let (tw, tg) = ((w.end - w.start).as_ps(), (g.end - g.start).as_ps());
        assert!(
            tw.abs_diff(tg) as f64 <= 1.0 + 1e-9 * tw as f64,
            "{w:?} vs {g:?}"
        );
        same += usize::from(tw == tg);
    }
    let last = |cs: &[Completion]| cs.iter().map(|c| c.end.as_ps()).max().unwrap_or(0);
    let (lw, lg) = (last(&want), last(&got));
    assert!(close(lw as f64, lg as f64), "{lw} vs {lg}");
    let (a, b) = (r.report(), m.report());
    assert_eq!(
        (a.bytes_sent, a.bytes_delivered, a.bytes_on_wire),
        (b.bytes_sent, b.bytes_delivered, b.bytes_on_wire)
    );
    assert!(
        close(a.max_link_utilization, b.max_link_utilization),
        "{a:?} {b:?}"
    );
    for (x, y) in NetworkModel::carried(&r)
        .iter()
        .zip(NetworkModel::carried(&m).iter())
    {
        assert_eq!((x.from, x.to), (y.from, y.to));
        assert!(close(x.wire_bytes, y.wire_bytes));
    }
    // Both idle at the last arrival: the next send goes the same way on either.
    let last = SimTime::from_ps(lw.max(lg));
    assert_eq!(r.next_completion(), None);
    assert_eq!(m.next_completion(), None);
    let (s, d) = (nodes[0], nodes[1]);
    let ia = r.send(last, s, d, Bytes(77), 0).unwrap();
    let ib = m.send(last, s, d, Bytes(77), 0).unwrap();
    assert_eq!(ia, ib);
    assert_eq!(r.advance(SimTime::MAX), m.advance(SimTime::MAX));
    (same, lw, lg)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn exchanges_by_classes_match_flow_by_flow(
        (dims, twisted) in shapes(),
        mbps in prop::sample::select(vec![1_000u64, 48_000, 50_000, 46_875, 33_333]),
        latency in 0u64..4,
        bytes in prop::sample::select(vec![0u64, 1, 1000, 65_536, 1_000_003, 1 << 20]),
        packets in any::<bool>(),
        shuffle in any::<u64>(),
    ) {
        let net = build(&dims, twisted, mbps, 100 * latency);
        let n = net.node_count();
        prop_assume!(n >= 2);
        // Ranks on nodes in a shuffled order.
        let mut nodes: Vec<NodeId> = (0..n).map(NodeId).collect();
        let mut s = shuffle;
        for i in (1..nodes.len()).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            nodes.swap(i, (s >> 33) as usize % (i + 1));
        }
        let p = if packets { Packetization { payload: 4096, header: 64 } } else { Packetization::NONE };
        compare(&net, p, &nodes, bytes);
    }

    #[test]
    fn translations_are_a_group_that_routes_commute_with(
        (dims, twisted) in shapes(),
    ) {
        let net = build(&dims, twisted, 1_000, 0);
        let n = net.node_count();
        prop_assume!(n >= 2);
        let links = LinkTable::new(&net);
        let t = Translations::of(&net, &links).unwrap();
        let m = FlowModel::new(net.clone(), Packetization::NONE, false);
        let c = net.cube().unwrap();
        for a in 0..n {
            let a = NodeId(a);
            // Each port moves a translate the same way.
            for p in c.ports(NodeId(0)) {
                let step = c.neighbor(NodeId(0), p).unwrap();
                prop_assert_eq!(t.add(a, step), c.neighbor(a, p).unwrap());
            }
            for b in 0..n {
                let b = NodeId(b);
                prop_assert_eq!(t.add(b, t.sub(a, b)), a);
                if a != b {
                    prop_assert_eq!(
                        m.class_route(&t, b, a).unwrap(),
                        m.class_route(&t, NodeId(0), t.sub(a, b)).unwrap()
                    );
                }
            }
        }
    }
}

#[test]
fn the_named_twisted_tori_and_tpu_slices_route_by_translation() {
    for dims in [vec![4u32, 4, 8], vec![4, 8, 8], vec![8, 4, 4], vec![4, 8]] {
        let net = build(&dims, true, 1_000, 0);
        let links = LinkTable::new(&net);
        let t = Translations::of(&net, &links).unwrap();
        let m = FlowModel::new(net.clone(), Packetization::NONE, false);
        let n = net.node_count();
        let class: Vec<Vec<usize>> = (1..n)
            .map(|d| m.class_route(&t, NodeId(0), NodeId(d)).unwrap())
            .collect();
        for s in 0..n {
            for d in (0..n).filter(|&d| d != s) {
                let delta = t.sub(NodeId(d), NodeId(s));
                assert_eq!(
                    m.class_route(&t, NodeId(s), NodeId(d)).unwrap(),
                    class[delta.0 as usize - 1],
                    "{dims:?}: {s} -> {d}"
                );
            }
        }
    }
}

#[test]
fn exchanges_on_larger_tori_match_flow_by_flow() {
    let p = Packetization::NONE;
    for (dims, twisted) in [
        (vec![4u32, 4, 4], false),
        (vec![4, 4, 8], true),
        (vec![6, 6], false),
        (vec![16], false),
    ] {
        let net = build(&dims, twisted, 50_000, 300);
        let nodes: Vec<NodeId> = (0..net.node_count()).map(NodeId).collect();
        compare(&net, p, &nodes, (16 << 20) / nodes.len() as u64);
    }
}

#[test]
fn an_all_to_all_on_a_4x4_torus_by_hand() {
    // 4x4 torus, B = 48 GB/s links, L = 100 ns, b = 1 MiB per pair; each node injects and
    // ejects through 4 interfaces (4B). Classes δ = (dx, dy) != (0, 0), each coordinate
    // 1 (+1), 2 (+2, ties go Plus) or 3 (-1), x first.
    // * A Plus-x link carries, per source, the classes with dx = 1 (one hop, 4 of them) and
    //   dx = 2 (two hops, 4 of them): 12 flows, share B/12. A Minus-x link carries dx = 3:
    //   4 flows, B/4. The same in y. Injection and ejection: 15 flows over 4B, 4B/15.
    // * Filling: Plus-x and Plus-y fix every class with dx or dy in {1, 2} (12 classes) at
    //   B/12 = 4 GB/s. What is left on Minus-x: B - 2 B/12 over 2 flows ((3, 0), (3, 3)),
    //   5B/12; the same on Minus-y; injection 4B - 12 B/12 = 3B over 3. So (3, 0), (0, 3),
    //   (3, 3) get 5B/12 = 20 GB/s.
    // * Those drain at b / (5B/12) = 52.4288 us; nothing on the Plus links changes, so the
    //   others keep B/12 and drain at b / (B/12) = 262.144 us. The last to arrive is (2, 2),
    //   4 hops: 262.144 us + 400 ns. (3, 3) arrives at 52.4288 us + 200 ns.
    let net = build(&[4, 4], false, 48_000, 100);
    let nodes: Vec<NodeId> = (0..16).map(NodeId).collect();
    let (got, m) = by_classes(&net, Packetization::NONE, &nodes, 1 << 20);
    let at = 1_000;
    let end = |s: u64, d: u64| {
        got.iter()
            .find(|c| c.src == NodeId(s) && c.dst == NodeId(d))
            .unwrap()
            .end
            .as_ps()
            - at
    };
    assert_eq!(
        got.iter().map(|c| c.end.as_ps()).max().unwrap() - at,
        262_144_000 + 400_000
    );
    assert_eq!(end(0, 2 + 2 * 4), 262_144_000 + 400_000);
    assert_eq!(end(0, 3 + 3 * 4), 52_428_800 + 200_000);
    assert_eq!(end(5, 4), 52_428_800 + 100_000);
    assert_eq!(end(5, 6), 262_144_000 + 100_000);
    // Plus links were full (12 x 4 GB/s); every transfer delivered.
    assert_eq!(m.report().max_link_utilization, 1.0);
    assert_eq!(m.report().bytes_delivered, 240 << 20);
    // And the flow-by-flow reference gives exactly these times.
    assert_eq!(compare(&net, Packetization::NONE, &nodes, 1 << 20).0, 240);
}

#[test]
fn exchanges_are_declined_where_translations_do_not_hold() {
    let nodes = |n: u64| (0..n).map(NodeId).collect::<Vec<_>>();
    // A mesh, an exchange over some of the nodes, a busy model, the reference mode.
    let mesh = {
        let link = LinkSpec {
            kind: LinkKind::Electrical,
            bandwidth: Bandwidth::from_bytes_per_s(1_000_000_000).unwrap(),
            latency: SimDuration::ZERO,
        };
        Network::Cube(KAryNCube::new(vec![4, 4], vec![false, false], link).unwrap())
    };
    let torus = build(&[4, 4], false, 1_000, 0);
    let none = |m: &mut FlowModel, ns: &[NodeId]| {
        let x = Exchange {
            at: SimTime::from_ps(5),
            nodes: ns,
            bytes: Bytes(100),
            tag: 0,
        };
        m.exchange(&x, &mut |_| {}).is_none()
    };
    assert!(none(
        &mut FlowModel::new(mesh, Packetization::NONE, false),
        &nodes(16)
    ));
    assert!(none(
        &mut FlowModel::new(torus.clone(), Packetization::NONE, false),
        &nodes(8)
    ));
    let mut busy = FlowModel::new(torus.clone(), Packetization::NONE, false);
    busy.send(SimTime::ZERO, NodeId(0), NodeId(1), Bytes(1 << 20), 0)
        .unwrap();
    assert!(none(&mut busy, &nodes(16)));
    let mut reference =
        FlowModel::new(torus, Packetization::NONE, false).with_mode(FlowMode::FlowByFlow);
    assert!(none(&mut reference, &nodes(16)));
}
