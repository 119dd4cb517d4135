//! Collectives at pod scale (issue 38, items 1 and 6), as `podsim collective` runs them
//! (functional check included) on TPU-v4-like tori (50 GB/s links, 300 ns hops):
//! * the direct all-to-all of 16 MiB per rank on the flow model, run as one exchange by
//!   translation classes: 1024 chips (torus 8x8x16), regular and twisted, and 4096 chips
//!   (torus 16x16x16);
//! * the ring all-reduce of 16 MiB per rank on the analytic model over 4096 chips;
//! * group `analytic_ring` (item 6): the 4096-chip ring all-reduce of 64 MiB per rank on the
//!   analytic model, as `podsim collective all-reduce --topology torus:16x16x16 --bytes
//!   "64 MiB" --model analytic` runs it (timed step by step, no queue: `steps`), and the same
//!   through a model that declines the contention-free shortcut, so that it takes the queue
//!   of transfers and completions the previous release ran (`queue`, the tests' oracle).
//!
//! The models are built here as `podsim-system` builds them for these networks (no endpoint
//! overhead), so the bench needs nothing above this crate.

#![allow(missing_docs)] // criterion_group! generates undocumented functions

use criterion::{Criterion, criterion_group, criterion_main};
use podsim_collective::{Algorithm, BuildModel, Kind, ModelKind, Setup};
use podsim_net::{
    AnalyticModel, Completion, FlowModel, NetError, NetReport, NetworkModel, Packetization,
    TransferId,
};
use podsim_topology::NodeId;
use podsim_topology::{KAryNCube, LinkKind, LinkSpec, Network};
use podsim_units::{Bandwidth, SimDuration};
use podsim_units::{Bytes, SimTime};

/// The analytic and flow models, as `podsim-system` builds them for a torus.
struct Models;

impl BuildModel for Models {
    fn build(
        &self,
        net: &Network,
        model: ModelKind,
        packets: Packetization,
        ecmp: bool,
        _wire_bytes: u128,
    ) -> Result<Box<dyn NetworkModel>, Box<dyn std::error::Error + Send + Sync>> {
        match model {
            ModelKind::Analytic => Ok(Box::new(AnalyticModel::new(net.clone(), packets))),
            ModelKind::Flow => Ok(Box::new(FlowModel::new(net.clone(), packets, ecmp))),
            ModelKind::Packet => Err("the packet level is built by podsim-system".into()),
        }
    }
}

/// The analytic model behind a model that declines `alone` (every run takes the queue).
struct Queue(AnalyticModel);

impl NetworkModel for Queue {
    fn send(
        &mut self,
        at: SimTime,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
        tag: u64,
    ) -> Result<TransferId, NetError> {
        self.0.send(at, src, dst, bytes, tag)
    }
    fn next_completion(&mut self) -> Option<SimTime> {
        self.0.next_completion()
    }
    fn advance(&mut self, until: SimTime) -> Vec<Completion> {
        self.0.advance(until)
    }
    fn advance_into(&mut self, until: SimTime, out: &mut Vec<Completion>) {
        self.0.advance_into(until, out)
    }
    fn report(&self) -> NetReport {
        self.0.report()
    }
    fn name(&self) -> &'static str {
        self.0.name()
    }
}

/// The analytic model as `Queue`.
struct Queued;

impl BuildModel for Queued {
    fn build(
        &self,
        net: &Network,
        _model: ModelKind,
        packets: Packetization,
        _ecmp: bool,
        _wire_bytes: u128,
    ) -> Result<Box<dyn NetworkModel>, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Box::new(Queue(AnalyticModel::new(net.clone(), packets))))
    }
}

fn torus(dims: &[u32], twisted: bool) -> Network {
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(50).expect("50 GB/s"),
        latency: SimDuration::from_ns(300),
    };
    let c = KAryNCube::new(dims.to_vec(), vec![true; dims.len()], link).expect("torus");
    Network::Cube(if twisted {
        c.with_twist(KAryNCube::named_twist(dims).expect("a named twist"))
            .expect("twisted torus")
    } else {
        c
    })
}

fn setup(kind: Kind, model: ModelKind) -> Setup {
    Setup {
        kind,
        algorithm: if kind == Kind::AllToAll {
            Algorithm::Direct
        } else {
            Algorithm::Ring
        },
        bytes: 16 << 20,
        model,
        packets: Packetization::NONE,
        chunk: 0,
        ecmp: true,
        memory_limit: 16 << 30,
    }
}

fn run(net: &Network, s: &Setup) {
    let m = podsim_collective::measure(net, s, &Models).expect("the collective runs");
    assert!(m.verified);
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("pod_scale");
    g.sample_size(10);
    let a2a = setup(Kind::AllToAll, ModelKind::Flow);
    let regular = torus(&[8, 8, 16], false);
    g.bench_function("flow_all_to_all_16MiB_1024", |b| {
        b.iter(|| run(&regular, &a2a))
    });
    let twisted = torus(&[8, 8, 16], true);
    g.bench_function("flow_all_to_all_16MiB_1024_twisted", |b| {
        b.iter(|| run(&twisted, &a2a))
    });
    let pod = torus(&[16, 16, 16], false);
    g.bench_function("flow_all_to_all_16MiB_4096", |b| b.iter(|| run(&pod, &a2a)));
    let ring = setup(Kind::AllReduce, ModelKind::Analytic);
    g.bench_function("analytic_ring_all_reduce_16MiB_4096", |b| {
        b.iter(|| run(&pod, &ring))
    });
    g.finish();
}

fn analytic_ring(c: &mut Criterion) {
    let mut g = c.benchmark_group("analytic_ring");
    g.sample_size(10);
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_gbps(50).expect("50 GB/s"),
        latency: SimDuration::ZERO,
    };
    // torus:16x16x16 as the command line builds it (50 GB/s, no hop latency).
    let pod = Network::Cube(KAryNCube::new(vec![16; 3], vec![true; 3], link).expect("torus"));
    let ring = Setup {
        bytes: 64 << 20,
        ..setup(Kind::AllReduce, ModelKind::Analytic)
    };
    let want = podsim_collective::measure(&pod, &ring, &Models).expect("runs");
    let old = podsim_collective::measure(&pod, &ring, &Queued).expect("runs");
    assert_eq!(want.time_s.to_bits(), old.time_s.to_bits());
    g.bench_function("steps_64MiB_4096", |b| b.iter(|| run(&pod, &ring)));
    g.bench_function("queue_64MiB_4096", |b| {
        b.iter(|| {
            let m = podsim_collective::measure(&pod, &ring, &Queued).expect("runs");
            assert!(m.verified);
        })
    });
    g.finish();
}

criterion_group!(benches, bench, analytic_ring);
criterion_main!(benches);
