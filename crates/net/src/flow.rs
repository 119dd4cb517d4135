//! The flow-level model: transfers as flows sharing links max-min fairly.
//!
//! Each transfer becomes one flow per path it is split over (equal shares of its wire bytes).
//! A flow's path is its routed directed links plus two endpoint links: the source's injection
//! and the destination's ejection, each `interfaces x link bandwidth`. An endpoint link of at
//! least the capacity of its node's network links in all (out of the node for an injection,
//! into it for an ejection: a torus chip with an interface per link) can never bind, since
//! every flow through it also crosses one of those links; it is left off the paths, which
//! changes no rate (the feasible rates are the same; tested bit for bit) and keeps the flows
//! a node sends over different links apart, so they stay grouped and their components small
//! (an all-dimensions all-reduce, six flows out of every chip at once). Whenever the set of
//! draining flows changes, rates are recomputed by progressive filling: the link with the
//! smallest fair share (remaining capacity / unfrozen flows) fixes the rate of every unfrozen
//! flow through it, those flows' rates are taken off every link they cross, and so on. The
//! result is max-min fair, and no link is ever loaded past its bandwidth.
//!
//! A flow's last byte leaves when its bytes have drained and arrives one path latency later;
//! the transfer completes when all its flows have arrived. Simultaneous drains are handled
//! together, in one recomputation.
//!
//! Flow by flow, each event costs what it changes, not what is in flight:
//!
//! * Max-min rates decompose over the connected components of the flow-link graph (flows
//!   joined when they share a link, injection and ejection links included). Each link keeps
//!   the list of the draining flows on it; a flow that starts or drains marks its links, and
//!   the next recomputation searches the components through them and runs progressive
//!   filling over those alone (same heap, same rounding, same (share, link id) order), which
//!   gives bit for bit the rates filling every flow would. Every other flow keeps its rate.
//! * Flows drain lazily: a flow keeps its remaining bytes as of the last time its rate
//!   changed (`remaining - rate x elapsed`, worked out once over that whole interval when the
//!   rate changes again) and the drain time worked out then. Drains wait in a heap by (drain
//!   time, flow), entries left stale by a later rate change skipped; the draining flows are
//!   a set with removal in O(1).
//!
//! A flow's figures thus depend only on its own rate history: a flow whose rate never
//! changes drains at its start plus `drain_ps(bytes, rate)`, however many other flows start
//! and drain meanwhile.
//!
//! Grouped mode: while every draining flow is alone on every link it crosses (its path, its
//! source's injection and its destination's ejection), each flow's max-min rate is simply the
//! smallest (rounded) capacity on its path and no flow's rate depends on another's. The model
//! then keeps flows that started at the same instant with the same wire bytes and the same
//! rate as one group: the group's remaining bytes, rate and drain time are exactly what each
//! of its flows would have (its rate, set when it was sent, never changes; its drain time is
//! its start plus `drain_ps(bytes, rate)`), so every figure is bit for bit what the
//! flow-by-flow computation gives, at the cost of one flow per group instead of one per
//! transfer (a ring step of n transfers is one group). The first send that would put two
//! draining flows on one link turns the groups back into flows, in the order they were sent,
//! and the model carries on flow by flow (their links are searched at the next
//! recomputation, which gives each the rate it had); it goes back to groups whenever nothing
//! is in flight. [`FlowMode`] chooses: [`FlowMode::Grouped`] (the default) does all this,
//! [`FlowMode::FlowByFlow`] ([`FlowModel::with_mode`]) keeps every transfer a flow throughout
//! (the reference the grouped mode is tested against).
//!
//! Exchanges ([`NetworkModel::exchange`], the `exchange` module): an all-to-all of equal
//! transfers on a vertex-transitive torus, handed over whole, is filled by classes of
//! translates (n - 1 of them rather than n (n - 1) flows), with the same figures (to within
//! 10⁻⁹ relative and one picosecond per transfer; the collective's time the same picosecond on
//! every shape tested).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use podsim_topology::{Network, NodeId};
use podsim_units::{Bytes, SimTime};

use crate::{
    Completion, Exchange, LinkId, LinkLoad, LinkTable, NetError, NetReport, NetworkModel,
    Packetization, TransferId, check_send, drain_ps, paths,
};

mod exchange;

#[derive(Debug, Clone)]
struct Flow {
    transfer: usize,
    // While it drains: its links' nodes in `FlowModel::nodes`, `len` of them from `node0`.
    node0: u32,
    len: u32,
    // Bytes left at `since` (the last time its rate changed), and its rate since then.
    remaining: f64,
    rate: f64,
    since: SimTime,
    // When its last byte leaves (worked out when its rate last changed).
    finish: SimTime,
    latency: u64,
    // Its place in `FlowModel::active` (ABSENT when not draining), and the version of its
    // entry in the drain heap (older entries are stale).
    at: usize,
    version: u32,
}

impl Flow {
    /// A flow that starts draining `remaining` bytes at `since` (or arrives, with no links).
    fn new(transfer: usize, remaining: f64, since: SimTime, latency: u64) -> Self {
        Flow {
            transfer,
            node0: 0,
            len: 0,
            remaining,
            rate: 0.0,
            since,
            finish: since,
            latency,
            at: ABSENT,
            version: 0,
        }
    }
}

/// One link of one draining flow, and its place in that link's list.
#[derive(Debug, Clone, Copy)]
struct Node {
    link: u32,
    flow: u32,
    pos: u32,
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
        since: SimTime,
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

    /// Hold exactly `links` (the heap is empty), keyed by `key`: the same heap as setting
    /// each in turn would give in what it pops, built in linear time.
    fn build(&mut self, links: &[LinkId], key: impl Fn(LinkId) -> f64) {
        debug_assert!(self.heap.is_empty());
        self.heap.clear();
        for (i, &l) in links.iter().enumerate() {
            self.key[l] = key(l);
            self.pos[l] = i;
            self.heap.push(l);
        }
        for i in (0..self.heap.len() / 2).rev() {
            self.down(i);
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
    // Per endpoint link (injection then ejection, as `inject` and `eject` number them): whether
    // it binds a flow (see `ends`).
    binds: Vec<bool>,
    packets: Packetization,
    ecmp: bool,
    flows: Vec<Flow>,
    // The draining flows, in no order (a flow knows its place, for removal in O(1)).
    active: Vec<usize>,
    // Draining flows by (drain time, flow, version); entries whose version is not the
    // flow's current one (its rate changed since, or it drained) are stale and skipped.
    drains: BinaryHeap<Reverse<(SimTime, usize, u32)>>,
    transfers: Vec<Transfer>,
    arrivals: BinaryHeap<Reverse<(SimTime, usize)>>,
    now: SimTime,
    dirty: bool,
    report: NetReport,
    // Per link (injection and ejection included): the nodes of the draining flows on it, in
    // no order (a node knows its place, for removal in O(1)). The nodes, each draining
    // flow's `len` of them in a row from its `node0`, and freed runs of nodes by length.
    on: Vec<Vec<u32>>,
    nodes: Vec<Node>,
    free_nodes: Vec<Vec<u32>>,
    // Links whose flows changed (a flow started or drained on them) since the last
    // recomputation: the components of the flow-link graph through them are filled again.
    seeds: Vec<LinkId>,
    // The current search's mark, and per flow (beside `flows`) the last search that reached
    // it and its place in that search's `comp`.
    epoch: u32,
    seen: Vec<(u32, u32)>,
    // Scratch space for `recompute`: per link, its unfrozen flows (0 outside recomputation),
    // capacity left and where its row of `members` starts; the changed components' flows,
    // the search's stack.
    count: Vec<u32>,
    cap: Vec<f64>,
    row: Vec<u32>,
    comp: Vec<usize>,
    stack: Vec<LinkId>,
    /// Per link reached, in the order reached, a row: its number of flows, then each flow's
    /// place in `comp`.
    members: Vec<u32>,
    /// The flows of `comp`'s links one after another, and where each flow's start (one more
    /// at the end): read as bottlenecks freeze flows, which come in no order, so one place
    /// per flow.
    flat: Vec<u32>,
    starts: Vec<u32>,
    /// By place in `comp`: frozen yet, and the rate it froze at.
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
    // Grouped mode: the earliest drain among the groups.
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
    // The mode the model was given, the mode it computes in now (flow by flow whenever the
    // groups were turned back into flows) and the grouped mode's state.
    mode: FlowMode,
    now_in: FlowMode,
    g: Grouped,
    scratch_route: Vec<LinkId>,
    // Per source node: the destination of its lane and the lane, and the lanes' links.
    lanes: Vec<(u64, Lane)>,
    lane_links: Vec<LinkId>,
    // Transfers sent in grouped mode, and times the groups were turned back into flows.
    pub(crate) grouped_sends: u64,
    pub(crate) ungroupings: u64,
}

/// How a [`FlowModel`] computes; both give the same times (tested).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlowMode {
    /// Transfers of the same route that share no link are held as groups, one flow each,
    /// turned back into flows when two would drain over one link and regrouped when nothing
    /// is in flight (the module docs); finished flows are dropped. The default.
    #[default]
    Grouped,
    /// Every transfer a flow throughout, every flow kept: the reference, and slower.
    FlowByFlow,
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
        // A machine file's chip injects and ejects at the sum of its own links.
        if let Network::Graph(g) = &net {
            for c in 0..g.chips() {
                let sum = g.injection(NodeId(c)) as f64;
                inject[c as usize] = sum;
                eject[c as usize] = sum;
            }
        }
        // An endpoint link of at least its node's network links' capacity in all (out of the
        // node for its injection, into it for its ejection) can never bind: every flow through
        // it crosses one of those links too, so the flows it carries take at most their sum.
        // Leaving it off a flow's path changes no max-min rate (the feasible rates are the
        // same), and keeps the flows a node sends on different links apart (grouped mode,
        // smaller components).
        let mut out_sum = vec![0.0f64; endpoints];
        let mut in_sum = vec![0.0f64; endpoints];
        for (u, out) in out_sum.iter_mut().enumerate() {
            let mut i = 0;
            while let Some(l) = links.out_link(NodeId(u as u64), i) {
                *out += capacity[l];
                in_sum[links.target(l).0 as usize] += capacity[l];
                i += 1;
            }
        }
        let binds: Vec<bool> = inject
            .iter()
            .zip(&out_sum)
            .chain(eject.iter().zip(&in_sum))
            .map(|(&c, &sum)| c < sum)
            .collect();
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
            binds,
            packets,
            ecmp,
            flows: Vec::new(),
            active: Vec::new(),
            drains: BinaryHeap::new(),
            transfers: Vec::new(),
            arrivals: BinaryHeap::new(),
            now: SimTime::ZERO,
            dirty: false,
            report: NetReport::default(),
            on: vec![Vec::new(); n_links],
            nodes: Vec::new(),
            free_nodes: Vec::new(),
            seeds: Vec::new(),
            epoch: 0,
            seen: Vec::new(),
            count: vec![0; n_links],
            cap: vec![0.0; n_links],
            row: vec![0; n_links],
            comp: Vec::new(),
            stack: Vec::new(),
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
            mode: FlowMode::Grouped,
            now_in: FlowMode::Grouped,
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

    /// The same model computing in `mode`. [`FlowMode::FlowByFlow`] never groups (see the
    /// module docs) and keeps every flow it was given: the reference the grouped mode and the
    /// dropping of finished flows are checked against, and otherwise slower.
    pub fn with_mode(mut self, mode: FlowMode) -> Self {
        if mode == FlowMode::FlowByFlow {
            self.materialise();
        }
        self.mode = mode;
        self
    }

    /// The mode the model was given.
    pub fn mode(&self) -> FlowMode {
        self.mode
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
    /// The endpoint links a flow from `src` to `dst` over a route of `hops` network links is
    /// limited by (the first `.1` of `.0`): the source's injection and the destination's
    /// ejection, less those that cannot bind (`binds`) when the route crosses the network.
    fn ends(&self, src: NodeId, dst: NodeId, hops: usize) -> ([LinkId; 2], usize) {
        let mut out = [0; 2];
        let mut n = 0;
        for l in [self.inject(src), self.eject(dst)] {
            if hops == 0 || self.binds[l - self.links.len()] {
                out[n] = l;
                n += 1;
            }
        }
        (out, n)
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
            for l in self.links_of(f) {
                load[l] += self.flows[f].rate;
            }
        }
        load.into_iter()
            .zip(self.capacity.iter().copied())
            .collect()
    }

    /// Every draining flow's links and rate (after recomputation), and every link's
    /// capacity, for the tests' max-min reference.
    #[cfg(test)]
    pub(crate) fn draining(&mut self) -> (Vec<(Vec<LinkId>, f64)>, Vec<f64>) {
        self.recompute();
        let flows = self
            .active
            .iter()
            .map(|&f| (self.links_of(f).collect(), self.flows[f].rate))
            .collect();
        (flows, self.capacity.clone())
    }

    /// The links of draining flow `f`.
    fn links_of(&self, f: usize) -> impl Iterator<Item = LinkId> + '_ {
        let fl = &self.flows[f];
        self.nodes[fl.node0 as usize..(fl.node0 + fl.len) as usize]
            .iter()
            .map(|n| n.link as usize)
    }

    /// Flow `f` starts draining over `links`: it joins each link's list and the active set,
    /// and its links are searched at the next recomputation.
    fn attach(&mut self, f: usize, links: &[LinkId]) {
        let len = links.len();
        let node0 = match self.free_nodes.get_mut(len).and_then(Vec::pop) {
            Some(n) => n as usize,
            None => {
                let n = self.nodes.len();
                let blank = Node {
                    link: 0,
                    flow: 0,
                    pos: 0,
                };
                self.nodes.resize(n + len, blank);
                n
            }
        };
        for (k, &l) in links.iter().enumerate() {
            let i = (node0 + k) as u32;
            self.nodes[i as usize] = Node {
                link: l as u32,
                flow: f as u32,
                pos: self.on[l].len() as u32,
            };
            self.on[l].push(i);
            self.seeds.push(l);
        }
        let fl = &mut self.flows[f];
        fl.node0 = node0 as u32;
        fl.len = len as u32;
        fl.at = self.active.len();
        self.active.push(f);
        self.dirty = true;
    }

    /// Flow `f` stops draining: it leaves its links' lists (which are searched at the next
    /// recomputation) and the active set.
    fn detach(&mut self, f: usize) {
        let (node0, len, at) = {
            let fl = &self.flows[f];
            (fl.node0 as usize, fl.len as usize, fl.at)
        };
        for i in node0..node0 + len {
            let Node { link, pos, .. } = self.nodes[i];
            let list = &mut self.on[link as usize];
            list.swap_remove(pos as usize);
            if let Some(&moved) = list.get(pos as usize) {
                self.nodes[moved as usize].pos = pos;
            }
            self.seeds.push(link as usize);
        }
        if len > 0 {
            if self.free_nodes.len() <= len {
                self.free_nodes.resize_with(len + 1, Vec::new);
            }
            self.free_nodes[len].push(node0 as u32);
        }
        self.active.swap_remove(at);
        if let Some(&moved) = self.active.get(at) {
            self.flows[moved].at = at;
        }
        let fl = &mut self.flows[f];
        fl.len = 0;
        fl.at = ABSENT;
        fl.version = fl.version.wrapping_add(1);
        self.dirty = true;
    }

    /// Move the clock to `t`. Flows drain lazily: a flow's remaining bytes are brought up to
    /// date only when its rate changes (see [`FlowModel::recompute`]).
    fn progress_to(&mut self, t: SimTime) {
        if t > self.now {
            self.now = t;
        }
    }

    /// Add flow `fl` (its index is `flows.len()` before).
    fn push_flow(&mut self, fl: Flow) {
        self.flows.push(fl);
        self.seen.push((0, 0));
    }

    /// The next search's mark.
    fn next_epoch(&mut self) -> u32 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.seen.fill((0, 0));
            self.epoch = 1;
        }
        self.epoch
    }

    /// Max-min fair rates by progressive filling, over the components of the flow-link graph
    /// that changed; then the drain time of every flow whose rate changed.
    ///
    /// Max-min rates decompose over connected components (flows joined when they share a
    /// link): filling one component alone takes its links in the same (share, link id) order
    /// as filling everything would and subtracts the same shares from them, so its rates are
    /// bit for bit the global ones. A flow started or drained changes only the components
    /// through its links (the `seeds`); every other flow keeps its rate, its remaining bytes
    /// and its drain time.
    ///
    /// Shares are rounded down to 36 significant bits. Rates stay within 2⁻³⁶ of the exact
    /// max-min rates and never above them, and flows in symmetric positions, whose exact
    /// shares are equal but whose floating-point sums can differ in the last bits, get exactly
    /// the same rate, so they drain at the same picosecond and are handled in one step.
    ///
    /// A flow whose rate changes (bit for bit) has its remaining bytes brought up to now
    /// (`remaining - rate x (now - since)`, once for the whole interval), then its drain time
    /// worked out afresh at its new rate; a new entry goes into the drain heap.
    fn recompute(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let epoch = self.next_epoch();
        // The changed components: their flows (`comp`) and links (`touched`, each with its
        // number of flows in `count`, which marks it as reached), and the rows of flows on
        // those links (`members`) and of links of those flows (`flat`).
        let mut touched = std::mem::take(&mut self.scratch_links);
        let mut comp = std::mem::take(&mut self.comp);
        let mut stack = std::mem::take(&mut self.stack);
        touched.clear();
        comp.clear();
        stack.clear();
        self.members.clear();
        self.flat.clear();
        self.starts.clear();
        for &l in &self.seeds {
            if !self.on[l].is_empty() && self.count[l] == 0 {
                self.count[l] = 1;
                touched.push(l);
                stack.push(l);
            }
        }
        self.seeds.clear();
        while let Some(l) = stack.pop() {
            let row = self.members.len();
            self.row[l] = row as u32;
            self.members.push(0);
            for j in 0..self.on[l].len() {
                let f = self.nodes[self.on[l][j] as usize].flow as usize;
                let (mark, a) = self.seen[f];
                if mark == epoch {
                    self.members.push(a);
                    continue;
                }
                let a = comp.len() as u32;
                self.seen[f] = (epoch, a);
                self.members.push(a);
                comp.push(f);
                self.starts.push(self.flat.len() as u32);
                let fl = &self.flows[f];
                for k in fl.node0..fl.node0 + fl.len {
                    let l2 = self.nodes[k as usize].link;
                    self.flat.push(l2);
                    let l2 = l2 as usize;
                    if self.count[l2] == 0 {
                        self.count[l2] = 1;
                        touched.push(l2);
                        stack.push(l2);
                    }
                }
            }
            let n = (self.members.len() - row - 1) as u32;
            self.members[row] = n;
            self.count[l] = n;
        }
        self.starts.push(self.flat.len() as u32);
        for &l in touched.iter() {
            self.cap[l] = self.capacity[l];
        }
        self.frozen.clear();
        self.frozen.resize(comp.len(), false);
        self.rates.clear();
        self.rates.resize(comp.len(), 0.0);
        // Links by (fair share, id), each once with its current share: the order in which
        // a heap of every share ever computed, stale ones skipped, would take them.
        let mut heap = std::mem::take(&mut self.heap);
        heap.build(&touched, |l| {
            quantize(self.cap[l] / f64::from(self.count[l]))
        });
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
            // Every unfrozen flow on the bottleneck freezes at its share. (Within one
            // bottleneck every flow takes the same share off its links, so the order the
            // link's list gives them in changes no sum.)
            let row = self.row[l] as usize;
            let n = self.members[row] as usize;
            for k in row + 1..row + 1 + n {
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
        let now = self.now;
        for (a, &f) in comp.iter().enumerate() {
            let fl = &mut self.flows[f];
            let fresh = self.rates[a];
            // (A new flow's rate is 0 until now: it always takes its first.)
            if fl.rate != 0.0 && fresh.to_bits() == fl.rate.to_bits() {
                continue;
            }
            let dt = (now - fl.since).as_ps() as f64 / 1e12;
            fl.remaining = (fl.remaining - fl.rate * dt).max(0.0);
            fl.since = now;
            fl.rate = fresh;
            fl.finish = now + podsim_units::SimDuration::from_ps(drain_ps(fl.remaining, fl.rate));
            fl.version = fl.version.wrapping_add(1);
            self.drains.push(Reverse((fl.finish, f, fl.version)));
        }
        // Stale entries are skipped as they come up; when they are most of the heap (a large
        // component whose rates all change, again and again), they go at once.
        if self.drains.len() > 2 * self.active.len() + 1024 {
            let flows = &self.flows;
            self.drains.retain(|&Reverse((_, f, v))| {
                let fl = &flows[f];
                fl.at != ABSENT && fl.version == v
            });
        }
        self.scratch_links = touched;
        self.comp = comp;
        self.stack = stack;
    }

    /// Whether a drain heap entry is the flow's current one.
    fn current(&self, f: usize, version: u32) -> bool {
        let fl = &self.flows[f];
        fl.at != ABSENT && fl.version == version
    }

    /// The earliest drain among active flows.
    fn next_drain(&mut self) -> Option<SimTime> {
        self.recompute();
        while let Some(&Reverse((t, f, v))) = self.drains.peek() {
            if self.current(f, v) {
                return Some(t);
            }
            self.drains.pop();
        }
        None
    }

    /// Process drains up to and including `t`.
    fn drain_until(&mut self, t: SimTime) {
        while let Some(d) = self.next_drain() {
            if d > t {
                break;
            }
            self.progress_to(d);
            while let Some(&Reverse((at, f, v))) = self.drains.peek() {
                if at > d {
                    break;
                }
                self.drains.pop();
                if !self.current(f, v) {
                    continue;
                }
                self.detach(f);
                let fl = &mut self.flows[f];
                fl.remaining = 0.0;
                fl.since = d;
                self.arrivals.push(Reverse((
                    d + podsim_units::SimDuration::from_ps(fl.latency),
                    f,
                )));
            }
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

    /// Grouped mode: move the clock to `t` (as [`FlowModel::progress_to`]: a group's rate
    /// never changes, so its remaining bytes stay those it was sent with until it drains).
    fn g_progress_to(&mut self, t: SimTime) {
        if t > self.now {
            self.now = t;
        }
    }

    /// Grouped mode: [`FlowModel::recompute`]. Rates are fixed when a flow is sent (alone on
    /// its links, nothing changes them) and so are drain times; what remains is the peak load
    /// and the earliest drain.
    fn g_recompute(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let peak = std::mem::take(&mut self.g.peak);
        self.report.max_link_utilization = self.report.max_link_utilization.max(peak);
        self.first_drain = self.g.groups.iter().map(|g| g.finish).min();
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
        if let Some(&(d, lane)) = self.lanes.get(s)
            && d == dst.0
        {
            return Some(lane);
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
        let (ends, n_ends) = self.ends(src, dst, route.len());
        let ends = &ends[..n_ends];
        // Alone on its links, a flow's max-min rate is the smallest rounded capacity on its
        // path (progressive filling fixes it at its tightest link), and each link's load is
        // that rate over its capacity, as the recomputation works it out.
        let rate = route
            .iter()
            .chain(ends)
            .map(|&l| self.lone_share[l])
            .fold(f64::INFINITY, |a, b| if b < a { b } else { a });
        let peak = route.iter().chain(ends).fold(0.0f64, |p, &l| {
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
        let (ends, n_ends) = self.ends(src, dst, lane.len);
        let ends = &ends[..n_ends];
        let route = lane.start..lane.start + lane.len;
        if !zero {
            // Alone on every link, or not grouped.
            let path = &self.lane_links[route.clone()];
            for (k, &l) in path.iter().chain(ends).enumerate() {
                if self.g.busy[l] {
                    for &u in path.iter().chain(ends).take(k) {
                        self.g.busy[u] = false;
                    }
                    return Ok(None);
                }
                self.g.busy[l] = true;
            }
        }
        if let Err(e) = self.report.count_send(bytes.0, on_wire as u64) {
            if !zero {
                for &u in self.lane_links[route.clone()].iter().chain(ends) {
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
                // Its rate is set at `at` and never changes: it drains when the flow-by-flow
                // recomputation at `at` says.
                g.opened = at;
                g.remaining = share;
                g.rate = rate;
                g.finish = at + podsim_units::SimDuration::from_ps(drain_ps(share, rate));
                self.g.groups.push(g);
                self.g.groups.len() - 1
            }
        };
        let g = &mut self.g.groups[gi];
        let start = g.links.len() as u32;
        g.links.extend_from_slice(&self.lane_links[route]);
        g.links.extend_from_slice(ends);
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
        if self.now_in == FlowMode::FlowByFlow {
            return;
        }
        self.now_in = FlowMode::FlowByFlow;
        self.ungroupings += 1;
        let mut items: Vec<(Completion, Unpacked)> = Vec::new();
        for g in std::mem::take(&mut self.g.groups) {
            for (&c, m) in g.cs.iter().zip(&g.members) {
                items.push((
                    c,
                    Unpacked::Draining {
                        remaining: g.remaining,
                        rate: g.rate,
                        since: g.opened,
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
                    since,
                    finish,
                    links,
                    latency,
                } => {
                    let mut fl = Flow::new(transfer, remaining, since, latency);
                    fl.rate = rate;
                    fl.finish = finish;
                    self.push_flow(fl);
                    self.attach(f, &links);
                    self.drains
                        .push(Reverse((finish, f, self.flows[f].version)));
                }
                Unpacked::Arriving(t) => {
                    self.push_flow(Flow::new(transfer, 0.0, t, 0));
                    self.arrivals.push(Reverse((t, f)));
                }
            }
        }
        self.g.busy.iter_mut().for_each(|b| *b = false);
        // Every flow's links are searched at the next recomputation (`attach`), which fills
        // their components again: a flow alone on its links gets the rate its group had, bit
        // for bit, so nothing changes but the peak load of the flows sent since the last
        // recomputation, which it sees (as the flow-by-flow computation would).
        self.g.peak = 0.0;
    }

    /// Drop the flows and transfers of the flow-by-flow mode that are over (neither draining
    /// nor arriving), keeping the rest in order (so nothing that depends on their order
    /// changes), when they are most of what is held: the model holds what is in flight, not
    /// every transfer it was given.
    fn compact(&mut self) {
        let live = self.active.len() + self.arrivals.len();
        // The reference keeps everything, as it always did.
        if self.mode == FlowMode::FlowByFlow || self.flows.len() < 2 * live + 4096 {
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
        self.seen = vec![(0, 0); self.flows.len()];
        self.transfers = transfers;
        for f in &mut self.active {
            *f = flow_at[*f];
            let fl = &self.flows[*f];
            for k in fl.node0..fl.node0 + fl.len {
                self.nodes[k as usize].flow = *f as u32;
            }
        }
        let drains = std::mem::take(&mut self.drains).into_vec();
        self.drains = drains
            .into_iter()
            .filter(|&Reverse((_, f, _))| flow_at[f] != usize::MAX)
            .map(|Reverse((t, f, v))| Reverse((t, flow_at[f], v)))
            .collect();
        let arrivals = std::mem::take(&mut self.arrivals).into_vec();
        self.arrivals = arrivals
            .into_iter()
            .map(|Reverse((t, f))| Reverse((t, flow_at[f])))
            .collect();
    }

    /// Back to grouped mode when nothing is in flight (and the model may group): the
    /// flow-by-flow state is empty, so is the grouped one.
    fn regroup_if_idle(&mut self) {
        if self.now_in == FlowMode::Grouped
            || self.mode == FlowMode::FlowByFlow
            || !self.active.is_empty()
            || !self.arrivals.is_empty()
        {
            return;
        }
        self.flows.clear();
        self.seen.clear();
        self.transfers.clear();
        self.drains.clear();
        self.nodes.clear();
        self.free_nodes.clear();
        self.seeds.clear();
        self.now_in = FlowMode::Grouped;
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
        if self.now_in == FlowMode::Grouped {
            let Some(lane) = self.lane(src, dst) else {
                return Err(NetError::NoRoute(src, dst));
            };
            if at > self.now {
                self.g_drain_until(at);
            }
            if lane.routes == 1
                && let Some(id) = self.g_send(src, dst, bytes, tag, lane)?
            {
                return Ok(id);
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
            let latency = r.iter().map(|&l| self.latency_ps[l]).sum();
            let f = self.flows.len();
            if src == dst || wire == 0 {
                self.push_flow(Flow::new(transfer, 0.0, at, latency));
                self.arrivals.push(Reverse((
                    at + podsim_units::SimDuration::from_ps(latency),
                    f,
                )));
                continue;
            }
            for &l in &r {
                self.carried[l] += share;
            }
            let (ends, n_ends) = self.ends(src, dst, r.len());
            let mut links = r;
            links.extend_from_slice(&ends[..n_ends]);
            // Rate 0 until the next recomputation gives it one (and its drain time).
            self.push_flow(Flow::new(transfer, share, at, latency));
            self.attach(f, &links);
        }
        Ok(TransferId(id))
    }

    fn next_completion(&mut self) -> Option<SimTime> {
        if self.now_in == FlowMode::Grouped {
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
        if self.now_in == FlowMode::Grouped {
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

    fn exchange(
        &mut self,
        x: &Exchange<'_>,
        each: &mut dyn FnMut(&Completion),
    ) -> Option<Result<(), NetError>> {
        self.exchange_by_classes(x, each)
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
