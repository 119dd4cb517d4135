//! The Tofu barrier (tofu-interconnect-d.txt sections III and V.E, Table VI, Fig. 8): barrier
//! channels (BCHs) and barrier gates (BGs) wired into reduce-broadcast trees and recursive
//! doubling, timed gate by gate, inside a node and across a whole machine.
//!
//! # The hardware
//! A BG waits for signals from up to two preset BGs, then signals up to two others. A
//! start-and-end BG belongs to a BCH: it starts when its process enters the barrier, and the
//! barrier is over for that process when the end of its BG has heard from its (at most two)
//! inputs. Relay BGs sit in between. podsim models each start-and-end point as one gate whose
//! outputs are its start's and whose inputs are its end's (its own start is an implicit
//! input: a process leaves no earlier than it entered).
//!
//! # The allocation (Table VI)
//! The test programs of section V.E use the reduce-broadcast tree inside a TNI and recursive
//! doubling between TNIs. podsim builds that shape as follows, and it reproduces every row of
//! Table VI (points 1/4/8/16/48 -> TNIs 1/4/6/6/6, BCHs per TNI 1/1/2/3/8, BGs per TNI
//! 2/2/5/9/24, stages 2/2/4/6/9; tested):
//! 1. `P` points take `T = min(P, TNIs)` TNIs, `P / T` BCHs each, the first `P mod T` one more.
//! 2. The points form `g <= T` groups of balanced size; group `j` lives on TNI `j` and takes
//!    its own TNI's points, then borrows the points left over on the other TNIs, in order;
//!    borrowed points come first in the group's order.
//! 3. Each group reduces its points through a balanced binary tree of relays (fan-in two) to
//!    a root; the roots run recursive doubling, `ceil(log2 g)` rounds (for a `g` that is not a
//!    power of two, the dissemination form: round `k` pairs `i` with `i - 2^(k-1)`, which needs
//!    the same two inputs and two outputs per BG); the last round's BG broadcasts back down a
//!    binary tree of relays. A group of one point starts and ends the rounds at its own BG.
//! 4. `g` is the one with the fewest stages (then the fewest BGs on the busiest TNI, then the
//!    fewest groups). This picks 4 groups for 8 and 16 points and 6 for 48.
//! 5. Relays sit on the group's TNI, except a reduce relay below the root, which sits on the
//!    TNI of the first point of its subtree: a borrowed point is combined with the group's
//!    first point (the first its TNI starts) on the borrowed point's own TNI. This is what
//!    gives Table VI's 9 BGs on the busiest TNI for 16 points, and it keeps the serialized
//!    timing at the paper's closed form (the borrowed point's TNI has its relay's inputs early,
//!    so its queue never holds up a group). The paper does not say where its test programs
//!    put their relays: the rule is podsim's, chosen to match the table.
//! 6. A barrier of one point still needs a relay (a BG does not signal itself): one BCH and
//!    two BGs in series, the paper's component test.
//!
//! # Timing (section V.E, Fig. 8)
//! BCH plus start-and-end BG: 0.48 us; a relay BG: 0.13 us. When several BCHs of one
//! communicator share a TNI, 0.19 us of their start overlaps and the remaining 0.29 us is
//! serialised, and the waveforms showed every BCH and BG of a TNI processed one after another.
//! podsim times the gate graph two ways: *minimum* (every gate in parallel: the critical path,
//! 0.48 us plus 0.13 us per relay on it, which grows with the stages, i.e. with log2 of the
//! BCHs) and *serialized* (each TNI one server: the start's 0.19 us in parallel, then its
//! 0.29 us and every relay's 0.13 us first come, first served). Table VI's configurations give
//! exactly the closed form of the paper's serialized estimate, 0.19 + 0.29 b + 0.13 (BGs - b)
//! us on the busiest TNI (validation/tofu-barrier.toml).
//!
//! # Across nodes
//! Every node carries the same groups; all groups of all nodes, in rank order (Fujitsu's
//! virtual 3-D torus order where the shape has one), run the rounds together. A signal between
//! BGs of two nodes crosses the network: the hop count in the 6-D mesh/torus times the
//! preset's per-hop latency ([`podsim_system::presets::tofu_hop_latency`]; an assumption: a
//! barrier packet pays the same one link and two switches per hop as a put). The software
//! alternative is a dissemination barrier over all processes, each round a put
//! ([`podsim_system::presets::tofu_put`], TofuD near CMGs: 0.41 us at the ends plus the hops)
//! or, on the same node, a flag in shared memory ([`MEMORY_FLAG_NS`]).

use podsim_topology::{NodeId, Tofu, TofuGeneration};

use crate::node::NodeResources;

/// BCH plus start-and-end BG, ns (section V.E: "approximately 0.48 us").
pub const START_END_NS: u64 = 480;
/// The part of [`START_END_NS`] that overlaps between BCHs of one TNI, ns (section V.E: 0.19 us
/// of 0.48 us).
pub const START_OVERLAP_NS: u64 = 190;
/// A relay BG, ns (section V.E: "nearly 0.13 us").
pub const RELAY_NS: u64 = 130;
/// One flag through shared memory between cores of a node, ns: 0.1 us, a stated assumption
/// (a cache-line transfer between cores of different CMGs is of that order on A64FX-class
/// processors; the seed gives no figure). It prices the memory part of the MPI rule (processes
/// sharing a BCH) and the same-node rounds of the software barrier.
pub const MEMORY_FLAG_NS: u64 = 100;

/// How the points of a node get their BCHs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocation {
    /// Section V.E's test programs: one process drives all points, several BCHs per TNI when
    /// the points outnumber the TNIs (Table VI).
    Test,
    /// The rule section V.E recommends for MPI: up to six processes, one BCH each from
    /// different TNIs; more, six groups of processes each sharing one BCH and synchronising
    /// inside the group through memory.
    Mpi,
}

impl Allocation {
    /// From its command-line name (`test`, `mpi`).
    pub fn parse(s: &str) -> Option<Allocation> {
        match s {
            "test" => Some(Allocation::Test),
            "mpi" => Some(Allocation::Mpi),
            _ => None,
        }
    }
}

/// Why a barrier cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BarrierError {
    /// The component latencies exist for TofuD only.
    #[error(
        "the Tofu barrier is timed for TofuD only: the paper measures its components (0.48 us, 0.13 us) on TofuD (section V.E); got {0}"
    )]
    Generation(&'static str),
    /// No points.
    #[error("a barrier needs at least one point per node")]
    NoPoints,
    /// Out of BCHs or BGs on a TNI.
    #[error(
        "out of {resource} on TNI {tni}: the barrier needs {needed}, a TofuD TNI has {per_tni} ({total} per node, Table II); use --allocation mpi or fewer points"
    )]
    Exhausted {
        /// `BCHs` or `BGs`.
        resource: &'static str,
        /// The TNI.
        tni: u32,
        /// What the barrier needs there.
        needed: u32,
        /// What a TNI has.
        per_tni: u32,
        /// What a node has.
        total: u32,
    },
    /// The node set has no nodes.
    #[error("the network has no nodes")]
    NoNodes,
    /// More nodes than a barrier's node ids count (32 bits).
    #[error("{0} nodes: a machine-wide barrier takes at most 4,294,967,295 (Fugaku has 158,976)")]
    TooManyNodes(u64),
    /// An all-reduce vector a BG cannot carry.
    #[error(
        "a TofuD BG reduces 1 to {max} elements of this type (eight integers or three floating point numbers, section IV.D); got {got}"
    )]
    Elements {
        /// Elements given.
        got: usize,
        /// The most a BG carries.
        max: usize,
    },
    /// An all-reduce with processes sharing BCHs.
    #[error(
        "an all-reduce through the BGs needs one point per process; processes sharing a BCH through memory reduce there first (use at most six processes with --allocation mpi)"
    )]
    Shared,
    /// The gate graph would not fit in memory.
    #[error(
        "the barrier's gate graph needs about {estimate} bytes ({gates} gates), more than the memory limit of {limit} bytes; use fewer processes per node or a smaller machine"
    )]
    Memory {
        /// Gates it would wire.
        gates: u64,
        /// Bytes it would hold.
        estimate: u64,
        /// The limit.
        limit: u64,
    },
}

/// Bytes a gate costs while a barrier is wired and timed (the gate, its times, its place in
/// the order and the calendar; measured about 44 on Fugaku, rounded up).
pub const BYTES_PER_GATE: u64 = 64;

/// One BG: a start-and-end point or a relay.
#[derive(Debug, Clone, Copy)]
struct Gate {
    node: u32,
    tni: u8,
    point: bool,
    /// A point whose end also takes its own start's value (the self edge left implicit).
    self_in: bool,
    n_in: u8,
    n_out: u8,
    inputs: [u32; 2],
    outputs: [u32; 2],
}

/// A barrier's gates, wired.
#[derive(Debug, Clone)]
pub struct Barrier {
    gates: Vec<Gate>,
    /// Points on one node: (TNI, BCH index on it).
    node_points: Vec<(u8, u32)>,
    /// Groups per node.
    groups_per_node: usize,
    /// Processes sharing each point through memory (1 unless the MPI rule groups them).
    sharing: u32,
    /// Nodes.
    nodes: u32,
}

/// What a barrier costs and uses.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BarrierResult {
    /// Points (BCHs) on a node.
    pub points: u32,
    /// Processes per node (more than the points when the MPI rule shares BCHs).
    pub processes: u32,
    /// Nodes.
    pub nodes: u32,
    /// TNIs a node uses.
    pub tnis: u32,
    /// BCHs on the busiest TNI.
    pub bchs_per_tni: u32,
    /// BGs on the busiest TNI.
    pub bgs_per_tni: u32,
    /// Communication stages: BG-to-BG signals on the longest path.
    pub stages: u32,
    /// Groups (recursive-doubling participants) per node.
    pub groups_per_node: u32,
    /// Serialized timing (each TNI one server), s: what the evaluation matched.
    pub latency_s: f64,
    /// Every gate in parallel (the critical path), s.
    pub minimum_latency_s: f64,
    /// The paper's closed-form serialized estimate on the busiest TNI, 0.19 + 0.29 b + 0.13
    /// (BGs - b) us (single node only), s.
    pub serialized_estimate_s: Option<f64>,
    /// The memory part of the MPI rule (processes sharing a BCH), included in the latencies, s.
    pub memory_sync_s: f64,
}

fn ceil_log2(n: usize) -> u32 {
    if n <= 1 {
        0
    } else {
        usize::BITS - (n - 1).leading_zeros()
    }
}

/// Where a node's points go and how many processes share each: (points as (TNI, index),
/// processes per point).
fn node_points(processes: u32, alloc: Allocation, tnis: u32) -> (Vec<(u8, u32)>, u32) {
    let (p, sharing) = match alloc {
        Allocation::Test => (processes, 1),
        Allocation::Mpi if processes <= tnis => (processes, 1),
        Allocation::Mpi => (tnis, processes.div_ceil(tnis)),
    };
    let t = p.min(tnis);
    let mut pts = Vec::new();
    for tni in 0..t {
        let b = p / t + u32::from(tni < p % t);
        for i in 0..b {
            pts.push((tni as u8, i));
        }
    }
    (pts, sharing)
}

/// The groups of one node's points: `g` lists of point indices (see the module docs, step 2).
fn groups_of(pts: &[(u8, u32)], g: usize) -> Vec<Vec<usize>> {
    let p = pts.len();
    let sizes: Vec<usize> = (0..g).map(|j| p / g + usize::from(j < p % g)).collect();
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); g];
    let mut taken = vec![false; p];
    for (j, group) in groups.iter_mut().enumerate() {
        for (i, &(tni, _)) in pts.iter().enumerate() {
            if group.len() < sizes[j] && usize::from(tni) == j && !taken[i] {
                group.push(i);
                taken[i] = true;
            }
        }
    }
    let mut left = (0..p).filter(|&i| !taken[i]);
    for (j, group) in groups.iter_mut().enumerate() {
        let mut borrowed = Vec::new();
        while group.len() + borrowed.len() < sizes[j] {
            borrowed.push(left.next().expect("group sizes add up to the points"));
        }
        // Borrowed points first (module docs, step 5).
        borrowed.append(group);
        *group = borrowed;
    }
    groups
}

struct Builder<'a> {
    gates: Vec<Gate>,
    pts: &'a [(u8, u32)],
}

impl Builder<'_> {
    fn relay(&mut self, node: u32, tni: u8) -> u32 {
        self.gates.push(Gate {
            node,
            tni,
            point: false,
            self_in: false,
            n_in: 0,
            n_out: 0,
            inputs: [0; 2],
            outputs: [0; 2],
        });
        (self.gates.len() - 1) as u32
    }
    fn connect(&mut self, from: u32, to: u32) {
        if from == to {
            // A point's end waits on its own start implicitly.
            self.gates[to as usize].self_in = true;
            return;
        }
        let f = &mut self.gates[from as usize];
        assert!(f.n_out < 2, "a BG signals at most two BGs");
        f.outputs[f.n_out as usize] = to;
        f.n_out += 1;
        let t = &mut self.gates[to as usize];
        assert!(t.n_in < 2, "a BG waits on at most two BGs");
        t.inputs[t.n_in as usize] = from;
        t.n_in += 1;
    }
    /// Reduce `leaves` (gate ids) to one gate; the root sits at `home`.
    fn reduce(&mut self, node: u32, leaves: &[u32], home: u8, root: bool) -> u32 {
        if leaves.len() == 1 {
            return leaves[0];
        }
        let (l, r) = leaves.split_at(leaves.len().div_ceil(2));
        let a = self.reduce(node, l, home, false);
        let b = self.reduce(node, r, home, false);
        let tni = if root {
            home
        } else {
            self.gates[leaves[0] as usize].tni
        };
        let g = self.relay(node, tni);
        self.connect(a, g);
        self.connect(b, g);
        g
    }
    /// Broadcast from `from` down to `leaves`, relays at `home`.
    fn broadcast(&mut self, node: u32, from: u32, leaves: &[u32], home: u8) {
        if leaves.len() == 1 {
            self.connect(from, leaves[0]);
            return;
        }
        let (l, r) = leaves.split_at(leaves.len().div_ceil(2));
        for half in [l, r] {
            if half.len() == 1 {
                self.connect(from, half[0]);
            } else {
                let g = self.relay(node, home);
                self.connect(from, g);
                self.broadcast(node, g, half, home);
            }
        }
    }
}

impl Barrier {
    /// Wire a barrier over `ranks` (node ids in rank order; their count is the node count),
    /// `processes` per node, allocated by `alloc`, with `groups` groups per node (`None`: the
    /// fewest stages, module docs step 4).
    fn build(
        nodes: u32,
        processes: u32,
        alloc: Allocation,
        groups: Option<usize>,
    ) -> Result<Barrier, BarrierError> {
        Self::build_with(nodes, processes, alloc, groups, false)
    }

    /// As [`Barrier::build`]; `exact` keeps the group count a power of two, so that recursive
    /// doubling combines every point exactly once (a sum must not count a point twice).
    fn build_with(
        nodes: u32,
        processes: u32,
        alloc: Allocation,
        groups: Option<usize>,
        exact: bool,
    ) -> Result<Barrier, BarrierError> {
        if processes == 0 {
            return Err(BarrierError::NoPoints);
        }
        if nodes == 0 {
            return Err(BarrierError::NoNodes);
        }
        let res = NodeResources::of(TofuGeneration::TofuD);
        // The test allocation puts ceil(P / 6) BCHs on the busiest TNI: refuse before wiring.
        if alloc == Allocation::Test {
            let per_tni = processes.div_ceil(res.tnis.min(processes));
            if per_tni > res.bchs_per_tni() {
                return Err(BarrierError::Exhausted {
                    resource: "BCHs",
                    tni: 0,
                    needed: per_tni,
                    per_tni: res.bchs_per_tni(),
                    total: res.bchs,
                });
            }
        }
        let (pts, sharing) = node_points(processes, alloc, res.tnis);
        let t = pts.iter().map(|p| p.0).max().expect("points") as usize + 1;
        let g = match groups {
            Some(g) => g,
            None => {
                let mut best: Option<((u32, u32, usize), Barrier)> = None;
                for g in (1..=t).filter(|g| !exact || g.is_power_of_two()) {
                    let b = Self::wire(1, &pts, g, sharing);
                    let key = (b.stages(), b.busiest().1, g);
                    if best.as_ref().is_none_or(|(k, _)| key < *k) {
                        best = Some((key, b));
                    }
                }
                best.expect("at least one group count").0.2
            }
        };
        let b = Self::wire(nodes, &pts, g, sharing);
        let (bchs, bgs, tni_b, tni_g) = b.busiest_with_tni();
        if bchs > res.bchs_per_tni() {
            return Err(BarrierError::Exhausted {
                resource: "BCHs",
                tni: tni_b,
                needed: bchs,
                per_tni: res.bchs_per_tni(),
                total: res.bchs,
            });
        }
        if bgs > res.bgs_per_tni() {
            return Err(BarrierError::Exhausted {
                resource: "BGs",
                tni: tni_g,
                needed: bgs,
                per_tni: res.bgs_per_tni(),
                total: res.bgs,
            });
        }
        Ok(b)
    }

    /// Wire `nodes` nodes of `pts` each into `g` groups per node.
    fn wire(nodes: u32, pts: &[(u8, u32)], g: usize, sharing: u32) -> Barrier {
        let groups = groups_of(pts, g);
        let mut bld = Builder {
            gates: Vec::new(),
            pts,
        };
        // Points first: gate id = node * points + point.
        for node in 0..nodes {
            for &(tni, _) in bld.pts {
                bld.gates.push(Gate {
                    node,
                    tni,
                    point: true,
                    self_in: false,
                    n_in: 0,
                    n_out: 0,
                    inputs: [0; 2],
                    outputs: [0; 2],
                });
            }
        }
        let p = pts.len() as u32;
        let total = nodes as usize * g;
        let rounds = ceil_log2(total);
        let leaves_of = |node: u32, j: usize| -> Vec<u32> {
            groups[j].iter().map(|&i| node * p + i as u32).collect()
        };
        // Reduce: each group's root.
        let mut cur: Vec<u32> = Vec::with_capacity(total);
        for node in 0..nodes {
            for j in 0..g {
                let leaves = leaves_of(node, j);
                cur.push(bld.reduce(node, &leaves, j as u8, true));
            }
        }
        let home = |k: usize| ((k / g) as u32, (k % g) as u8);
        // Recursive doubling (dissemination form) over every group of every node.
        for r in 1..=rounds {
            let d = 1usize << (r - 1);
            let mut next = Vec::with_capacity(total);
            for (k, &c) in cur.iter().enumerate() {
                let (node, j) = home(k);
                let single = groups[j as usize].len() == 1;
                let gate = if r == rounds && single {
                    leaves_of(node, j as usize)[0]
                } else {
                    bld.relay(node, j)
                };
                bld.connect(c, gate);
                next.push(gate);
            }
            for k in 0..total {
                let partner = cur[(k + total - d % total) % total];
                bld.connect(partner, next[k]);
            }
            cur = next;
        }
        // Broadcast back down.
        for (k, &c) in cur.iter().enumerate() {
            let (node, j) = home(k);
            let leaves = leaves_of(node, j as usize);
            if leaves.len() == 1 && rounds == 0 {
                // One point alone: one relay in series (module docs, step 6).
                let relay = bld.relay(node, j);
                bld.connect(leaves[0], relay);
                bld.connect(relay, leaves[0]);
            } else if leaves.len() > 1 {
                bld.broadcast(node, c, &leaves, j);
            }
        }
        Barrier {
            gates: bld.gates,
            node_points: pts.to_vec(),
            groups_per_node: g,
            sharing,
            nodes,
        }
    }

    /// The gates of node 0 per TNI: (BCHs, BGs, TNI of the most BCHs, TNI of the most BGs).
    fn busiest_with_tni(&self) -> (u32, u32, u32, u32) {
        let mut bch = [0u32; 256];
        let mut bg = [0u32; 256];
        for gate in self.gates.iter().filter(|g| g.node == 0) {
            bg[gate.tni as usize] += 1;
            if gate.point {
                bch[gate.tni as usize] += 1;
            }
        }
        let arg = |a: &[u32; 256]| {
            let m = *a.iter().max().expect("non-empty");
            (
                m,
                a.iter().position(|&x| x == m).expect("max exists") as u32,
            )
        };
        let (b, tb) = arg(&bch);
        let (g, tg) = arg(&bg);
        (b, g, tb, tg)
    }

    fn busiest(&self) -> (u32, u32) {
        let (b, g, _, _) = self.busiest_with_tni();
        (b, g)
    }

    /// A topological order of the gates (Kahn), points' starts first.
    fn order(&self) -> Vec<u32> {
        let n = self.gates.len();
        let mut indeg: Vec<u8> = self.gates.iter().map(|g| g.n_in).collect();
        let mut queue: Vec<u32> = (0..n as u32).filter(|&i| indeg[i as usize] == 0).collect();
        // Points with inputs still start at once: their start has no inputs.
        let mut started = vec![false; n];
        for (i, g) in self.gates.iter().enumerate() {
            if g.point && indeg[i] > 0 {
                queue.push(i as u32);
                started[i] = true;
            }
        }
        let mut out = Vec::with_capacity(n);
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head];
            head += 1;
            out.push(v);
            let g = self.gates[v as usize];
            for &w in &g.outputs[..g.n_out as usize] {
                indeg[w as usize] -= 1;
                if indeg[w as usize] == 0 && !started[w as usize] {
                    queue.push(w);
                }
            }
        }
        out
    }

    /// Communication stages: BG-to-BG signals on the longest path from a start to an end.
    pub fn stages(&self) -> u32 {
        self.longest(|_| 0, |_, _| 1).1 as u32
    }

    /// Longest path with gate cost `cost(gate)` and edge cost `edge(from, to)`: (per-gate
    /// completion, the latest end).
    fn longest(
        &self,
        cost: impl Fn(&Gate) -> u64,
        edge: impl Fn(&Gate, &Gate) -> u64,
    ) -> (Vec<u64>, u64) {
        // Start times of points' starts are 0; `start_done[p]` is when a point's start is done.
        let n = self.gates.len();
        let mut ready = vec![0u64; n];
        let mut done = vec![0u64; n];
        let mut end = 0u64;
        for v in self.order() {
            let g = &self.gates[v as usize];
            let t = if g.point {
                cost(g)
            } else {
                ready[v as usize] + cost(g)
            };
            done[v as usize] = t;
            for &w in &g.outputs[..g.n_out as usize] {
                let a = t + edge(g, &self.gates[w as usize]);
                ready[w as usize] = ready[w as usize].max(a);
            }
        }
        for (v, g) in self.gates.iter().enumerate() {
            if g.point {
                end = end.max(done[v].max(ready[v]));
            }
        }
        (done, end)
    }

    /// Serialized timing: each (node, TNI) one first-come-first-served server; `net(a, b)` the
    /// signal's time between the gates' nodes. Returns the latest end, ns.
    fn serialized(&self, net: &impl Fn(u32, u32) -> u64) -> u64 {
        let n = self.gates.len();
        let nodes = self
            .gates
            .iter()
            .map(|g| g.node)
            .max()
            .map_or(0, |m| m as usize + 1);
        let stride = self
            .gates
            .iter()
            .map(|g| usize::from(g.tni))
            .max()
            .unwrap_or(0)
            + 1;
        let mut free = vec![0u64; nodes * stride];
        let mut ready = vec![0u64; n];
        let mut pending: Vec<u8> = self.gates.iter().map(|g| g.n_in).collect();
        // A calendar of events, one bucket per ns, each bucket first come, first served:
        // (kind, gate) with kind 0 = request the server, 1 = done.
        let mut cal: Vec<Vec<(u8, u32)>> = Vec::new();
        let push = |cal: &mut Vec<Vec<(u8, u32)>>, t: u64, e: (u8, u32)| {
            let t = t as usize;
            if cal.len() <= t {
                cal.resize_with(t + 1, Vec::new);
            }
            cal[t].push(e);
        };
        let serial = START_END_NS - START_OVERLAP_NS;
        for (i, g) in self.gates.iter().enumerate() {
            if g.point {
                push(&mut cal, START_OVERLAP_NS, (0, i as u32));
            }
        }
        let mut end = 0u64;
        let mut start_done = vec![false; n];
        let mut t = 0usize;
        while t < cal.len() {
            let mut i = 0;
            while i < cal[t].len() {
                let (kind, v) = cal[t][i];
                i += 1;
                let now = t as u64;
                let g = self.gates[v as usize];
                if kind == 0 {
                    let dur = if g.point { serial } else { RELAY_NS };
                    let f = &mut free[g.node as usize * stride + usize::from(g.tni)];
                    let s = (*f).max(now);
                    *f = s + dur;
                    push(&mut cal, s + dur, (1, v));
                    continue;
                }
                // Done: signal the outputs.
                if g.point {
                    start_done[v as usize] = true;
                    if pending[v as usize] == 0 {
                        end = end.max(now.max(ready[v as usize]));
                    }
                }
                for o in 0..g.n_out as usize {
                    let w = g.outputs[o];
                    let wg = &self.gates[w as usize];
                    let a = now + net(g.node, wg.node);
                    let wi = w as usize;
                    ready[wi] = ready[wi].max(a);
                    pending[wi] -= 1;
                    if pending[wi] == 0 {
                        if wg.point {
                            if start_done[wi] {
                                end = end.max(ready[wi]);
                            }
                        } else {
                            push(&mut cal, ready[wi], (0, w));
                        }
                    }
                }
            }
            cal[t] = Vec::new();
            t += 1;
        }
        end
    }

    /// Time it: (serialized, minimum), ns, with `net(a, b)` between nodes.
    fn times(&self, net: &impl Fn(u32, u32) -> u64) -> (u64, u64) {
        let min = self
            .longest(
                |g| if g.point { START_END_NS } else { RELAY_NS },
                |a, b| net(a.node, b.node),
            )
            .1;
        (self.serialized(net), min)
    }

    /// The result, with `net` between nodes.
    fn result(&self, processes: u32, net: &impl Fn(u32, u32) -> u64) -> BarrierResult {
        let (serial, min) = self.times(net);
        let (b, bgs) = self.busiest();
        let memory = if self.sharing > 1 {
            u64::from(ceil_log2(self.sharing as usize) + 1) * MEMORY_FLAG_NS
        } else {
            0
        };
        let estimate = (self.nodes == 1).then(|| {
            (START_OVERLAP_NS
                + (START_END_NS - START_OVERLAP_NS) * u64::from(b)
                + RELAY_NS * u64::from(bgs - b)) as f64
                * 1e-9
        });
        BarrierResult {
            points: self.node_points.len() as u32,
            processes,
            nodes: self.nodes,
            tnis: u32::from(self.node_points.iter().map(|p| p.0).max().expect("points")) + 1,
            bchs_per_tni: b,
            bgs_per_tni: bgs,
            stages: self.stages(),
            groups_per_node: self.groups_per_node as u32,
            latency_s: (serial + memory) as f64 * 1e-9,
            minimum_latency_s: (min + memory) as f64 * 1e-9,
            serialized_estimate_s: estimate,
            memory_sync_s: memory as f64 * 1e-9,
        }
    }
}

/// A barrier among `processes` on one TofuD node (`points` in Table VI when `alloc` is
/// [`Allocation::Test`]).
pub fn node_barrier(processes: u32, alloc: Allocation) -> Result<BarrierResult, BarrierError> {
    let b = Barrier::build(1, processes, alloc, None)?;
    Ok(b.result(processes, &|_, _| 0))
}

/// A reduction a BG applies to the values it combines (section III: "A BG can perform the
/// reduction operation so that the Tofu barrier can perform all-reduce collective
/// communication that is limited to one element"; on TofuD, eight integers or three floating
/// point numbers, section IV.D).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// Integer sum (wrapping).
    Sum,
    /// Integer maximum.
    Max,
    /// Integer minimum.
    Min,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Floating-point sum.
    FSum,
    /// Floating-point maximum.
    FMax,
    /// Floating-point minimum.
    FMin,
}

impl ReduceOp {
    /// Every operation with its command-line name.
    pub const ALL: [(&'static str, ReduceOp); 8] = [
        ("sum", ReduceOp::Sum),
        ("max", ReduceOp::Max),
        ("min", ReduceOp::Min),
        ("and", ReduceOp::And),
        ("or", ReduceOp::Or),
        ("fsum", ReduceOp::FSum),
        ("fmax", ReduceOp::FMax),
        ("fmin", ReduceOp::FMin),
    ];
    /// From its command-line name.
    pub fn parse(s: &str) -> Option<ReduceOp> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, o)| *o)
    }
    /// Whether it works on floating-point numbers (three per BG on TofuD, else eight
    /// integers).
    pub fn is_float(self) -> bool {
        matches!(self, ReduceOp::FSum | ReduceOp::FMax | ReduceOp::FMin)
    }
    /// The elements one BG carries for this operation on TofuD.
    pub fn max_elements(self) -> usize {
        if self.is_float() { 3 } else { 8 }
    }
    /// Whether combining a value twice changes nothing (max, min, and, or): then any group
    /// count will do; a sum needs recursive doubling over a power of two.
    pub fn idempotent(self) -> bool {
        !matches!(self, ReduceOp::Sum | ReduceOp::FSum)
    }
    /// Combine two elements (integers as `i64`, floats as `f64` bits).
    pub fn combine(self, a: u64, b: u64) -> u64 {
        let (x, y) = (a as i64, b as i64);
        let (f, g) = (f64::from_bits(a), f64::from_bits(b));
        match self {
            ReduceOp::Sum => x.wrapping_add(y) as u64,
            ReduceOp::Max => x.max(y) as u64,
            ReduceOp::Min => x.min(y) as u64,
            ReduceOp::And => a & b,
            ReduceOp::Or => a | b,
            ReduceOp::FSum => (f + g).to_bits(),
            ReduceOp::FMax => f.max(g).to_bits(),
            ReduceOp::FMin => f.min(g).to_bits(),
        }
    }
}

/// An all-reduce through the BGs of one TofuD node: `inputs[p]` is point `p`'s vector
/// (integers as `i64`, floats as `f64` bits, all of one length up to the operation's
/// [`ReduceOp::max_elements`]). Returns the barrier it ran on and every point's result, each
/// computed by carrying the values along the gate graph.
pub fn node_allreduce(
    alloc: Allocation,
    op: ReduceOp,
    inputs: &[Vec<u64>],
) -> Result<(BarrierResult, Vec<Vec<u64>>), BarrierError> {
    let processes = u32::try_from(inputs.len()).map_err(|_| BarrierError::NoPoints)?;
    let n = inputs.first().map_or(0, Vec::len);
    if n == 0 || n > op.max_elements() || inputs.iter().any(|v| v.len() != n) {
        return Err(BarrierError::Elements {
            got: n,
            max: op.max_elements(),
        });
    }
    let b = Barrier::build_with(1, processes, alloc, None, !op.idempotent())?;
    if b.sharing > 1 {
        return Err(BarrierError::Shared);
    }
    let mut out: Vec<Vec<u64>> = vec![Vec::new(); b.gates.len()];
    let fold = |acc: Option<Vec<u64>>, v: &[u64]| -> Vec<u64> {
        match acc {
            None => v.to_vec(),
            Some(a) => a.iter().zip(v).map(|(&x, &y)| op.combine(x, y)).collect(),
        }
    };
    let mut ends: Vec<Vec<u64>> = vec![Vec::new(); inputs.len()];
    // What each gate sends: a point its own vector (its start), a relay what it combined.
    // Points come first in the order; a point's end is settled after every relay.
    for v in b.order() {
        let g = b.gates[v as usize];
        out[v as usize] = if g.point {
            inputs[v as usize].clone()
        } else {
            let mut acc = None;
            for &i in &g.inputs[..g.n_in as usize] {
                acc = Some(fold(acc, &out[i as usize]));
            }
            acc.expect("a relay has inputs")
        };
    }
    for (p, end) in ends.iter_mut().enumerate() {
        let g = b.gates[p];
        let mut acc = g.self_in.then(|| inputs[p].clone());
        for &i in &g.inputs[..g.n_in as usize] {
            acc = Some(fold(acc, &out[i as usize]));
        }
        *end = acc.unwrap_or_else(|| inputs[p].clone());
    }
    Ok((b.result(processes, &|_, _| 0), ends))
}

/// The ranks of a Tofu network: physical nodes in Fujitsu's virtual 3-D torus order where the
/// shape has one, else in physical order.
pub fn rank_order(net: &Tofu) -> Vec<NodeId> {
    let n = net.cube().node_count();
    match net.virtual_torus() {
        Some(_) => (0..n)
            .map(|v| {
                net.physical_of(NodeId(v))
                    .expect("a virtual rank maps to a node")
            })
            .collect(),
        None => (0..n).map(NodeId).collect(),
    }
}

/// A barrier across every node of `net`, and the software dissemination barrier on the same
/// network: (hardware, software seconds).
///
/// A graph whose estimate (an upper bound on the gates, [`BYTES_PER_GATE`] each) exceeds
/// `memory_limit` bytes is refused before anything is allocated.
pub fn machine_barrier(
    net: &Tofu,
    processes: u32,
    alloc: Allocation,
    memory_limit: u64,
) -> Result<(BarrierResult, f64), BarrierError> {
    if net.generation() != TofuGeneration::TofuD {
        return Err(BarrierError::Generation(net.generation().name()));
    }
    let count = net.cube().node_count();
    let nodes = u32::try_from(count).map_err(|_| BarrierError::TooManyNodes(count))?;
    // The node shape is chosen on one node, then every node carries it.
    let one = Barrier::build(1, processes, alloc, None)?;
    let groups = one.groups_per_node as u64;
    let local = one.gates.len() as u64 - groups * u64::from(ceil_log2(groups as usize));
    let rounds = u64::from(ceil_log2((u64::from(nodes) * groups) as usize));
    let gates = u64::from(nodes) * (local + groups * rounds);
    let estimate = gates * BYTES_PER_GATE + u64::from(nodes) * u64::from(processes) * 16;
    if estimate > memory_limit {
        return Err(BarrierError::Memory {
            gates,
            estimate,
            limit: memory_limit,
        });
    }
    let ranks = rank_order(net);
    let b = Barrier::build(nodes, processes, alloc, Some(one.groups_per_node))?;
    let hop = podsim_system::presets::tofu_hop_latency(TofuGeneration::TofuD).as_ps() / 1000;
    let cube = net.cube();
    let dims = cube.dims().to_vec();
    let wrap: Vec<bool> = (0..dims.len()).map(|d| cube.has_wrap_link(d)).collect();
    let coords: Vec<[u32; 6]> = ranks
        .iter()
        .map(|&r| {
            let mut c = [0u32; 6];
            for (d, x) in c.iter_mut().enumerate().take(dims.len()) {
                *x = cube.coord(r, d);
            }
            c
        })
        .collect();
    // The hop distance in the 6-D mesh/torus (as KAryNCube::distance, untwisted).
    let net_ns = |a: u32, c: u32| {
        if a == c {
            return 0;
        }
        let (p, q) = (&coords[a as usize], &coords[c as usize]);
        let mut h = 0u64;
        for d in 0..dims.len() {
            let x = p[d].abs_diff(q[d]);
            h += u64::from(if wrap[d] { x.min(dims[d] - x) } else { x });
        }
        h * hop
    };
    let hw = b.result(processes, &net_ns);
    let sw = software_barrier(&ranks, processes, &net_ns);
    Ok((hw, sw))
}

/// A dissemination barrier in software over `ranks.len() * processes` processes (process `q`
/// on node `q / processes`): each round a put to `q + 2^k` (TofuD near CMGs: sender and
/// receiver from Table III's row, plus the hops) or a memory flag on the same node. Seconds.
fn software_barrier(ranks: &[NodeId], processes: u32, net: &impl Fn(u32, u32) -> u64) -> f64 {
    let put = podsim_system::presets::TOFU_PUTS
        .iter()
        .find(|p| p.generation == TofuGeneration::TofuD)
        .expect("TofuD has a put row");
    let ends = put.sender_ns + put.receiver_ns;
    let m = ranks.len() * processes as usize;
    let mut t = vec![0u64; m];
    let mut next = vec![0u64; m];
    let p = processes as usize;
    let mut d = 1usize;
    while d < m {
        for (q, nq) in next.iter_mut().enumerate() {
            let from = (q + m - d % m) % m;
            let (a, b) = ((from / p) as u32, (q / p) as u32);
            let lat = if a == b {
                MEMORY_FLAG_NS
            } else {
                ends + net(a, b)
            };
            *nq = t[q].max(t[from] + lat);
        }
        std::mem::swap(&mut t, &mut next);
        d *= 2;
    }
    t.iter().copied().max().unwrap_or(0) as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table VI, every column: points -> (TNIs, max BCHs per TNI, max BGs per TNI, stages).
    #[test]
    fn table_vi() {
        let table = [
            (1, 1, 1, 2, 2),
            (4, 4, 1, 2, 2),
            (8, 6, 2, 5, 4),
            (16, 6, 3, 9, 6),
            (48, 6, 8, 24, 9),
        ];
        for (p, tnis, bchs, bgs, stages) in table {
            let r = node_barrier(p, Allocation::Test).unwrap();
            assert_eq!(
                (r.tnis, r.bchs_per_tni, r.bgs_per_tni, r.stages),
                (tnis, bchs, bgs, stages),
                "{p} points"
            );
        }
    }

    /// The serialized simulation against the closed form 0.19 + 0.29 b + 0.13 (BGs - b) us,
    /// worked by hand for each column: 1: 0.19 + 0.29 + 0.13 = 0.61; 4: the same, 0.61;
    /// 8: 0.19 + 0.58 + 0.39 = 1.16; 16: 0.19 + 0.87 + 0.78 = 1.84; 48: 0.19 + 2.32 + 2.08 =
    /// 4.59.
    #[test]
    fn serialized_matches_the_closed_form() {
        for (p, us) in [(1, 0.61), (4, 0.61), (8, 1.16), (16, 1.84), (48, 4.59)] {
            let r = node_barrier(p, Allocation::Test).unwrap();
            assert!(
                (r.latency_s * 1e6 - us).abs() < 1e-9,
                "{p}: {}",
                r.latency_s
            );
            assert!((r.serialized_estimate_s.unwrap() * 1e6 - us).abs() < 1e-9);
        }
    }

    /// Minimum: 0.48 us plus 0.13 us per relay on the critical path (stages - 1 of them):
    /// 1 and 4 points 0.61, 8 points 0.87, 16 points 1.13, 48 points 1.52 us.
    #[test]
    fn minimum_is_the_critical_path() {
        for (p, us) in [(1, 0.61), (4, 0.61), (8, 0.87), (16, 1.13), (48, 1.52)] {
            let r = node_barrier(p, Allocation::Test).unwrap();
            assert!((r.minimum_latency_s * 1e6 - us).abs() < 1e-9, "{p}");
        }
    }

    /// The MPI rule: six processes take one BCH on each TNI, dissemination among six in three
    /// stages: 0.48 + 2 x 0.13 = 0.74 us in parallel and serialized alike (one BCH per TNI, no
    /// queue: each TNI's relays wait on other TNIs). 48 processes: six groups of eight share
    /// the six BCHs, plus (log2 8 + 1) memory flags of 0.1 us: 1.14 us, against 4.59 us for
    /// the test programs' eight BCHs per TNI.
    #[test]
    fn mpi_rule() {
        let r = node_barrier(6, Allocation::Mpi).unwrap();
        assert_eq!((r.tnis, r.bchs_per_tni, r.stages), (6, 1, 3));
        assert!((r.latency_s * 1e6 - 0.74).abs() < 1e-9, "{}", r.latency_s);
        let r = node_barrier(48, Allocation::Mpi).unwrap();
        assert_eq!((r.points, r.bchs_per_tni), (6, 1));
        assert!((r.latency_s * 1e6 - 1.14).abs() < 1e-9, "{}", r.latency_s);
    }

    /// Every BG has at most two inputs and two outputs (asserted while wiring) and every point
    /// hears from every other: a barrier cannot end before the last point has started. With
    /// one start delayed, every end moves by at least that much.
    #[test]
    fn every_point_depends_on_every_other() {
        for p in 1..=48 {
            let b = Barrier::build(1, p, Allocation::Test, None).unwrap();
            let n = b.gates.len();
            // Reachability from each point's start to each point's end.
            let order = b.order();
            for src in 0..p as usize {
                let mut reach = vec![false; n];
                reach[src] = true;
                for &v in &order {
                    if !reach[v as usize] {
                        continue;
                    }
                    let g = b.gates[v as usize];
                    for &w in &g.outputs[..g.n_out as usize] {
                        reach[w as usize] = true;
                    }
                }
                for (dst, r) in reach.iter().enumerate().take(p as usize) {
                    assert!(r, "{p} points: {src} does not reach {dst}");
                }
            }
        }
    }

    /// Point p contributes (p + 1) (e + 1) in element e. By hand: the sum is
    /// (e + 1) P (P + 1) / 2, the maximum (e + 1) P, the minimum e + 1, for every P up to 48
    /// and at every point (a sum keeps the group count a power of two: 48 points take four
    /// groups and ten stages instead of nine).
    #[test]
    fn allreduce_through_the_bgs() {
        for p in 1..=48u64 {
            let ints: Vec<Vec<u64>> = (0..p)
                .map(|i| (0..8).map(|e| (i + 1) * (e + 1)).collect())
                .collect();
            for (op, want) in [
                (ReduceOp::Sum, p * (p + 1) / 2),
                (ReduceOp::Max, p),
                (ReduceOp::Min, 1),
            ] {
                let (r, out) = node_allreduce(Allocation::Test, op, &ints).unwrap();
                for v in &out {
                    let expect: Vec<u64> = (0..8).map(|e| want * (e + 1)).collect();
                    assert_eq!(v, &expect, "{op:?} over {p}");
                }
                if p == 48 {
                    let stages = if op == ReduceOp::Sum { 10 } else { 9 };
                    assert_eq!(r.stages, stages, "{op:?}");
                }
            }
            let floats: Vec<Vec<u64>> = (0..p)
                .map(|i| {
                    (0..3)
                        .map(|e| ((i + 1) as f64 * 0.5 * (e + 1) as f64).to_bits())
                        .collect()
                })
                .collect();
            let (_, out) = node_allreduce(Allocation::Test, ReduceOp::FSum, &floats).unwrap();
            for v in &out {
                let got = f64::from_bits(v[2]);
                assert!(
                    (got - 1.5 * (p * (p + 1) / 2) as f64).abs() < 1e-9,
                    "{p}: {got}"
                );
            }
        }
        let nine = vec![vec![1u64; 9]; 4];
        assert!(node_allreduce(Allocation::Test, ReduceOp::Sum, &nine).is_err());
        let four = vec![vec![0u64; 4]; 4];
        assert!(node_allreduce(Allocation::Test, ReduceOp::FMax, &four).is_err());
    }

    #[test]
    fn running_out_of_bchs_is_an_error() {
        // 97 points on 6 TNIs: 17 BCHs on one TNI, a TofuD TNI has 16.
        let e = node_barrier(97, Allocation::Test).unwrap_err();
        assert!(e.to_string().contains("out of BCHs on TNI 0"), "{e}");
        // Refused before anything is wired, however many points.
        assert!(node_barrier(u32::MAX, Allocation::Test).is_err());
        assert!(node_barrier(0, Allocation::Test).is_err());
    }

    /// Across nodes: 2 x 2 x 2 x 2 x 3 x 2 nodes (96), one process each: 7 rounds of
    /// dissemination. The hardware barrier is faster than software on the same network (each
    /// software round pays the put's 0.41 us ends; a BG round 0.13 us).
    #[test]
    fn machine_barrier_beats_software() {
        let net = Tofu::new(
            TofuGeneration::TofuD,
            [2, 2, 2],
            [true; 3],
            [2, 3, 2],
            podsim_units::SimDuration::ZERO,
            "t",
        )
        .unwrap();
        let (hw, sw) = machine_barrier(&net, 1, Allocation::Mpi, u64::MAX).unwrap();
        // The estimate: 96 nodes x (the one-node graph's 2 gates + one per round, 7) = 864
        // gates, an upper bound (the lone point's relay is not wired across nodes: 672 are),
        // x 64 B + 96 x 16 B = 56,832 B: allowed under 1 MB, refused under 10 kB.
        assert!(machine_barrier(&net, 1, Allocation::Mpi, 1 << 20).is_ok());
        let e = machine_barrier(&net, 1, Allocation::Mpi, 10_000).unwrap_err();
        assert!(e.to_string().contains("56832 bytes (864 gates)"), "{e}");
        assert_eq!(hw.nodes, 96);
        assert_eq!(hw.stages, 7);
        assert!(hw.latency_s < sw, "{} vs {sw}", hw.latency_s);
        // Lower bounds: 7 rounds of at least one relay (or the end) and one hop.
        assert!(hw.minimum_latency_s >= (480.0 + 6.0 * 130.0 + 7.0 * 100.0) * 1e-9);
        assert!(sw >= 7.0 * (410.0 + 100.0) * 1e-9);
    }
}
