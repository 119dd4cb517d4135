use super::*;
use podsim_topology::{KAryNCube, LinkKind, LinkSpec, Network, NodeId};
use podsim_units::{Bandwidth, Bytes, SimDuration, SimTime};
use proptest::prelude::*;

fn torus(dims: &[u32], wrap: bool, gbps: u64, latency_ns: u64) -> Network {
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(gbps).unwrap(),
        latency: SimDuration::from_ns(latency_ns),
    };
    Network::Cube(KAryNCube::new(dims.to_vec(), vec![wrap; dims.len()], link).unwrap())
}

/// Run every pending transfer to completion.
fn finish(m: &mut dyn NetworkModel) -> Vec<Completion> {
    let mut out = Vec::new();
    while let Some(t) = m.next_completion() {
        out.extend(m.advance(t));
    }
    out
}

#[test]
fn a_lone_flow_takes_size_over_bandwidth_plus_latency() {
    // 4x4 torus, 50 GB/s, 100 ns links: node 0 -> (2, 1) is 3 hops. 1 MiB / 50 GB/s =
    // 20,971.52 ns; plus 300 ns.
    let net = torus(&[4, 4], true, 50, 100);
    let dst = NodeId(2 + 4);
    for model in [
        &mut FlowModel::new(net.clone(), Packetization::NONE, false) as &mut dyn NetworkModel,
        &mut AnalyticModel::new(net.clone(), Packetization::NONE),
    ] {
        model
            .send(SimTime::from_ns(1000), NodeId(0), dst, Bytes(1 << 20), 7)
            .unwrap();
        let done = finish(model);
        assert_eq!(done.len(), 1);
        assert_eq!(
            done[0].end.as_ps(),
            1_000_000 + 20_971_520 + 300_000,
            "{}",
            model.name()
        );
        assert_eq!(done[0].tag, 7);
        let r = model.report();
        assert_eq!((r.bytes_sent, r.bytes_delivered), (1 << 20, 1 << 20));
        assert_eq!(r.bytes_on_wire, 3 << 20);
    }
}

#[test]
fn max_min_shares_by_hand() {
    // A line of 3 (mesh), 1 GB/s links: A: 0->2 crosses 0->1 and 1->2; B: 1->2; C, D: 0->1.
    // Link 0->1 carries A, C, D: 1/3 GB/s each. A is fixed there, so B gets 2/3 of 1->2.
    let net = torus(&[3], false, 1, 0);
    let mut m = FlowModel::new(net, Packetization::NONE, false);
    let z = SimTime::ZERO;
    let a = m.send(z, NodeId(0), NodeId(2), Bytes(1000), 0).unwrap();
    let b = m.send(z, NodeId(1), NodeId(2), Bytes(1000), 0).unwrap();
    m.send(z, NodeId(0), NodeId(1), Bytes(1000), 0).unwrap();
    m.send(z, NodeId(0), NodeId(1), Bytes(1000), 0).unwrap();
    let rates: std::collections::HashMap<TransferId, f64> = m.rates().into_iter().collect();
    assert!((rates[&a] - 1e9 / 3.0).abs() < 0.1); // shares keep 36 significant bits
    assert!((rates[&b] - 2e9 / 3.0).abs() < 0.1);
    for (load, cap) in m.link_loads() {
        assert!(load <= cap * (1.0 + 1e-12));
    }
    // B drains first at 1000 / (2/3 GB/s) = 1.5 us; A, C and D at 3 us (when B leaves, link
    // 0->1 still binds them at 1/3 each).
    let done = finish(&mut m);
    assert_eq!(done[0].id, b);
    assert_eq!(done[0].end.as_ps(), 1_500_000);
    assert!(done[1..].iter().all(|c| c.end.as_ps() == 3_000_000));
}

#[test]
fn endpoint_links_limit_injection() {
    // A ring of 8 with one interface per node: two transfers from node 0 (one each way) share
    // its single 1 GB/s injection link: 1 MB each takes 2 ms.
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(1).unwrap(),
        latency: SimDuration::ZERO,
    };
    let net = Network::Cube(
        KAryNCube::new(vec![8], vec![true], link)
            .unwrap()
            .with_interfaces(1)
            .unwrap(),
    );
    let mut m = FlowModel::new(net, Packetization::NONE, false);
    m.send(SimTime::ZERO, NodeId(0), NodeId(1), Bytes(1_000_000), 0)
        .unwrap();
    m.send(SimTime::ZERO, NodeId(0), NodeId(7), Bytes(1_000_000), 0)
        .unwrap();
    let done = finish(&mut m);
    assert!(done.iter().all(|c| c.end.as_ps() == 2_000_000_000));
}

#[test]
fn packet_headers_cost_bandwidth() {
    // 4 KiB payload, 256-B packets with 32-B headers: 16 packets, 4096 + 512 wire bytes.
    let p = Packetization {
        payload: 256,
        header: 32,
    };
    assert_eq!(p.wire_bytes(4096), 4608);
    assert!((p.efficiency() - 256.0 / 288.0).abs() < 1e-12);
    let net = torus(&[4], true, 1, 0);
    let mut m = FlowModel::new(net, p, false);
    m.send(SimTime::ZERO, NodeId(0), NodeId(1), Bytes(4096), 0)
        .unwrap();
    assert_eq!(finish(&mut m)[0].end.as_ps(), 4_608_000);
}

/// A k = 4 fat tree of 1 GB/s links without latency.
fn fat_tree_k4() -> Network {
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(1).unwrap(),
        latency: SimDuration::ZERO,
    };
    Network::FatTree(podsim_topology::FatTree::new(4, link).unwrap())
}

#[test]
fn fat_tree_flows_spread_over_equal_cost_paths() {
    // k = 4: hosts 0 and 15 are in different pods, 4 paths. With ECMP a lone transfer is limited
    // only by the host links (1 link each way): same time as one path, but each core link
    // carries a quarter.
    let mut m = FlowModel::new(fat_tree_k4(), Packetization::NONE, true);
    m.send(SimTime::ZERO, NodeId(0), NodeId(15), Bytes(1_000_000), 0)
        .unwrap();
    let loads = m.link_loads();
    let busy: Vec<f64> = loads
        .iter()
        .filter(|(l, _)| *l > 0.0)
        .map(|(l, _)| *l)
        .collect();
    assert!(busy.iter().any(|&l| (l - 0.25e9).abs() < 1.0));
    assert_eq!(finish(&mut m)[0].end.as_ps(), 1_000_000_000);
}

#[test]
fn sends_in_the_past_and_to_nowhere_are_errors() {
    let net = torus(&[4], true, 1, 0);
    let mut m = FlowModel::new(net, Packetization::NONE, false);
    m.advance(SimTime::from_ns(10));
    assert!(matches!(
        m.send(SimTime::from_ns(5), NodeId(0), NodeId(1), Bytes(1), 0),
        Err(NetError::InThePast { .. })
    ));
    assert!(matches!(
        m.send(SimTime::from_ns(10), NodeId(0), NodeId(9), Bytes(1), 0),
        Err(NetError::NoSuchNode(_))
    ));
}

proptest! {
    #[test]
    fn flows_conserve_bytes_respect_links_and_are_never_faster_than_alone(
        sends in prop::collection::vec((0u64..16, 0u64..16, 1u64..100_000, 0u64..5_000), 1..40),
    ) {
        let net = torus(&[4, 4], true, 10, 20);
        let mut m = FlowModel::new(net.clone(), Packetization { payload: 4096, header: 64 }, false);
        let alone = AnalyticModel::new(net, Packetization { payload: 4096, header: 64 });
        let mut sorted = sends.clone();
        sorted.sort_by_key(|s| s.3);
        let mut expected = std::collections::HashMap::new();
        let mut total = 0;
        for (s, d, b, t) in sorted {
            let at = SimTime::from_ns(t);
            let mut done = m.advance(at);
            prop_assert!(done.iter().all(|c| c.end <= at));
            done.clear();
            let id = m.send(at, NodeId(s), NodeId(d), Bytes(b), 0).unwrap();
            expected.insert(id, at + alone.lone_time(NodeId(s), NodeId(d), Bytes(b)).unwrap());
            total += b;
            for (load, cap) in m.link_loads() {
                prop_assert!(load <= cap * (1.0 + 1e-9));
            }
        }
        // Completions already returned by the advances above are not lost: collect the rest.
        let rest = finish(&mut m);
        for c in &rest {
            prop_assert!(c.end >= expected[&c.id], "{:?} faster than alone", c);
        }
        let r = m.report();
        prop_assert_eq!(r.bytes_sent, total);
        prop_assert_eq!(r.bytes_delivered, total);
        prop_assert!(r.max_link_utilization <= 1.0 + 1e-9);
    }
}

#[test]
fn the_flow_model_counts_what_each_link_carried() {
    // A ring of 4, 1 GB/s links, 64-B packets with 16-B headers: 1000 bytes 0 -> 2 is 16
    // packets (15 full, one of 40 B), 1000 + 16 x 16 = 1256 wire bytes on each of the two
    // links of its route; 500 bytes 3 -> 0 is 8 packets, 500 + 128 = 628 on link 3 -> 0.
    let net = torus(&[4], true, 1, 0);
    let p = Packetization {
        payload: 64,
        header: 16,
    };
    let mut m = FlowModel::new(net, p, false);
    m.send(SimTime::ZERO, NodeId(0), NodeId(2), Bytes(1000), 0)
        .unwrap();
    m.send(SimTime::ZERO, NodeId(3), NodeId(0), Bytes(500), 0)
        .unwrap();
    finish(&mut m);
    let loads = NetworkModel::carried(&m);
    // Every directed link of the ring once: 4 nodes x 2 directions.
    assert_eq!(loads.len(), 8);
    let busy: Vec<(u64, u64, f64)> = loads
        .iter()
        .filter(|l| l.wire_bytes > 0.0)
        .map(|l| (l.from.0, l.to.0, l.wire_bytes))
        .collect();
    assert_eq!(busy.len(), 3, "{busy:?}");
    let on = |a: u64, b: u64| busy.iter().find(|x| x.0 == a && x.1 == b).map(|x| x.2);
    assert_eq!(on(3, 0), Some(628.0));
    // 0 -> 2 goes one way round, through 1 or through 3.
    let via1 = on(0, 1).is_some() && on(1, 2).is_some();
    let via3 = on(0, 3).is_some() && on(3, 2).is_some();
    assert!(via1 || via3, "{busy:?}");
    assert!(
        busy.iter()
            .filter(|x| x.0 != 3 || x.1 != 0)
            .all(|x| x.2 == 1256.0)
    );
    assert!(loads.iter().all(|l| l.bandwidth_bytes_per_s == 1e9));
    // The analytic model routes nothing.
    let a = AnalyticModel::new(torus(&[4], true, 1, 0), Packetization::NONE);
    assert!(NetworkModel::carried(&a).is_empty());
}

/// Drive `a` and `b` with the same sends as an executor would (sends due before the next event
/// first, otherwise advance to it) and check they agree on everything, step by step: event
/// times, completions, reports and what each link carried, bit for bit.
fn agree(a: &mut FlowModel, b: &mut FlowModel, mut sends: Vec<(u64, u64, u64, u64)>) {
    sends.sort_by_key(|s| s.3);
    let mut next = 0;
    loop {
        let (na, nb) = (a.next_completion(), b.next_completion());
        assert_eq!(na, nb);
        match sends.get(next) {
            Some(&(s, d, bytes, t)) if na.is_none_or(|n| SimTime::from_ps(t) < n) => {
                let at = SimTime::from_ps(t);
                let ia = a.send(at, NodeId(s), NodeId(d), Bytes(bytes), next as u64);
                let ib = b.send(at, NodeId(s), NodeId(d), Bytes(bytes), next as u64);
                assert_eq!(ia, ib);
                next += 1;
            }
            _ => match na {
                Some(t) => assert_eq!(a.advance(t), b.advance(t)),
                None => break,
            },
        }
    }
    assert_eq!(next, sends.len());
    let (ra, rb) = (a.report(), b.report());
    assert_eq!(ra.bytes_sent, rb.bytes_sent);
    assert_eq!(ra.bytes_delivered, rb.bytes_delivered);
    assert_eq!(ra.bytes_on_wire, rb.bytes_on_wire);
    assert_eq!(
        ra.max_link_utilization.to_bits(),
        rb.max_link_utilization.to_bits()
    );
    let bits = |m: &FlowModel| -> Vec<u64> {
        NetworkModel::carried(m)
            .iter()
            .map(|l| l.wire_bytes.to_bits())
            .collect()
    };
    assert_eq!(bits(a), bits(b));
}

#[test]
fn grouped_flows_match_flow_by_flow_on_a_ring_step_pattern() {
    // Rounds of neighbour sends on a 4x4 torus with 30 ns links: every node to the next in x,
    // all at once, then again when the round is over (grouped throughout); a later round
    // adds a crossing transfer that shares links (back to flow by flow, then grouped again
    // once idle).
    let net = torus(&[4, 4], true, 10, 30);
    let p = Packetization {
        payload: 4096,
        header: 64,
    };
    let mut sends = Vec::new();
    for round in 0..4u64 {
        let t = round * 50_000_000;
        for s in 0..16u64 {
            let d = s / 4 * 4 + (s + 1) % 4;
            sends.push((s, d, 100_000 + 7 * (s % 3), t));
        }
        if round == 2 {
            sends.push((0, 10, 5_000, t + 1_000));
        }
    }
    let mut a = FlowModel::new(net.clone(), p, false);
    let mut b = FlowModel::new(net, p, false).with_mode(crate::FlowMode::FlowByFlow);
    agree(&mut a, &mut b, sends);
    // 64 neighbour sends in groups; the crossing transfer and those in flight with it turned
    // back into flows once.
    assert!(a.grouped_sends >= 48, "{}", a.grouped_sends);
    assert_eq!(a.ungroupings, 1);
    assert_eq!(b.grouped_sends, 0);
}

proptest! {
    #[test]
    fn grouped_flows_match_flow_by_flow(
        sends in prop::collection::vec((0u64..16, 0u64..4, 0u64..3, 0u64..4, 0u64..6), 1..60),
        latency in 0u64..3,
        ecmp in any::<bool>(),
    ) {
        // Mostly neighbour sends of a few sizes at a few instants (so groups form and
        // dissolve), some farther, some to self, some empty.
        let net = torus(&[4, 4], true, 10, 20 * latency);
        let p = Packetization { payload: 4096, header: 64 };
        let sends: Vec<(u64, u64, u64, u64)> = sends
            .into_iter()
            .map(|(s, hop, size, far, t)| {
                let d = match far {
                    0 => (s + 5) % 16,
                    1 => s,
                    _ => s / 4 * 4 + (s + 1 + hop / 3) % 4,
                };
                let bytes = [0, 10_000, 10_001][size as usize] * (1 + hop);
                (s, d, bytes, t * 700_000)
            })
            .collect();
        let mut a = FlowModel::new(net.clone(), p, ecmp);
        let mut b = FlowModel::new(net, p, ecmp).with_mode(crate::FlowMode::FlowByFlow);
        agree(&mut a, &mut b, sends);
    }
}

proptest! {
    #[test]
    fn the_link_heap_fills_as_the_heap_of_every_share(
        sends in prop::collection::vec((0u64..27, 0u64..27, 1u64..50_000, 0u64..4), 1..80),
        ecmp in any::<bool>(),
    ) {
        // Many flows sharing links (random pairs on a 3x3x3 torus, a few start times): the
        // progressive filling with each link once in the heap against the heap of every
        // share ever computed, stale ones skipped.
        let net = torus(&[3, 3, 3], true, 10, 5);
        let p = Packetization { payload: 4096, header: 64 };
        let sends: Vec<(u64, u64, u64, u64)> =
            sends.into_iter().map(|(s, d, b, t)| (s, d, b, t * 3_000_000)).collect();
        let mut a = FlowModel::new(net.clone(), p, ecmp).with_mode(crate::FlowMode::FlowByFlow);
        let mut b = FlowModel::new(net, p, ecmp).with_mode(crate::FlowMode::FlowByFlow);
        b.lazy_heap = true;
        agree(&mut a, &mut b, sends);
    }
}

#[test]
fn the_link_heap_fills_an_all_to_all_as_the_heap_of_every_share() {
    let net = torus(&[4, 4, 2], true, 25, 0);
    let mut sends = Vec::new();
    for s in 0..32u64 {
        for d in 0..32u64 {
            if s != d {
                sends.push((s, d, 10_000 + 13 * ((s + d) % 5), 0));
            }
        }
    }
    let mut a = FlowModel::new(net.clone(), Packetization::NONE, false)
        .with_mode(crate::FlowMode::FlowByFlow);
    let mut b =
        FlowModel::new(net, Packetization::NONE, false).with_mode(crate::FlowMode::FlowByFlow);
    b.lazy_heap = true;
    agree(&mut a, &mut b, sends);
}

#[test]
fn quantize_on_the_bits_is_quantize_by_log() {
    use crate::flow::{quantize, quantize_by_log};
    let mut xs = vec![
        1.0,
        3.0,
        1e9,
        5e10,
        4.5e10 / 3.0,
        2e11 / 7.0,
        1e-3,
        123_456.789,
    ];
    // Around powers of two, where log2 may round up to the next integer.
    for k in -70i32..70 {
        let p = 2f64.powi(k);
        let mut x = p;
        for _ in 0..5000 {
            x = f64::from_bits(x.to_bits() - 1);
            xs.push(x);
        }
        xs.extend([p, p * 1.5, f64::from_bits(p.to_bits() + 1)]);
    }
    // And pseudo-random values over the rates' range.
    let mut r = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..200_000 {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        xs.push(
            f64::from_bits(0x3ff0_0000_0000_0000 | (r >> 12)) * 2f64.powi((r % 80) as i32 - 20),
        );
    }
    for x in xs {
        assert_eq!(quantize(x).to_bits(), quantize_by_log(x).to_bits(), "{x:e}");
    }
}

/// Max-min fair rates from scratch, as the definition goes: of the links still carrying
/// unfrozen flows, the one with the smallest (rounded share, link id) freezes its unfrozen
/// flows at that share, which comes off every link they cross; again until none is left.
fn max_min_from_scratch(flows: &[(Vec<LinkId>, f64)], capacity: &[f64]) -> Vec<f64> {
    use crate::flow::quantize;
    let mut cap = capacity.to_vec();
    let mut count = vec![0u32; cap.len()];
    for (links, _) in flows {
        for &l in links {
            count[l] += 1;
        }
    }
    let mut rate = vec![None::<f64>; flows.len()];
    loop {
        let mut best = None::<(f64, LinkId)>;
        for l in 0..cap.len() {
            if count[l] == 0 {
                continue;
            }
            let share = quantize(cap[l].max(0.0) / f64::from(count[l]));
            let better = best.is_none_or(|(s, b)| match share.total_cmp(&s) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Greater => false,
                std::cmp::Ordering::Equal => l < b,
            });
            if better {
                best = Some((share, l));
            }
        }
        let Some((share, l)) = best else {
            break;
        };
        for (i, (links, _)) in flows.iter().enumerate() {
            if rate[i].is_some() || !links.contains(&l) {
                continue;
            }
            rate[i] = Some(share);
            for &l2 in links {
                cap[l2] -= share;
                count[l2] -= 1;
            }
        }
    }
    rate.into_iter().map(|r| r.unwrap_or(0.0)).collect()
}

/// Check the flow-by-flow model's rates against [`max_min_from_scratch`], bit for bit; the
/// most flows that shared one link.
fn rates_are_max_min(m: &mut FlowModel) -> usize {
    let (flows, capacity) = m.draining();
    let want = max_min_from_scratch(&flows, &capacity);
    for ((links, got), want) in flows.iter().zip(&want) {
        assert_eq!(got.to_bits(), want.to_bits(), "{links:?}: {got} != {want}");
    }
    let mut on = vec![0usize; capacity.len()];
    for (links, _) in &flows {
        for &l in links {
            on[l] += 1;
        }
    }
    on.into_iter().max().unwrap_or(0)
}

/// A ring all-reduce's pattern of sends over `n` ranks, `steps` steps, with chunks one byte
/// apart (as when the bytes do not divide evenly): each rank sends its next chunk to the next
/// rank as soon as the previous rank's chunk has arrived, so ranks drift apart and a rank's
/// send can start while its previous one still drains. Run on `a` (grouped while it can) and
/// `b` (flow by flow), which must agree bit for bit on every event, and at every event `b`'s
/// rates must be the max-min rates worked out from scratch. The most flows on one link.
fn drifting_ring(n: u64, steps: u64, a: &mut FlowModel, b: &mut FlowModel) -> usize {
    let bytes = |r: u64, k: u64| 100_000 + (r + k) % n % 3;
    for r in 0..n {
        let ia = a.send(
            SimTime::ZERO,
            NodeId(r),
            NodeId((r + 1) % n),
            Bytes(bytes(r, 0)),
            r,
        );
        let ib = b.send(
            SimTime::ZERO,
            NodeId(r),
            NodeId((r + 1) % n),
            Bytes(bytes(r, 0)),
            r,
        );
        assert_eq!(ia.unwrap(), ib.unwrap());
    }
    let mut most = 0;
    let mut events = 0;
    loop {
        most = most.max(rates_are_max_min(b));
        let (ta, tb) = (a.next_completion(), b.next_completion());
        assert_eq!(ta, tb);
        let Some(t) = ta else {
            break;
        };
        events += 1;
        let (done_a, done_b) = (a.advance(t), b.advance(t));
        assert_eq!(done_a, done_b);
        for c in done_a {
            // Tag: step x n + sender.
            let (k, r) = (c.tag / n, c.tag % n);
            if k + 1 < steps {
                let (s, d) = ((r + 1) % n, (r + 2) % n);
                let tag = (k + 1) * n + s;
                let ia = a.send(t, NodeId(s), NodeId(d), Bytes(bytes(s, k + 1)), tag);
                let ib = b.send(t, NodeId(s), NodeId(d), Bytes(bytes(s, k + 1)), tag);
                assert_eq!(ia.unwrap(), ib.unwrap());
            }
        }
    }
    assert!(events >= steps as usize);
    let (ra, rb) = (a.report(), b.report());
    let total: u64 = (0..n)
        .flat_map(|r| (0..steps).map(move |k| bytes(r, k)))
        .sum();
    assert_eq!(ra.bytes_delivered, total);
    assert_eq!(ra.bytes_delivered, rb.bytes_delivered);
    assert_eq!(
        ra.max_link_utilization.to_bits(),
        rb.max_link_utilization.to_bits()
    );
    most
}

#[test]
fn drifting_ring_rates_are_max_min_at_every_event() {
    // One interface a node, so a rank's two sends share its injection link (and two
    // arrivals its ejection link); no link latency, so a chunk arrives as it drains and the
    // chunks' differences of a byte or two are enough for ranks to drift apart.
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(10).unwrap(),
        latency: SimDuration::ZERO,
    };
    let n = 12;
    let net = Network::Cube(
        KAryNCube::new(vec![n as u32], vec![true], link)
            .unwrap()
            .with_interfaces(1)
            .unwrap(),
    );
    let p = Packetization {
        payload: 4096,
        header: 64,
    };
    let mut a = FlowModel::new(net.clone(), p, false);
    let mut b = FlowModel::new(net, p, false).with_mode(crate::FlowMode::FlowByFlow);
    let most = drifting_ring(n, 2 * (n - 1), &mut a, &mut b);
    // The drift put flows together on links (the flow-by-flow mode was exercised).
    assert!(most >= 2, "{most}");
    assert!(a.ungroupings >= 1);
}

proptest! {
    #[test]
    fn incremental_rates_are_max_min_at_every_event(
        sends in prop::collection::vec((0u64..27, 0u64..27, 1u64..50_000, 0u64..6), 1..60),
        ecmp in any::<bool>(),
    ) {
        // Random pairs on a 3x3x3 torus at a few instants: components of the flow-link graph
        // form, merge and split as flows start and drain.
        let net = torus(&[3, 3, 3], true, 10, 5);
        let p = Packetization { payload: 4096, header: 64 };
        let mut sends: Vec<(u64, u64, u64, u64)> =
            sends.into_iter().map(|(s, d, b, t)| (s, d, b, t * 1_500_000)).collect();
        sends.sort_by_key(|s| s.3);
        let mut m = FlowModel::new(net, p, ecmp).with_mode(crate::FlowMode::FlowByFlow);
        let mut next = 0;
        loop {
            rates_are_max_min(&mut m);
            let n = m.next_completion();
            match sends.get(next) {
                Some(&(s, d, bytes, t)) if n.is_none_or(|n| SimTime::from_ps(t) < n) => {
                    m.send(SimTime::from_ps(t), NodeId(s), NodeId(d), Bytes(bytes), 0).unwrap();
                    next += 1;
                }
                _ => match n {
                    Some(t) => {
                        m.advance(t);
                    }
                    None => break,
                },
            }
        }
        prop_assert_eq!(m.report().bytes_delivered, m.report().bytes_sent);
    }
}

/// Every flow's links with both of its endpoint links put back (the source's injection and
/// the destination's ejection), whether or not the model left them off.
fn with_endpoint_links(net: &Network, flows: &[(Vec<LinkId>, f64)]) -> Vec<(Vec<LinkId>, f64)> {
    let table = LinkTable::new(net);
    let nodes = net.node_count() as usize;
    let mut source = vec![0usize; table.len()];
    for u in 0..nodes {
        let mut i = 0;
        while let Some(l) = table.out_link(NodeId(u as u64), i) {
            source[l] = u;
            i += 1;
        }
    }
    flows
        .iter()
        .map(|(links, rate)| {
            let net_links: Vec<LinkId> =
                links.iter().copied().filter(|&l| l < table.len()).collect();
            let (first, last) = (net_links[0], net_links[net_links.len() - 1]);
            let mut all = net_links.clone();
            all.push(table.len() + source[first]);
            all.push(table.len() + nodes + table.target(last).0 as usize);
            (all, *rate)
        })
        .collect()
}

#[test]
fn endpoint_links_that_cannot_bind_change_no_rate() {
    // On a 4x4x4 torus each node's NIC is 6 x 50 GB/s, the sum of its six links each way, so
    // its injection and ejection can never bind and the model leaves them off the flows'
    // paths. The rates must be bit for bit the max-min rates with them on: every node sends
    // to eight others at once (its six neighbours and two farther nodes), sizes differing,
    // and the rates are checked after the sends and after every completion.
    let net = torus(&[4, 4, 4], true, 50, 0);
    let mut m =
        FlowModel::new(net.clone(), Packetization::NONE, false).with_mode(FlowMode::FlowByFlow);
    let n = 64u64;
    for u in 0..n {
        for (j, k) in [1u64, 3, 4, 12, 16, 48, 21, 42].into_iter().enumerate() {
            let bytes = 100_000 + 7_919 * ((u * 8 + j as u64) % 13);
            m.send(
                SimTime::ZERO,
                NodeId(u),
                NodeId((u + k) % n),
                Bytes(bytes),
                0,
            )
            .unwrap();
        }
    }
    let mut checks = 0;
    loop {
        let (flows, capacity) = m.draining();
        if flows.is_empty() {
            break;
        }
        // The endpoint links were left off (this shape is the case the rule is for).
        assert!(
            flows
                .iter()
                .all(|(l, _)| l.iter().all(|&x| x < capacity.len() - 2 * 64))
        );
        let want = max_min_from_scratch(&with_endpoint_links(&net, &flows), &capacity);
        for ((links, got), want) in flows.iter().zip(&want) {
            assert_eq!(got.to_bits(), want.to_bits(), "{links:?}: {got} != {want}");
        }
        checks += 1;
        let Some(t) = m.next_completion() else { break };
        m.advance(t);
    }
    assert!(checks > 10, "{checks} events checked");
}

#[test]
fn endpoint_links_that_can_bind_are_kept() {
    // A ring of 8 with one 1 GB/s interface per node against two 1 GB/s links out: the NIC
    // binds (`endpoint_links_limit_injection`), so it stays on the path.
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(1).unwrap(),
        latency: SimDuration::ZERO,
    };
    let net = Network::Cube(
        KAryNCube::new(vec![8], vec![true], link)
            .unwrap()
            .with_interfaces(1)
            .unwrap(),
    );
    let mut m = FlowModel::new(net, Packetization::NONE, false).with_mode(FlowMode::FlowByFlow);
    m.send(SimTime::ZERO, NodeId(0), NodeId(1), Bytes(1_000_000), 0)
        .unwrap();
    let (flows, capacity) = m.draining();
    // One network link, then the injection and the ejection.
    assert_eq!(flows[0].0.len(), 3);
    assert!(flows[0].0[1..].iter().all(|&l| l >= capacity.len() - 2 * 8));
}

#[test]
fn the_analytic_model_spreads_a_transfer_over_paths_that_share_a_link() {
    // k = 4 fat tree: hosts 0 and 15 are joined by 4 equal-cost paths, all leaving host 0 by
    // its one 1 GB/s link and reaching host 15 by its one. Spread evenly, each path carries a
    // quarter and the host links carry it all: 1e6 B / 1e9 B/s = 1 ms, the flow model's time
    // (fat_tree_flows_spread_over_equal_cost_paths), not a quarter of it.
    let m = crate::AnalyticModel::new(fat_tree_k4(), Packetization::NONE);
    let t = m
        .lone_time(NodeId(0), NodeId(15), Bytes(1_000_000))
        .unwrap();
    assert_eq!(t.as_ps(), 1_000_000_000);
}
