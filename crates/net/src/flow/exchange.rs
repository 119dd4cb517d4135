//! The flow model's exchanges by translation classes.
//!
//! On a torus whose translations carry every flow of an all-to-all onto another
//! ([`Translations`]), the flow from s to s + δ is the flow from 0 to δ moved by s: the same
//! ports in the same order, links of the same capacity, the same bytes, sent at the same
//! instant. Progressive filling treats translates alike (each step takes the link with the
//! smallest share, and the n links of one class have equal shares, counts and capacities), so
//! every flow of a class δ gets one rate, drains at one instant and arrives one path latency
//! later. The model therefore runs progressive filling over the n - 1 classes, with one
//! representative link per port class (and one injection and one ejection link): a link of
//! port class p carries, of every flow class δ, as many flows as δ's path takes port p
//! (`mult`), and subtracts a frozen flow's share that many times, one subtraction at a time
//! as each flow would. Shares are rounded (36 bits) as flow by flow; rates are updated, drain
//! times worked out and drains taken exactly as [`FlowModel::recompute`] and
//! [`FlowModel::drain_until`] do for each flow.
//!
//! Flow by flow, the links of a class are filled one after another, and a link filled later
//! can see its share rounded one step (2⁻³⁶ relative) higher after its neighbours' flows froze
//! at the class's share; the classes give each class the share its first link gets. The times
//! agree with the flow-by-flow reference to within 10⁻⁹ relative (tested over random tori,
//! rings and twisted tori), and are bit for bit the same where the shares come out exact.

use podsim_topology::NodeId;
use podsim_units::{SimDuration, SimTime};

use super::{FlowMode, FlowModel, quantize};
use crate::{Completion, Exchange, NetError, TransferId, Translations, drain_ps};

/// One class of translates: the flows from every s to s + `node`.
#[derive(Debug, Clone)]
struct Class {
    node: NodeId,
    // Its link classes and how many links of each its path crosses, in `ExchangeRun::uses`.
    uses: (u32, u32),
    hops: u64,
    latency: u64,
    remaining: f64,
    rate: f64,
    since: SimTime,
    finish: SimTime,
    end: SimTime,
    live: bool,
}

impl FlowModel {
    /// [`crate::NetworkModel::exchange`] for the flow model: by translation classes, when the
    /// model is idle, computes in grouped mode, the network has [`Translations`] and the
    /// exchange covers every node.
    pub(super) fn exchange_by_classes(
        &mut self,
        x: &Exchange<'_>,
        each: &mut dyn FnMut(&Completion),
    ) -> Option<Result<(), NetError>> {
        let n = self.lanes.len();
        let idle = self.active.is_empty()
            && self.arrivals.is_empty()
            && self.g.groups.is_empty()
            && self.g.arrivals.is_empty();
        if self.mode == FlowMode::FlowByFlow
            || !idle
            || x.nodes.len() != n
            || n < 2
            || self.shortcut != podsim_routing::Shortcut::Never
        {
            return None;
        }
        // Every node once: rank of each node.
        let mut rank = vec![u32::MAX; n];
        for (r, &v) in x.nodes.iter().enumerate() {
            let slot = rank.get_mut(v.0 as usize)?;
            if *slot != u32::MAX {
                return None;
            }
            *slot = r as u32;
        }
        let t = Translations::of(&self.net, &self.links)?;
        let (inj, ej) = (self.inject(NodeId(0)), self.eject(NodeId(0)));
        let uniform = (0..n as u64).all(|u| {
            self.capacity[self.inject(NodeId(u))] == self.capacity[inj]
                && self.capacity[self.eject(NodeId(u))] == self.capacity[ej]
        });
        if !uniform {
            return None;
        }
        let ports = t.ports();
        // Link classes: the ports, then injection and ejection.
        let (c_inj, c_ej) = (ports, ports + 1);
        let mut capacity = vec![0.0; ports + 2];
        for (p, c) in capacity.iter_mut().enumerate().take(ports) {
            *c = self.capacity[self.links.out_link(NodeId(0), p)?];
        }
        capacity[c_inj] = self.capacity[inj];
        capacity[c_ej] = self.capacity[ej];
        // Each class's path from node 0, as port classes.
        let mut classes: Vec<Class> = Vec::with_capacity(n - 1);
        let mut uses: Vec<(u32, u32)> = Vec::new();
        let mut ports_of: Vec<Vec<usize>> = Vec::with_capacity(n - 1);
        for v in 1..n as u64 {
            let delta = NodeId(v);
            let route = self.class_route(&t, NodeId(0), delta)?;
            let start = uses.len() as u32;
            for &p in &route {
                match uses[start as usize..].iter_mut().find(|u| u.0 == p as u32) {
                    Some(u) => u.1 += 1,
                    None => uses.push((p as u32, 1)),
                }
            }
            uses.push((c_inj as u32, 1));
            uses.push((c_ej as u32, 1));
            let latency = route.len() as u64 * self.links.spec(0).latency.as_ps();
            classes.push(Class {
                node: delta,
                uses: (start, uses.len() as u32),
                hops: route.len() as u64,
                latency,
                remaining: 0.0,
                rate: 0.0,
                since: x.at,
                finish: x.at,
                end: x.at,
                live: false,
            });
            ports_of.push(route);
        }
        // Routes commute with translation: checked again here from a few sources (each
        // port's neighbour of node 0 and the last node), every class.
        let mut sample: Vec<NodeId> = (0..ports)
            .filter_map(|p| self.links.out_link(NodeId(0), p))
            .map(|l| self.links.target(l))
            .collect();
        sample.push(NodeId(n as u64 - 1));
        sample.sort_unstable();
        sample.dedup();
        for &s in &sample {
            for (k, c) in classes.iter().enumerate() {
                if self.class_route(&t, s, t.add(s, c.node))? != ports_of[k] {
                    return None;
                }
            }
        }
        drop(ports_of);

        // What the sends would count: all checked before anything changes.
        let bytes = x.bytes.0;
        if x.at < self.now {
            return Some(Err(NetError::InThePast {
                at: x.at,
                now: self.now,
            }));
        }
        let at = x.at;
        let Some(wire) = self.packets.checked_wire_bytes(bytes) else {
            return Some(Err(NetError::TooLarge {
                what: "the bytes on the wire",
                bytes,
            }));
        };
        let share = wire as f64;
        let count = x.transfers();
        let mut on_wire: u128 = 0;
        for c in &classes {
            let w = (share * c.hops as f64).round();
            if w >= u64::MAX as f64 {
                return Some(Err(NetError::TooLarge {
                    what: "the bytes on the wire",
                    bytes,
                }));
            }
            on_wire += u128::from(w as u64) * n as u128;
        }
        let sent = u128::from(self.report.bytes_sent) + u128::from(bytes) * u128::from(count);
        let wired = u128::from(self.report.bytes_on_wire) + on_wire;
        if sent > u128::from(u64::MAX) || wired > u128::from(u64::MAX) {
            return Some(Err(NetError::TooLarge {
                what: "the run's total bytes",
                bytes,
            }));
        }
        // The peak load of flows sent before, not yet counted (as the next send would).
        if self.now_in == FlowMode::Grouped {
            self.g_recompute();
        } else {
            self.recompute();
        }
        self.report.bytes_sent = sent as u64;
        self.report.bytes_on_wire = wired as u64;

        // Per port class: flows on each of its links; the wire bytes each link is given.
        let mut per_link = vec![0u64; ports + 2];
        for c in &classes {
            for &(p, m) in &uses[c.uses.0 as usize..c.uses.1 as usize] {
                per_link[p as usize] += u64::from(m);
            }
        }
        if wire > 0 {
            for (p, &flows) in per_link.iter().enumerate().take(ports) {
                for u in 0..n as u64 {
                    let Some(l) = self.links.out_link(NodeId(u), p) else {
                        continue;
                    };
                    self.carried[l] = add_times(self.carried[l], share, flows);
                }
            }
        }

        // Progressive filling over the classes, drain by drain.
        let mut now = at;
        let mut peak = 0.0f64;
        if wire > 0 {
            for c in &mut classes {
                c.remaining = share;
                c.live = true;
            }
            // Per link class, the classes crossing it.
            let mut on: Vec<Vec<u32>> = vec![Vec::new(); ports + 2];
            for (k, c) in classes.iter().enumerate() {
                for &(p, _) in &uses[c.uses.0 as usize..c.uses.1 as usize] {
                    on[p as usize].push(k as u32);
                }
            }
            let mut fill = Filling {
                capacity,
                cap: vec![0.0; ports + 2],
                count: vec![0; ports + 2],
                frozen: vec![false; classes.len()],
                rates: vec![0.0; classes.len()],
            };
            let mut live = classes.len();
            while live > 0 {
                peak = peak.max(fill.run(&classes, &uses, &on));
                for (k, c) in classes.iter_mut().enumerate() {
                    if !c.live {
                        continue;
                    }
                    let fresh = fill.rates[k];
                    if c.rate != 0.0 && fresh.to_bits() == c.rate.to_bits() {
                        continue;
                    }
                    let dt = (now - c.since).as_ps() as f64 / 1e12;
                    c.remaining = (c.remaining - c.rate * dt).max(0.0);
                    c.since = now;
                    c.rate = fresh;
                    c.finish = now + SimDuration::from_ps(drain_ps(c.remaining, c.rate));
                }
                let Some(d) = classes.iter().filter(|c| c.live).map(|c| c.finish).min() else {
                    break;
                };
                now = d;
                for c in classes.iter_mut().filter(|c| c.live && c.finish <= d) {
                    c.live = false;
                    c.remaining = 0.0;
                    c.since = d;
                    c.end = d + SimDuration::from_ps(c.latency);
                    live -= 1;
                }
            }
        } else {
            for c in &mut classes {
                c.end = at + SimDuration::from_ps(c.latency);
            }
        }
        self.report.max_link_utilization = self.report.max_link_utilization.max(peak);

        // Every transfer's completion: from each node s, class δ goes to s + δ.
        let base = self.next_id;
        let m = n as u64;
        let mut last = now;
        for s in 0..m {
            let src = NodeId(s);
            let rs = u64::from(rank[s as usize]);
            for c in &classes {
                let dst = t.add(src, c.node);
                let rd = u64::from(rank[dst.0 as usize]);
                let place = rs * (m - 1) + (rd + m - rs) % m - 1;
                last = last.max(c.end);
                each(&Completion {
                    id: TransferId(base + place),
                    tag: x.tag.wrapping_add(place),
                    src: x.nodes[rs as usize],
                    dst,
                    bytes: x.bytes,
                    start: at,
                    end: c.end,
                });
            }
        }
        self.next_id += count;
        self.report.bytes_delivered = self.report.bytes_delivered.wrapping_add(bytes * count);
        self.now = self.now.max(last);
        Some(Ok(()))
    }

    /// The route from `src` to `dst` as the ports its hops leave by, as a send would route it
    /// (the first route; `None` when there is none, or several that would each be a flow).
    fn class_route(&self, t: &Translations, src: NodeId, dst: NodeId) -> Option<Vec<usize>> {
        let routes = self.routes(src, dst);
        if routes.is_empty() || (self.ecmp && routes.len() > 1) {
            return None;
        }
        let mut at = src;
        let mut out = Vec::with_capacity(routes[0].len());
        for &l in &routes[0] {
            out.push(t.class(&self.links, at, l)?);
            at = self.links.target(l);
        }
        (at == dst).then_some(out)
    }
}

/// `x` plus `share` added `times` times, one addition at a time as the flows would add it:
/// in one multiplication when every partial sum is a whole number below 2⁵³ (then exact).
fn add_times(x: f64, share: f64, times: u64) -> f64 {
    const EXACT: f64 = (1u64 << 53) as f64;
    let total = share * times as f64;
    if x.fract() == 0.0 && share.fract() == 0.0 && x + total < EXACT && total < EXACT {
        return x + total;
    }
    (0..times).fold(x, |a, _| a + share)
}

/// Scratch space of progressive filling over classes.
struct Filling {
    capacity: Vec<f64>,
    cap: Vec<f64>,
    count: Vec<u32>,
    frozen: Vec<bool>,
    rates: Vec<f64>,
}

impl Filling {
    /// Max-min rates of the live classes into `rates`, as [`FlowModel::recompute`] fills
    /// their flows; the highest link load, as a fraction of capacity.
    fn run(&mut self, classes: &[Class], uses: &[(u32, u32)], on: &[Vec<u32>]) -> f64 {
        self.cap.copy_from_slice(&self.capacity);
        self.count.fill(0);
        for (k, c) in classes.iter().enumerate() {
            self.frozen[k] = !c.live;
            self.rates[k] = 0.0;
            if c.live {
                for &(p, m) in &uses[c.uses.0 as usize..c.uses.1 as usize] {
                    self.count[p as usize] += m;
                }
            }
        }
        let touched: Vec<bool> = self.count.iter().map(|&c| c > 0).collect();
        // Each link class's share, updated as it changes; the smallest (share, class) next.
        let mut key: Vec<f64> = (0..self.cap.len())
            .map(|p| self.share(p).unwrap_or(f64::INFINITY))
            .collect();
        loop {
            let mut best: Option<usize> = None;
            for p in 0..key.len() {
                if self.count[p] == 0 {
                    continue;
                }
                if best.is_none_or(|b| key[p] < key[b]) {
                    best = Some(p);
                }
            }
            let Some(b) = best else {
                break;
            };
            let share = key[b];
            let mut changed = vec![false; key.len()];
            for &k in &on[b] {
                let k = k as usize;
                if self.frozen[k] {
                    continue;
                }
                self.frozen[k] = true;
                self.rates[k] = share;
                let c = &classes[k];
                for &(p, m) in &uses[c.uses.0 as usize..c.uses.1 as usize] {
                    let p = p as usize;
                    for _ in 0..m {
                        self.cap[p] -= share;
                    }
                    self.count[p] -= m;
                    changed[p] = true;
                }
            }
            for (p, &ch) in changed.iter().enumerate() {
                if ch {
                    key[p] = self.share(p).unwrap_or(f64::INFINITY);
                }
            }
        }
        let mut peak = 0.0f64;
        for (p, &t) in touched.iter().enumerate() {
            if t {
                peak = peak.max((self.capacity[p] - self.cap[p]) / self.capacity[p]);
            }
        }
        peak
    }

    /// A link class's fair share now: capacity left over its unfrozen flows, rounded.
    fn share(&self, p: usize) -> Option<f64> {
        let n = self.count[p];
        (n > 0).then(|| quantize(self.cap[p].max(0.0) / f64::from(n)))
    }
}

#[cfg(test)]
#[path = "exchange_tests.rs"]
mod tests;
