//! Plans in steps, for running without materialising every transfer.
//!
//! Many algorithms are a sequence of steps in each of which every rank sends one transfer and
//! receives one (a ring step, a dimension step, a halving or doubling exchange), each send
//! waiting for what its rank received in the step before. Such a plan is fully described by
//! what rank r sends in step b: the transfer's dependency is the one that arrived at r in
//! step b - 1 (none in the first step of a chain), and its index in the equivalent [`Plan`]
//! is `b x ranks + r`. [`Steps`] gives the transfers of a step on demand; [`crate::run_steps`]
//! runs them holding only the transfers in flight. [`RingSteps`] computes the ring algorithms
//! in closed form (a 4096-rank ring all-reduce is 33.5 M transfers, never held at once);
//! [`PlanSteps`] reads any plan that has this form.

use podsim_net::Packetization;

use crate::plan::{Algorithm, Chunks, Combine, Kind, Plan, Request};

/// What a rank sends in one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepOp {
    /// Receiving rank.
    pub dst: usize,
    /// Payload bytes.
    pub bytes: u64,
    /// The chunks it carries; each lands in the same chunk of the receiver.
    pub chunks: Chunks,
    /// How they combine at the receiver.
    pub combine: Combine,
    /// Whether the receiver reduces on arrival.
    pub reduces: bool,
}

/// A plan in steps (see the module docs): in every step every rank sends exactly one transfer
/// and receives exactly one.
pub trait Steps {
    /// Ranks.
    fn ranks(&self) -> usize;
    /// Chunks per rank buffer.
    fn chunks(&self) -> usize;
    /// Steps in all.
    fn steps(&self) -> usize;
    /// Whether step `b` starts a chain: its transfers wait for nothing (otherwise each waits
    /// for the one its sender received in step `b - 1`).
    fn starts_chain(&self, b: usize) -> bool;
    /// What rank `r` sends in step `b`.
    fn op(&self, b: usize, r: usize) -> StepOp;
    /// Whether moving the data step by step (every transfer of step `b`, in rank order, read
    /// at its sender and landed at its receiver, before any of step `b + 1`) leaves every
    /// buffer as any order its dependencies allow does, so that a run on a contention-free
    /// model may be timed and checked that way ([`crate::run_steps`]). False unless an
    /// implementation shows it.
    fn in_step_order(&self) -> bool {
        false
    }
    /// Transfers in all.
    fn transfers(&self) -> usize {
        self.steps() * self.ranks()
    }
    /// The wire bytes of every transfer, summed (each saturating at `u64::MAX`).
    fn wire_bytes(&self, packets: Packetization) -> u128 {
        let mut sum = 0u128;
        for b in 0..self.steps() {
            for r in 0..self.ranks() {
                let bytes = self.op(b, r).bytes;
                sum += u128::from(packets.checked_wire_bytes(bytes).unwrap_or(u64::MAX));
            }
        }
        sum
    }
}

/// One ring pass of n - 1 steps (as `ring_phase` in the plan module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RingPass {
    bytes: u64,
    // Every chunk's bytes: `bytes / n`, one more for the first `bytes % n` chunks.
    each: u64,
    bigger: u64,
    base: u32,
    clockwise: bool,
    combine: Combine,
    offset: usize,
    starts_chain: bool,
}

/// The ring algorithms in steps, computed in closed form: ring all-reduce (reduce-scatter then
/// all-gather), bidirectional ring all-reduce, ring reduce-scatter and ring all-gather. The
/// transfers are those of [`crate::plan`] for the same request, in the same order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingSteps {
    ranks: usize,
    chunks: usize,
    passes: Vec<RingPass>,
}

impl RingSteps {
    /// The steps of `r`, when its algorithm is one of the rings (None otherwise). The request
    /// is not checked here ([`crate::check`] does).
    pub fn new(r: &Request) -> Option<RingSteps> {
        let n = r.ranks;
        let pass = |bytes: u64, base, clockwise, combine, offset, starts_chain| RingPass {
            bytes,
            each: bytes / n.max(1) as u64,
            bigger: bytes % n.max(1) as u64,
            base,
            clockwise,
            combine,
            offset,
            starts_chain,
        };
        let (chunks, passes) = match (r.kind, r.algorithm) {
            (Kind::AllReduce, Algorithm::Ring) => (
                n,
                vec![
                    pass(r.bytes, 0, true, Combine::Sum, 0, true),
                    pass(r.bytes, 0, true, Combine::Copy, 1, false),
                ],
            ),
            (Kind::AllReduce, Algorithm::BidirectionalRing) => {
                let half = r.bytes / 2;
                let rest = r.bytes - half;
                let base = u32::try_from(n).ok()?;
                (
                    2 * n,
                    vec![
                        pass(half, 0, true, Combine::Sum, 0, true),
                        pass(half, 0, true, Combine::Copy, 1, false),
                        pass(rest, base, false, Combine::Sum, 0, true),
                        pass(rest, base, false, Combine::Copy, 1, false),
                    ],
                )
            }
            (Kind::ReduceScatter, Algorithm::Ring) => {
                (n, vec![pass(r.bytes, 0, true, Combine::Sum, 0, true)])
            }
            (Kind::AllGather, Algorithm::Ring) => {
                (n, vec![pass(r.bytes, 0, true, Combine::Copy, 0, true)])
            }
            _ => return None,
        };
        // Chunk ids are 32-bit.
        u32::try_from(chunks).ok()?;
        Some(RingSteps {
            ranks: n,
            chunks,
            passes,
        })
    }

    /// The pass step `b` belongs to, and the step within it (no division: a handful of
    /// passes).
    fn pass_of(&self, b: usize) -> (&RingPass, usize) {
        let per = self.ranks - 1;
        let mut s = b;
        for p in &self.passes {
            if s < per {
                return (p, s);
            }
            s -= per;
        }
        (&self.passes[self.passes.len() - 1], s)
    }
}

impl Steps for RingSteps {
    fn ranks(&self) -> usize {
        self.ranks
    }
    fn chunks(&self) -> usize {
        self.chunks
    }
    fn steps(&self) -> usize {
        self.passes.len() * self.ranks.saturating_sub(1)
    }
    fn starts_chain(&self, b: usize) -> bool {
        let (p, s) = self.pass_of(b);
        s == 0 && p.starts_chain
    }
    /// True: in step s of a pass rank i sends chunk i + sigma (o - s) and receives chunk
    /// i - sigma + sigma (o - s), never the same one (n >= 2), so the order within a step does
    /// not matter; and the only earlier read a landing could race is of the same chunk at the
    /// same rank, which is either the landing's own dependency chain (the chunk a rank
    /// received in step s - 1 and sends in step s), or, for an all-reduce's all-gather landing
    /// chunk c at rank j in its step s, rank j's send of c in the reduce-scatter's step s,
    /// exactly n - 1 steps earlier on the landing's chain (step B sent by rank j - 1 waits on
    /// step B - k sent by rank j - 1 - k; k = n - 1 is rank j). Each read comes before the
    /// landings that could change it, as in step order. The bidirectional ring's two rings
    /// use disjoint chunks.
    fn in_step_order(&self) -> bool {
        true
    }
    fn op(&self, b: usize, i: usize) -> StepOp {
        let n = self.ranks;
        let (p, s) = self.pass_of(b);
        // Below 2n + 1, so at most two subtractions of n take it mod n.
        let wrap = |mut x: usize| {
            while x >= n {
                x -= n;
            }
            x
        };
        // In step s rank i sends chunk i + sigma (o - s) to rank i + sigma (sigma = +-1).
        let (dst, chunk) = if p.clockwise {
            (wrap(i + 1), wrap(i + n + p.offset - s))
        } else {
            (wrap(i + n - 1), wrap(i + s + n - p.offset))
        };
        let c = p.base + chunk as u32;
        // share(bytes, n, chunk): the first bytes % n chunks carry one byte more.
        StepOp {
            dst,
            bytes: p.each + u64::from((chunk as u64) < p.bigger),
            chunks: Chunks::Range(c, c + 1),
            combine: p.combine,
            reduces: p.combine == Combine::Sum,
        }
    }
    /// In closed form: every step of a pass carries each of its n chunks once, `bytes % n`
    /// of them one byte larger than the rest.
    fn wire_bytes(&self, packets: Packetization) -> u128 {
        let n = self.ranks as u64;
        if n < 2 {
            return 0;
        }
        let wire = |b: u64| u128::from(packets.checked_wire_bytes(b).unwrap_or(u64::MAX));
        self.passes
            .iter()
            .map(|p| {
                let (q, big) = (p.bytes / n, p.bytes % n);
                u128::from(n - 1) * (u128::from(big) * wire(q + 1) + u128::from(n - big) * wire(q))
            })
            .sum()
    }
}

/// A materialised plan read in steps, when it has that form: its transfers in blocks of
/// `ranks`, the r-th of each block sent by rank r, each block's receivers a permutation, and
/// every transfer waiting for exactly the one its sender received in the block before, or
/// every transfer of a block for nothing, and none held to its sender's program order
/// ([`crate::Op::after`]: the steps are run as their receipts release them).
#[derive(Debug, Clone, Copy)]
pub struct PlanSteps<'a> {
    plan: &'a Plan,
}

impl<'a> PlanSteps<'a> {
    /// `plan` in steps, or None when it does not have the form.
    pub fn new(plan: &'a Plan) -> Option<PlanSteps<'a>> {
        let n = plan.ranks;
        if n == 0 || !plan.ops.len().is_multiple_of(n) || plan.ops.iter().any(|o| o.after.is_some())
        {
            return None;
        }
        let mut sender_to = vec![usize::MAX; n];
        for (b, block) in plan.ops.chunks(n).enumerate() {
            let mut seen = vec![false; n];
            let first = block[0].deps.is_empty();
            for (r, o) in block.iter().enumerate() {
                if o.src != r || o.dst >= n || std::mem::replace(&mut seen[o.dst], true) {
                    return None;
                }
                let ok = if first {
                    o.deps.is_empty()
                } else {
                    b > 0 && o.deps == [(b - 1) * n + sender_to[r]]
                };
                if !ok {
                    return None;
                }
            }
            for (r, o) in block.iter().enumerate() {
                sender_to[o.dst] = r;
            }
        }
        Some(PlanSteps { plan })
    }
}

impl Steps for PlanSteps<'_> {
    fn ranks(&self) -> usize {
        self.plan.ranks
    }
    fn chunks(&self) -> usize {
        self.plan.chunks
    }
    fn steps(&self) -> usize {
        self.plan.ops.len() / self.plan.ranks
    }
    fn starts_chain(&self, b: usize) -> bool {
        self.plan.ops[b * self.plan.ranks].deps.is_empty()
    }
    fn op(&self, b: usize, r: usize) -> StepOp {
        let o = &self.plan.ops[b * self.plan.ranks + r];
        StepOp {
            dst: o.dst,
            bytes: o.bytes,
            chunks: o.chunks.clone(),
            combine: o.combine,
            reduces: o.reduces,
        }
    }
}
