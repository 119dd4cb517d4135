//! The flow-level model: transfers as flows sharing links max-min fairly.
//!
//! Each transfer becomes one flow per path it is split over (equal shares of its wire bytes).
//! A flow's path is its routed directed links plus two endpoint links: the source's injection
//! and the destination's ejection, each `interfaces x link bandwidth`. Whenever the set of
//! draining flows changes, rates are recomputed by progressive filling: the link with the
//! smallest fair share (remaining capacity / unfrozen flows) fixes the rate of every unfrozen
//! flow through it, those flows' rates are taken off every link they cross, and so on. The
//! result is max-min fair, and no link is ever loaded past its bandwidth.
//!
//! A flow's last byte leaves when its bytes have drained and arrives one path latency later;
//! the transfer completes when all its flows have arrived. Simultaneous drains are handled
//! together, in one recomputation.
//!
//! Grouped mode: while every draining flow is alone on every link it crosses (its path, its
//! source's injection and its destination's ejection), each flow's max-min rate is simply the
//! smallest (rounded) capacity on its path and no flow's rate depends on another's. The model
//! then keeps flows that started at the same instant with the same wire bytes and the same
//! rate as one group: the group's remaining bytes, rate and drain time go through exactly the
//! operations each of its flows would (the same progress at the same instants, the same
//! recomputation), so every figure is bit for bit what the flow-by-flow computation gives, at
//! the cost of one flow per group instead of one per transfer (a ring step of n transfers is
//! one group). The first send that would put two draining flows on one link turns the groups
//! back into flows, in the order they were sent, and the model carries on flow by flow; it
//! goes back to groups whenever nothing is in flight. [`FlowModel::flow_by_flow`] keeps it
//! flow by flow throughout (the reference the grouped mode is tested against).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use podsim_topology::{Network, NodeId};
use podsim_units::{Bytes, SimTime};

use crate::{
    Completion, LinkId, LinkLoad, LinkTable, NetError, NetReport, NetworkModel, Packetization,
    TransferId, check_send, drain_ps, paths,
};

#[derive(Debug, Clone)]
struct Flow {
    transfer: usize,
    links: Vec<LinkId>,
    remaining: f64,
    rate: f64,
    finish: SimTime,
    latency: u64,
}

#[derive(Debug, Clone)]
struct Transfer {
    c: Completion,
    flows_left: usize,
}

/// Flows that started at one instant with equal wire bytes and equal rates, each alone on every
/// link it crosses (see the module docs, grouped mode).
#[derive(Debug, Clone)]
struct Group {
    opened: SimTime,
    remaining: f64,
    rate: f64,
    finish: SimTime,
    // Its transfers, and beside each its latency and links.
    cs: Vec<Completion>,
    members: Vec<Member>,
    // Whether the members' latencies differ.
    mixed: bool,
    // The members' links (path, injection, ejection), back to back.
    links: Vec<LinkId>,
}

/// One transfer of a group, beside its completion.
#[derive(Debug, Clone, Copy)]
struct Member {
    latency: u64,
    // Its links in the group's `links`.
    links: (u32, u32),
}

/// The state of the grouped mode.
#[derive(Debug, Default)]
struct Grouped {
    // Draining groups, oldest first.
    groups: Vec<Group>,
    // Per link (injection and ejection included): whether a draining flow crosses it.
    busy: Vec<bool>,
    // Drained transfers by the time their last byte arrives.
    arrivals: std::collections::BTreeMap<SimTime, Vec<Completion>>,
    // The highest link load of the flows sent since the last recomputation.
    peak: f64,
    // Drained groups and emptied arrival lists, kept for reuse.
    spare: Vec<Group>,
    spare_arrivals: Vec<Vec<Completion>>,
}

impl Grouped {
    /// Schedule `c` to arrive at `t`.
    fn arrive(&mut self, t: SimTime, c: Completion) {
        let spare = &mut self.spare_arrivals;
        self.arrivals
            .entry(t)
            .or_insert_with(|| spare.pop().unwrap_or_default())
            .push(c);
    }
}

/// Where a source's latest transfers went (a ring or a tree sends from each rank to the same
/// few ranks again and again): the route to that destination in the lanes' link store and
/// what a flow alone on it gets.
#[derive(Debug, Clone, Copy, Default)]
struct Lane {
    // The first route's links in `lane_links`.
    start: usize,
    len: usize,
    // Routes the transfer is split over.
    routes: usize,
    // The rate and the highest link load of a flow alone on the route.
    rate: f64,
    peak: f64,
    // The route's latency, ps.
    latency: u64,
}

/// The most links the lanes keep.
const LANE_LINKS: usize = 1 << 16;

/// One in-flight transfer of the grouped mode, turned back into a flow.
enum Unpacked {
    Draining {
        remaining: f64,
        rate: f64,
        finish: SimTime,
        links: Vec<LinkId>,
        latency: u64,
    },
    Arriving(SimTime),
}

type PairMap<V> = crate::FastMap<(u64, u64), V>;

/// f64 with a total order, for heaps (the tests' reference progressive filling).
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ord64(f64);
#[cfg(test)]
impl Eq for Ord64 {}
#[cfg(test)]
impl PartialOrd for Ord64 {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
#[cfg(test)]
impl Ord for Ord64 {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// Links keyed by their fair share, each at most once, smallest (share, link id) first, for
/// progressive filling: a link's key is replaced whenever its share changes, so the heap never
/// holds more than the links (a heap of every share ever computed holds one entry per flow
/// and link, millions in an all-to-all) and pops them in the same order.
#[derive(Debug, Default)]
struct LinkHeap {
    heap: Vec<LinkId>,
    pos: Vec<usize>,
    key: Vec<f64>,
}

const ABSENT: usize = usize::MAX;

impl LinkHeap {
    fn new(links: usize) -> Self {
        LinkHeap {
            heap: Vec::new(),
            pos: vec![ABSENT; links],
            key: vec![0.0; links],
        }
    }

    fn less(&self, a: LinkId, b: LinkId) -> bool {
        match self.key[a].total_cmp(&self.key[b]) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Greater => false,
            std::cmp::Ordering::Equal => a < b,
        }
    }

    fn place(&mut self, i: usize, l: LinkId) {
        self.heap[i] = l;
        self.pos[l] = i;
    }

    fn up(&mut self, mut i: usize) {
        let l = self.heap[i];
        while i > 0 {
            let p = (i - 1) / 2;
            if !self.less(l, self.heap[p]) {
                break;
            }
            let above = self.heap[p];
            self.place(i, above);
            i = p;
        }
        self.place(i, l);
    }

    fn down(&mut self, mut i: usize) {
        let l = self.heap[i];
        let n = self.heap.len();
        loop {
            let (a, b) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            let mut best = l;
            if a < n && self.less(self.heap[a], best) {
                m = a;
                best = self.heap[a];
            }
            if b < n && self.less(self.heap[b], best) {
                m = b;
            }
            if m == i {
                break;
            }
            let below = self.heap[m];
            self.place(i, below);
            i = m;
        }
        self.place(i, l);
    }

    /// Give `l` the key `k`, adding it when absent.
    fn set(&mut self, l: LinkId, k: f64) {
        self.key[l] = k;
        match self.pos[l] {
            ABSENT => {
                self.heap.push(l);
                let i = self.heap.len() - 1;
                self.pos[l] = i;
                self.up(i);
            }
            i => {
                self.up(i);
                self.down(self.pos[l]);
            }
        }
    }

    /// Take `l` out, if present.
    fn remove(&mut self, l: LinkId) {
        let i = self.pos[l];
        if i == ABSENT {
            return;
        }
        self.pos[l] = ABSENT;
        let last = self.heap.pop().unwrap_or(l);
        if last != l {
            self.place(i, last);
            self.up(i);
            self.down(self.pos[last]);
        }
    }

    /// The smallest (key, link), taken out.
    fn pop(&mut self) -> Option<(f64, LinkId)> {
        let &l = self.heap.first()?;
        self.remove(l);
        Some((self.key[l], l))
    }
}

/// The tests' reference heap (see [`FlowModel::recompute`]); nothing otherwise.
#[cfg(test)]
type Lazy = BinaryHeap<Reverse<(Ord64, LinkId)>>;
#[cfg(not(test))]
type Lazy = ();

/// The next link progressive filling fixes: from `heap`, or in tests from the reference heap
/// when it is in use (stale shares skipped: a link's share now is what it was pushed with).
fn next_link(
    heap: &mut LinkHeap,
    _lazy: &mut Lazy,
    _cap: &[f64],
    _count: &[u32],
) -> Option<(f64, LinkId)> {
    #[cfg(test)]
    if !_lazy.is_empty() {
        while let Some(Reverse((Ord64(share), l))) = _lazy.pop() {
            let n = _count[l];
            if n == 0 || quantize(_cap[l].max(0.0) / f64::from(n)) != share {
                continue;
            }
            return Some((share, l));
        }
        return None;
    }
    heap.pop()
}

/// The congestion-aware flow-level model (see the module docs).
pub struct FlowModel {
    net: Network,
    links: LinkTable,
    capacity: Vec<f64>,
    // Per link: its capacity rounded as a lone flow's share is, and its latency in ps.
    lone_share: Vec<f64>,
    latency_ps: Vec<u64>,
    packets: Packetization,
    ecmp: bool,
    flows: Vec<Flow>,
    active: Vec<usize>,
    transfers: Vec<Transfer>,
    arrivals: BinaryHeap<Reverse<(SimTime, usize)>>,
    now: SimTime,
    dirty: bool,
    report: NetReport,
    // Scratch space for `recompute`, indexed by link or flow.
    count: Vec<u32>,
    cap: Vec<f64>,
    row: Vec<usize>,
    slot: Vec<usize>,
    /// The active flows (by their place in `active`) on each link, in compressed rows.
    members: Vec<u32>,
    /// The active flows' links one after another, in the order of `active`, and where each
    /// flow's start (one more at the end): read as bottlenecks freeze flows, which come in no
    /// order, so one place per flow rather than the flow and then its own list.
    flat: Vec<u32>,
    starts: Vec<u32>,
    /// By place in `active`: frozen yet, and the rate it froze at.
    frozen: Vec<bool>,
    rates: Vec<f64>,
    heap: LinkHeap,
    // The links whose share changed while a bottleneck's flows froze, each once (`changed`).
    touched_now: Vec<LinkId>,
    changed: Vec<bool>,
    // Progressive filling with the heap of every share ever computed (tests' reference).
    #[cfg(test)]
    pub(crate) lazy_heap: bool,
    scratch_links: Vec<LinkId>,
    first_drain: Option<SimTime>,
    shortcut: podsim_routing::Shortcut,
    // Wire bytes each network link has been given to carry (indexed by LinkId).
    carried: Vec<f64>,
    // Routes of the first pairs seen (a ring or a tree sends over the same few pairs again and
    // again; an all-to-all's n^2 pairs each once, so at most ROUTE_CACHE_PER_NODE x nodes
    // pairs are kept), and how many links they hold in all (at most ROUTE_CACHE_LINKS).
    route_cache: PairMap<Vec<Vec<LinkId>>>,
    route_cache_links: usize,
    // The id of the next transfer (`transfers` holds the flow-by-flow mode's only).
    next_id: u64,
    // Whether the model runs in grouped mode now, whether it may, and that mode's state.
    grouped: bool,
    may_group: bool,
    g: Grouped,
    scratch_route: Vec<LinkId>,
    // Per source node: the destination of its lane and the lane, and the lanes' links.
    lanes: Vec<(u64, Lane)>,
    lane_links: Vec<LinkId>,
    // Transfers sent in grouped mode, and times the groups were turned back into flows.
    pub(crate) grouped_sends: u64,
    pub(crate) ungroupings: u64,
}

/// The most links the flow model keeps in cached routes (8 bytes each).
const ROUTE_CACHE_LINKS: usize = 8 << 20;
/// The most pairs the flow model keeps routes for, per node of the network.
const ROUTE_CACHE_PER_NODE: usize = 8;

/// Round `x` down to 36 significant bits: [`quantize_by_log`], with the work done on the bits
/// where that gives the same result for certain (a normal number well clear of the next power
/// of two, whose `log2` then floors to its exponent whatever the last bit of `log2`).
pub(crate) fn quantize(x: f64) -> f64 {
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mantissa = bits & ((1 << 52) - 1);
    if x > 0.0 && (-64..64).contains(&exponent) && mantissa < (1 << 52) - 4096 {
        // x = 1.m x 2^e: keeping 36 significant bits clears the low 52 - 35 of m.
        return f64::from_bits(bits & !((1 << 17) - 1));
    }
    quantize_by_log(x)
}

/// Round `x` down to 36 significant bits, by its `log2`.
pub(crate) fn quantize_by_log(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return x.max(0.0);
    }
    let e = x.log2().floor() as i32 - 35;
    let q = 2f64.powi(e);
    (x / q).floor() * q
}

impl FlowModel {
    /// A model of `net` with packet overheads `packets`; `ecmp` splits transfers over every
    /// equal-cost path the routing offers (otherwise the first path only).
    pub fn new(net: Network, packets: Packetization, ecmp: bool) -> Self {
        let links = LinkTable::new(&net);
        let endpoints = net.node_count() as usize;
        let nic = f64::from(net.interfaces()) * net.link().bandwidth.bytes_per_s() as f64;
        let mut capacity: Vec<f64> = (0..links.len())
            .map(|l| links.spec(l).bandwidth.bytes_per_s() as f64)
            .collect();
        // Every node injects and ejects through one NIC of `interfaces x link` bandwidth,
        // except DOJO's interface processors, hosts and switch, which reach the mesh, PCIe and
        // Ethernet through their own links only (their NIC is the sum of those links; what a
        // DIP injects comes out of its HBM, at most `DIP_HBM_BYTES_PER_S`).
        let mut inject = vec![nic; endpoints];
        let mut eject = vec![nic; endpoints];
        if let Network::Dojo(d) = &net {
            use podsim_topology::DojoNode;
            for n in d.routers()..d.node_count() {
                let id = NodeId(n);
                let sum: f64 = d
                    .links_of(id)
                    .iter()
                    .map(|(_, l)| l.bandwidth.bytes_per_s() as f64)
                    .sum();
                eject[n as usize] = sum;
                inject[n as usize] = match d.node(id) {
                    Some(DojoNode::Dip(_)) => sum.min(podsim_topology::DIP_HBM_BYTES_PER_S as f64),
                    _ => sum,
                };
            }
        }
        capacity.extend(inject.iter().chain(eject.iter()));
        let n_links = capacity.len();
        let carried = vec![0.0; links.len()];
        let lone_share = capacity
            .iter()
            .map(|&c| quantize(c / f64::from(1u32)))
            .collect();
        let latency_ps = (0..links.len())
            .map(|l| links.spec(l).latency.as_ps())
            .collect();
        FlowModel {
            net,
            links,
            capacity,
            lone_share,
            latency_ps,
            packets,
            ecmp,
            flows: Vec::new(),
            active: Vec::new(),
            transfers: Vec::new(),
            arrivals: BinaryHeap::new(),
            now: SimTime::ZERO,
            dirty: false,
            report: NetReport::default(),
            count: vec![0; n_links],
            cap: vec![0.0; n_links],
            row: vec![0; n_links],
            slot: vec![0; n_links],
            members: Vec::new(),
            flat: Vec::new(),
            starts: Vec::new(),
            frozen: Vec::new(),
            rates: Vec::new(),
            heap: LinkHeap::new(n_links),
            touched_now: Vec::new(),
            changed: vec![false; n_links],
            #[cfg(test)]
            lazy_heap: false,
            scratch_links: Vec::new(),
            first_drain: None,
            shortcut: podsim_routing::Shortcut::Never,
            carried,
            route_cache: PairMap::default(),
            route_cache_links: 0,
            next_id: 0,
            grouped: true,
            may_group: true,
            g: Grouped {
                busy: vec![false; n_links],
                ..Grouped::default()
            },
            scratch_route: Vec::new(),
            lanes: vec![(u64::MAX, Lane::default()); endpoints],
            lane_links: Vec::new(),
            grouped_sends: 0,
            ungroupings: 0,
        }
    }

    /// The same model, computing flow by flow throughout (never in grouped mode, see the
    /// module docs) and keeping every flow it was given: the reference the grouped mode and
    /// the dropping of finished flows are checked against, and otherwise slower.
    pub fn flow_by_flow(mut self) -> Self {
        self.materialise();
        self.may_group = false;
        self
    }

    /// On a DOJO plane, route with the die routing tables' Z-plane shortcut policy `s`
    /// ([`podsim_routing::dojo_route`]): far transfers go through the nearest DIP, the
    /// Ethernet switch and the DIP nearest their destination. Other networks ignore it.
    pub fn with_dojo_shortcut(mut self, s: podsim_routing::Shortcut) -> Self {
        self.shortcut = s;
        // Routes depend on the policy.
        self.route_cache.clear();
        self.route_cache_links = 0;
        self.lane_links.clear();
        self.lanes.fill((u64::MAX, Lane::default()));
        self
    }

    /// The routes of a transfer: the routing layer's paths, or on a DOJO plane with a
    /// shortcut policy, the route its tables give.
    fn routes(&self, src: NodeId, dst: NodeId) -> Vec<Vec<LinkId>> {
        if let (Network::Dojo(d), podsim_routing::Shortcut::Beyond(_)) = (&self.net, self.shortcut)
        {
            let Ok(nodes) = podsim_routing::dojo_route(
                d,
                &podsim_routing::Faults::new(),
                src,
                dst,
                self.shortcut,
            ) else {
                return Vec::new();
            };
            let mut at = src;
            let mut out = Vec::with_capacity(nodes.len());
            for v in nodes {
                match self.links.link_between(at, v) {
                    Some(l) => out.push(l),
                    None => return Vec::new(),
                }
                at = v;
            }
            return vec![out];
        }
        paths(&self.net, &self.links, src, dst)
    }

    fn inject(&self, n: NodeId) -> LinkId {
        self.links.len() + n.0 as usize
    }
    fn eject(&self, n: NodeId) -> LinkId {
        self.links.len() + self.lanes.len() + n.0 as usize
    }

    /// The current rate of every draining flow's transfer, for tests: (transfer, bytes/s).
    pub fn rates(&mut self) -> Vec<(TransferId, f64)> {
        self.materialise();
        self.recompute();
        self.active
            .iter()
            .map(|&f| {
                (
                    self.transfers[self.flows[f].transfer].c.id,
                    self.flows[f].rate,
                )
            })
            .collect()
    }

    /// The load of every link (bytes/s) under the current rates, for tests.
    pub fn link_loads(&mut self) -> Vec<(f64, f64)> {
        self.materialise();
        self.recompute();
        let mut load = vec![0.0; self.capacity.len()];
        for &f in &self.active {
            for &l in &self.flows[f].links {
                load[l] += self.flows[f].rate;
            }
        }
        load.into_iter()
            .zip(self.capacity.iter().copied())
            .collect()
    }

    /// Drain every active flow at its rate up to `t`.
    fn progress_to(&mut self, t: SimTime) {
        if t <= self.now {
            return;
        }
        let dt = (t - self.now).as_ps() as f64 / 1e12;
        for &f in &self.active {
            let fl = &mut self.flows[f];
            fl.remaining = (fl.remaining - fl.rate * dt).max(0.0);
        }
        self.now = t;
    }

    /// Max-min fair rates by progressive filling; then every flow's drain time.
    ///
    /// Shares are rounded down to 36 significant bits. Rates stay within 2⁻³⁶ of the exact
    /// max-min rates and never above them, and flows in symmetric positions, whose exact
    /// shares are equal but whose floating-point sums can differ in the last bits, get exactly
    /// the same rate, so they drain at the same picosecond and are handled in one step.
    fn recompute(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        // Links in use, and the flows on each, in compressed rows.
        let touched = &mut self.scratch_links;
        touched.clear();
        self.flat.clear();
        self.starts.clear();
        for &f in &self.active {
            self.starts.push(self.flat.len() as u32);
            for &l in &self.flows[f].links {
                if self.count[l] == 0 {
                    touched.push(l);
                }
                self.count[l] += 1;
                self.flat.push(l as u32);
            }
        }
        self.starts.push(self.flat.len() as u32);
        let mut start = 0;
        for &l in touched.iter() {
            self.row[l] = start;
            start += self.count[l] as usize;
            self.cap[l] = self.capacity[l];
        }
        self.members.clear();
        self.members.resize(start, 0);
        let mut fill: Vec<usize> = touched.iter().map(|&l| self.row[l]).collect();
        for (ti, &l) in touched.iter().enumerate() {
            self.slot[l] = ti;
        }
        for (a, w) in self.starts.windows(2).enumerate() {
            for &l in &self.flat[w[0] as usize..w[1] as usize] {
                let t = self.slot[l as usize];
                self.members[fill[t]] = a as u32;
                fill[t] += 1;
            }
        }
        // Links by (fair share, id), each once with its current share: the order in which
        // a heap of every share ever computed, stale ones skipped, would take them.
        let mut heap = std::mem::take(&mut self.heap);
        for &l in touched.iter() {
            heap.set(l, quantize(self.cap[l] / f64::from(self.count[l])));
        }
        self.frozen.clear();
        self.frozen.resize(self.active.len(), false);
        self.rates.clear();
        self.rates.resize(self.active.len(), 0.0);
        // Tests compare with the heap this replaced: every share ever computed, stale ones
        // skipped as they come up.
        #[allow(unused_mut, clippy::let_unit_value)]
        let mut lazy = Lazy::default();
        #[cfg(test)]
        if self.lazy_heap {
            while let Some((share, l)) = heap.pop() {
                lazy.push(Reverse((Ord64(share), l)));
            }
        }
        let mut touched_now = std::mem::take(&mut self.touched_now);
        while let Some((share, l)) = next_link(&mut heap, &mut lazy, &self.cap, &self.count) {
            // The link's members run from its row start to where filling stopped.
            for k in self.row[l]..fill[self.slot[l]] {
                let a = self.members[k] as usize;
                if self.frozen[a] {
                    continue;
                }
                self.frozen[a] = true;
                self.rates[a] = share;
                let (from, to) = (self.starts[a] as usize, self.starts[a + 1] as usize);
                for &l2 in &self.flat[from..to] {
                    let l2 = l2 as usize;
                    self.cap[l2] -= share;
                    self.count[l2] -= 1;
                    #[cfg(test)]
                    if self.lazy_heap {
                        if self.count[l2] > 0 {
                            let share = quantize(self.cap[l2].max(0.0) / f64::from(self.count[l2]));
                            lazy.push(Reverse((Ord64(share), l2)));
                        }
                        continue;
                    }
                    if !self.changed[l2] {
                        self.changed[l2] = true;
                        touched_now.push(l2);
                    }
                }
            }
            // Each link whose share changed takes its new one (or leaves, with no flow left)
            // once, after the bottleneck's flows froze: nothing is taken from the heap in
            // between, so only the last share counts.
            for &l2 in &touched_now {
                self.changed[l2] = false;
                if self.count[l2] > 0 {
                    heap.set(
                        l2,
                        quantize(self.cap[l2].max(0.0) / f64::from(self.count[l2])),
                    );
                } else {
                    heap.remove(l2);
                }
            }
            touched_now.clear();
        }
        self.touched_now = touched_now;
        self.heap = heap;
        let mut peak = 0.0f64;
        for &l in touched.iter() {
            peak = peak.max((self.capacity[l] - self.cap[l]) / self.capacity[l]);
            self.count[l] = 0;
        }
        self.report.max_link_utilization = self.report.max_link_utilization.max(peak);
        let mut first = None::<SimTime>;
        for (a, &f) in self.active.iter().enumerate() {
            let fl = &mut self.flows[f];
            // A flow on no link is never frozen and keeps its rate.
            if self.frozen[a] {
                fl.rate = self.rates[a];
            }
            fl.finish =
                self.now + podsim_units::SimDuration::from_ps(drain_ps(fl.remaining, fl.rate));
            first = Some(first.map_or(fl.finish, |x| x.min(fl.finish)));
        }
        self.first_drain = first;
    }

    /// The earliest drain among active flows.
    fn next_drain(&mut self) -> Option<SimTime> {
        self.recompute();
        if self.active.is_empty() {
            None
        } else {
            self.first_drain
        }
    }

    /// Process drains up to and including `t`.
    fn drain_until(&mut self, t: SimTime) {
        while let Some(d) = self.next_drain() {
            if d > t {
                break;
            }
            self.progress_to(d);
            let (finished, still): (Vec<usize>, Vec<usize>) = self
                .active
                .iter()
                .partition(|&&f| self.flows[f].finish <= d);
            self.active = still;
            for f in finished {
                self.flows[f].remaining = 0.0;
                // Its path is no longer needed; free it (large collectives hold millions).
                self.flows[f].links = Vec::new();
                self.arrivals.push(Reverse((
                    d + podsim_units::SimDuration::from_ps(self.flows[f].latency),
                    f,
                )));
            }
            self.dirty = true;
        }
        self.progress_to(t);
    }

    /// The routes a transfer takes (after `ecmp`), cached per pair as the routing layer gives
    /// them: the first copied into `out`, and how many there are (0: no route).
    fn route_into(&mut self, src: NodeId, dst: NodeId, out: &mut Vec<LinkId>) -> usize {
        out.clear();
        if src == dst {
            return 1;
        }
        let routes = if let Some(r) = self.route_cache.get(&(src.0, dst.0)) {
            let Some(first) = r.first() else {
                return 0;
            };
            out.extend_from_slice(first);
            return if self.ecmp { r.len() } else { 1 };
        } else {
            self.new_routes(src, dst)
        };
        let Some(first) = routes.first() else {
            return 0;
        };
        out.extend_from_slice(first);
        if self.ecmp { routes.len() } else { 1 }
    }

    /// Route a pair not in the cache, and cache it while the cache has room.
    fn new_routes(&mut self, src: NodeId, dst: NodeId) -> Vec<Vec<LinkId>> {
        let r = self.routes(src, dst);
        let size: usize = r.iter().map(Vec::len).sum();
        let pairs = ROUTE_CACHE_PER_NODE.saturating_mul(self.net.node_count() as usize);
        if self.route_cache_links + size <= ROUTE_CACHE_LINKS && self.route_cache.len() < pairs {
            self.route_cache_links += size;
            self.route_cache.insert((src.0, dst.0), r.clone());
        }
        r
    }

    /// Grouped mode: drain every group at its rate up to `t` (as [`FlowModel::progress_to`]).
    fn g_progress_to(&mut self, t: SimTime) {
        if t <= self.now {
            return;
        }
        let dt = (t - self.now).as_ps() as f64 / 1e12;
        for g in &mut self.g.groups {
            g.remaining = (g.remaining - g.rate * dt).max(0.0);
        }
        self.now = t;
    }

    /// Grouped mode: [`FlowModel::recompute`]. Rates are fixed when a flow is sent (alone on
    /// its links, nothing changes them); what remains is the peak load and every drain time.
    fn g_recompute(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let peak = std::mem::take(&mut self.g.peak);
        self.report.max_link_utilization = self.report.max_link_utilization.max(peak);
        let mut first = None::<SimTime>;
        for g in &mut self.g.groups {
            g.finish = self.now + podsim_units::SimDuration::from_ps(drain_ps(g.remaining, g.rate));
            first = Some(first.map_or(g.finish, |x| x.min(g.finish)));
        }
        self.first_drain = first;
    }

    /// Grouped mode: the earliest drain.
    fn g_next_drain(&mut self) -> Option<SimTime> {
        self.g_recompute();
        if self.g.groups.is_empty() {
            None
        } else {
            self.first_drain
        }
    }

    /// Grouped mode: process drains up to and including `t` (as [`FlowModel::drain_until`]).
    fn g_drain_until(&mut self, t: SimTime) {
        while let Some(d) = self.g_next_drain() {
            if d > t {
                break;
            }
            self.g_progress_to(d);
            for mut g in std::mem::take(&mut self.g.groups) {
                if g.finish > d {
                    self.g.groups.push(g);
                    continue;
                }
                for m in &g.members {
                    for &l in &g.links[m.links.0 as usize..m.links.1 as usize] {
                        self.g.busy[l] = false;
                    }
                }
                let spare = &mut self.g.spare_arrivals;
                if !g.mixed {
                    // One arrival instant for all: the list moves as it is.
                    let lat = g.members.first().map_or(0, |m| m.latency);
                    let at = d + podsim_units::SimDuration::from_ps(lat);
                    match self.g.arrivals.entry(at) {
                        std::collections::btree_map::Entry::Vacant(e) => {
                            e.insert(std::mem::replace(
                                &mut g.cs,
                                spare.pop().unwrap_or_default(),
                            ));
                        }
                        std::collections::btree_map::Entry::Occupied(mut e) => {
                            e.get_mut().append(&mut g.cs);
                        }
                    }
                } else {
                    for (c, m) in g.cs.drain(..).zip(&g.members) {
                        let at = d + podsim_units::SimDuration::from_ps(m.latency);
                        self.g
                            .arrivals
                            .entry(at)
                            .or_insert_with(|| spare.pop().unwrap_or_default())
                            .push(c);
                    }
                }
                g.members.clear();
                g.cs.clear();
                g.links.clear();
                g.mixed = false;
                self.g.spare.push(g);
            }
            self.dirty = true;
        }
        self.g_progress_to(t);
    }

    /// The lane of a transfer from `src` to `dst` (see [`Lane`]): from the source's lane when
    /// it goes to the same destination, else routed (through the route cache) and made the
    /// source's lane. None when no route joins them.
    fn lane(&mut self, src: NodeId, dst: NodeId) -> Option<Lane> {
        let s = src.0 as usize;
        if let Some(&(d, lane)) = self.lanes.get(s) {
            if d == dst.0 {
                return Some(lane);
            }
        }
        let mut route = std::mem::take(&mut self.scratch_route);
        let routes = self.route_into(src, dst, &mut route);
        if routes == 0 {
            self.scratch_route = route;
            return None;
        }
        if self.lane_links.len() + route.len() > LANE_LINKS.max(16 * self.lanes.len()) {
            // Full: start again (lanes are only a faster way to the same routes).
            self.lane_links.clear();
            self.lanes.fill((u64::MAX, Lane::default()));
        }
        let start = self.lane_links.len();
        self.lane_links.extend_from_slice(&route);
        let ends = [self.inject(src), self.eject(dst)];
        // Alone on its links, a flow's max-min rate is the smallest rounded capacity on its
        // path (progressive filling fixes it at its tightest link), and each link's load is
        // that rate over its capacity, as the recomputation works it out.
        let rate = route
            .iter()
            .chain(&ends)
            .map(|&l| self.lone_share[l])
            .fold(f64::INFINITY, |a, b| if b < a { b } else { a });
        let peak = route.iter().chain(&ends).fold(0.0f64, |p, &l| {
            let cap = self.capacity[l];
            let left = cap - rate;
            p.max((cap - left) / cap)
        });
        let lane = Lane {
            start,
            len: route.len(),
            routes,
            rate,
            peak,
            latency: route.iter().map(|&l| self.latency_ps[l]).sum(),
        };
        self.scratch_route = route;
        if src != dst {
            self.lanes[s] = (dst.0, lane);
        }
        Some(lane)
    }

    /// Grouped mode: send over `lane` (the transfer's only route) at the current time, as the
    /// flow-by-flow send would; `None` (nothing changed) when a link of its path is taken.
    fn g_send(
        &mut self,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
        tag: u64,
        lane: Lane,
    ) -> Result<Option<TransferId>, NetError> {
        let at = self.now;
        let wire = self
            .packets
            .checked_wire_bytes(bytes.0)
            .ok_or(NetError::TooLarge {
                what: "the bytes on the wire",
                bytes: bytes.0,
            })?;
        let share = wire as f64 / 1.0;
        // (share x hops).round(), as the flow-by-flow send works it out; below 2^53 the
        // product is exact and whole, so the integers give it without rounding.
        let exact = wire.checked_mul(lane.len as u64).filter(|&x| x < 1 << 53);
        let on_wire: f64 = if let Some(x) = exact {
            x as f64
        } else {
            std::iter::once((share * lane.len as f64).round()).sum()
        };
        if on_wire >= u64::MAX as f64 {
            return Err(NetError::TooLarge {
                what: "the bytes on the wire",
                bytes: bytes.0,
            });
        }
        let zero = src == dst || wire == 0;
        let ends = [self.inject(src), self.eject(dst)];
        let route = lane.start..lane.start + lane.len;
        if !zero {
            // Alone on every link, or not grouped.
            let path = &self.lane_links[route.clone()];
            for (k, &l) in path.iter().chain(&ends).enumerate() {
                if self.g.busy[l] {
                    for &u in path.iter().chain(&ends).take(k) {
                        self.g.busy[u] = false;
                    }
                    return Ok(None);
                }
                self.g.busy[l] = true;
            }
        }
        if let Err(e) = self.report.count_send(bytes.0, on_wire as u64) {
            if !zero {
                for &u in self.lane_links[route.clone()].iter().chain(&ends) {
                    self.g.busy[u] = false;
                }
            }
            return Err(e);
        }
        let id = TransferId(self.next_id);
        self.next_id += 1;
        let c = Completion {
            id,
            tag,
            src,
            dst,
            bytes,
            start: at,
            end: at,
        };
        if zero {
            let t = at + podsim_units::SimDuration::from_ps(lane.latency);
            self.g.arrive(t, c);
            return Ok(Some(id));
        }
        for &l in &self.lane_links[route.clone()] {
            self.carried[l] += share;
        }
        let rate = lane.rate;
        self.g.peak = self.g.peak.max(lane.peak);
        let fits = |g: &Group| {
            g.opened == at
                && g.remaining.to_bits() == share.to_bits()
                && g.rate.to_bits() == rate.to_bits()
        };
        let open = match self.g.groups.last() {
            Some(g) if fits(g) => Some(self.g.groups.len() - 1),
            _ => self.g.groups.iter().rposition(fits),
        };
        let gi = match open {
            Some(i) => i,
            None => {
                let mut g = self.g.spare.pop().unwrap_or_else(|| Group {
                    opened: at,
                    remaining: share,
                    rate,
                    finish: at,
                    cs: Vec::new(),
                    members: Vec::new(),
                    mixed: false,
                    links: Vec::new(),
                });
                g.opened = at;
                g.remaining = share;
                g.rate = rate;
                g.finish = at;
                self.g.groups.push(g);
                self.g.groups.len() - 1
            }
        };
        let g = &mut self.g.groups[gi];
        let start = g.links.len() as u32;
        g.links.extend_from_slice(&self.lane_links[route]);
        g.links.extend_from_slice(&ends);
        g.mixed |= g.members.first().is_some_and(|m| m.latency != lane.latency);
        g.cs.push(c);
        g.members.push(Member {
            latency: lane.latency,
            links: (start, g.links.len() as u32),
        });
        self.dirty = true;
        self.grouped_sends += 1;
        Ok(Some(id))
    }

    /// Leave grouped mode: every group's transfers become flows with exactly the state the
    /// flow-by-flow computation would have given them, in the order they were sent.
    fn materialise(&mut self) {
        if !self.grouped {
            return;
        }
        self.grouped = false;
        self.ungroupings += 1;
        let mut items: Vec<(Completion, Unpacked)> = Vec::new();
        for g in std::mem::take(&mut self.g.groups) {
            for (&c, m) in g.cs.iter().zip(&g.members) {
                items.push((
                    c,
                    Unpacked::Draining {
                        remaining: g.remaining,
                        rate: g.rate,
                        finish: g.finish,
                        links: g.links[m.links.0 as usize..m.links.1 as usize].to_vec(),
                        latency: m.latency,
                    },
                ));
            }
        }
        for (t, cs) in std::mem::take(&mut self.g.arrivals) {
            items.extend(cs.into_iter().map(|c| (c, Unpacked::Arriving(t))));
        }
        items.sort_by_key(|(c, _)| c.id);
        for (c, u) in items {
            let transfer = self.transfers.len();
            self.transfers.push(Transfer { c, flows_left: 1 });
            let f = self.flows.len();
            match u {
                Unpacked::Draining {
                    remaining,
                    rate,
                    finish,
                    links,
                    latency,
                } => {
                    self.flows.push(Flow {
                        transfer,
                        links,
                        remaining,
                        rate,
                        finish,
                        latency,
                    });
                    self.active.push(f);
                }
                Unpacked::Arriving(t) => {
                    self.flows.push(Flow {
                        transfer,
                        links: Vec::new(),
                        remaining: 0.0,
                        rate: 0.0,
                        finish: t,
                        latency: 0,
                    });
                    self.arrivals.push(Reverse((t, f)));
                }
            }
        }
        self.g.busy.iter_mut().for_each(|b| *b = false);
        // The flows sent since the last recomputation are active: the next one sees them.
        self.g.peak = 0.0;
    }

    /// Drop the flows and transfers of the flow-by-flow mode that are over (neither draining
    /// nor arriving), keeping the rest in order (so nothing that depends on their order
    /// changes), when they are most of what is held: the model holds what is in flight, not
    /// every transfer it was given.
    fn compact(&mut self) {
        let live = self.active.len() + self.arrivals.len();
        // The reference keeps everything, as it always did.
        if !self.may_group || self.flows.len() < 2 * live + 4096 {
            return;
        }
        let mut keep = vec![false; self.flows.len()];
        for &f in &self.active {
            keep[f] = true;
        }
        for &Reverse((_, f)) in self.arrivals.iter() {
            keep[f] = true;
        }
        let mut flow_at = vec![usize::MAX; self.flows.len()];
        let mut transfer_at = vec![usize::MAX; self.transfers.len()];
        let (mut flows, mut transfers) = (Vec::with_capacity(live), Vec::new());
        for (f, mut fl) in std::mem::take(&mut self.flows).into_iter().enumerate() {
            if !keep[f] {
                continue;
            }
            if transfer_at[fl.transfer] == usize::MAX {
                transfer_at[fl.transfer] = transfers.len();
                transfers.push(self.transfers[fl.transfer].clone());
            }
            fl.transfer = transfer_at[fl.transfer];
            flow_at[f] = flows.len();
            flows.push(fl);
        }
        self.flows = flows;
        self.transfers = transfers;
        for f in &mut self.active {
            *f = flow_at[*f];
        }
        let arrivals = std::mem::take(&mut self.arrivals).into_vec();
        self.arrivals = arrivals
            .into_iter()
            .map(|Reverse((t, f))| Reverse((t, flow_at[f])))
            .collect();
    }

    /// Back to grouped mode when nothing is in flight (and the model may group): the
    /// flow-by-flow state is empty, so is the grouped one.
    fn regroup_if_idle(&mut self) {
        if self.grouped || !self.may_group || !self.active.is_empty() || !self.arrivals.is_empty() {
            return;
        }
        self.flows.clear();
        self.transfers.clear();
        self.grouped = true;
    }
}

impl NetworkModel for FlowModel {
    fn send(
        &mut self,
        at: SimTime,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
        tag: u64,
    ) -> Result<TransferId, NetError> {
        check_send(self.now, self.lanes.len() as u64, at, src, dst)?;
        self.regroup_if_idle();
        if self.grouped {
            let Some(lane) = self.lane(src, dst) else {
                return Err(NetError::NoRoute(src, dst));
            };
            if at > self.now {
                self.g_drain_until(at);
            }
            if lane.routes == 1 {
                if let Some(id) = self.g_send(src, dst, bytes, tag, lane)? {
                    return Ok(id);
                }
            }
            self.materialise();
        }
        self.compact();
        let mut routes = if src == dst {
            vec![Vec::new()]
        } else if let Some(r) = self.route_cache.get(&(src.0, dst.0)) {
            r.clone()
        } else {
            self.new_routes(src, dst)
        };
        if routes.is_empty() {
            return Err(NetError::NoRoute(src, dst));
        }
        if !self.ecmp {
            routes.truncate(1);
        }
        // Sends at the current time change no rate until the next query, so many sends at one
        // instant cost one recomputation.
        if at > self.now {
            self.drain_until(at);
        }
        let wire = self
            .packets
            .checked_wire_bytes(bytes.0)
            .ok_or(NetError::TooLarge {
                what: "the bytes on the wire",
                bytes: bytes.0,
            })?;
        let share = wire as f64 / routes.len() as f64;
        let on_wire: f64 = routes
            .iter()
            .map(|r| (share * r.len() as f64).round())
            .sum();
        if on_wire >= u64::MAX as f64 {
            return Err(NetError::TooLarge {
                what: "the bytes on the wire",
                bytes: bytes.0,
            });
        }
        self.report.count_send(bytes.0, on_wire as u64)?;
        let id = self.next_id;
        self.next_id += 1;
        let transfer = self.transfers.len();
        self.transfers.push(Transfer {
            c: Completion {
                id: TransferId(id),
                tag,
                src,
                dst,
                bytes,
                start: at,
                end: at,
            },
            flows_left: routes.len(),
        });
        for r in routes {
            let latency = r.iter().map(|&l| self.links.spec(l).latency.as_ps()).sum();
            let f = self.flows.len();
            if src == dst || wire == 0 {
                self.flows.push(Flow {
                    transfer,
                    links: Vec::new(),
                    remaining: 0.0,
                    rate: 0.0,
                    finish: at,
                    latency,
                });
                self.arrivals.push(Reverse((
                    at + podsim_units::SimDuration::from_ps(latency),
                    f,
                )));
                continue;
            }
            for &l in &r {
                self.carried[l] += share;
            }
            let mut links = r;
            links.push(self.inject(src));
            links.push(self.eject(dst));
            self.flows.push(Flow {
                transfer,
                links,
                remaining: share,
                rate: 0.0,
                finish: at,
                latency,
            });
            self.active.push(f);
            self.dirty = true;
        }
        Ok(TransferId(id))
    }

    fn next_completion(&mut self) -> Option<SimTime> {
        if self.grouped {
            let arrival = self.g.arrivals.first_key_value().map(|(&t, _)| t);
            return match (arrival, self.g_next_drain()) {
                (Some(a), Some(d)) => Some(a.min(d)),
                (a, d) => a.or(d),
            };
        }
        // The next event: an arrival already scheduled, or the next drain (which schedules
        // arrivals). Advancing to it may complete nothing yet; the caller simply asks again.
        let arrival = self.arrivals.peek().map(|r| r.0.0);
        match (arrival, self.next_drain()) {
            (Some(a), Some(d)) => Some(a.min(d)),
            (a, d) => a.or(d),
        }
    }

    fn advance(&mut self, until: SimTime) -> Vec<Completion> {
        let mut out = Vec::new();
        self.advance_into(until, &mut out);
        out
    }

    fn advance_into(&mut self, until: SimTime, all: &mut Vec<Completion>) {
        let from = all.len();
        let out = all;
        if self.grouped {
            loop {
                let arrival = self.g.arrivals.first_key_value().map(|(&t, _)| t);
                match (self.g_next_drain(), arrival) {
                    (Some(d), a) if d <= until && a.is_none_or(|a| d <= a) => {
                        self.g_drain_until(d);
                    }
                    (_, Some(a)) if a <= until => {
                        self.g_progress_to(a);
                        let Some((t, mut cs)) = self.g.arrivals.pop_first() else {
                            break;
                        };
                        for mut c in cs.drain(..) {
                            c.end = c.end.max(t);
                            self.report.bytes_delivered += c.bytes.0;
                            out.push(c);
                        }
                        self.g.spare_arrivals.push(cs);
                    }
                    _ => break,
                }
            }
            self.g_progress_to(until);
            // Groups mostly hand their transfers over in this order already.
            if !out[from..].is_sorted_by_key(|c| (c.end, c.id)) {
                out[from..].sort_by_key(|c| (c.end, c.id));
            }
            return;
        }
        loop {
            let arrival = self.arrivals.peek().map(|r| r.0.0);
            let drain = self.next_drain();
            match (drain, arrival) {
                // Drains first (at equal times too): they may schedule arrivals at that time.
                (Some(d), a) if d <= until && a.is_none_or(|a| d <= a) => self.drain_until(d),
                (_, Some(a)) if a <= until => {
                    self.progress_to(a);
                    let Some(Reverse((t, f))) = self.arrivals.pop() else {
                        break;
                    };
                    let tr = &mut self.transfers[self.flows[f].transfer];
                    tr.flows_left -= 1;
                    tr.c.end = tr.c.end.max(t);
                    if tr.flows_left == 0 {
                        self.report.bytes_delivered += tr.c.bytes.0;
                        out.push(tr.c);
                    }
                }
                _ => break,
            }
        }
        self.progress_to(until);
        out[from..].sort_by_key(|c| (c.end, c.id));
    }

    fn report(&self) -> NetReport {
        self.report
    }

    fn name(&self) -> &'static str {
        "flow"
    }

    fn carried(&self) -> Vec<LinkLoad> {
        let mut out = Vec::with_capacity(self.carried.len());
        for u in 0..self.net.node_count() {
            let from = NodeId(u);
            let mut i = 0;
            while let Some(l) = self.links.out_link(from, i) {
                out.push(LinkLoad {
                    from,
                    to: self.links.target(l),
                    wire_bytes: self.carried[l],
                    bandwidth_bytes_per_s: self.capacity[l],
                });
                i += 1;
            }
        }
        out
    }
}
