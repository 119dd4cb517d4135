//! The analytic (alpha-beta) model: each transfer alone on the network.

use std::collections::BTreeMap;

use podsim_topology::{Network, NodeId};
use podsim_units::{Bytes, SimDuration, SimTime};

use crate::{
    Completion, LinkId, LinkTable, NetError, NetReport, NetworkModel, Packetization, Settled,
    TransferId, check_send, drain_ps, paths,
};

/// Alpha-beta costs: a transfer takes the latency of its path plus its wire bytes over the
/// bandwidth of its paths (spread evenly over equal-cost paths when it is split: their sum
/// where they share no link, less where they do; `AnalyticModel::route`). It
/// ignores every other transfer, so it is optimistic under contention; the flow model is not.
pub struct AnalyticModel {
    net: Network,
    links: LinkTable,
    packets: Packetization,
    /// The transfers in flight by the time they end, each time's in the order they were sent
    /// (so in id order: a transfer ends before every later one ending at the same time).
    /// [`NetworkModel::advance`] releases whole times, so a time's list is never split; a
    /// collective's step, whose transfers end together, is one entry.
    pending: BTreeMap<SimTime, Vec<Completion>>,
    /// The id of the next transfer.
    next_id: u64,
    now: SimTime,
    report: NetReport,
    // Per (src, dst): (latency ps, bandwidth of its paths, hops of its first path), so a pair
    // a collective uses again and again is routed once (at most ROUTE_CACHE_PAIRS pairs).
    routes: crate::FastMap<(u64, u64), (u64, f64, u64)>,
    // Per source: its last transfer's (destination, payload bytes) and what that transfer
    // cost (time in ps, wire bytes over its links), so that a ring, sending the same bytes to
    // the same neighbour step after step, works each out once.
    lanes: Vec<Lane>,
    // The network's nodes, and emptied lists of completions for reuse.
    nodes: u64,
    spare: Vec<Vec<Completion>>,
    // What a chip's interfaces can inject together, bytes/s (worked out once: on a machine
    // file the network's link is found by a scan of every link).
    nic: f64,
}

/// A source's last transfer and its cost (see `AnalyticModel::lanes`).
#[derive(Debug, Clone, Copy)]
struct Lane {
    dst: u64,
    bytes: u64,
    time_ps: u64,
    on_wire: u64,
}

/// The most source-destination pairs the analytic model keeps routed (about 40 bytes each).
const ROUTE_CACHE_PAIRS: usize = 1 << 20;

impl AnalyticModel {
    /// A model of `net` with packet overheads `packets`.
    pub fn new(net: Network, packets: Packetization) -> Self {
        let links = LinkTable::new(&net);
        let net_nodes = net.node_count();
        let nic = f64::from(net.interfaces()) * net.link().bandwidth.bytes_per_s() as f64;
        AnalyticModel {
            nic,
            net,
            links,
            packets,
            pending: BTreeMap::new(),
            next_id: 0,
            now: SimTime::ZERO,
            report: NetReport::default(),
            routes: crate::FastMap::default(),
            lanes: Vec::new(),
            nodes: net_nodes,
            spare: Vec::new(),
        }
    }

    /// A pair's route: (latency ps, the bandwidth of its paths together, hops of the first
    /// path). A transfer spreads evenly over its k paths (as the flow model's equal-cost
    /// sub-flows do), so a link that c of the paths cross carries c/k of it and the paths
    /// together move bytes at min over their links of (link bandwidth x k / c): the sum of
    /// the paths' rates where they share no link, one link's rate where they all leave the
    /// source by it (a NIC, a host's port on a fat tree).
    fn route(&self, src: NodeId, dst: NodeId) -> Result<(u64, f64, u64), NetError> {
        let ps = paths(&self.net, &self.links, src, dst);
        if ps.is_empty() || ps.iter().any(|p| p.is_empty()) {
            return Err(NetError::NoRoute(src, dst));
        }
        let latency = ps[0]
            .iter()
            .map(|&l| self.links.spec(l).latency.as_ps())
            .sum::<u64>();
        let bw = if ps.len() == 1 {
            ps[0]
                .iter()
                .map(|&l| self.links.spec(l).bandwidth.bytes_per_s())
                .min()
                .unwrap_or(u64::MAX) as f64
        } else {
            let mut crossed: Vec<LinkId> = ps.iter().flatten().copied().collect();
            crossed.sort_unstable();
            let k = ps.len() as f64;
            crossed
                .chunk_by(|a, b| a == b)
                .map(|c| self.links.spec(c[0]).bandwidth.bytes_per_s() as f64 * k / c.len() as f64)
                .fold(f64::INFINITY, f64::min)
        };
        Ok((latency, bw, ps[0].len() as u64))
    }

    /// The time of a lone transfer over a route (`route`'s latency and bandwidth).
    fn time_over(&self, (latency, bw, _): (u64, f64, u64), bytes: Bytes) -> SimDuration {
        let nic = self.nic;
        let wire = self.packets.wire_bytes(bytes.0) as f64;
        // Saturating: a time past 64 bits of picoseconds is the end of time (the collective
        // refuses it), not a wrapped small one.
        SimDuration::from_ps(latency.saturating_add(drain_ps(wire, bw.min(nic))))
    }

    /// What a transfer from `src` to `dst` of `bytes` costs: its time and its wire bytes over
    /// its links (a pair routed once; a source's last pair and size remembered).
    #[inline]
    fn cost(
        &mut self,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
    ) -> Result<(SimDuration, u64), NetError> {
        let s = src.0 as usize;
        if let Some(l) = self.lanes.get(s)
            && l.dst == dst.0
            && l.bytes == bytes.0
        {
            return Ok((SimDuration::from_ps(l.time_ps), l.on_wire));
        }
        self.cost_anew(src, dst, bytes)
    }

    /// [`AnalyticModel::cost`] of a pair or size that is not its source's last.
    #[inline(never)]
    fn cost_anew(
        &mut self,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
    ) -> Result<(SimDuration, u64), NetError> {
        let s = src.0 as usize;
        let (t, hops) = if src == dst {
            (SimDuration::ZERO, 0)
        } else {
            let r = match self.routes.get(&(src.0, dst.0)) {
                Some(&r) => r,
                None => {
                    let r = self.route(src, dst)?;
                    if self.routes.len() < ROUTE_CACHE_PAIRS {
                        self.routes.insert((src.0, dst.0), r);
                    }
                    r
                }
            };
            (self.time_over(r, bytes), r.2)
        };
        let on_wire = self.packets.checked_on_wire(bytes.0, hops)?;
        if self.lanes.is_empty() {
            let none = Lane {
                dst: u64::MAX,
                bytes: 0,
                time_ps: 0,
                on_wire: 0,
            };
            self.lanes = vec![none; self.net.node_count() as usize];
        }
        self.lanes[s] = Lane {
            dst: dst.0,
            bytes: bytes.0,
            time_ps: t.as_ps(),
            on_wire,
        };
        Ok((t, on_wire))
    }

    /// The time a lone transfer of `bytes` from `src` to `dst` takes.
    pub fn lone_time(
        &self,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
    ) -> Result<SimDuration, NetError> {
        if src == dst {
            return Ok(SimDuration::ZERO);
        }
        Ok(self.time_over(self.route(src, dst)?, bytes))
    }
}

impl NetworkModel for AnalyticModel {
    fn send(
        &mut self,
        at: SimTime,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
        tag: u64,
    ) -> Result<TransferId, NetError> {
        check_send(self.now, self.nodes, at, src, dst)?;
        let (t, on_wire) = self.cost(src, dst, bytes)?;
        let id = TransferId(self.next_id);
        let end = at + t;
        self.report.count_send(bytes.0, on_wire)?;
        self.next_id += 1;
        let spare = &mut self.spare;
        self.pending
            .entry(end)
            .or_insert_with(|| spare.pop().unwrap_or_default())
            .push(Completion {
                id,
                tag,
                src,
                dst,
                bytes,
                start: at,
                end,
            });
        Ok(id)
    }

    fn alone(
        &mut self,
        at: SimTime,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
    ) -> Option<(SimTime, u64)> {
        if !self.pending.is_empty() {
            return None;
        }
        check_send(self.now, self.nodes, at, src, dst).ok()?;
        let (t, on_wire) = self.cost(src, dst, bytes).ok()?;
        Some((at + t, on_wire))
    }

    fn settle(&mut self, s: Settled) -> bool {
        // The sums `send` and `advance` would have reached, each checked as `count_send`
        // checks them transfer by transfer (a sum of non-negative terms overflows at the end
        // if anywhere).
        let fits = |a: u64, b: u128| u64::try_from(u128::from(a) + b).ok();
        let r = &self.report;
        let (Some(sent), Some(wire), Some(delivered), Some(next)) = (
            fits(r.bytes_sent, s.bytes),
            fits(r.bytes_on_wire, s.on_wire),
            fits(r.bytes_delivered, s.bytes),
            self.next_id.checked_add(s.transfers),
        ) else {
            return false;
        };
        if !self.pending.is_empty() {
            return false;
        }
        self.report.bytes_sent = sent;
        self.report.bytes_on_wire = wire;
        self.report.bytes_delivered = delivered;
        self.next_id = next;
        self.now = self.now.max(s.until);
        true
    }

    fn next_completion(&mut self) -> Option<SimTime> {
        self.pending.first_key_value().map(|(&t, _)| t)
    }

    fn advance(&mut self, until: SimTime) -> Vec<Completion> {
        let mut out = Vec::new();
        self.advance_into(until, &mut out);
        out
    }

    fn advance_into(&mut self, until: SimTime, out: &mut Vec<Completion>) {
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() > until {
                break;
            }
            let mut done = entry.remove();
            self.report.bytes_delivered += done.iter().map(|c| c.bytes.0).sum::<u64>();
            if out.is_empty() {
                // The caller's emptied buffer is kept for a later instant's list.
                std::mem::swap(out, &mut done);
            } else {
                out.append(&mut done);
            }
            if done.capacity() > 0 && self.spare.len() < 64 {
                self.spare.push(done);
            }
        }
        self.now = self.now.max(until);
    }

    fn report(&self) -> NetReport {
        // Each transfer alone would run its slowest link at full rate.
        NetReport {
            max_link_utilization: if self.next_id == 0 { 0.0 } else { 1.0 },
            ..self.report
        }
    }

    fn name(&self) -> &'static str {
        "analytic"
    }
}
