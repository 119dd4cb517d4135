//! Collectives: algorithms that turn a collective on a group of ranks into a DAG of transfers
//! ([`plan`]), run on any [`podsim_net::NetworkModel`] ([`run`]) with a functional check (every
//! rank's buffer holds small integers and the result is verified), reported with the
//! nccl-tests conventions and against the physical lower bound ([`lower_bound`]).
//!
//! Architecture invariant: collectives see the network only through the endpoint interface
//! (`send` and completions); they know ranks, not links.

mod exec;
mod job;
mod microbench;
mod output;
mod plan;
mod steps;

pub use exec::{
    CHECK_ENTRY_BYTES, EXCHANGE_ENTRY_BYTES, Outcome, RunError, VERIFY_LIMIT, Verified,
    check_entries, entries, initial, run, run_checking, run_exchange, run_steps,
};
pub use job::{CollectiveJob, SweepSizeError, TooManyPieces};
pub use microbench::{Micro, MicroResult, microbench};
pub use output::{
    MicroOutput, Resumed, Rows, SWEEP_HEADER, SweepFailure, sweep_fields, sweep_rows,
};
pub use plan::{
    Algorithm, Chunks, Combine, Kind, MAX_TRANSFERS, Op, Plan, PlanError, Request, check, plan,
    transfers,
};
pub use steps::{PlanSteps, RingSteps, StepOp, Steps};

use podsim_topology::Metrics;
use podsim_units::SimDuration;

/// The time below which no algorithm can finish `kind` on `n` ranks with `bytes` per rank,
/// in seconds: the larger of
/// * injection: what each rank must send (all-reduce 2(n-1)/n of its buffer, reduce-scatter,
///   all-gather and all-to-all (n-1)/n, broadcast and reduce the whole buffer) over its
///   injection bandwidth;
/// * bisection (all-to-all): the a x b x (bytes/n) bytes that must cross each way between the
///   halves of the bisection, over half its two-way bandwidth;
/// * latency: one hop's latency when any data moves (`hop_latency_s`).
pub fn lower_bound(kind: Kind, n: usize, bytes: u64, m: &Metrics, hop_latency_s: f64) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let nf = n as f64;
    let b = bytes as f64;
    let must_send = match kind {
        Kind::AllReduce => 2.0 * (nf - 1.0) / nf * b,
        Kind::ReduceScatter | Kind::AllGather | Kind::AllToAll => (nf - 1.0) / nf * b,
        Kind::Broadcast | Kind::Reduce => b,
        Kind::Barrier => 0.0,
    };
    let injection = must_send / m.injection_bandwidth_bytes_per_s as f64;
    let bisection = if kind == Kind::AllToAll && m.bisection_bandwidth_bytes_per_s > 0 {
        let (a, c) = ((n / 2) as f64, (n - n / 2) as f64);
        a * c * (b / nf) / (m.bisection_bandwidth_bytes_per_s as f64 / 2.0)
    } else {
        0.0
    };
    injection.max(bisection).max(hop_latency_s)
}

#[cfg(test)]
mod tests;

/// Which network model to run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    /// Alpha-beta, contention-free.
    Analytic,
    /// Max-min fair flows.
    Flow,
    /// Cycle-level routers with virtual channels and credits (`podsim-noc`), 64-byte flits in
    /// 16-flit packets, link latencies from the topology, buffers covering each link's credit
    /// round trip, the network's default routing.
    Packet,
}

impl ModelKind {
    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Analytic => "analytic",
            ModelKind::Flow => "flow",
            ModelKind::Packet => "packet",
        }
    }
}

/// One measured collective, with the nccl-tests figures. Serialized, its fields are the keys
/// of [`CollectiveOutput`] (the link loads stay out).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Measurement {
    /// Ranks (every endpoint of the network).
    pub ranks: usize,
    /// Per-rank buffer bytes.
    pub bytes: u64,
    /// Simulated time, seconds.
    pub time_s: f64,
    /// bytes / time.
    pub algorithm_bandwidth_bytes_per_s: f64,
    /// algbw x the kind's bus factor.
    pub bus_bandwidth_bytes_per_s: f64,
    /// Wire bytes times links crossed.
    pub bytes_on_wire: u64,
    /// Highest link load seen, as a fraction of bandwidth.
    pub max_link_utilization: f64,
    /// See [`lower_bound`].
    pub lower_bound_time_s: f64,
    /// Whether the functional check ran and passed.
    pub verified: bool,
    /// Why the check did not run, when it did not.
    pub unverified_reason: Option<String>,
    /// Whether `time_s` is the lower bound rather than the model's own time: the analytic
    /// model ignores contention, so where its time falls below the bound (all-to-all on a
    /// torus, whose bisection it does not see) the bound is reported instead.
    pub bound_applied: bool,
    /// Transfers in the plan.
    pub transfers: usize,
    /// What each directed link carried, on models that route over links (the flow model;
    /// empty on the others).
    #[serde(skip)]
    pub link_loads: Vec<podsim_net::LinkLoad>,
}

/// One collective as `podsim collective --json` prints it and Python's `podsim.collective`
/// returns it (and, without the timing, as `podsim run --json` and `podsim import astra-sim`
/// print a run): what was run, on what, and the [`Measurement`]'s keys. One struct, so the
/// command and the bindings cannot drift; serialize it with `podsim_report::to_json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CollectiveOutput<'a> {
    /// The collective's name.
    pub kind: &'static str,
    /// The algorithm's name.
    pub algorithm: &'static str,
    /// The network model's name.
    pub model: &'static str,
    /// The topology as given (a shorthand, a file, a system's name).
    pub topology: &'a str,
    /// What was measured.
    #[serde(flatten)]
    pub measurement: &'a Measurement,
    /// The timing of the links and endpoints, where the caller resolved it.
    #[serde(flatten)]
    pub timing: Option<LinkTiming>,
}

impl<'a> CollectiveOutput<'a> {
    /// `m`, a measurement of `kind` by `algorithm` on `model`, on `topology`; no timing keys.
    pub fn new(
        kind: Kind,
        algorithm: Algorithm,
        model: ModelKind,
        topology: &'a str,
        m: &'a Measurement,
    ) -> CollectiveOutput<'a> {
        CollectiveOutput {
            kind: kind.name(),
            algorithm: algorithm.name(),
            model: model.name(),
            topology,
            measurement: m,
            timing: None,
        }
    }

    /// The same with the timing keys.
    pub fn with_timing(self, timing: LinkTiming) -> CollectiveOutput<'a> {
        CollectiveOutput {
            timing: Some(timing),
            ..self
        }
    }
}

/// The timing a collective ran with, as [`CollectiveOutput`]'s keys.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LinkTiming {
    /// The per-hop link latency, seconds.
    pub link_latency_s: f64,
    /// Where it came from: `preset`, `machine file`, `--link-latency` or `default`.
    pub link_latency_source: &'static str,
    /// The endpoint setting, if the machine has any.
    pub endpoint: Option<&'static str>,
    /// What a one-way transfer pays outside the network, seconds (0 without a setting).
    pub endpoint_overhead_s: f64,
}

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setup {
    /// The collective.
    pub kind: Kind,
    /// Its algorithm.
    pub algorithm: Algorithm,
    /// Per-rank buffer bytes.
    pub bytes: u64,
    /// The network model.
    pub model: ModelKind,
    /// Packet overheads.
    pub packets: podsim_net::Packetization,
    /// Pipeline piece or DMA size in bytes (0: none).
    pub chunk: u64,
    /// Split flows over equal-cost paths.
    pub ecmp: bool,
    /// The most memory the run may hold, in bytes: a run whose estimate (see
    /// [`memory_estimate`]) is larger is refused before it starts, and the functional check
    /// runs only when its buffers fit too.
    pub memory_limit: u64,
}

/// Bytes per transfer the plan and its executor hold (the op with its dependencies and
/// chunks, the executor's counters and dependents), measured: all-to-all on torus:32x32 (1.05 M
/// transfers) peaks at 457 MB on the analytic model, about 430 bytes per transfer with the
/// model's own share.
pub const PLAN_BYTES_PER_TRANSFER: u64 = 200;

/// Steps of transfers a collective run in steps ([`RingSteps`], [`run_steps`]) is taken to
/// hold at once, for its memory estimate: the transfers in flight and those ready to go
/// (a ring whose ranks keep pace holds one step; two leave room for ranks that drift apart).
pub const STEPS_HELD: u128 = 2;

/// The memory, in bytes, a collective of `transfers` transfers needs on `model` over `net`,
/// without the functional check's buffers: the plan and executor, and the model's state per
/// transfer (analytic: the completion record; flow: the flow, its rate and its routed path
/// of about the average distance in hops; packet: the completion record) plus, on the packet
/// level, about 1 KiB per channel for the routers' buffers and state. Checked against
/// measurements: all-to-all on torus:32x32 peaks at 457 MB (analytic; estimate 472 MB) and
/// 966 MB (flow; estimate 950 MB). Neighbour-only collectives come out up to 2.5 times above
/// their measured peak (their paths are one hop, the estimate uses the average distance).
pub fn memory_estimate(net: &podsim_topology::Network, model: ModelKind, transfers: u128) -> u128 {
    let per = u128::from(PLAN_BYTES_PER_TRANSFER)
        + match model {
            ModelKind::Analytic | ModelKind::Packet => 250,
            ModelKind::Flow => 450 + 16 * net.metrics().average_distance.ceil() as u128,
        };
    let routers = if model == ModelKind::Packet {
        let links = u128::from(net.metrics().links) * 2;
        let ifaces = u128::from(net.endpoints()) * u128::from(net.interfaces().max(1)) * 2;
        (links + ifaces) * 1024
    } else {
        0
    };
    transfers.saturating_mul(per).saturating_add(routers)
}

/// Why a collective or microbenchmark could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum CollectiveError {
    /// The network has more endpoints than this machine can index.
    #[error("too many endpoints")]
    TooManyEndpoints,
    /// The run would need more memory than allowed.
    #[error(
        "{kind} over {ranks} ranks on the {model} model needs about {} ({held} transfers held at once{}), more than the memory limit of {} (--memory-limit)",
        podsim_units::Bytes(u64::try_from(*estimate).unwrap_or(u64::MAX)),
        if held == transfers { String::new() } else { format!(", of {transfers} in all") },
        podsim_units::Bytes(*limit)
    )]
    Memory {
        /// The collective.
        kind: Kind,
        /// Its ranks.
        ranks: usize,
        /// The model's name.
        model: &'static str,
        /// The estimate, bytes.
        estimate: u128,
        /// Transfers in the plan.
        transfers: u128,
        /// Transfers the run holds at once (what the estimate counts).
        held: u128,
        /// The limit, bytes.
        limit: u64,
    },
    /// The algorithm cannot plan this collective.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The network model could not be built, or refused the run.
    #[error(transparent)]
    Model(Box<dyn std::error::Error + Send + Sync>),
    /// The run failed on the model.
    #[error(transparent)]
    Run(#[from] RunError),
    /// A transfer was refused.
    #[error(transparent)]
    Net(#[from] podsim_net::NetError),
    /// The simulated time reached the end of 64-bit picoseconds (times saturate there, so a
    /// figure computed from one would be wrong).
    #[error(
        "the simulated time reaches the {:.0}-day limit of 64-bit picoseconds; use fewer bytes",
        u64::MAX as f64 / 1e12 / 86_400.0
    )]
    TimeOverflow,
    /// A microbenchmark needs more endpoints than the network has.
    #[error("an all-to-all needs at least two endpoints, and {topology} has {endpoints}")]
    TooFewEndpoints {
        /// The network.
        topology: String,
        /// Its endpoints.
        endpoints: u64,
    },
    /// A point-to-point microbenchmark's source has no neighbour.
    #[error("endpoint 0 has no neighbour")]
    NoNeighbour,
}

/// A name on a command line or in a file that is not a collective, algorithm or model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Not a collective.
    #[error("`{got}` is not a collective; the nearest is `{nearest}` (collectives: {choices})")]
    Kind {
        /// What was given.
        got: String,
        /// The nearest collective.
        nearest: &'static str,
        /// Every collective.
        choices: String,
    },
    /// Not an algorithm of the collective.
    #[error("{kind} has no algorithm `{got}` (choose from: {choices})")]
    Algorithm {
        /// The collective.
        kind: Kind,
        /// What was given.
        got: String,
        /// Its algorithms.
        choices: String,
    },
    /// Not a model.
    #[error("`{0}` is not a model (choose analytic, flow or packet)")]
    Model(String),
}

/// Builds the network models collectives run on. Collectives know models only through this
/// and the [`podsim_net::NetworkModel`] interface: the machine layer (`podsim-system`) builds
/// every fidelity, the packet level included.
pub trait BuildModel {
    /// The network model `model` on `net`, with these packet overheads (`ecmp`: split flows
    /// over equal-cost paths), for a run that puts `wire_bytes` on the wire in all: a model
    /// may refuse a run it could not finish in reasonable time, saying why.
    fn build(
        &self,
        net: &podsim_topology::Network,
        model: ModelKind,
        packets: podsim_net::Packetization,
        ecmp: bool,
        wire_bytes: u128,
    ) -> Result<Box<dyn podsim_net::NetworkModel>, Box<dyn std::error::Error + Send + Sync>>;
}

/// Where a measured collective's transfers come from.
enum Source {
    /// Computed step by step.
    Steps(RingSteps),
    /// A direct all-to-all of equal blocks, as one [`podsim_net::Exchange`].
    Exchange,
    /// A materialised plan.
    Plan(Plan),
}

/// Whether `r` on `model` over `net` runs as one exchange ([`run_exchange`]): a direct
/// all-to-all of equal blocks over every endpoint of a torus whose translations carry every
/// transfer onto another ([`podsim_net::Translations`]), on the flow model, which then holds
/// per class of translates what it would hold per transfer.
pub fn by_exchange(net: &podsim_topology::Network, r: &Request, model: ModelKind) -> bool {
    r.kind == Kind::AllToAll
        && r.algorithm == Algorithm::Direct
        && r.ranks >= 2
        && r.bytes.is_multiple_of(r.ranks as u64)
        && model == ModelKind::Flow
        && net.endpoints() == r.ranks as u64
        && podsim_net::Translations::applies(net)
}

/// The memory, in bytes, `r` needs on `model` over `net` without the functional check's
/// buffers, and the transfers it is counted for (those held at once): a ring run in steps
/// holds [`STEPS_HELD`] steps; an exchange ([`by_exchange`]) the network's tables and its
/// n - 1 classes ([`exchange_memory_estimate`]); any other plan every transfer.
pub fn estimate(net: &podsim_topology::Network, r: &Request, model: ModelKind) -> (u128, u128) {
    let all = transfers(r);
    if RingSteps::new(r).is_some() {
        let held = all.min(STEPS_HELD * r.ranks as u128);
        return (memory_estimate(net, model, held), held);
    }
    if by_exchange(net, r, model) {
        return (exchange_memory_estimate(net), r.ranks as u128 - 1);
    }
    (memory_estimate(net, model, all), all)
}

/// The memory, in bytes, of an exchange on the flow model over `net` ([`by_exchange`]): per
/// directed link (injection and ejection included) the model's tables, about 200 bytes; per
/// node its lane, rank and coordinates, about 150 bytes; per class of translates (n - 1) its
/// state and path, about 150 bytes and 16 per hop of the average distance. Checked against
/// measurements: all-to-all on torus:16x16x16 (4096 chips; estimate 8.4 MB) peaks at 10.6 MB
/// without the check, the whole process (its code and the network's description included),
/// and 141 MB with it (the check's 134 MB of dense buffers, counted apart).
pub fn exchange_memory_estimate(net: &podsim_topology::Network) -> u128 {
    let m = net.metrics();
    let nodes = u128::from(net.node_count());
    let links = u128::from(m.links) * 2 + 2 * nodes;
    let hops = m.average_distance.ceil() as u128;
    links * 200 + nodes * 150 + nodes * (150 + 16 * hops)
}

/// Plan the setup's collective over every endpoint of `net` and run it on the model `models`
/// builds: the ring algorithms step by step ([`RingSteps`], [`run_steps`]), the others from
/// their materialised plan ([`plan`], [`run_checking`]), with the same results either way.
pub fn measure(
    net: &podsim_topology::Network,
    s: &Setup,
    models: &dyn BuildModel,
) -> Result<Measurement, CollectiveError> {
    let Setup {
        kind,
        algorithm,
        bytes,
        model,
        packets,
        chunk,
        ecmp,
        memory_limit,
    } = *s;
    let n = usize::try_from(net.endpoints()).map_err(|_| CollectiveError::TooManyEndpoints)?;
    let dims = net.rank_grid();
    let bytes = if kind == Kind::Barrier { 0 } else { bytes };
    let request = Request {
        kind,
        algorithm,
        bytes,
        ranks: n,
        dims,
        chunk,
    };
    // The ring algorithms run in steps, holding only what is in flight; a direct all-to-all
    // of equal blocks on a torus as one exchange, by translation classes; the others from
    // their materialised plan.
    let stepped = RingSteps::new(&request);
    let all = transfers(&request);
    let exchange = by_exchange(net, &request, model);
    let (need, held) = estimate(net, &request, model);
    if need > u128::from(memory_limit) {
        return Err(CollectiveError::Memory {
            kind,
            ranks: n,
            model: model.name(),
            estimate: need,
            transfers: all,
            held,
            limit: memory_limit,
        });
    }
    // An exchange plans nothing: the cap on a plan's transfers is not its limit.
    if !exchange {
        check(&request)?;
    }
    let source = match (stepped, exchange) {
        (Some(st), _) => Source::Steps(st),
        (None, true) => Source::Exchange,
        (None, false) => Source::Plan(plan(&request)?),
    };
    // The functional check runs when its buffers fit in what is left.
    let left = u128::from(memory_limit) - need;
    let verify_limit = usize::try_from(left / u128::from(CHECK_ENTRY_BYTES)).unwrap_or(usize::MAX);
    let nodes: Vec<podsim_topology::NodeId> = (0..n as u64).map(podsim_topology::NodeId).collect();
    let block = if n > 0 { bytes / n as u64 } else { 0 };
    let (wire, entries) = match &source {
        Source::Steps(st) => (
            st.wire_bytes(packets),
            exec::entries(kind, st.ranks(), st.chunks()),
        ),
        Source::Exchange => (
            all * u128::from(packets.checked_wire_bytes(block).unwrap_or(u64::MAX)),
            exec::entries(kind, n, n),
        ),
        Source::Plan(p) => (
            p.ops.iter().fold(0u128, |sum, op| {
                sum + u128::from(packets.checked_wire_bytes(op.bytes).unwrap_or(u64::MAX))
            }),
            check_entries(p, kind),
        ),
    };
    let mut m = models
        .build(net, model, packets, ecmp, wire)
        .map_err(CollectiveError::Model)?;
    // Bytes per entry of the functional check's buffers (an exchange's are dense).
    let mut entry_bytes = CHECK_ENTRY_BYTES;
    let out = match &source {
        Source::Steps(st) => run_steps(st, kind, m.as_mut(), &nodes, 0.0, verify_limit)?,
        Source::Plan(p) => run_checking(p, kind, m.as_mut(), &nodes, 0.0, verify_limit)?,
        Source::Exchange => {
            // Dense check buffers (a value per receiver and sender) where they fit.
            let verify = (n as u128) * (n as u128) * u128::from(exec::EXCHANGE_ENTRY_BYTES) <= left;
            match run_exchange(n, block, m.as_mut(), &nodes, verify)? {
                Some(out) => {
                    entry_bytes = exec::EXCHANGE_ENTRY_BYTES;
                    out
                }
                None => {
                    // The model declined (it records every completion, say): transfer by
                    // transfer, within the limit for that.
                    let need = memory_estimate(net, model, all);
                    if need > u128::from(memory_limit) {
                        return Err(CollectiveError::Memory {
                            kind,
                            ranks: n,
                            model: model.name(),
                            estimate: need,
                            transfers: all,
                            held: all,
                            limit: memory_limit,
                        });
                    }
                    let left = u128::from(memory_limit) - need;
                    let verify_limit =
                        usize::try_from(left / u128::from(CHECK_ENTRY_BYTES)).unwrap_or(usize::MAX);
                    let p = plan(&request)?;
                    run_checking(&p, kind, m.as_mut(), &nodes, 0.0, verify_limit)?
                }
            }
        }
    };
    let metrics = net.metrics();
    let hop = net.link().latency.as_secs_f64();
    let bound = lower_bound(kind, n, bytes, &metrics, hop);
    if out.time >= SimDuration::MAX {
        return Err(CollectiveError::TimeOverflow);
    }
    let mut t = out.time.as_secs_f64();
    // The analytic model sees no contention; it never reports less than the bound.
    let bound_applied = model == ModelKind::Analytic && t < bound;
    if bound_applied {
        t = bound;
    }
    let algbw = if t > 0.0 { bytes as f64 / t } else { 0.0 };
    Ok(Measurement {
        ranks: n,
        bytes,
        time_s: t,
        algorithm_bandwidth_bytes_per_s: algbw,
        bus_bandwidth_bytes_per_s: algbw * kind.bus_factor(n),
        bytes_on_wire: out.report.bytes_on_wire,
        max_link_utilization: out.report.max_link_utilization,
        lower_bound_time_s: bound,
        verified: out.verified == Verified::Passed,
        unverified_reason: match out.verified {
            Verified::Passed => None,
            Verified::Skipped => Some(format!(
                "its {} buffer entries ({} bytes each) do not fit in the memory limit of {} next to the run",
                entries,
                entry_bytes,
                podsim_units::Bytes(memory_limit)
            )),
        },
        bound_applied,
        transfers: out.transfers,
        link_loads: m.carried(),
    })
}

/// The kind, algorithm (default: the kind's first) and model named on a command line or in a
/// file; the error names the nearest valid choice.
pub fn parse_names(
    kind: &str,
    algorithm: Option<&str>,
    model: &str,
) -> Result<(Kind, Algorithm, ModelKind), NameError> {
    let names: Vec<&'static str> = Kind::ALL.iter().map(|k| k.name()).collect();
    let k = Kind::from_name(kind).ok_or_else(|| NameError::Kind {
        got: kind.to_string(),
        nearest: podsim_units::nearest(kind, &names).unwrap_or(""),
        choices: names.join(", "),
    })?;
    let algs = k.algorithms();
    let a = match algorithm {
        None => algs[0],
        Some(name) => *algs.iter().find(|a| a.name() == name).ok_or_else(|| {
            let list: Vec<&str> = algs.iter().map(|a| a.name()).collect();
            NameError::Algorithm {
                kind: k,
                got: name.to_string(),
                choices: list.join(", "),
            }
        })?,
    };
    let m = match model {
        "flow" => ModelKind::Flow,
        "analytic" => ModelKind::Analytic,
        "packet" => ModelKind::Packet,
        other => return Err(NameError::Model(other.to_string())),
    };
    Ok((k, a, m))
}

/// The alpha-beta closed form of a collective, in seconds, where one exists: `alpha` the
/// per-message latency (s), `beta` the link bandwidth (bytes/s), `n` ranks, `bytes` per rank,
/// every message one hop on its own link:
/// * ring reduce-scatter or all-gather: (n-1) (alpha + bytes/(n beta));
/// * ring all-reduce: twice that; bidirectional ring: twice that on half the bytes, the two
///   rings in parallel;
/// * halving-doubling all-reduce: 2 log2(n) alpha + 2 (n-1)/n bytes/beta;
/// * binomial broadcast or reduce: ceil(log2 n) (alpha + bytes/beta).
///
/// The analytic model reproduces these exactly when the topology gives every step its own
/// single-hop links (tested on rings and hypercubes).
pub fn closed_form(
    kind: Kind,
    algorithm: Algorithm,
    n: usize,
    bytes: u64,
    alpha: f64,
    beta: f64,
) -> Option<f64> {
    if n < 2 {
        return Some(0.0);
    }
    let (nf, b) = (n as f64, bytes as f64);
    let ring_pass = |bytes: f64| (nf - 1.0) * (alpha + bytes / (nf * beta));
    let log = (n as f64).log2().ceil();
    Some(match (kind, algorithm) {
        (Kind::ReduceScatter | Kind::AllGather, Algorithm::Ring) => ring_pass(b),
        (Kind::AllReduce, Algorithm::Ring) => 2.0 * ring_pass(b),
        (Kind::AllReduce, Algorithm::BidirectionalRing) => {
            2.0 * ring_pass((bytes - bytes / 2) as f64)
        }
        (Kind::AllReduce, Algorithm::HalvingDoubling) if n.is_power_of_two() => {
            2.0 * log * alpha + 2.0 * (nf - 1.0) / nf * b / beta
        }
        (Kind::Broadcast | Kind::Reduce, Algorithm::Tree) => log * (alpha + b / beta),
        _ => return None,
    })
}
