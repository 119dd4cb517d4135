//! Communication microbenchmarks, on any network model.

use podsim_net::Packetization;
use podsim_topology::{Network, NodeId};
use podsim_units::{Bytes, SimTime};

use crate::{Algorithm, BuildModel, CollectiveError, Kind, ModelKind, Setup, measure};

/// The microbenchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Micro {
    /// One-way put of `bytes` (default 8) from endpoint 0 to its first neighbour: the time.
    PutLatency,
    /// One put of `bytes` (default 64 MiB) between the same neighbours: bytes over time.
    PutThroughput,
    /// Endpoint 0 puts `bytes` to each of its neighbours at once (as many as it has interfaces,
    /// Tofu style): total bytes over time.
    Injection,
    /// Direct all-to-all of `bytes` per endpoint: what each endpoint sends, over the time.
    AllToAll,
}

impl Micro {
    /// Every microbenchmark.
    pub const ALL: [Micro; 4] = [
        Micro::PutLatency,
        Micro::PutThroughput,
        Micro::Injection,
        Micro::AllToAll,
    ];
    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Micro::PutLatency => "put-latency",
            Micro::PutThroughput => "put-throughput",
            Micro::Injection => "injection",
            Micro::AllToAll => "all-to-all",
        }
    }
    /// Default bytes.
    pub fn default_bytes(self) -> u64 {
        match self {
            Micro::PutLatency => 8,
            Micro::PutThroughput | Micro::Injection => 64 << 20,
            Micro::AllToAll => 16 << 20,
        }
    }
}

/// A microbenchmark's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MicroResult {
    /// Elapsed simulated time, seconds.
    pub time_s: f64,
    /// Payload bytes moved per second (per endpoint for all-to-all; 0 for latency).
    pub throughput_bytes_per_s: f64,
    /// Transfers in flight at once.
    pub streams: usize,
}

/// Run `micro` with `bytes` on `net` on the model `models` builds, within `memory_limit` bytes
/// (all-to-all; the others hold a few transfers).
pub fn microbench(
    net: &Network,
    micro: Micro,
    bytes: u64,
    model: ModelKind,
    packets: Packetization,
    memory_limit: u64,
    models: &dyn BuildModel,
) -> Result<MicroResult, CollectiveError> {
    if micro == Micro::AllToAll {
        let setup = Setup {
            kind: Kind::AllToAll,
            algorithm: Algorithm::Direct,
            bytes,
            model,
            packets,
            chunk: 0,
            ecmp: true,
            memory_limit,
        };
        if net.endpoints() < 2 {
            return Err(CollectiveError::TooFewEndpoints {
                topology: net.shorthand(),
                endpoints: net.endpoints(),
            });
        }
        let m = measure(net, &setup, models)?;
        let n = m.ranks as f64;
        return Ok(MicroResult {
            time_s: m.time_s,
            throughput_bytes_per_s: bytes as f64 * (n - 1.0) / n / m.time_s,
            streams: m.ranks * (m.ranks - 1),
        });
    }
    let src = NodeId(0);
    let neighbours = nearest_endpoints(net, src);
    if neighbours.is_empty() {
        return Err(CollectiveError::NoNeighbour);
    }
    let targets: Vec<NodeId> = match micro {
        Micro::Injection => neighbours
            .iter()
            .copied()
            .take(net.interfaces() as usize)
            .collect(),
        _ => vec![neighbours[0]],
    };
    let wire = packets
        .checked_wire_bytes(bytes)
        .map_or(u128::MAX, |w| u128::from(w) * targets.len() as u128);
    let mut m = models
        .build(net, model, packets, true, wire)
        .map_err(CollectiveError::Model)?;
    for &t in &targets {
        m.send(SimTime::ZERO, src, t, Bytes(bytes), 0)?;
    }
    let mut end = SimTime::ZERO;
    while let Some(t) = m.next_completion() {
        for c in m.advance(t) {
            end = end.max(c.end);
        }
    }
    if end >= SimTime::MAX {
        return Err(CollectiveError::TimeOverflow);
    }
    let time_s = end.as_secs_f64();
    let throughput = if micro == Micro::PutLatency || time_s == 0.0 {
        0.0
    } else {
        bytes as f64 * targets.len() as f64 / time_s
    };
    Ok(MicroResult {
        time_s,
        throughput_bytes_per_s: throughput,
        streams: targets.len(),
    })
}

/// The endpoints (nodes below [`Network::endpoints`]) nearest `src` in hops, in the order the
/// network lists its links: `src`'s neighbours where they are endpoints (a torus, a Tofu
/// network), else the endpoints one switch away (a fat tree's hosts under the same edge switch),
/// and so on outwards.
fn nearest_endpoints(net: &Network, src: NodeId) -> Vec<NodeId> {
    let endpoints = net.endpoints();
    let mut seen = std::collections::HashSet::from([src]);
    let mut frontier = vec![src];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &v in &frontier {
            for n in net.neighbors(v) {
                if seen.insert(n) {
                    next.push(n);
                }
            }
        }
        let found: Vec<NodeId> = next.iter().copied().filter(|n| n.0 < endpoints).collect();
        if !found.is_empty() {
            return found;
        }
        frontier = next;
    }
    Vec::new()
}
