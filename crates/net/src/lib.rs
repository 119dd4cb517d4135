//! Network models behind one endpoint-facing interface, [`NetworkModel`]: transfers are started
//! with `send(at, src, dst, bytes, tag)` and come back as [`Completion`]s from `advance`.
//! Collectives and workloads see only this interface.
//!
//! * [`AnalyticModel`]: alpha-beta per transfer (latency of the path plus bytes over its slowest
//!   link), every transfer alone on the network. Instant; a cross-check.
//! * [`FlowModel`]: every transfer is a flow over its routed path (split over equal-cost paths
//!   where the routing offers several); active flows share each directed link max-min fairly,
//!   recomputed whenever a flow starts or drains; each endpoint's injection and ejection are
//!   links too (interfaces x link bandwidth). Congestion-aware.
//!
//! Both add packet overheads the same way ([`Packetization`]): a transfer of `b` bytes puts
//! `b + ceil(b / payload) x header` bytes on the wire.
//!
//! An all-to-all may also be handed to a model whole ([`NetworkModel::exchange`]): the flow
//! model runs it by classes of translates on a torus whose translations carry every transfer
//! onto another ([`Translations`]), holding per class what it would hold per transfer.
//!
//! Architecture invariant: a network model knows topology and routing but nothing of what the
//! bytes mean; it never reports a transfer faster than its path's slowest link allows.

mod analytic;
mod flow;
mod graph;
mod symmetry;

pub use analytic::AnalyticModel;
pub use flow::{FlowMode, FlowModel};
pub use graph::{LinkId, LinkTable, paths};
pub use symmetry::Translations;

use podsim_topology::NodeId;
use podsim_units::{Bytes, SimDuration, SimTime};

/// A hasher for small integer keys (FxHash's mixing), for maps looked up once per transfer.
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher(u64);
impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// A hash map with [`FastHasher`].
pub type FastMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;

/// A transfer's handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TransferId(pub u64);

/// A finished transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// Its handle.
    pub id: TransferId,
    /// The tag given to `send`.
    pub tag: u64,
    /// Where it came from.
    pub src: NodeId,
    /// Where it went.
    pub dst: NodeId,
    /// Payload bytes.
    pub bytes: Bytes,
    /// When it was sent.
    pub start: SimTime,
    /// When its last byte arrived.
    pub end: SimTime,
}

/// Why a transfer cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// An endpoint does not exist.
    #[error("node {0} is not an endpoint of this network")]
    NoSuchNode(NodeId),
    /// No route joins the two endpoints.
    #[error("no route from {0} to {1}")]
    NoRoute(NodeId, NodeId),
    /// A byte count of the transfer does not fit in 64 bits.
    #[error("{what} of a {bytes}-byte transfer overflows 64 bits")]
    TooLarge {
        /// Which count.
        what: &'static str,
        /// The transfer's payload bytes.
        bytes: u64,
    },
    /// The run would take a detailed model longer than it allows: the packet level moves every
    /// flit, at a few million flit-hops per CPU-second.
    #[error(
        "the packet level would simulate {flits} flits, more than its limit of {limit} \
         (tens of minutes to hours of simulation); use the flow or analytic model at this size"
    )]
    TooMuchWork {
        /// Flits asked for so far in this run.
        flits: u128,
        /// The most the model simulates.
        limit: u64,
    },
    /// The send time is before the model's current time.
    #[error("send at {at} is before the current time {now}")]
    InThePast {
        /// Requested time.
        at: SimTime,
        /// The model's time.
        now: SimTime,
    },
}

/// Packet overheads: each packet carries at most `payload` bytes and adds `header` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packetization {
    /// Maximum payload bytes per packet.
    pub payload: u64,
    /// Header (and trailer) bytes per packet.
    pub header: u64,
}

impl Packetization {
    /// No overhead: the wire carries exactly the payload.
    pub const NONE: Packetization = Packetization {
        payload: u64::MAX,
        header: 0,
    };

    /// Bytes on the wire for `bytes` of payload (saturating; see [`Packetization::checked_wire_bytes`]).
    pub fn wire_bytes(self, bytes: u64) -> u64 {
        self.checked_wire_bytes(bytes).unwrap_or(u64::MAX)
    }

    /// Bytes on the wire for `bytes` of payload, or None when they overflow 64 bits.
    pub fn checked_wire_bytes(self, bytes: u64) -> Option<u64> {
        if bytes == 0 || self.header == 0 {
            return Some(bytes);
        }
        bytes
            .div_ceil(self.payload.max(1))
            .checked_mul(self.header)?
            .checked_add(bytes)
    }

    /// The wire bytes of `bytes` of payload over `hops` links, checked.
    pub fn checked_on_wire(self, bytes: u64, hops: u64) -> Result<u64, NetError> {
        self.checked_wire_bytes(bytes)
            .and_then(|w| w.checked_mul(hops))
            .ok_or(NetError::TooLarge {
                what: "the bytes on the wire",
                bytes,
            })
    }

    /// Payload share of the wire for large transfers: payload / (payload + header).
    pub fn efficiency(self) -> f64 {
        if self.header == 0 {
            1.0
        } else {
            self.payload as f64 / (self.payload + self.header) as f64
        }
    }
}

impl NetReport {
    /// Count a sent transfer of `bytes` payload and `on_wire` link-bytes, refusing (and
    /// counting nothing) when a total would overflow 64 bits.
    pub fn count_send(&mut self, bytes: u64, on_wire: u64) -> Result<(), NetError> {
        let sent = self.bytes_sent.checked_add(bytes);
        let wire = self.bytes_on_wire.checked_add(on_wire);
        match (sent, wire) {
            (Some(s), Some(w)) => {
                self.bytes_sent = s;
                self.bytes_on_wire = w;
                Ok(())
            }
            _ => Err(NetError::TooLarge {
                what: "the run's total bytes",
                bytes,
            }),
        }
    }
}

/// What a model measured.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NetReport {
    /// Payload bytes accepted by `send`.
    pub bytes_sent: u64,
    /// Payload bytes of completed transfers.
    pub bytes_delivered: u64,
    /// Wire bytes times links crossed, over all transfers sent.
    pub bytes_on_wire: u64,
    /// The highest load of any link, as a fraction of its bandwidth, at any time.
    pub max_link_utilization: f64,
}

/// What one directed link carried over a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkLoad {
    /// The node it leaves.
    pub from: NodeId,
    /// The node it enters.
    pub to: NodeId,
    /// Wire bytes it carried (payload plus packet overheads), over the whole run.
    pub wire_bytes: f64,
    /// Its bandwidth, bytes per second in this direction.
    pub bandwidth_bytes_per_s: f64,
}

/// A uniform exchange (an all-to-all): at `at`, every node of `nodes` sends `bytes` to every
/// other. Sent one by one, the transfers go in rank order: rank i (node `nodes[i]`) to rank
/// `(i + k) mod n` for k = 1, ..., n - 1, then rank i + 1, and so on; the transfer in place
/// `p = i (n - 1) + k - 1` of that order gets the p-th id from the model and the tag `tag + p`.
#[derive(Debug, Clone, Copy)]
pub struct Exchange<'a> {
    /// When every transfer is sent.
    pub at: SimTime,
    /// The ranks' nodes.
    pub nodes: &'a [NodeId],
    /// Payload bytes of each transfer.
    pub bytes: Bytes,
    /// The tag of the first transfer (the others follow in order).
    pub tag: u64,
}

impl Exchange<'_> {
    /// The ranks (source, destination) of the transfer in place `p`.
    pub fn ranks_of(&self, p: u64) -> (usize, usize) {
        let n = self.nodes.len() as u64;
        let (i, k) = (p / (n - 1), p % (n - 1) + 1);
        (i as usize, ((i + k) % n) as usize)
    }

    /// Transfers in all: n (n - 1).
    pub fn transfers(&self) -> u64 {
        let n = self.nodes.len() as u64;
        n * n.saturating_sub(1)
    }
}

/// An endpoint-facing network model.
pub trait NetworkModel {
    /// Start moving `bytes` from `src` to `dst` at `at` (not before the model's current time).
    fn send(
        &mut self,
        at: SimTime,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
        tag: u64,
    ) -> Result<TransferId, NetError>;
    /// The time of the model's next event, if anything is pending: no transfer completes
    /// before it (advancing to it may complete none yet; ask again).
    fn next_completion(&mut self) -> Option<SimTime>;
    /// Move time forward to `until`; every transfer complete by then, in (end, id) order.
    fn advance(&mut self, until: SimTime) -> Vec<Completion>;
    /// [`NetworkModel::advance`], appending the completions to `out` (a caller that advances
    /// millions of times reuses one buffer).
    fn advance_into(&mut self, until: SimTime, out: &mut Vec<Completion>) {
        out.extend(self.advance(until));
    }
    /// What was measured so far.
    fn report(&self) -> NetReport;
    /// The model's name for reports.
    fn name(&self) -> &'static str;
    /// Why the model stopped moving transfers, if it did (a packet-level deadlock, say).
    fn failure(&self) -> Option<String> {
        None
    }
    /// What each directed link of the network carried so far, for models that route
    /// transfers over links (the flow model); empty for those that do not (the analytic
    /// model sees no links).
    fn carried(&self) -> Vec<LinkLoad> {
        Vec::new()
    }
    /// Run the whole exchange `x` in one call, when the model can do it faster than transfer
    /// by transfer with the same results (the flow model on a vertex-transitive torus, see
    /// [`Translations`]): `each` is called once with every transfer's completion, in no
    /// particular order, and the model is left as if the transfers had been sent one by one
    /// and the model advanced to the last arrival. `None` when the model does not (it changed
    /// nothing; the caller sends the transfers one by one). Only an idle model takes one.
    fn exchange(
        &mut self,
        x: &Exchange<'_>,
        each: &mut dyn FnMut(&Completion),
    ) -> Option<Result<(), NetError>> {
        let _ = (x, each);
        None
    }
    /// On a model where a transfer takes the same time whatever else is in flight (the
    /// analytic model): when a transfer sent at `at` from `src` to `dst` would end and the
    /// wire bytes it would put on links (payload plus packet overheads, times links crossed),
    /// exactly as [`NetworkModel::send`] would make them, without sending it (nothing is
    /// counted; [`NetworkModel::settle`] counts such transfers afterwards). `None` when the
    /// model's transfers interact (the flow and packet models), when the model is not idle
    /// (a transfer is in flight), when it records completions, or when `send` would refuse
    /// the transfer: the caller then sends it.
    fn alone(
        &mut self,
        at: SimTime,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
    ) -> Option<(SimTime, u64)> {
        let _ = (at, src, dst, bytes);
        None
    }
    /// Count transfers a caller timed with [`NetworkModel::alone`] as if each had been sent
    /// and delivered, and move the model's time to `s.until` (the last of their ends): the
    /// model is then as `send` and `advance` would have left it. `false`, changing nothing,
    /// when a count would overflow 64 bits (where `send` would have refused one of them) or
    /// the model does not take such transfers.
    fn settle(&mut self, s: Settled) -> bool {
        let _ = s;
        false
    }
}

/// Transfers run on a contention-free model without being sent ([`NetworkModel::alone`]),
/// for [`NetworkModel::settle`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// How many.
    pub transfers: u64,
    /// Their payload bytes, summed.
    pub bytes: u128,
    /// Their wire bytes times links crossed, summed.
    pub on_wire: u128,
    /// The last of their ends.
    pub until: SimTime,
}

/// The checks every model makes before accepting a send: not in the past, both ends exist
/// (ids below `nodes`).
pub fn check_send(
    now: SimTime,
    nodes: u64,
    at: SimTime,
    src: NodeId,
    dst: NodeId,
) -> Result<(), NetError> {
    if at < now {
        return Err(NetError::InThePast { at, now });
    }
    match [src, dst].into_iter().find(|n| n.0 >= nodes) {
        Some(n) => Err(NetError::NoSuchNode(n)),
        None => Ok(()),
    }
}

/// Time in picoseconds to move `bytes` at `rate` bytes/s, rounded up (a result within 10⁻³ ps of
/// a whole number is taken as that number, so exact cases stay exact despite the flow model's
/// 36-bit rates).
pub(crate) fn drain_ps(bytes: f64, rate: f64) -> u64 {
    if bytes <= 0.0 {
        return 0;
    }
    let t = bytes * 1e12 / rate;
    let r = t.round();
    if (t - r).abs() < 1e-3 {
        r as u64
    } else {
        t.ceil() as u64
    }
}

#[cfg(test)]
mod tests;

/// The completions an [`Endpoints`] model recorded: the first `limit` kept, the rest counted.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// The most completions kept.
    pub limit: usize,
    /// Completions in the order the model handed them back.
    pub kept: Vec<Completion>,
    /// Completions past the limit.
    pub cut: u64,
}

/// A shared handle on a [`Recording`] (the run that fills it owns the model).
pub type RecordingHandle = std::rc::Rc<std::cell::RefCell<Recording>>;

/// A model with what the machine adds around it: an endpoint overhead per transfer (the
/// software, descriptor and NIC time before it enters the network: each send starts that much
/// later on the model underneath, and completions report the time the caller sent at), and,
/// for traces, a record of every completion it hands back.
pub struct Endpoints {
    inner: Box<dyn NetworkModel>,
    overhead: SimDuration,
    log: Option<RecordingHandle>,
}

impl Endpoints {
    /// `inner`, with nothing added yet.
    pub fn new(inner: Box<dyn NetworkModel>) -> Self {
        Endpoints {
            inner,
            overhead: SimDuration::ZERO,
            log: None,
        }
    }

    /// Add `overhead` to every transfer.
    pub fn with_overhead(mut self, overhead: SimDuration) -> Self {
        self.overhead = overhead;
        self
    }

    /// Record completions into `log`.
    pub fn recording(mut self, log: RecordingHandle) -> Self {
        self.log = Some(log);
        self
    }
}

impl NetworkModel for Endpoints {
    fn send(
        &mut self,
        at: SimTime,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
        tag: u64,
    ) -> Result<TransferId, NetError> {
        let start = SimTime::from_ps(at.as_ps().saturating_add(self.overhead.as_ps()));
        self.inner.send(start, src, dst, bytes, tag)
    }
    fn next_completion(&mut self) -> Option<SimTime> {
        self.inner.next_completion()
    }
    fn advance(&mut self, until: SimTime) -> Vec<Completion> {
        let mut out = Vec::new();
        self.advance_into(until, &mut out);
        out
    }
    fn advance_into(&mut self, until: SimTime, out: &mut Vec<Completion>) {
        let from = out.len();
        self.inner.advance_into(until, out);
        let new = &mut out[from..];
        for c in new.iter_mut() {
            c.start = SimTime::from_ps(c.start.as_ps().saturating_sub(self.overhead.as_ps()));
        }
        if let Some(log) = &self.log {
            let mut log = log.borrow_mut();
            let room = log.limit.saturating_sub(log.kept.len());
            log.kept.extend(new.iter().take(room).copied());
            log.cut += new.len().saturating_sub(room) as u64;
        }
    }
    fn report(&self) -> NetReport {
        self.inner.report()
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn failure(&self) -> Option<String> {
        self.inner.failure()
    }
    fn carried(&self) -> Vec<LinkLoad> {
        self.inner.carried()
    }
    fn alone(
        &mut self,
        at: SimTime,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
    ) -> Option<(SimTime, u64)> {
        // A recording keeps every completion: such runs send.
        if self.log.is_some() {
            return None;
        }
        let start = SimTime::from_ps(at.as_ps().saturating_add(self.overhead.as_ps()));
        self.inner.alone(start, src, dst, bytes)
    }
    fn settle(&mut self, s: Settled) -> bool {
        self.log.is_none() && self.inner.settle(s)
    }
    fn exchange(
        &mut self,
        x: &Exchange<'_>,
        each: &mut dyn FnMut(&Completion),
    ) -> Option<Result<(), NetError>> {
        // A recording keeps completions in the order `advance` hands them back, which an
        // exchange does not follow: such runs go transfer by transfer.
        if self.log.is_some() {
            return None;
        }
        let overhead = self.overhead.as_ps();
        let shifted = Exchange {
            at: SimTime::from_ps(x.at.as_ps().saturating_add(overhead)),
            ..*x
        };
        self.inner.exchange(&shifted, &mut |c| {
            let mut c = *c;
            c.start = SimTime::from_ps(c.start.as_ps().saturating_sub(overhead));
            each(&c);
        })
    }
}
