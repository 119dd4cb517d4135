use super::*;
use crate::exec::run_steps_alone;
use podsim_net::{AnalyticModel, FlowModel, Packetization};
use podsim_topology::{KAryNCube, LinkKind, LinkSpec, Network, NodeId};
use podsim_units::{Bandwidth, SimDuration};

/// The analytic and flow models (the packet level is built above this crate, in
/// `podsim-system`, whose tests run collectives on it).
struct TestModels;

impl BuildModel for TestModels {
    fn build(
        &self,
        net: &Network,
        model: ModelKind,
        packets: Packetization,
        ecmp: bool,
        _wire_bytes: u128,
    ) -> Result<Box<dyn podsim_net::NetworkModel>, Box<dyn std::error::Error + Send + Sync>> {
        match model {
            ModelKind::Analytic => Ok(Box::new(AnalyticModel::new(net.clone(), packets))),
            ModelKind::Flow => Ok(Box::new(FlowModel::new(net.clone(), packets, ecmp))),
            ModelKind::Packet => Err("the packet level is built by podsim-system".into()),
        }
    }
}

fn measure(net: &Network, s: &Setup) -> Result<Measurement, String> {
    crate::measure(net, s, &TestModels).map_err(|e| e.to_string())
}

fn microbench(
    net: &Network,
    micro: Micro,
    bytes: u64,
    model: ModelKind,
    packets: Packetization,
    memory_limit: u64,
) -> Result<MicroResult, String> {
    crate::microbench(net, micro, bytes, model, packets, memory_limit, &TestModels)
        .map_err(|e| e.to_string())
}

fn torus(dims: &[u32], gbps: u64, ns: u64) -> Network {
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(gbps).unwrap(),
        latency: SimDuration::from_ns(ns),
    };
    Network::Cube(KAryNCube::new(dims.to_vec(), vec![true; dims.len()], link).unwrap())
}

fn request(kind: Kind, algorithm: Algorithm, bytes: u64, dims: &[u32]) -> Request {
    Request {
        kind,
        algorithm,
        bytes,
        ranks: dims.iter().map(|&k| k as usize).product(),
        dims: dims.to_vec(),
        chunk: 0,
    }
}

fn nodes(n: usize) -> Vec<NodeId> {
    (0..n as u64).map(NodeId).collect()
}

#[test]
fn every_collective_computes_the_right_result_on_both_models() {
    for dims in [vec![8u32], vec![4, 4], vec![2, 2, 2], vec![3, 5]] {
        let net = torus(&dims, 10, 50);
        let n: usize = dims.iter().map(|&k| k as usize).product();
        for kind in Kind::ALL {
            for &alg in kind.algorithms() {
                if alg == Algorithm::HalvingDoubling && !n.is_power_of_two() {
                    continue;
                }
                let mut r = request(kind, alg, 1 << 16, &dims);
                r.chunk = 4096;
                let p = plan(&r).unwrap();
                for model in [
                    &mut FlowModel::new(net.clone(), Packetization::NONE, false)
                        as &mut dyn podsim_net::NetworkModel,
                    &mut AnalyticModel::new(net.clone(), Packetization::NONE),
                ] {
                    let out = run(&p, kind, model, &nodes(n), 0.0)
                        .unwrap_or_else(|e| panic!("{kind} {} on {dims:?}: {e}", alg.name()));
                    assert_eq!(out.verified, Verified::Passed);
                    assert_eq!(out.report.bytes_sent, out.report.bytes_delivered);
                }
            }
        }
    }
}

#[test]
fn flow_times_are_never_below_the_lower_bound() {
    for dims in [vec![16u32], vec![4, 4], vec![4, 4, 2]] {
        let net = torus(&dims, 50, 100);
        let m = net.metrics();
        let n: usize = dims.iter().map(|&k| k as usize).product();
        for kind in Kind::ALL {
            for &alg in kind.algorithms() {
                if alg == Algorithm::HalvingDoubling && !n.is_power_of_two() {
                    continue;
                }
                let bytes = 64 << 20;
                let p = plan(&request(kind, alg, bytes, &dims)).unwrap();
                let mut model = FlowModel::new(net.clone(), Packetization::NONE, false);
                let out = run(&p, kind, &mut model, &nodes(n), 0.0).unwrap();
                let bound = lower_bound(
                    kind,
                    n,
                    if kind == Kind::Barrier { 0 } else { bytes },
                    &m,
                    100e-9,
                );
                assert!(
                    out.time.as_secs_f64() >= bound * (1.0 - 1e-9),
                    "{kind} {}: {} < {bound}",
                    alg.name(),
                    out.time.as_secs_f64()
                );
            }
        }
    }
}

#[test]
fn ring_all_reduce_on_a_ring_matches_the_closed_form_on_both_models() {
    // A ring of 8, 10 GB/s, 1 us per hop, 8 MB per rank: 2(n-1) = 14 steps, each moving 1 MB
    // to the next rank over its own link, contention-free: 14 x (1 MB / 10 GB/s + 1 us) = 14 x
    // 101 us = 1.414 ms on both the flow and the analytic model.
    let net = torus(&[8], 10, 1000);
    let p = plan(&request(Kind::AllReduce, Algorithm::Ring, 8_000_000, &[8])).unwrap();
    let mut flow = FlowModel::new(net.clone(), Packetization::NONE, false);
    let mut ana = AnalyticModel::new(net, Packetization::NONE);
    let a = run(&p, Kind::AllReduce, &mut flow, &nodes(8), 0.0).unwrap();
    let b = run(&p, Kind::AllReduce, &mut ana, &nodes(8), 0.0).unwrap();
    assert_eq!(a.time.as_ps(), 1_414_000_000);
    assert_eq!(b.time.as_ps(), 1_414_000_000);
}

#[test]
fn reduction_cost_delays_dependents() {
    // Same ring, plus 1 ps per reduced byte: each of the 7 reduce-scatter steps adds 1 MB x
    // 1 ps = 1 us before the next send.
    let net = torus(&[8], 10, 1000);
    let p = plan(&request(Kind::AllReduce, Algorithm::Ring, 8_000_000, &[8])).unwrap();
    let mut flow = FlowModel::new(net, Packetization::NONE, false);
    let out = run(&p, Kind::AllReduce, &mut flow, &nodes(8), 1.0).unwrap();
    assert_eq!(out.time.as_ps(), 1_414_000_000 + 7_000_000);
}

#[test]
fn unknown_pairs_and_sizes_are_refused() {
    assert!(plan(&request(Kind::Broadcast, Algorithm::Direct, 1, &[4])).is_err());
    assert!(
        plan(&request(
            Kind::AllReduce,
            Algorithm::HalvingDoubling,
            1,
            &[6]
        ))
        .is_err()
    );
    assert_eq!(Kind::from_name("all-to-all"), Some(Kind::AllToAll));
    assert!((Kind::AllReduce.bus_factor(8) - 1.75).abs() < 1e-12);
}

#[test]
fn microbenchmarks_by_hand() {
    use podsim_topology::{Tofu, TofuGeneration};
    // 4x4 torus, 50 GB/s, 100 ns links: an 8-byte put is 100 ns + 8 / 50 GB/s = 100.16 ns.
    let net = torus(&[4, 4], 50, 100);
    let r = microbench(
        &net,
        Micro::PutLatency,
        8,
        ModelKind::Flow,
        podsim_net::Packetization::NONE,
        u64::MAX,
    )
    .unwrap();
    assert_eq!((r.time_s * 1e12).round(), 100_160.0);
    // A big put runs at the link's 50 GB/s (less the latency's share).
    let r = microbench(
        &net,
        Micro::PutThroughput,
        64 << 20,
        ModelKind::Flow,
        podsim_net::Packetization::NONE,
        u64::MAX,
    )
    .unwrap();
    assert!((r.throughput_bytes_per_s - 50e9).abs() / 50e9 < 1e-4);
    // Tofu injection: 6 TNIs x 6.8 GB/s = 40.8 GB/s (TofuD), 4 x 5 GB/s = 20 GB/s (K), each
    // put to a different neighbour (seed Table I).
    let tofud = Network::Tofu(
        Tofu::new(
            TofuGeneration::TofuD,
            [2, 2, 4],
            [true; 3],
            [2, 3, 2],
            SimDuration::ZERO,
            "d",
        )
        .unwrap(),
    );
    let r = microbench(
        &tofud,
        Micro::Injection,
        64 << 20,
        ModelKind::Flow,
        podsim_net::Packetization::NONE,
        u64::MAX,
    )
    .unwrap();
    assert_eq!(r.streams, 6);
    assert!(
        (r.throughput_bytes_per_s - 40.8e9).abs() / 40.8e9 < 1e-6,
        "{}",
        r.throughput_bytes_per_s
    );
    let k = Network::Tofu(
        Tofu::new(
            TofuGeneration::Tofu,
            [2, 2, 4],
            [true; 3],
            [2, 3, 2],
            SimDuration::ZERO,
            "k",
        )
        .unwrap(),
    );
    let r = microbench(
        &k,
        Micro::Injection,
        64 << 20,
        ModelKind::Flow,
        podsim_net::Packetization::NONE,
        u64::MAX,
    )
    .unwrap();
    assert!((r.throughput_bytes_per_s - 20e9).abs() / 20e9 < 1e-6);
    // With packet overheads: 64 MiB in 2016-byte payloads is ceil(67108864 / 2016) = 33,289
    // packets of 136 bytes' overhead each: 67108864 + 33289 x 136 = 71,636,168 wire bytes,
    // so a put runs at 6.8 GB/s x 67108864 / 71636168 = 6.370 GB/s and six at once at
    // 38.22 GB/s.
    let frame = podsim_net::Packetization {
        payload: 2016,
        header: 136,
    };
    for (micro, want) in [
        (Micro::PutThroughput, 6.8e9 * 67108864.0 / 71636168.0),
        (Micro::Injection, 6.0 * 6.8e9 * 67108864.0 / 71636168.0),
    ] {
        let r = microbench(&tofud, micro, 64 << 20, ModelKind::Flow, frame, u64::MAX).unwrap();
        assert!(
            (r.throughput_bytes_per_s - want).abs() / want < 1e-9,
            "{micro:?}: {} vs {want}",
            r.throughput_bytes_per_s
        );
    }
}

#[test]
fn analytic_runs_match_the_closed_forms() {
    // Rings for the ring algorithms; a 2x2x2 torus (a hypercube: every halving-doubling and
    // binomial partner is one hop) for the others. 10 GB/s, 1 us per hop, 8 MiB per rank.
    let bytes = 8 << 20;
    for (dims, kind, alg) in [
        (vec![8u32], Kind::AllReduce, Algorithm::Ring),
        (vec![8], Kind::ReduceScatter, Algorithm::Ring),
        (vec![8], Kind::AllGather, Algorithm::Ring),
        (vec![8], Kind::AllReduce, Algorithm::BidirectionalRing),
        (vec![2, 2, 2], Kind::AllReduce, Algorithm::HalvingDoubling),
        (vec![2, 2, 2], Kind::Broadcast, Algorithm::Tree),
        (vec![2, 2, 2], Kind::Reduce, Algorithm::Tree),
    ] {
        let net = torus(&dims, 10, 1000);
        let p = plan(&request(kind, alg, bytes, &dims)).unwrap();
        let mut model = AnalyticModel::new(net, Packetization::NONE);
        let out = run(&p, kind, &mut model, &nodes(8), 0.0).unwrap();
        let want = closed_form(kind, alg, 8, bytes, 1e-6, 10e9).unwrap();
        // Each message rounds up to a whole picosecond.
        assert!(
            (out.time.as_secs_f64() - want).abs() < 1e-10,
            "{kind} {}: {} vs {want}",
            alg.name(),
            out.time.as_secs_f64()
        );
    }
}

#[test]
fn oversized_plans_are_refused_not_attempted() {
    // 1,062,000 ranks all-to-all would be 10^12 transfers.
    let r = Request {
        kind: Kind::AllToAll,
        algorithm: Algorithm::Direct,
        bytes: 1 << 20,
        ranks: 1_062_000,
        dims: vec![],
        chunk: 0,
    };
    let e = plan(&r).unwrap_err();
    assert!(e.0.contains("transfers"), "{e}");
    // The estimate is exact for the ring and direct plans.
    for (kind, alg) in [
        (Kind::AllReduce, Algorithm::Ring),
        (Kind::AllToAll, Algorithm::Direct),
        (Kind::AllGather, Algorithm::Ring),
    ] {
        let r = request(kind, alg, 1 << 16, &[4, 4]);
        assert_eq!(transfers(&r), plan(&r).unwrap().ops.len() as u128);
    }
}

#[test]
fn binomial_reduce_waits_for_every_child() {
    // Regression: `podsim collective reduce --topology mesh:7x7 --bytes "1 MiB"` reported
    // "wrong result: rank 0 chunk 0": rank 4 received from 5 (distance 1) and from 6
    // (distance 2) but forwarded after the latest-planned receive only; on a mesh the first
    // can arrive last (it crosses a longer, shared path), so a partial sum went up the tree.
    for dims in [vec![7u32, 7], vec![10, 10], vec![3, 3, 3]] {
        let n: usize = dims.iter().map(|&k| k as usize).product();
        let net = mesh(&dims, 0);
        let p = plan(&request(Kind::Reduce, Algorithm::Tree, 1 << 20, &dims)).unwrap();
        let mut m = FlowModel::new(net, Packetization::NONE, true);
        let out = run(&p, Kind::Reduce, &mut m, &nodes(n), 0.0)
            .unwrap_or_else(|e| panic!("reduce on {dims:?}: {e}"));
        assert_eq!(out.verified, Verified::Passed);
    }
}

#[test]
fn dissemination_barrier_waits_for_every_earlier_signal() {
    // Regression: `podsim collective barrier --topology mesh:6x6 --link-latency "100 ns"` was
    // wrong ("rank 4 chunk 29: expected 1"): a round's send waited only for the previous
    // round's signal, and with latency an earlier round's (from farther away) arrives later.
    let net = mesh(&[6, 6], 100);
    let p = plan(&request(
        Kind::Barrier,
        Algorithm::Dissemination,
        0,
        &[6, 6],
    ))
    .unwrap();
    for model in [
        &mut FlowModel::new(net.clone(), Packetization::NONE, true)
            as &mut dyn podsim_net::NetworkModel,
        &mut AnalyticModel::new(net.clone(), Packetization::NONE),
    ] {
        let out = run(&p, Kind::Barrier, model, &nodes(36), 0.0).unwrap();
        assert_eq!(out.verified, Verified::Passed);
        // ceil(log2 36) = 6 rounds, each at least one 100 ns hop after the one before.
        assert!(out.time >= SimDuration::from_ns(600), "{}", out.time);
    }
}

#[test]
fn a_barrier_plan_holds_log_n_entries_per_rank() {
    // The plan of a barrier over 10,000 ranks used to list all n flags in each of its
    // n log n transfers (1.4 x 10^9 entries); a transfer now names its flags as one range.
    let p = plan(&request(
        Kind::Barrier,
        Algorithm::Dissemination,
        0,
        &[100, 100],
    ))
    .unwrap();
    // ceil(log2 10,000) = 14 rounds of 10,000 signals.
    assert_eq!(p.ops.len(), 140_000);
    assert!(
        p.ops
            .iter()
            .all(|o| matches!(o.chunks, Chunks::Range(0, 10_000)))
    );
    // Round j's send waits for the j signals received before it: 0 + 1 + ... + 13 per rank.
    let deps: usize = p.ops.iter().map(|o| o.deps.len()).sum();
    assert_eq!(deps, 10_000 * (0..14).sum::<usize>());
}

fn setup(kind: Kind, bytes: u64, model: ModelKind) -> Setup {
    Setup {
        kind,
        algorithm: kind.algorithms()[0],
        bytes,
        model,
        packets: Packetization::NONE,
        chunk: 0,
        ecmp: true,
        memory_limit: u64::MAX,
    }
}

#[test]
fn the_analytic_model_is_never_below_the_lower_bound() {
    // Regression: all-to-all on torus:4x4x8 with 16 MiB gave 2.6e-6 s on the analytic model
    // against a bound of 3.4e-4 s: the bisection (32 links x 2 ways x 50 GB/s) must carry
    // 64 x 64 x 16 MiB / 128 each way.
    let net = torus(&[4, 4, 8], 50, 0);
    let m = measure(&net, &setup(Kind::AllToAll, 16 << 20, ModelKind::Analytic)).unwrap();
    let bound = 64.0 * 64.0 * (16.0 * 1048576.0 / 128.0) / (32.0 * 50e9);
    assert!((m.lower_bound_time_s - bound).abs() < 1e-12);
    assert!(m.time_s >= bound);
    assert!(m.bound_applied);
    // Where the model is above the bound it reports its own time.
    let m = measure(&net, &setup(Kind::AllReduce, 1 << 20, ModelKind::Analytic)).unwrap();
    assert!(!m.bound_applied && m.time_s >= m.lower_bound_time_s);
}

#[test]
fn sizes_beyond_64_bits_are_errors_not_saturated_figures() {
    // Regression: `--bytes "4096 PiB"` gave a time below the bound and said verified; a
    // put of u64::MAX bytes reported 1000 GB/s on a 50 GB/s link (time saturated at
    // u64::MAX ps).
    let net = torus(&[4, 4], 50, 0);
    for model in [ModelKind::Analytic, ModelKind::Flow] {
        let e = measure(&net, &setup(Kind::AllReduce, 4096 << 50, model)).unwrap_err();
        assert!(
            e.contains("overflows 64 bits") || e.contains("64-bit picoseconds"),
            "{e}"
        );
        let e = microbench(
            &net,
            Micro::PutThroughput,
            u64::MAX,
            model,
            Packetization::NONE,
            u64::MAX,
        )
        .unwrap_err();
        assert!(
            e.contains("overflows 64 bits") || e.contains("64-bit picoseconds"),
            "{e}"
        );
    }
    // 2^60 bytes at 50 GB/s take 2.3 x 10^7 s, past the 2.1 x 10^7 s of 64-bit picoseconds.
    let e = microbench(
        &net,
        Micro::PutThroughput,
        1 << 60,
        ModelKind::Flow,
        Packetization::NONE,
        u64::MAX,
    )
    .unwrap_err();
    assert!(e.contains("64-bit picoseconds"), "{e}");
}

#[test]
fn skipped_verification_says_why() {
    // All-to-all on 2048 ranks keeps 2048^2 = 4.2 M buffer entries, above the check's 4 M.
    let e = VERIFY_LIMIT;
    assert!(2048 * 2048 > e);
    let net = torus(&[32, 64], 50, 0);
    // The run's own estimate: 2 x 2048 x 12 transfers x 450 bytes = 22 MB; the check's
    // 4.2 M entries x 64 bytes = 268 MB more. With a 100 MB limit the run fits, the check
    // does not.
    let mut s = setup(Kind::Barrier, 0, ModelKind::Analytic);
    s.memory_limit = 100_000_000;
    let m = measure(&net, &s).unwrap();
    assert!(!m.verified);
    assert!(
        m.unverified_reason
            .unwrap()
            .contains("4194304 buffer entries")
    );
    s.memory_limit = 400_000_000;
    assert!(measure(&net, &s).unwrap().verified);
    // Below the run's own estimate it is refused up front.
    s.memory_limit = 10_000_000;
    let e = measure(&net, &s).unwrap_err();
    assert!(e.contains("more than the memory limit of 10 MB"), "{e}");
}

#[test]
fn a_one_node_network_gives_no_nan() {
    // Regression: `podsim microbench all-to-all --topology mesh:1` printed "NaN GB/s" (0 bytes
    // over 0 s).
    let one = torus(&[1], 50, 0);
    let e = microbench(
        &one,
        Micro::AllToAll,
        1 << 20,
        ModelKind::Flow,
        Packetization::NONE,
        u64::MAX,
    )
    .unwrap_err();
    assert!(e.contains("at least two endpoints"), "{e}");
    for kind in Kind::ALL {
        let m = measure(&one, &setup(kind, 1 << 20, ModelKind::Flow)).unwrap();
        assert_eq!(m.time_s, 0.0);
        assert!(
            m.algorithm_bandwidth_bytes_per_s.is_finite()
                && m.bus_bandwidth_bytes_per_s.is_finite()
        );
    }
}

fn mesh(dims: &[u32], ns: u64) -> Network {
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(50).unwrap(),
        latency: SimDuration::from_ns(ns),
    };
    Network::Cube(KAryNCube::new(dims.to_vec(), vec![false; dims.len()], link).unwrap())
}

#[test]
fn the_functional_check_catches_a_wrong_plan() {
    // A ring all-reduce on 4 ranks whose first reduce-scatter step copies instead of summing
    // leaves that chunk short of one rank's contribution: the check must say which.
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(1).unwrap(),
        latency: SimDuration::ZERO,
    };
    let net = Network::Cube(KAryNCube::new(vec![4], vec![true], link).unwrap());
    let nodes: Vec<NodeId> = (0..4).map(NodeId).collect();
    for kind in [Kind::AllReduce, Kind::AllToAll] {
        let request = Request {
            kind,
            algorithm: kind.algorithms()[0],
            bytes: 4096,
            ranks: 4,
            dims: vec![4],
            chunk: 0,
        };
        let good = plan(&request).unwrap();
        let mut m = FlowModel::new(net.clone(), Packetization::NONE, false);
        assert_eq!(
            run(&good, kind, &mut m, &nodes, 0.0).unwrap().verified,
            Verified::Passed
        );
        let mut bad = good.clone();
        let op = bad
            .ops
            .iter_mut()
            .find(|o| o.combine == Combine::Sum)
            .or(None);
        match op {
            Some(o) => o.combine = Combine::Copy,
            // All-to-all copies: send one block to the wrong rank instead.
            None => bad.ops[0].dst = (bad.ops[0].dst + 1) % 4,
        }
        let mut m = FlowModel::new(net.clone(), Packetization::NONE, false);
        let e = run(&bad, kind, &mut m, &nodes, 0.0).unwrap_err();
        assert!(matches!(e, RunError::Wrong(_)), "{kind}: {e}");
    }
}

// The streaming path (plans in steps, `run_steps`, the flow model's grouped mode) against the
// general one (the materialised plan, `run_checking`, the flow model flow by flow): the same
// figures, bit for bit.

fn cube(dims: &[u32], wrap: bool, gbps: u64, ns: u64) -> Network {
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(gbps).unwrap(),
        latency: SimDuration::from_ns(ns),
    };
    Network::Cube(KAryNCube::new(dims.to_vec(), vec![wrap; dims.len()], link).unwrap())
}

/// Everything a run reports, with floating-point figures as bits.
fn fingerprint(out: &Outcome, carried: &[podsim_net::LinkLoad]) -> String {
    let loads: Vec<(u64, u64, u64)> = carried
        .iter()
        .map(|l| (l.from.0, l.to.0, l.wire_bytes.to_bits()))
        .collect();
    format!(
        "{:?} {} {} {} {:x} {:?} {} {:?}",
        out.time,
        out.report.bytes_sent,
        out.report.bytes_delivered,
        out.report.bytes_on_wire,
        out.report.max_link_utilization.to_bits(),
        out.verified,
        out.transfers,
        loads
    )
}

/// `steps` run streaming on the flow model (grouped) against `plan` run by the general
/// executor on the flow model flow by flow, and the same two executors on the analytic model:
/// the same figures, or the same error. Returns whether the runs passed.
fn streaming_matches_general(
    net: &Network,
    kind: Kind,
    steps: &dyn Steps,
    plan: &Plan,
    p: Packetization,
) -> bool {
    let n = plan.ranks;
    let print = |r: Result<Outcome, RunError>, carried: &[podsim_net::LinkLoad]| match r {
        Ok(out) => Ok(fingerprint(&out, carried)),
        Err(e) => Err(e.to_string()),
    };
    let mut fast = FlowModel::new(net.clone(), p, false);
    let mut reference =
        FlowModel::new(net.clone(), p, false).with_mode(podsim_net::FlowMode::FlowByFlow);
    let a = run_steps(steps, kind, &mut fast, &nodes(n), 0.0, VERIFY_LIMIT);
    let b = run_checking(plan, kind, &mut reference, &nodes(n), 0.0, VERIFY_LIMIT);
    let ok = a.is_ok();
    assert_eq!(
        print(a, &podsim_net::NetworkModel::carried(&fast)),
        print(b, &podsim_net::NetworkModel::carried(&reference))
    );
    let mut x = AnalyticModel::new(net.clone(), p);
    let mut y = AnalyticModel::new(net.clone(), p);
    let a = run_steps(steps, kind, &mut x, &nodes(n), 0.0, VERIFY_LIMIT);
    let b = run_checking(plan, kind, &mut y, &nodes(n), 0.0, VERIFY_LIMIT);
    assert_eq!(print(a, &[]), print(b, &[]));
    ok
}

#[test]
fn ring_steps_are_the_ring_plans() {
    for dims in [vec![2u32], vec![5], vec![4, 4], vec![3, 5], vec![4, 4, 4]] {
        for (kind, alg) in [
            (Kind::AllReduce, Algorithm::Ring),
            (Kind::AllReduce, Algorithm::BidirectionalRing),
            (Kind::ReduceScatter, Algorithm::Ring),
            (Kind::AllGather, Algorithm::Ring),
        ] {
            for bytes in [0, 3, 1000, 1 << 20, (1 << 20) + 7] {
                let r = request(kind, alg, bytes, &dims);
                let p = plan(&r).unwrap();
                let st = RingSteps::new(&r).unwrap();
                let ps = PlanSteps::new(&p).expect("a ring plan is in steps");
                assert_eq!((st.ranks(), st.chunks()), (p.ranks, p.chunks));
                assert_eq!(st.steps(), ps.steps());
                assert_eq!(st.transfers(), p.ops.len());
                for b in 0..st.steps() {
                    assert_eq!(st.starts_chain(b), ps.starts_chain(b));
                    for rank in 0..p.ranks {
                        assert_eq!(st.op(b, rank), ps.op(b, rank), "{kind} {dims:?} {b} {rank}");
                    }
                }
                for pk in [
                    Packetization::NONE,
                    Packetization {
                        payload: 64,
                        header: 16,
                    },
                ] {
                    // The closed form against the sum over every transfer.
                    let by_op: u128 = p
                        .ops
                        .iter()
                        .map(|o| u128::from(pk.checked_wire_bytes(o.bytes).unwrap()))
                        .sum();
                    assert_eq!(st.wire_bytes(pk), by_op);
                }
            }
        }
    }
    // Not rings: no closed form.
    assert!(
        RingSteps::new(&request(
            Kind::AllReduce,
            Algorithm::DimensionWise,
            8,
            &[4, 4]
        ))
        .is_none()
    );
}

#[test]
fn streaming_gives_the_general_figures_for_rings() {
    let p = Packetization {
        payload: 4096,
        header: 64,
    };
    for (dims, wrap, ns) in [
        (vec![8u32], true, 0),
        (vec![4, 4], true, 30),
        (vec![4, 4], false, 0),
        (vec![3, 5], true, 7),
        (vec![4, 4, 4], true, 0),
        (vec![4, 4, 4], true, 100),
        (vec![8, 8], true, 0),
    ] {
        let net = cube(&dims, wrap, 25, ns);
        for (kind, alg) in [
            (Kind::AllReduce, Algorithm::Ring),
            (Kind::AllReduce, Algorithm::BidirectionalRing),
            (Kind::ReduceScatter, Algorithm::Ring),
            (Kind::AllGather, Algorithm::Ring),
        ] {
            for bytes in [1, 1000, (1 << 20) + 7, 64 << 20] {
                let r = request(kind, alg, bytes, &dims);
                let plan = plan(&r).unwrap();
                let st = RingSteps::new(&r).unwrap();
                for pk in [Packetization::NONE, p] {
                    assert!(streaming_matches_general(&net, kind, &st, &plan, pk));
                }
            }
        }
    }
}

#[test]
fn streaming_gives_the_general_figures_for_dimension_and_halving_doubling_plans() {
    for (dims, wrap, ns) in [
        (vec![4u32, 4], true, 0),
        (vec![4, 4], false, 20),
        (vec![3, 5], true, 0),
        (vec![4, 4, 4], true, 10),
        (vec![8, 8], true, 0),
    ] {
        let net = cube(&dims, wrap, 25, ns);
        let n: usize = dims.iter().map(|&k| k as usize).product();
        for alg in [Algorithm::DimensionWise, Algorithm::HalvingDoubling] {
            if alg == Algorithm::HalvingDoubling && !n.is_power_of_two() {
                continue;
            }
            for bytes in [5, 100_000, (1 << 20) + 3] {
                let mut plan = plan(&request(Kind::AllReduce, alg, bytes, &dims)).unwrap();
                // Held to program order the plan is not in steps; without it, it is.
                assert!(PlanSteps::new(&plan).is_none());
                plan.ops.iter_mut().for_each(|o| o.after = None);
                let st = PlanSteps::new(&plan).expect("in steps");
                // Without program order, dimension-wise and halving-doubling with fewer
                // bytes than ranks on zero-latency links fail their check on both paths
                // alike (a zero-byte transfer of step s + 1 arrives before a one-byte one of
                // step s): compared as errors.
                let ok = streaming_matches_general(
                    &net,
                    Kind::AllReduce,
                    &st,
                    &plan,
                    Packetization::NONE,
                );
                assert!(
                    ok || (bytes == 5 && ns == 0),
                    "{} {dims:?} {bytes}",
                    alg.name()
                );
            }
        }
    }
    // Plans not in steps are read as such.
    for (kind, alg) in [
        (Kind::AllToAll, Algorithm::Direct),
        (Kind::Broadcast, Algorithm::Tree),
        (Kind::AllReduce, Algorithm::DoubleBinaryTree),
    ] {
        let plan = plan(&request(kind, alg, 1000, &[4, 4])).unwrap();
        assert!(PlanSteps::new(&plan).is_none(), "{kind} {}", alg.name());
    }
}

#[test]
fn program_order_fixes_small_buffers_and_changes_no_valid_schedule() {
    // With 5 bytes over 16 ranks most transfers carry 0 bytes; on zero-latency links a
    // 0-byte transfer of step s + 1 used to arrive before a 1-byte one of step s, and the
    // rank sent a sum it did not yet hold (the check failed). Held to program order, every
    // run passes its check; wherever the old schedule passed, the figures are the same bits.
    for (dims, wrap, ns) in [
        (vec![4u32, 4], true, 0),
        (vec![4, 4], false, 20),
        (vec![3, 5], true, 0),
        (vec![4, 4, 4], true, 10),
        (vec![2, 8], true, 0),
    ] {
        let net = cube(&dims, wrap, 25, ns);
        let n: usize = dims.iter().map(|&k| k as usize).product();
        for alg in [Algorithm::DimensionWise, Algorithm::HalvingDoubling] {
            if alg == Algorithm::HalvingDoubling && !n.is_power_of_two() {
                continue;
            }
            for bytes in [1, 5, 17, 100_000, (1 << 20) + 3] {
                let ordered = plan(&request(Kind::AllReduce, alg, bytes, &dims)).unwrap();
                let mut loose = ordered.clone();
                loose.ops.iter_mut().for_each(|o| o.after = None);
                let mut flows = [
                    FlowModel::new(net.clone(), Packetization::NONE, false),
                    FlowModel::new(net.clone(), Packetization::NONE, false),
                ];
                let mut ana = [
                    AnalyticModel::new(net.clone(), Packetization::NONE),
                    AnalyticModel::new(net.clone(), Packetization::NONE),
                ];
                let [fa, fb] = &mut flows;
                let [aa, ab] = &mut ana;
                for (x, y) in [
                    (
                        fa as &mut dyn podsim_net::NetworkModel,
                        fb as &mut dyn podsim_net::NetworkModel,
                    ),
                    (aa, ab),
                ] {
                    let good =
                        run_checking(&ordered, Kind::AllReduce, x, &nodes(n), 0.0, VERIFY_LIMIT)
                            .unwrap_or_else(|e| panic!("{} {dims:?} {bytes}: {e}", alg.name()));
                    assert_eq!(good.verified, Verified::Passed);
                    if let Ok(old) =
                        run_checking(&loose, Kind::AllReduce, y, &nodes(n), 0.0, VERIFY_LIMIT)
                    {
                        assert_eq!(
                            fingerprint(&good, &x.carried()),
                            fingerprint(&old, &y.carried()),
                            "{} {dims:?} {bytes}",
                            alg.name()
                        );
                    }
                }
            }
        }
    }
}

/// A ring whose all-gather does not wait for the reduce-scatter (its first step starts a
/// chain), or whose one transfer carries the wrong chunk.
struct Broken {
    ring: RingSteps,
    early: bool,
}

impl Steps for Broken {
    fn ranks(&self) -> usize {
        self.ring.ranks()
    }
    fn chunks(&self) -> usize {
        self.ring.chunks()
    }
    fn steps(&self) -> usize {
        self.ring.steps()
    }
    fn starts_chain(&self, b: usize) -> bool {
        self.ring.starts_chain(b) || (self.early && b == self.ring.steps() / 2)
    }
    fn op(&self, b: usize, r: usize) -> StepOp {
        let mut o = self.ring.op(b, r);
        if !self.early && b == 3 && r == 2 {
            o.chunks = Chunks::Range(0, 1);
        }
        o
    }
    // Claimed for the ring with the wrong chunk (its dependencies are the ring's), so that
    // the analytic model's run in steps (`run_steps_alone`) checks it too; not for the one
    // whose all-gather does not wait, whose reads race its landings.
    fn in_step_order(&self) -> bool {
        !self.early
    }
}

#[test]
fn the_analytic_run_in_steps_catches_a_wrong_plan_and_leaves_it_to_the_queue() {
    // The ring with a wrong chunk fails the step-by-step check (so nothing is settled: the
    // model is left unsent), and the queue then fails it as it always has
    // (`streaming_verification_catches_a_wrong_plan`); the one whose all-gather does not wait
    // does not claim step order and is not run so; the right ring passes.
    let net = torus(&[4, 4], 10, 50);
    let r = request(Kind::AllReduce, Algorithm::Ring, 1 << 20, &[4, 4]);
    for early in [true, false] {
        let bad = Broken {
            ring: RingSteps::new(&r).unwrap(),
            early,
        };
        let mut a = AnalyticModel::new(net.clone(), Packetization::NONE);
        assert!(run_steps_alone(&bad, Kind::AllReduce, &mut a, &nodes(16), 0.0, true).is_none());
        assert_eq!(
            podsim_net::NetworkModel::report(&a),
            podsim_net::NetReport::default()
        );
    }
    let good = RingSteps::new(&r).unwrap();
    let mut a = AnalyticModel::new(net.clone(), Packetization::NONE);
    let out = run_steps_alone(&good, Kind::AllReduce, &mut a, &nodes(16), 0.0, true).unwrap();
    assert_eq!(out.verified, Verified::Passed);
    // 2 (n - 1) = 30 steps of 16 transfers, each of 2^20 / 16 bytes: 30 x 2^20 bytes.
    assert_eq!(out.transfers, 30 * 16);
    assert_eq!(out.report.bytes_sent, 30 << 20);
}

/// A model that hands every call to the one inside but for the contention-free shortcut
/// ([`podsim_net::NetworkModel::alone`]), which it declines: runs on it take the queue; and a
/// count of the transfers sent through it.
struct Queued<M> {
    inner: M,
    sent: u64,
    shortcut: bool,
}

impl<M: podsim_net::NetworkModel> podsim_net::NetworkModel for Queued<M> {
    fn send(
        &mut self,
        at: podsim_units::SimTime,
        src: NodeId,
        dst: NodeId,
        bytes: podsim_units::Bytes,
        tag: u64,
    ) -> Result<podsim_net::TransferId, podsim_net::NetError> {
        self.sent += 1;
        self.inner.send(at, src, dst, bytes, tag)
    }
    fn next_completion(&mut self) -> Option<podsim_units::SimTime> {
        self.inner.next_completion()
    }
    fn advance(&mut self, until: podsim_units::SimTime) -> Vec<podsim_net::Completion> {
        self.inner.advance(until)
    }
    fn advance_into(
        &mut self,
        until: podsim_units::SimTime,
        out: &mut Vec<podsim_net::Completion>,
    ) {
        self.inner.advance_into(until, out)
    }
    fn report(&self) -> podsim_net::NetReport {
        self.inner.report()
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn alone(
        &mut self,
        at: podsim_units::SimTime,
        src: NodeId,
        dst: NodeId,
        bytes: podsim_units::Bytes,
    ) -> Option<(podsim_units::SimTime, u64)> {
        if self.shortcut {
            self.inner.alone(at, src, dst, bytes)
        } else {
            None
        }
    }
    fn settle(&mut self, s: podsim_net::Settled) -> bool {
        self.shortcut && self.inner.settle(s)
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    #[test]
    fn analytic_rings_in_steps_match_the_queue(
        dims in proptest::collection::vec(1u32..=4, 1..=3),
        wrap in proptest::prelude::any::<bool>(),
        blocks in proptest::prelude::any::<bool>(),
        ns in 0u64..4,
        which in 0usize..4,
        bytes in proptest::sample::select(vec![0u64, 1, 7, 4095, 100_003, 1 << 20, u64::MAX / 3]),
        packets in proptest::prelude::any::<bool>(),
        reduce in proptest::sample::select(vec![0.0f64, 0.37, 2.5]),
        overhead_ns in proptest::sample::select(vec![0u64, 0, 700]),
        verify in proptest::prelude::any::<bool>(),
    ) {
        // The rings timed step by step on the analytic model (`run_steps_alone`) against the
        // queue of `run_steps` on the same model (the path every model takes, and the oracle):
        // the same outcome to the bit, or the same error, and the models left alike. Blocks
        // of half the size in every even dimension, whose links between them are slower and
        // longer, make a step's transfers take different times.
        let link = |gbps, ns| LinkSpec {
            kind: LinkKind::Electrical,
            bandwidth: Bandwidth::from_gbps(gbps).unwrap(),
            latency: SimDuration::from_ns(ns),
        };
        let mut c = KAryNCube::new(dims.clone(), vec![wrap; dims.len()], link(50, 100 * ns)).unwrap();
        if blocks && dims.iter().all(|&k| k % 2 == 0) {
            let shape = dims.iter().map(|&k| k / 2).collect();
            c = c.with_blocks(podsim_topology::Blocks { shape, between: link(7, 1000 + 33 * ns) }).unwrap();
        }
        let net = Network::Cube(c);
        let n = net.node_count() as usize;
        let (kind, alg) = [
            (Kind::AllReduce, Algorithm::Ring),
            (Kind::AllReduce, Algorithm::BidirectionalRing),
            (Kind::ReduceScatter, Algorithm::Ring),
            (Kind::AllGather, Algorithm::Ring),
        ][which];
        let steps = RingSteps::new(&request(kind, alg, bytes, &dims)).unwrap();
        let p = if packets { Packetization { payload: 4096, header: 64 } } else { Packetization::NONE };
        let model = |shortcut| {
            let inner = podsim_net::Endpoints::new(Box::new(AnalyticModel::new(net.clone(), p)))
                .with_overhead(SimDuration::from_ns(overhead_ns));
            Queued { inner, sent: 0, shortcut }
        };
        let (mut fast, mut queued) = (model(true), model(false));
        let limit = if verify { VERIFY_LIMIT } else { 0 };
        let print = |r: Result<Outcome, RunError>| match r {
            Ok(out) => Ok(fingerprint(&out, &[])),
            Err(e) => Err(e.to_string()),
        };
        let a = run_steps(&steps, kind, &mut fast, &nodes(n), reduce, limit);
        let b = run_steps(&steps, kind, &mut queued, &nodes(n), reduce, limit);
        let ok = a.is_ok();
        proptest::prop_assert_eq!(print(a), print(b));
        use podsim_net::NetworkModel as _;
        proptest::prop_assert_eq!(fast.report(), queued.report());
        proptest::prop_assert_eq!(fast.next_completion(), queued.next_completion());
        // Where the run succeeds, the queue sent every transfer and the steps none (a failing
        // one is left to the queue, which fails it as it does).
        if ok {
            proptest::prop_assert_eq!(queued.sent as usize, steps.transfers());
            proptest::prop_assert_eq!(fast.sent, 0);
        }
    }
}

#[test]
fn streaming_verification_catches_a_wrong_plan() {
    let net = torus(&[4, 4], 10, 50);
    let r = request(Kind::AllReduce, Algorithm::Ring, 1 << 20, &[4, 4]);
    for early in [true, false] {
        let bad = Broken {
            ring: RingSteps::new(&r).unwrap(),
            early,
        };
        for flow in [true, false] {
            let mut f = FlowModel::new(net.clone(), Packetization::NONE, false);
            let mut a = AnalyticModel::new(net.clone(), Packetization::NONE);
            let m: &mut dyn podsim_net::NetworkModel = if flow { &mut f } else { &mut a };
            let e = run_steps(&bad, Kind::AllReduce, m, &nodes(16), 0.0, VERIFY_LIMIT).unwrap_err();
            assert!(matches!(e, RunError::Wrong(_)), "{e}");
        }
    }
    // The right plan passes, and with the check off nothing is verified.
    let good = RingSteps::new(&r).unwrap();
    let mut f = FlowModel::new(net.clone(), Packetization::NONE, false);
    let out = run_steps(&good, Kind::AllReduce, &mut f, &nodes(16), 0.0, 0).unwrap();
    assert_eq!(out.verified, Verified::Skipped);
}

#[test]
fn measure_streams_rings_with_the_general_figures() {
    // measure() takes the streaming path for rings; the general path, called directly, gives
    // the same time and figures.
    let net = torus(&[4, 4, 4], 25, 20);
    for (kind, alg) in [
        (Kind::AllReduce, Algorithm::Ring),
        (Kind::AllReduce, Algorithm::BidirectionalRing),
    ] {
        let s = Setup {
            kind,
            algorithm: alg,
            bytes: (8 << 20) + 5,
            model: ModelKind::Flow,
            packets: Packetization::NONE,
            chunk: 0,
            ecmp: false,
            memory_limit: u64::MAX,
        };
        let m = measure(&net, &s).unwrap();
        let p = plan(&request(kind, alg, s.bytes, &[4, 4, 4])).unwrap();
        let mut reference = FlowModel::new(net.clone(), Packetization::NONE, false)
            .with_mode(podsim_net::FlowMode::FlowByFlow);
        let out = run(&p, kind, &mut reference, &nodes(64), 0.0).unwrap();
        assert_eq!(m.time_s, out.time.as_secs_f64());
        assert_eq!(m.bytes_on_wire, out.report.bytes_on_wire);
        assert_eq!(m.max_link_utilization, out.report.max_link_utilization);
        assert_eq!(m.transfers, p.ops.len());
        assert!(m.verified);
        assert_eq!(m.link_loads, podsim_net::NetworkModel::carried(&reference));
    }
}

#[test]
fn multi_ring_channels_cross_nodes_on_one_rail_each() {
    for (per, nodes) in [(8usize, 2usize), (8, 4), (4, 6), (2, 2), (1, 3)] {
        let n = per * nodes;
        // How many channels leave node k from chip j.
        let mut out = vec![vec![0; per]; nodes];
        for c in 0..per {
            let order = crate::plan::multi_ring_order(per, nodes, c);
            let mut seen = order.clone();
            seen.sort_unstable();
            assert_eq!(
                seen,
                (0..n).collect::<Vec<_>>(),
                "{per}x{nodes} channel {c}"
            );
            for i in 0..n {
                let (a, b) = (order[i], order[(i + 1) % n]);
                if a / per != b / per {
                    // With an even node count every crossing joins the same chip (one rail).
                    assert_eq!(a % per, b % per, "{per}x{nodes} channel {c}: {a} -> {b}");
                    out[a / per][a % per] += 1;
                }
            }
        }
        if nodes > 1 && per > 1 {
            // Each chip sends exactly one channel out of its node.
            assert!(
                out.iter().flatten().all(|&k| k == 1),
                "{per}x{nodes}: {out:?}"
            );
        }
    }
}

#[test]
fn all_dimensions_reaches_the_injection_bound_on_an_even_torus() {
    // torus:4x4x4 (n = 64, D = 3) of 50 GB/s links with 100 ns of latency, 64 MiB a rank, on
    // the flow model. All-dimensions cuts the buffer into 2D = 6 shares of B/6; each share
    // reduce-scatters along its three dimensions in turn, in ring steps of one hop: in its
    // j-th dimension (j = 0, 1, 2) each of the k - 1 = 3 steps carries 1/4 of what reached
    // that dimension, B/6 / 4^(j+1), then the all-gather moves the same amounts back. The
    // shares run together, and in each phase they hold the 6 link directions one each (share
    // (i, +/-) is on dimension i + phase), so none waits on another:
    //   T = 2 sum_j 3 (alpha + B / (6 4^(j+1) beta))
    //     = 18 alpha + (B / (3 beta)) (3/4 + 3/16 + 3/64) = 18 alpha + (63/64) B / (3 beta)
    //     = 18 x 100 ns + (63/64) x 67,108,864 / (3 x 50e9) s = 1.8 us + 440.40 us = 442.20 us.
    // The injection bound is the same bandwidth term: 2 (n-1)/n B over 6 links of beta,
    // (63/64) B / (3 beta) = 440.40 us. Dimension-wise sends over one link direction at a time,
    //   18 alpha + 2 (63/64) B / beta = 1.8 us + 2642.0 us = 2643.8 us (6x the bandwidth term),
    // and a bidirectional ring over the 64 ranks uses 2 of the 6 link directions, half of
    // the unidirectional ring's 2 (63/64) B / beta: about 1321 us plus its latency and the
    // ring's closing hop, which crosses the torus.
    let (alpha, beta, b) = (100e-9, 50e9, 64u64 << 20);
    let net = torus(&[4, 4, 4], 50, 100);
    let time = |alg: Algorithm| {
        let s = Setup {
            algorithm: alg,
            ..setup(Kind::AllReduce, b, ModelKind::Flow)
        };
        let m = measure(&net, &s).unwrap();
        assert!(m.verified, "{}", alg.name());
        (m.time_s, m.lower_bound_time_s)
    };
    let bf = b as f64;
    let closed = 18.0 * alpha + 63.0 / 64.0 * bf / (3.0 * beta);
    let (t, bound) = time(Algorithm::AllDimensions);
    assert!((t - closed).abs() < 1e-3 * closed, "{t} against {closed}");
    assert!(
        (bound - 63.0 / 64.0 * bf / (3.0 * beta)).abs() < 1e-9 * bound,
        "{bound}"
    );
    assert!(t >= bound);
    let (dim, _) = time(Algorithm::DimensionWise);
    let dim_closed = 18.0 * alpha + 2.0 * 63.0 / 64.0 * bf / beta;
    assert!((dim - dim_closed).abs() < 1e-3 * dim_closed, "{dim}");
    assert!(dim / t > 5.9, "{dim} against {t}");
    let (bidi, _) = time(Algorithm::BidirectionalRing);
    assert!(bidi / t > 2.9, "{bidi} against {t}");
    let (ring, _) = time(Algorithm::Ring);
    assert!(ring > bidi, "{ring} against {bidi}");
}

#[test]
fn all_dimensions_splits_the_buffer_into_a_share_per_dimension_and_direction() {
    // 3 x 5 torus, 2 dimensions: 4 shares, each sending 2 (n - 1) transfers' worth of ring
    // steps per rank over its own chunks (4 n chunks in all), and the shares independent: no
    // op waits on another share's.
    let r = request(Kind::AllReduce, Algorithm::AllDimensions, 1000, &[3, 5]);
    let p = plan(&r).unwrap();
    let n = 15;
    assert_eq!(p.chunks, 4 * n);
    // Per share: (2 + 4) ring steps each way, n sends a step.
    assert_eq!(p.ops.len(), 4 * 2 * (2 + 4) * n);
    assert!(p.ops.len() as u128 <= transfers(&r));
    let share_of = |o: &Op| o.chunks.iter().next().unwrap() as usize / n;
    for o in &p.ops {
        assert!(o.chunks.iter().all(|c| c as usize / n == share_of(o)));
        for &d in o.deps.iter().chain(&o.after) {
            assert_eq!(share_of(&p.ops[d]), share_of(o));
        }
    }
    // Each share's first ops run along its first dimension, in its direction: share 0 (+)
    // and 1 (-) on dimension 0 (stride 1), shares 2 and 3 on dimension 1 (stride 3).
    for (q, step) in [(0, 1), (1, 2), (2, 3), (3, 12)] {
        let first = p.ops.iter().find(|o| share_of(o) == q).unwrap();
        assert_eq!(first.src, 0);
        assert_eq!(first.dst, step, "share {q}");
    }
    // The bytes: every share reduce-scatters and all-gathers its 250 bytes, 2 (n-1)/n of it.
    let sent: u64 = p.ops.iter().filter(|o| o.src == 0).map(|o| o.bytes).sum();
    assert!(
        (sent as f64 - 2.0 * 14.0 / 15.0 * 1000.0).abs() < 16.0,
        "{sent}"
    );
}

/// A torus that wraps in every dimension, twisted as named when `twisted`.
fn twisted_torus(dims: &[u32], twisted: bool, gbps: u64, ns: u64) -> Network {
    let Network::Cube(c) = torus(dims, gbps, ns) else {
        unreachable!()
    };
    Network::Cube(if twisted {
        c.with_twist(KAryNCube::named_twist(dims).unwrap()).unwrap()
    } else {
        c
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
    #[test]
    fn exchanges_give_the_direct_plans_figures(
        dims in proptest::collection::vec(1u32..=4, 1..=3),
        twisted in proptest::prelude::any::<bool>(),
        ns in 0u64..3,
        block in proptest::sample::select(vec![0u64, 1, 4096, 100_003, 1 << 20]),
        packets in proptest::prelude::any::<bool>(),
    ) {
        // The direct all-to-all as one exchange on the flow model against its plan run
        // transfer by transfer on the flow-by-flow reference: the same transfers, report
        // counts, check; the time (the last arrival) within 1e-9 relative (see
        // podsim-net's flow::exchange: translates can get shares one 36-bit rounding step
        // apart flow by flow); the peak load and link bytes within 1e-9.
        let twisted =
            twisted && KAryNCube::named_twist(&dims).is_some() && dims.iter().all(|&k| k >= 2);
        let net = twisted_torus(&dims, twisted, 50, 100 * ns);
        let n = net.node_count() as usize;
        proptest::prop_assume!(n >= 2);
        let p = if packets { Packetization { payload: 4096, header: 64 } } else { Packetization::NONE };
        let mut fast = FlowModel::new(net.clone(), p, false);
        let a = run_exchange(n, block, &mut fast, &nodes(n), true).unwrap().expect("taken");
        let plan = plan(&request(Kind::AllToAll, Algorithm::Direct, block * n as u64, &[n as u32])).unwrap();
        let mut reference = FlowModel::new(net.clone(), p, false).with_mode(podsim_net::FlowMode::FlowByFlow);
        let b = run_checking(&plan, Kind::AllToAll, &mut reference, &nodes(n), 0.0, VERIFY_LIMIT).unwrap();
        let close = |x: f64, y: f64| x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs());
        proptest::prop_assert!(close(a.time.as_ps() as f64, b.time.as_ps() as f64), "{a:?} {b:?}");
        proptest::prop_assert_eq!((a.transfers, &a.verified), (b.transfers, &b.verified));
        let (ra, rb) = (a.report, b.report);
        proptest::prop_assert_eq!(
            (ra.bytes_sent, ra.bytes_delivered, ra.bytes_on_wire),
            (rb.bytes_sent, rb.bytes_delivered, rb.bytes_on_wire)
        );
        proptest::prop_assert!(close(ra.max_link_utilization, rb.max_link_utilization));
        let (la, lb) = (
            podsim_net::NetworkModel::carried(&fast),
            podsim_net::NetworkModel::carried(&reference),
        );
        for (x, y) in la.iter().zip(&lb) {
            proptest::prop_assert!(close(x.wire_bytes, y.wire_bytes));
        }
    }
}

/// The flow model, recording every completion: it declines exchanges, so `measure` runs the
/// direct all-to-all's plan transfer by transfer.
struct Declining;

impl BuildModel for Declining {
    fn build(
        &self,
        net: &Network,
        model: ModelKind,
        packets: Packetization,
        ecmp: bool,
        wire_bytes: u128,
    ) -> Result<Box<dyn podsim_net::NetworkModel>, Box<dyn std::error::Error + Send + Sync>> {
        let inner = TestModels.build(net, model, packets, ecmp, wire_bytes)?;
        let log = std::rc::Rc::new(std::cell::RefCell::new(podsim_net::Recording::default()));
        Ok(Box::new(podsim_net::Endpoints::new(inner).recording(log)))
    }
}

#[test]
fn measure_runs_direct_all_to_alls_on_tori_as_exchanges() {
    // torus:4x4x4 and a twisted 4x4x8 at 50 GB/s and 300 ns, 16 MiB: the exchange and the
    // plan (a model that declines exchanges) give the same time to the picosecond, the same
    // bytes, and both pass the check.
    for (dims, twisted) in [(vec![4u32, 4, 4], false), (vec![4, 4, 8], true)] {
        let net = twisted_torus(&dims, twisted, 50, 300);
        let s = setup(Kind::AllToAll, 16 << 20, ModelKind::Flow);
        let n = net.node_count() as usize;
        let r = request(Kind::AllToAll, Algorithm::Direct, 16 << 20, &[n as u32]);
        assert!(by_exchange(&net, &r, ModelKind::Flow));
        let a = crate::measure(&net, &s, &TestModels).unwrap();
        let b = crate::measure(&net, &s, &Declining).unwrap();
        assert_eq!(a.time_s, b.time_s, "{dims:?}");
        assert_eq!(
            (a.bytes_on_wire, a.transfers),
            (b.bytes_on_wire, b.transfers)
        );
        assert!(a.verified && b.verified);
        assert!((a.max_link_utilization - b.max_link_utilization).abs() < 1e-9);
        assert_eq!(a.link_loads.len(), b.link_loads.len());
    }
    // Not as exchanges: blocks of unequal sizes, a mesh, the analytic model, another algorithm.
    let net = torus(&[4, 4], 50, 0);
    let r = |bytes: u64, alg| request(Kind::AllToAll, alg, bytes, &[16]);
    assert!(!by_exchange(
        &net,
        &r(1000, Algorithm::Direct),
        ModelKind::Flow
    ));
    assert!(!by_exchange(
        &net,
        &r(1024, Algorithm::Direct),
        ModelKind::Analytic
    ));
    assert!(!by_exchange(
        &net,
        &r(1024, Algorithm::DimensionWise),
        ModelKind::Flow
    ));
    assert!(!by_exchange(
        &cube(&[4, 4], false, 50, 0),
        &r(1024, Algorithm::Direct),
        ModelKind::Flow
    ));
}

#[test]
fn an_exchange_is_estimated_by_its_classes_and_checked_densely() {
    // torus:32x32, 1024 ranks, average distance 16 x 1024/1023 (17 rounded up): transfer by
    // transfer the flow model's estimate is 1047552 transfers x (200 + 450 + 16 x 17) bytes,
    // about 966 MB; as an exchange, the tables of 4096 directed links and 2048 endpoint links
    // (200 bytes each), 1024 nodes and 1023 classes (150 + 150 + 16 x 17 bytes per node),
    // about 1.8 MB. The check's dense buffers: 1024^2 x 8 bytes = 8.4 MB.
    let net = torus(&[32, 32], 50, 0);
    let r = request(Kind::AllToAll, Algorithm::Direct, 1 << 20, &[1024]);
    let (need, held) = estimate(&net, &r, ModelKind::Flow);
    assert_eq!(held, 1023);
    assert_eq!(need, 6144 * 200 + 1024 * 150 + 1024 * (150 + 16 * 17));
    let per_transfer = memory_estimate(&net, ModelKind::Flow, transfers(&r));
    assert!(per_transfer > 900_000_000, "{per_transfer}");
    let mut s = setup(Kind::AllToAll, 1 << 20, ModelKind::Flow);
    s.memory_limit = 5_000_000;
    let m = measure(&net, &s).unwrap();
    assert!(!m.verified);
    assert!(
        m.unverified_reason
            .as_deref()
            .unwrap()
            .contains("1048576 buffer entries (8 bytes each)"),
        "{:?}",
        m.unverified_reason
    );
    s.memory_limit = 12_000_000;
    assert!(measure(&net, &s).unwrap().verified);
    s.memory_limit = 1_000_000;
    assert!(
        measure(&net, &s)
            .unwrap_err()
            .contains("more than the memory limit")
    );
}
