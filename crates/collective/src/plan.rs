//! Collectives as DAGs of transfers.
//!
//! A [`Plan`] is a list of [`Op`]s: a transfer from one rank to another of some bytes, which
//! moves some chunks of the sender's buffer into the same chunks of the receiver's (copying or reducing),
//! and may start only when its dependencies have arrived. Every rank's buffer is `chunks`
//! small integers, so running a plan also computes the collective, and [`crate::run`] checks the
//! result.

// Ranks are numbers the schedules compute with (i + 1, i ^ dist, ...); indexing by them reads
// better than iterating.
#![allow(clippy::needless_range_loop)]

use std::fmt;

/// How arriving chunks combine with the receiver's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Overwrite.
    Copy,
    /// Add (wrapping).
    Sum,
    /// Bitwise or (barrier flags).
    Or,
}

/// One transfer of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    /// Sending rank.
    pub src: usize,
    /// Receiving rank.
    pub dst: usize,
    /// Payload bytes.
    pub bytes: u64,
    /// The chunks the transfer carries; each lands in the same chunk of the receiver.
    pub chunks: Chunks,
    /// How they combine at the receiver.
    pub combine: Combine,
    /// Ops that must have arrived first.
    pub deps: Vec<usize>,
    /// Whether the receiver reduces on arrival (costs reduction time before dependents start).
    pub reduces: bool,
    /// The sender's op before this one in its program order, which must have left first:
    /// a rank that works through steps one after the other (halving-doubling, dimension by
    /// dimension) issues step s + 1 after step s, so what it received before step s (on which
    /// step s waited) is in its buffer when step s + 1 reads it, even when a later, smaller
    /// transfer arrives before an earlier one. None: the op waits on `deps` only.
    pub after: Option<usize>,
}

/// The chunks a transfer carries; each lands in the same chunk of the receiver's buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunks {
    /// Chunks `start..end` (a barrier's n flags are one range, not n entries).
    Range(u32, u32),
    /// These chunks.
    List(Vec<u32>),
}

impl Chunks {
    /// The chunks, in order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        match self {
            Chunks::Range(a, b) => Box::new(*a..*b),
            Chunks::List(l) => Box::new(l.iter().copied()),
        }
    }
    /// How many.
    pub fn len(&self) -> usize {
        match self {
            Chunks::Range(a, b) => b.saturating_sub(*a) as usize,
            Chunks::List(l) => l.len(),
        }
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The collectives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Every rank ends with the sum of all buffers.
    AllReduce,
    /// Every rank ends with its share of the sum.
    ReduceScatter,
    /// Every rank ends with every rank's share.
    AllGather,
    /// Every rank ends with the root's buffer.
    Broadcast,
    /// The root ends with the sum.
    Reduce,
    /// Every rank sends a distinct block to every other.
    AllToAll,
    /// Nobody leaves before everybody has arrived (no payload).
    Barrier,
}

impl Kind {
    /// Every kind, in help order.
    pub const ALL: [Kind; 7] = [
        Kind::AllReduce,
        Kind::ReduceScatter,
        Kind::AllGather,
        Kind::Broadcast,
        Kind::Reduce,
        Kind::AllToAll,
        Kind::Barrier,
    ];
    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::AllReduce => "all-reduce",
            Kind::ReduceScatter => "reduce-scatter",
            Kind::AllGather => "all-gather",
            Kind::Broadcast => "broadcast",
            Kind::Reduce => "reduce",
            Kind::AllToAll => "all-to-all",
            Kind::Barrier => "barrier",
        }
    }
    /// From the CLI name.
    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }
    /// The algorithms for this kind; the first is the default.
    pub fn algorithms(self) -> &'static [Algorithm] {
        match self {
            Kind::AllReduce => &[
                Algorithm::Ring,
                Algorithm::BidirectionalRing,
                Algorithm::DimensionWise,
                Algorithm::HalvingDoubling,
                Algorithm::DoubleBinaryTree,
                Algorithm::MultiRing,
                Algorithm::AllDimensions,
            ],
            Kind::ReduceScatter | Kind::AllGather => &[Algorithm::Ring],
            Kind::Broadcast => &[Algorithm::Tree, Algorithm::Ring],
            Kind::Reduce => &[Algorithm::Tree],
            Kind::AllToAll => &[Algorithm::Direct, Algorithm::DimensionWise],
            Kind::Barrier => &[Algorithm::Dissemination],
        }
    }
    /// nccl-tests bus-bandwidth factor: busbw = algbw x factor (n ranks).
    pub fn bus_factor(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            Kind::AllReduce => 2.0 * (n - 1.0) / n,
            Kind::ReduceScatter | Kind::AllGather | Kind::AllToAll => (n - 1.0) / n,
            Kind::Broadcast | Kind::Reduce | Kind::Barrier => 1.0,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// A ring through the ranks in ring order (reduce-scatter then all-gather for all-reduce;
    /// a pipelined chain for broadcast).
    Ring,
    /// Two rings in opposite directions, each on half the data.
    BidirectionalRing,
    /// One dimension of a mesh or torus at a time: rings along each line.
    DimensionWise,
    /// Recursive halving (reduce-scatter) then doubling (all-gather); ranks a power of two.
    HalvingDoubling,
    /// A binomial tree rooted at rank 0.
    Tree,
    /// Every pair directly.
    Direct,
    /// The dissemination barrier: in round j rank i signals rank i + 2^j.
    Dissemination,
    /// Two binary trees, each reducing half the data to its root and broadcasting it back; the
    /// second tree is the first with the ranks in reverse order, so a rank that is an inner
    /// node of one is (mostly) a leaf of the other (as NCCL's double binary tree).
    DoubleBinaryTree,
    /// One ring per chip of a node (NCCL's channels), each on its share of the data, all at
    /// once: ring c enters every node at one chip and leaves it from another, so that a node's
    /// chips each send one ring across the nodes and receive one (on a rail-optimised machine,
    /// each on its own NIC). The ranks fill `[chips a node, nodes]` (a machine file's grid; a
    /// cube's first dimension is taken as the node).
    MultiRing,
    /// Every dimension of a mesh or torus at once, in both directions (TPU v4's all-reduce,
    /// which the ISCA 2023 paper says is limited by injection bandwidth, section 3.4): the
    /// buffer splits into one share per (dimension, direction); share (i, +/-) reduce-scatters
    /// along dimension i, then i + 1, ... (rings all running in its direction), and
    /// all-gathers back in the reverse order, every share at once, so that in each phase the
    /// shares hold different dimensions and every link direction carries one of them. On a
    /// torus of equal sides k (n = k^D) it takes (n - 1)/n x bytes / (D x link bandwidth),
    /// the injection bound.
    AllDimensions,
}

impl Algorithm {
    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::BidirectionalRing => "bidirectional-ring",
            Algorithm::DimensionWise => "dimension",
            Algorithm::HalvingDoubling => "halving-doubling",
            Algorithm::Tree => "tree",
            Algorithm::Direct => "direct",
            Algorithm::Dissemination => "dissemination",
            Algorithm::DoubleBinaryTree => "double-binary-tree",
            Algorithm::MultiRing => "multi-ring",
            Algorithm::AllDimensions => "all-dimensions",
        }
    }
}

/// A collective to plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Which collective.
    pub kind: Kind,
    /// Which algorithm.
    pub algorithm: Algorithm,
    /// Each rank's buffer in bytes (nccl-tests convention; all-to-all sends bytes / n to each).
    pub bytes: u64,
    /// Ranks in ring order (`ring[i]` is the endpoint of rank i).
    pub ranks: usize,
    /// For `DimensionWise`: the sizes of the mesh/torus the ranks fill, x fastest.
    pub dims: Vec<u32>,
    /// Pipeline piece for chain broadcast, in bytes (0: the whole buffer at once).
    pub chunk: u64,
}

/// A planned collective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Ranks.
    pub ranks: usize,
    /// Chunks per rank buffer.
    pub chunks: usize,
    /// The transfers.
    pub ops: Vec<Op>,
}

/// Why a collective cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

/// Split `total` bytes into `parts` shares differing by at most one byte.
pub(crate) fn share(total: u64, parts: usize, i: usize) -> u64 {
    let p = parts as u64;
    total / p + u64::from((i as u64) < total % p)
}

impl Plan {
    fn op(
        &mut self,
        src: usize,
        dst: usize,
        bytes: u64,
        chunks: Chunks,
        combine: Combine,
        deps: Vec<usize>,
    ) -> usize {
        self.ops.push(Op {
            src,
            dst,
            bytes,
            chunks,
            combine,
            deps,
            reduces: combine == Combine::Sum,
            after: None,
        });
        self.ops.len() - 1
    }

    /// Per op, the op whose `after` it is (the sender's next op in program order), if any.
    pub fn next_in_order(&self) -> Vec<Option<usize>> {
        let mut next = vec![None; self.ops.len()];
        for (i, o) in self.ops.iter().enumerate() {
            if let Some(a) = o.after {
                next[a] = Some(i);
            }
        }
        next
    }

    /// Per op, how many conditions hold it back at the start: its dependencies, and the op
    /// before it in its sender's program order.
    pub fn waiting(&self) -> impl Iterator<Item = usize> + '_ {
        self.ops
            .iter()
            .map(|o| o.deps.len() + usize::from(o.after.is_some()))
    }
}

/// The most transfers a plan may hold (about 5 GB of plan and flow state).
pub const MAX_TRANSFERS: u128 = 50_000_000;

/// How many transfers the plan for `r` will hold (an upper estimate for the dimension-wise
/// algorithms), without building it.
pub fn transfers(r: &Request) -> u128 {
    let n = r.ranks as u128;
    let pairs = n * n.saturating_sub(1);
    let log = u128::from(usize::BITS - r.ranks.leading_zeros());
    let dims_sum: u128 = r
        .dims
        .iter()
        .map(|&k| u128::from(k.saturating_sub(1)))
        .sum();
    match (r.kind, r.algorithm) {
        (Kind::AllReduce, Algorithm::Ring) => 2 * pairs,
        (Kind::AllReduce, Algorithm::BidirectionalRing) => 4 * pairs,
        (Kind::AllReduce, Algorithm::MultiRing) => {
            2 * pairs * u128::from(r.dims.first().copied().unwrap_or(1).max(1))
        }
        (Kind::ReduceScatter | Kind::AllGather, _) | (Kind::AllToAll, Algorithm::Direct) => pairs,
        (Kind::AllReduce, Algorithm::DimensionWise) => 2 * n * dims_sum,
        (Kind::AllReduce, Algorithm::AllDimensions) => {
            let live = r.dims.iter().filter(|&&k| k > 1).count() as u128;
            4 * live * n * dims_sum
        }
        (Kind::AllToAll, _) => n * dims_sum,
        (Kind::Broadcast, Algorithm::Ring) => {
            n * (n * 64).min(r.bytes.div_ceil(r.chunk.max(1)).max(1) as u128)
        }
        (Kind::Barrier, _) | (Kind::AllReduce, Algorithm::HalvingDoubling) => 2 * n * log,
        _ => 4 * n,
    }
}

/// Whether `r` can be planned: at least one rank, an algorithm of its kind, at most
/// [`MAX_TRANSFERS`] transfers (the errors [`plan`] gives before planning).
pub fn check(r: &Request) -> Result<(), PlanError> {
    let n = r.ranks;
    let t = transfers(r);
    if t > MAX_TRANSFERS {
        return Err(PlanError(format!(
            "{} over {n} ranks needs about {t} transfers, more than the {MAX_TRANSFERS} podsim plans at once; use fewer ranks",
            r.kind
        )));
    }
    if n == 0 {
        return Err(PlanError("a collective needs at least one rank".into()));
    }
    if !r.kind.algorithms().contains(&r.algorithm) {
        let names: Vec<&str> = r.kind.algorithms().iter().map(|a| a.name()).collect();
        return Err(PlanError(format!(
            "{} has no `{}` algorithm (choose from: {})",
            r.kind,
            r.algorithm.name(),
            names.join(", ")
        )));
    }
    Ok(())
}

/// Build the plan for `r`.
pub fn plan(r: &Request) -> Result<Plan, PlanError> {
    check(r)?;
    let n = r.ranks;
    let mut p = Plan {
        ranks: n,
        chunks: n,
        ops: Vec::new(),
    };
    if n == 1 {
        return Ok(p);
    }
    match (r.kind, r.algorithm) {
        (Kind::AllReduce, Algorithm::Ring) => {
            let last = ring_phase(&mut p, r.bytes, 0, true, Combine::Sum, &vec![None; n], 0);
            ring_phase(&mut p, r.bytes, 0, true, Combine::Copy, &last, 1);
        }
        (Kind::AllReduce, Algorithm::BidirectionalRing) => {
            // Chunks 0..n go clockwise on the first half of the bytes, n..2n counter-clockwise.
            p.chunks = 2 * n;
            let half = r.bytes / 2;
            let cw = ring_phase(&mut p, half, 0, true, Combine::Sum, &vec![None; n], 0);
            ring_phase(&mut p, half, 0, true, Combine::Copy, &cw, 1);
            let ccw = ring_phase(
                &mut p,
                r.bytes - half,
                n as u32,
                false,
                Combine::Sum,
                &vec![None; n],
                0,
            );
            ring_phase(
                &mut p,
                r.bytes - half,
                n as u32,
                false,
                Combine::Copy,
                &ccw,
                1,
            );
        }
        (Kind::ReduceScatter, Algorithm::Ring) => {
            ring_phase(&mut p, r.bytes, 0, true, Combine::Sum, &vec![None; n], 0);
        }
        (Kind::AllGather, Algorithm::Ring) => {
            ring_phase(&mut p, r.bytes, 0, true, Combine::Copy, &vec![None; n], 0);
        }
        (Kind::AllReduce, Algorithm::DimensionWise) => dimension_all_reduce(&mut p, r)?,
        (Kind::AllReduce, Algorithm::AllDimensions) => all_dimensions_all_reduce(&mut p, r)?,
        (Kind::AllReduce, Algorithm::MultiRing) => multi_ring_all_reduce(&mut p, r)?,
        (Kind::AllReduce, Algorithm::HalvingDoubling) => halving_doubling(&mut p, r.bytes)?,
        (Kind::AllReduce, Algorithm::DoubleBinaryTree) => {
            // Chunks 0..n on tree A (ranks in order), n..2n on tree B (ranks reversed).
            p.chunks = 2 * n;
            let half = r.bytes / 2;
            binary_tree_all_reduce(&mut p, half, 0, false);
            binary_tree_all_reduce(&mut p, r.bytes - half, n as u32, true);
        }
        (Kind::Broadcast, Algorithm::Tree) => binomial(&mut p, r.bytes, false),
        (Kind::Reduce, Algorithm::Tree) => binomial(&mut p, r.bytes, true),
        (Kind::Broadcast, Algorithm::Ring) => chain_broadcast(&mut p, r.bytes, r.chunk),
        (Kind::AllToAll, Algorithm::Direct) => {
            // Block (s, t), chunk id s * n + t, starts at rank s and must end at rank t.
            p.chunks = n * n;
            for i in 0..n {
                for k in 1..n {
                    let d = (i + k) % n;
                    let id = (i * n + d) as u32;
                    p.op(
                        i,
                        d,
                        share(r.bytes, n, d),
                        Chunks::Range(id, id + 1),
                        Combine::Copy,
                        vec![],
                    );
                }
            }
        }
        (Kind::AllToAll, Algorithm::DimensionWise) => dimension_all_to_all(&mut p, r)?,
        (Kind::Barrier, Algorithm::Dissemination) => {
            // Each rank starts knowing itself (chunk = its own flag); after ceil(log2 n) rounds
            // every rank knows every flag.
            // A rank's round-j send carries everything it knows, so it waits for every
            // signal it has received in the rounds before (not only the last one: with link
            // latency they arrive out of order). ceil(log2 n) rounds, so each rank holds
            // O(log n) dependencies.
            let mut received: Vec<Vec<usize>> = vec![Vec::new(); n];
            let mut j = 1;
            while j < n {
                let mut got = Vec::with_capacity(n);
                for i in 0..n {
                    let d = (i + j) % n;
                    let deps = received[i].clone();
                    let o = p.op(i, d, 0, Chunks::Range(0, n as u32), Combine::Or, deps);
                    got.push((d, o));
                }
                for (d, o) in got {
                    received[d].push(o);
                }
                j *= 2;
            }
        }
        (k, a) => return Err(PlanError(format!("{k} has no `{}` algorithm", a.name()))),
    }
    Ok(p)
}

/// One ring pass over the n chunks from `base`: in step s, rank i sends chunk
/// `i + sigma (o - s)` (mod n) to rank `i + sigma`, where sigma is +1 (clockwise) or -1.
/// With `o = 0` this is reduce-scatter (rank i ends owning chunk `i + sigma`) or an all-gather
/// in which rank i starts owning chunk i; with `o = 1`, the all-gather that follows a
/// reduce-scatter. Each send waits for what its rank received in the step before (or for
/// `after`). Returns, per rank, the last op it received.
fn ring_phase(
    p: &mut Plan,
    bytes: u64,
    base: u32,
    clockwise: bool,
    combine: Combine,
    after: &[Option<usize>],
    o: usize,
) -> Vec<Option<usize>> {
    let order: Vec<usize> = (0..p.ranks).collect();
    ring_phase_through(p, bytes, base, &order, clockwise, combine, after, o)
}

/// [`ring_phase`] on a ring that visits the ranks in `order` (`order[i]` is the rank at ring
/// position i); `after` and the result are indexed by rank.
#[allow(clippy::too_many_arguments)]
fn ring_phase_through(
    p: &mut Plan,
    bytes: u64,
    base: u32,
    order: &[usize],
    clockwise: bool,
    combine: Combine,
    after: &[Option<usize>],
    o: usize,
) -> Vec<Option<usize>> {
    let n = order.len();
    let mut recv_last: Vec<Option<usize>> = after.to_vec();
    for s in 0..n - 1 {
        let mut next = recv_last.clone();
        for i in 0..n {
            let (to, chunk) = if clockwise {
                ((i + 1) % n, (i + n + o - s) % n)
            } else {
                ((i + n - 1) % n, (i + s + n - o) % n)
            };
            let (from, to) = (order[i], order[to]);
            let deps: Vec<usize> = recv_last[from].into_iter().collect();
            let c = base + chunk as u32;
            let op = p.op(
                from,
                to,
                share(bytes, n, chunk),
                Chunks::Range(c, c + 1),
                combine,
                deps,
            );
            next[to] = Some(op);
        }
        recv_last = next;
    }
    recv_last
}

/// The ring order of channel `c` of [`Algorithm::MultiRing`] over `nodes` nodes of `per`
/// chips (rank = chip + per x node). Channel c enters even nodes at chip c and leaves them from
/// chip c + 1, and enters odd nodes at chip c + 1 and leaves them from chip c (mod per), visiting
/// the node's other chips in between; so the hop between two nodes joins the same chip of both
/// (one rail), and over the channels every chip sends one ring out of its node and receives one.
/// With an odd number of nodes the hop that closes the ring joins two rails.
pub fn multi_ring_order(per: usize, nodes: usize, c: usize) -> Vec<usize> {
    let mut order = Vec::with_capacity(per * nodes);
    for k in 0..nodes {
        let (enter, leave) = if k % 2 == 0 {
            (c % per, (c + 1) % per)
        } else {
            ((c + 1) % per, c % per)
        };
        order.push(k * per + enter);
        for d in 1..per {
            let chip = (enter + d) % per;
            if chip != leave {
                order.push(k * per + chip);
            }
        }
        if leave != enter {
            order.push(k * per + leave);
        }
    }
    order
}

/// [`Algorithm::MultiRing`]: per channel, a ring reduce-scatter then all-gather on its share
/// of the bytes (channel c owns chunks c n .. (c + 1) n).
fn multi_ring_all_reduce(p: &mut Plan, r: &Request) -> Result<(), PlanError> {
    let n = p.ranks;
    let per = r.dims.first().copied().unwrap_or(0) as usize;
    if per == 0 || !n.is_multiple_of(per) {
        return Err(PlanError(format!(
            "multi-ring needs the ranks in nodes of equal size (a machine file's grid, or a cube's first dimension); this network gives {:?}",
            r.dims
        )));
    }
    p.chunks = per * n;
    for c in 0..per {
        let order = multi_ring_order(per, n / per, c);
        let bytes = share(r.bytes, per, c);
        let base = (c * n) as u32;
        let rs = ring_phase_through(
            p,
            bytes,
            base,
            &order,
            true,
            Combine::Sum,
            &vec![None; n],
            0,
        );
        ring_phase_through(p, bytes, base, &order, true, Combine::Copy, &rs, 1);
    }
    Ok(())
}

/// The stride and digit functions of rank numbers written in the mixed radix of `dims`
/// (dimension 0 fastest); an error unless the ranks fill the dimensions exactly.
#[allow(clippy::type_complexity)]
fn mixed_radix(
    dims: &[u32],
    n: usize,
) -> Result<
    (
        impl Fn(usize) -> usize + '_,
        impl Fn(usize, usize) -> usize + '_,
    ),
    PlanError,
> {
    if dims.iter().map(|&k| k as usize).product::<usize>() != n || dims.is_empty() {
        return Err(PlanError(format!(
            "dimension-wise needs the ranks to fill the topology's dimensions ({dims:?})"
        )));
    }
    let stride = |d: usize| dims[..d].iter().map(|&k| k as usize).product::<usize>();
    let digit = move |x: usize, d: usize| (x / stride(d)) % dims[d] as usize;
    Ok((stride, digit))
}

/// Dimension-by-dimension all-reduce on a mesh or torus of `r.dims`: reduce-scatter along
/// each line of dimension 0, then 1, ... on the part each rank owns, then all-gather back in
/// reverse order (see [`dimension_share`]).
fn dimension_all_reduce(p: &mut Plan, r: &Request) -> Result<(), PlanError> {
    let order: Vec<usize> = (0..r.dims.len()).filter(|&d| r.dims[d] > 1).collect();
    dimension_share(p, &r.dims, r.bytes, 0, &order, true)
}

/// [`Algorithm::AllDimensions`]: with L dimensions of more than one rank, 2L shares of the
/// bytes, share 2i + s (s = 0 plus, 1 minus) taking the dimensions in the order i, i + 1, ...
/// (mod L) with its rings in direction s, on chunks (2i + s) n .. (2i + s + 1) n. The shares
/// depend on nothing of each other's, so they all run at once.
fn all_dimensions_all_reduce(p: &mut Plan, r: &Request) -> Result<(), PlanError> {
    let n = p.ranks;
    let live: Vec<usize> = (0..r.dims.len()).filter(|&d| r.dims[d] > 1).collect();
    let shares = 2 * live.len();
    p.chunks = shares * n;
    for i in 0..live.len() {
        let order: Vec<usize> = live[i..].iter().chain(&live[..i]).copied().collect();
        for (s, plus) in [true, false].into_iter().enumerate() {
            let q = 2 * i + s;
            let bytes = share(r.bytes, shares, q);
            dimension_share(p, &r.dims, bytes, (q * n) as u32, &order, plus)?;
        }
    }
    Ok(())
}

/// Reduce-scatter `bytes` (chunks `base .. base + n`) along the lines of each dimension of
/// `order` in turn, on the part each rank owns, then all-gather back in the reverse order;
/// every ring runs towards larger coordinates (`plus`) or smaller. Chunk base + j ends
/// reduced at the rank whose coordinates are j's digits (mixed radix like the ranks) less one
/// (`plus`), or plus one. Each rank's sends wait for what it last received in this share and
/// follow its previous send of the share (program order); nothing waits on other shares.
fn dimension_share(
    p: &mut Plan,
    dims: &[u32],
    bytes: u64,
    base: u32,
    order: &[usize],
    plus: bool,
) -> Result<(), PlanError> {
    let n = p.ranks;
    let (stride, digit) = mixed_radix(dims, n)?;
    // Per rank, the last op it received (dependencies chain through) and the last it sent
    // (program order).
    let mut last: Vec<Option<usize>> = vec![None; n];
    let mut sent: Vec<Option<usize>> = vec![None; n];
    let phases: Vec<(usize, Combine)> = order
        .iter()
        .map(|&d| (d, Combine::Sum))
        .chain(order.iter().rev().map(|&d| (d, Combine::Copy)))
        .collect();
    for (pi, &(d, combine)) in phases.iter().enumerate() {
        let k = dims[d] as usize;
        // Dimensions already reduce-scattered when this phase runs (their digit is fixed).
        let fixed: &[usize] = if combine == Combine::Sum {
            &order[..pi]
        } else {
            let ag_done = pi - order.len();
            &order[..order.len() - ag_done - 1]
        };
        for s in 0..k - 1 {
            let mut next = last.clone();
            for rank in 0..n {
                let c = digit(rank, d);
                // Ring step as in `ring_phase`, on the digit of dimension d.
                let (to_c, want) = match (plus, combine == Combine::Sum) {
                    (true, true) => ((c + 1) % k, (c + k - s) % k),
                    (true, false) => ((c + 1) % k, (c + 1 + k - s) % k),
                    (false, true) => ((c + k - 1) % k, (c + s) % k),
                    (false, false) => ((c + k - 1) % k, (c + s + k - 1) % k),
                };
                let to = rank - c * stride(d) + to_c * stride(d);
                // After reduce-scattering dimension e a rank owns the chunks whose digit e is
                // one past its own coordinate in the ring's direction; digit d is `want`, the
                // others are free.
                let mut moves: Vec<u32> = vec![0];
                for e in 0..dims.len() {
                    let ke = dims[e] as usize;
                    let allowed: Vec<usize> = if e == d {
                        vec![want]
                    } else if fixed.contains(&e) {
                        let ce = digit(rank, e);
                        vec![if plus {
                            (ce + 1) % ke
                        } else {
                            (ce + ke - 1) % ke
                        }]
                    } else {
                        (0..ke).collect()
                    };
                    let st = stride(e) as u32;
                    moves = moves
                        .iter()
                        .flat_map(|&v| allowed.iter().map(move |&a| v + a as u32 * st))
                        .collect();
                }
                moves.sort_unstable();
                let b: u64 = moves.iter().map(|&j| share(bytes, n, j as usize)).sum();
                moves.iter_mut().for_each(|j| *j += base);
                let deps: Vec<usize> = last[rank].into_iter().collect();
                let o = p.op(rank, to, b, Chunks::List(moves), combine, deps);
                p.ops[o].after = sent[rank].replace(o);
                next[to] = Some(o);
            }
            last = next;
        }
    }
    Ok(())
}

/// Recursive halving then doubling (Rabenseifner) for a power-of-two number of ranks.
fn halving_doubling(p: &mut Plan, bytes: u64) -> Result<(), PlanError> {
    let n = p.ranks;
    if !n.is_power_of_two() {
        return Err(PlanError(format!(
            "halving-doubling needs a power-of-two number of ranks, not {n}"
        )));
    }
    let mut last: Vec<Option<usize>> = vec![None; n];
    // Per rank, the last op it sent (program order).
    let mut sent: Vec<Option<usize>> = vec![None; n];
    // Each rank's current chunk range [lo, hi).
    let mut range: Vec<(usize, usize)> = vec![(0, n); n];
    let mut dist = n / 2;
    let mut steps = Vec::new();
    while dist >= 1 {
        let mut next = last.clone();
        let mut new_range = range.clone();
        for i in 0..n {
            let partner = i ^ dist;
            let (lo, hi) = range[i];
            let mid = (lo + hi) / 2;
            // The lower rank keeps the lower half and sends the upper half.
            let (send, keep) = if i & dist == 0 {
                ((mid, hi), (lo, mid))
            } else {
                ((lo, mid), (mid, hi))
            };
            let b = (send.0..send.1).map(|c| share(bytes, n, c)).sum();
            let deps: Vec<usize> = last[i].into_iter().collect();
            let moves = Chunks::Range(send.0 as u32, send.1 as u32);
            let o = p.op(i, partner, b, moves, Combine::Sum, deps);
            p.ops[o].after = sent[i].replace(o);
            next[partner] = Some(o);
            new_range[i] = keep;
        }
        steps.push(dist);
        last = next;
        range = new_range;
        dist /= 2;
    }
    for &dist in steps.iter().rev() {
        let mut next = last.clone();
        let mut new_range = range.clone();
        for i in 0..n {
            let partner = i ^ dist;
            let (lo, hi) = range[i];
            let b = (lo..hi).map(|c| share(bytes, n, c)).sum();
            let deps: Vec<usize> = last[i].into_iter().collect();
            let moves = Chunks::Range(lo as u32, hi as u32);
            let o = p.op(i, partner, b, moves, Combine::Copy, deps);
            p.ops[o].after = sent[i].replace(o);
            next[partner] = Some(o);
            let (plo, phi) = range[partner];
            new_range[i] = (lo.min(plo), hi.max(phi));
        }
        last = next;
        range = new_range;
    }
    Ok(())
}

/// All-reduce over a binary tree in heap layout (position i has children 2i+1 and 2i+2): every
/// position sends the chunks from `base` up to its parent once its children's have arrived,
/// then the root's result flows back down. Position i is rank i, or rank n-1-i when
/// `reversed`.
fn binary_tree_all_reduce(p: &mut Plan, bytes: u64, base: u32, reversed: bool) {
    let n = p.ranks;
    let rank = |pos: usize| if reversed { n - 1 - pos } else { pos };
    let chunks = Chunks::Range(base, base + n as u32);
    // Up: deepest positions first so children's ops exist before their parents'.
    let mut up: Vec<Option<usize>> = vec![None; n];
    for pos in (1..n).rev() {
        let deps: Vec<usize> = [2 * pos + 1, 2 * pos + 2]
            .into_iter()
            .filter(|&c| c < n)
            .filter_map(|c| up[c])
            .collect();
        up[pos] = Some(p.op(
            rank(pos),
            rank((pos - 1) / 2),
            bytes,
            chunks.clone(),
            Combine::Sum,
            deps,
        ));
    }
    // Down: the root once both children have reported, then each position after its parent.
    let mut down: Vec<Option<usize>> = vec![None; n];
    for pos in 1..n {
        let parent = (pos - 1) / 2;
        let deps: Vec<usize> = if parent == 0 {
            [1, 2]
                .into_iter()
                .filter(|&c| c < n)
                .filter_map(|c| up[c])
                .collect()
        } else {
            down[parent].into_iter().collect()
        };
        down[pos] = Some(p.op(
            rank(parent),
            rank(pos),
            bytes,
            chunks.clone(),
            Combine::Copy,
            deps,
        ));
    }
}

/// Binomial tree from (broadcast) or to (reduce) rank 0, whole buffer per transfer.
fn binomial(p: &mut Plan, bytes: u64, reduce: bool) {
    let n = p.ranks;
    let all = Chunks::Range(0, n as u32);
    let mut dist = 1;
    let mut rounds = Vec::new();
    while dist < n {
        rounds.push(dist);
        dist *= 2;
    }
    // Every op each rank has received so far: a rank forwards only after all of them have
    // arrived (with link latency or contention they arrive in any order; waiting for the
    // latest one only sent partial sums up the reduce tree).
    let mut received: Vec<Vec<usize>> = vec![Vec::new(); n];
    // Broadcast halves the distance each round (0 -> n/2 first); reduce doubles it.
    let order: Vec<usize> = if reduce {
        rounds.clone()
    } else {
        rounds.iter().rev().copied().collect()
    };
    for d in order {
        let mut next = received.clone();
        for i in (0..n).filter(|i| i % (2 * d) == 0 && i + d < n) {
            let (src, dst) = if reduce { (i + d, i) } else { (i, i + d) };
            let deps: Vec<usize> = received[src].clone();
            let o = p.op(
                src,
                dst,
                bytes,
                all.clone(),
                if reduce { Combine::Sum } else { Combine::Copy },
                deps,
            );
            next[dst].push(o);
        }
        received = next;
    }
}

/// Pipelined chain broadcast: the buffer in pieces of `chunk` bytes flows 0 -> 1 -> ... -> n-1.
fn chain_broadcast(p: &mut Plan, bytes: u64, chunk: u64) {
    let n = p.ranks;
    let pieces = if chunk == 0 {
        1
    } else {
        bytes.div_ceil(chunk).clamp(1, n as u64 * 64) as usize
    };
    // Chunks: the buffer's n chunks are spread over the pieces (a piece carries some of them).
    let all: Vec<u32> = (0..n as u32).collect();
    let mut prev_piece: Vec<Option<usize>> = vec![None; n];
    for q in 0..pieces {
        let carried = Chunks::List(
            all.iter()
                .copied()
                .filter(|&c| c as usize % pieces == q)
                .collect(),
        );
        let b = share(bytes, pieces, q);
        let mut upstream: Option<usize> = None;
        for i in 0..n - 1 {
            let deps: Vec<usize> = upstream.into_iter().chain(prev_piece[i + 1]).collect();
            let o = p.op(i, i + 1, b, carried.clone(), Combine::Copy, deps);
            prev_piece[i + 1] = Some(o);
            upstream = Some(o);
        }
    }
}

/// Dimension-by-dimension all-to-all: blocks move along dimension 0 to the right coordinate,
/// then along 1, ..., each hop a direct transfer within a line, relayed by the intermediate
/// ranks (store and forward).
fn dimension_all_to_all(p: &mut Plan, r: &Request) -> Result<(), PlanError> {
    let n = p.ranks;
    let dims = &r.dims;
    let (stride, digit) = mixed_radix(dims, n)?;
    // Block (s, t), chunk id s * n + t, starts at rank s and must end at rank t; relaying ranks
    // hold it under the same id on the way.
    p.chunks = n * n;
    let mut phase_ops: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (di, d) in (0..dims.len()).filter(|&d| dims[d] > 1).enumerate() {
        let k = dims[d] as usize;
        let mut next_ops: Vec<Vec<usize>> = vec![Vec::new(); n];
        for holder in 0..n {
            for delta in 1..k {
                let c = digit(holder, d);
                let tc = (c + delta) % k;
                let to = holder - c * stride(d) + tc * stride(d);
                // Blocks at `holder` after the previous dimensions: source s whose digits in
                // later dimensions equal the holder's, and target t whose earlier digits equal
                // the holder's; this hop moves those with t's digit d == tc.
                let mut moves: Vec<u32> = Vec::new();
                let mut bytes = 0;
                // Enumerated directly (not by scanning every (s, t) pair, which made this
                // cubic in the ranks): s's digits below d are free and the rest are the
                // holder's; t's digits below d are the holder's, digit d is tc, the rest free.
                let lower = stride(d);
                let upper = n / (lower * k);
                let s_base = holder / lower * lower;
                let t_base = holder % lower + tc * lower;
                for a in 0..lower {
                    let s = s_base + a;
                    for b in 0..upper {
                        let t = t_base + b * lower * k;
                        if s == t {
                            continue;
                        }
                        let id = (s * n + t) as u32;
                        moves.push(id);
                        bytes += share(r.bytes, n, t);
                    }
                }
                if moves.is_empty() {
                    continue;
                }
                let deps: Vec<usize> = if di == 0 {
                    Vec::new()
                } else {
                    phase_ops[holder].clone()
                };
                let o = p.op(holder, to, bytes, Chunks::List(moves), Combine::Copy, deps);
                next_ops[to].push(o);
            }
        }
        phase_ops = next_ops;
    }
    Ok(())
}
