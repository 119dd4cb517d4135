//! The BookSim router mode: BookSim 2's input-queued router (`iq`), its traffic manager's
//! injection process and its measurement protocol, cycle for cycle.
//!
//! Written from a reading of BookSim 2 (commit 28f43299, `routers/iq_router.cpp`,
//! `allocators/islip.cpp`, `allocators/separable_input_first.cpp`, `buffer_state.cpp`,
//! `channel.hpp`, `networks/kncube.cpp`, `routefunc.cpp`, `trafficmanager.cpp`; the notes are in
//! `tools/booksim/README.md`). The network is a k-ary n-cube with one terminal per router;
//! router ports are numbered as BookSim numbers them (port 2d: the +1 neighbour in dimension d,
//! 2d + 1: the -1 neighbour, 2n: the terminal), because the round-robin pointers of the
//! allocators run over those numbers.
//!
//! # One cycle
//! BookSim's `_Step`, in an order that gives the same result:
//! 1. **terminals**: flits arriving from ejection channels are retired (latency statistics at
//!    the tail) and a credit goes back to the router; credits for the injection channel are
//!    applied; each node with no packet pending runs its Bernoulli trials from the cycle after
//!    its last packet up to now, stopping at the first success (the packet's creation time is
//!    that trial's cycle: an infinite source queue, generated lazily); each node writes at most
//!    one flit to its injection channel, the head taking a free, non-full VC round-robin.
//! 2. **routers** (only those with something to do): arriving flits enter their VC buffers (a
//!    head at an idle VC starts route computation), arriving credits wait `credit_delay`; then
//!    each stage is evaluated and then updated, as `IQRouter::_InternalStep` does: route
//!    computation, VC allocation (iSLIP or separable input-first over (input, VC) x (output,
//!    VC)), switch allocation (over input x output port; one VC per input and output), crossbar.
//!    A stage with delay d evaluates a batch of waiting VCs and holds them d cycles; its queue
//!    takes the next batch only when that one has left, as BookSim's stage queues do.
//! 3. **channels**: a flit or credit written in cycle t on a channel of latency L is read at
//!    the far end in cycle t + L + 1 (BookSim's channels latch their input one cycle and then
//!    delay it L - 1 more); injection and ejection channels have latency 1.
//!
//! A credit is returned upstream the cycle a flit wins switch allocation; the downstream
//! buffer's occupancy rises in that cycle too. A VC whose tail has been sent may be allocated
//! again at once (`wait_for_tail_credit = 0`).
//!
//! # Measurement
//! BookSim's `sim_type = latency`: sample periods of `cycles / 10` cycles (the default 10,000
//! gives BookSim's `sample_period = 1000` and `max_samples = 10`); 3 warm-up periods, then
//! packets are measured until 3 consecutive periods change the average packet latency and the
//! accepted rate by at most 5% (or 10 periods in all); then the measured packets are drained
//! with traffic still offered. The run is unstable (saturated) when the average latency of the
//! packets retired since the last reset plus the flits in flight (counted from creation)
//! exceeds 500 cycles at the end of a period or every 1,000 cycles of the drain. Packet latency
//! is from creation to the tail's ejection; accepted rate is flits ejected per node per cycle
//! while measuring.
//!
//! # Link counters
//! Over the same window as the accepted rate (from the last reset to the end of the last sample
//! period), each router output port to a network link counts the flits that won the switch for
//! it and the cycles in which switch allocation found a flit for it whose output VC had no
//! credit (once per cycle however many flits wait; a stall holds a flit `sw_alloc_delay`
//! cycles, all of them counted, so with the default delays this is every cycle a flit waits on
//! credits, as in the podsim mode). They are counted in both the fast path and the stage
//! queues, and change nothing else.

use std::collections::VecDeque;

use rand::RngCore;

use podsim_engine::{Histogram, RngStreams, SimError, SimRng};
use podsim_topology::{Direction, Network, NodeId};
use podsim_units::SimTime;

use crate::NocError;
use crate::config::{Allocator, ConfigError, RouterConfig};
use crate::fabric::{ChannelKind, NocRouting};
use crate::sim::{Delivered, LinkStat};
use crate::spec::{Destinations, MIN_WINDOW_CYCLES, NocResult, PacketLog, RunSpec};

/// Warm-up periods (BookSim `warmup_periods`).
const WARMUP_PERIODS: u32 = 3;
/// Most sample periods in all (BookSim `max_samples`).
const MAX_SAMPLES: u32 = 10;
/// Average latency above which a run is unstable (BookSim `latency_thres`).
const LATENCY_THRESHOLD: f64 = 500.0;
/// Largest relative change of latency and accepted rate between periods that counts as
/// converged (BookSim `stopping_thres`, `acc_stopping_thres`).
const STOPPING_THRESHOLD: f64 = 0.05;

const IDLE: u8 = 0;
const ROUTING: u8 = 1;
const VC_ALLOC: u8 = 2;
const ACTIVE: u8 = 3;

/// An entry's time before its stage has evaluated it.
const UNSET: i64 = -1;
/// An entry's result before evaluation, and a stall after it.
const PENDING: i32 = -1;
const STALL: i32 = -2;

const HEAD: u32 = 1;
const TAIL: u32 = 2;

/// A VC waiting in a stage: BookSim's `(time, (input, vc), result)` queue entries.
#[derive(Debug, Clone, Copy)]
struct Entry {
    time: i64,
    input: u16,
    vc: u16,
    result: i32,
}

/// An input VC of a router: its buffer's ring (front position and length; the flits are in
/// `BookSim::buf`), its stage (`IDLE`, `ROUTING`, `VC_ALLOC` or `ACTIVE`), its head's route
/// (output port and VC range) and the output port and VC allocated to it. Kept together
/// because a flit's every stage reads several of them. The same (router, port, VC) also names
/// an output VC, whose downstream occupancy `occ` is kept here too (switch allocation reads it
/// next to `out`).
#[derive(Debug, Clone, Copy, Default)]
struct InputVc {
    head: u16,
    len: u16,
    state: u8,
    route: (u8, u8, u8),
    out: (u8, u8),
    /// Downstream occupancy of the output VC with this index.
    occ: u16,
}

/// A router port: its output's VCs in use and switch-allocator pointers, its input's, and the
/// link counter of its output. Kept together because a switch crossing reads and writes them
/// all.
#[derive(Debug, Clone, Copy, Default)]
struct Port {
    /// The output's VCs allocated to a packet whose tail has not left, one bit per VC.
    in_use: u32,
    /// The neighbour through the output (the terminal port: the router itself).
    nbr: u32,
    /// The index in `BookSim::ivc` (its `occ`) of VC 0 of the output that feeds the input (the
    /// neighbour's port back), or for the terminal port the index in `BookSim::inj_occ` of the
    /// terminal's VC 0.
    up_occ: u32,
    /// The switch allocator's grant pointer (of the output) and accept pointer (of the input).
    sw_gptr: u16,
    sw_aptr: u16,
    /// The input's round-robin offset among its VCs for the switch.
    sw_rr: u16,
    /// Flits that won the switch for the output since the last reset (the terminal port's
    /// too: counting it saves a branch; it is not reported).
    flits: u64,
}

/// A terminal's injection state: the packet it is sending (or [`NO_PACKET`]) and the flits of
/// it sent, the injection VC it holds (-1 none) and the last one it took, its traffic
/// generator's next Bernoulli trial, whether that has passed the drain time, and its
/// injection VCs held by a packet (one bit per VC).
#[derive(Debug, Clone, Copy)]
struct Node {
    cur: u32,
    sent: u32,
    inj_vc: i32,
    last_vc: i32,
    qtime: u64,
    qdrained: bool,
    inj_in_use: u32,
}

/// A router's stage sets in the fast case (input-VC bits: the heads in route computation,
/// those waiting for VC allocation and those asking for the switch), and the cycle it was
/// last queued to step in.
#[derive(Debug, Clone, Copy, Default)]
struct Rt {
    route_m: u64,
    va_m: u64,
    sa_m: u64,
    stamp: u64,
}

/// The channel slots the fast case's crossbar writes this cycle, taken out of their wheels
/// while the routers step: flits to routers and to terminals, credits to routers and to
/// terminals.
#[derive(Debug, Default)]
struct Outbox {
    flits: Vec<FlitEvent>,
    eject: Vec<FlitEvent>,
    credits: Vec<u32>,
    inj_credits: Vec<u32>,
}

/// A flit in the crossbar.
#[derive(Debug, Clone, Copy)]
struct Crossing {
    time: i64,
    output: u16,
    vc: u16,
    flit: u32,
}

#[derive(Debug, Clone, Copy)]
struct FlitEvent {
    router: u32,
    port: u16,
    vc: u16,
    flit: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct Packet {
    src: u32,
    dst: u32,
    ctime: u64,
    itime: u64,
    /// Dateline partition of the current dimension (BookSim `f->ph`).
    ph: u8,
    measured: bool,
    /// Coin tosses for ties at distance k/2 in a wrapped dimension, bit d for dimension d
    /// (modulo 64): BookSim tosses a coin when the packet turns into the dimension, which
    /// happens once per dimension.
    coins: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    WarmingUp,
    Running,
    Draining,
}

/// Packet statistics since the last reset.
#[derive(Debug, Clone, Default)]
struct Stats {
    plat_sum: u64,
    nlat_sum: u64,
    hops_sum: u64,
    packets: u64,
    hist: Histogram,
    accepted: u64,
    sent: u64,
}

/// Scratch space of the allocators, reused every call.
#[derive(Debug, Clone, Default)]
struct Scratch {
    /// Requests: (input, output).
    reqs: Vec<(u16, u16)>,
    /// Best candidate per output (grant) or input (accept): key << 16 | port, `u32::MAX` none.
    best_out: Vec<u32>,
    best_in: Vec<u32>,
    inmatch: Vec<i32>,
    outmatch: Vec<i32>,
    touched_in: Vec<u16>,
    touched_out: Vec<u16>,
    /// Switch requests by input x output: the requesting VC, -1 none.
    sw_label: Vec<i16>,
    /// Heads asking for VCs of each output port.
    port_count: Vec<u16>,
    /// A stage's batch, (input, VC), and each one's result.
    items: Vec<(u16, u16)>,
    res: Vec<i32>,
    /// Fast case, by port: the heads asking for each output port (input-VC bits), the outputs
    /// each input asks the switch for and the inputs asking for each output (port bits), the
    /// allocator's grants, and each matched input's output.
    heads_of: Vec<u64>,
    req: Vec<u64>,
    col: Vec<u64>,
    grants: Vec<u64>,
    matched: Vec<u8>,
    /// Fast case, by output port: the input-VC bits of the VCs asking the switch for it.
    vcs_of: Vec<u64>,
    /// Heads competing for one output port: (item, input VC, free VCs of its range), and the
    /// separable allocator's pick for each.
    heads: Vec<(u16, u16, u32)>,
    picks: Vec<usize>,
}

/// Append `flit` to the ring of input VC `idx` (`x`) in `buf`, whose rings hold `slots` VCs
/// per position and `depth` positions: the VC's state and its length before.
#[inline(always)]
fn enqueue(
    x: &mut InputVc,
    buf: &mut [u32],
    (slots, depth): (usize, usize),
    idx: usize,
    flit: u32,
) -> (u8, u16) {
    let len = x.len;
    let mut at = x.head as usize + len as usize;
    if at >= depth {
        at -= depth;
    }
    x.len = len + 1;
    buf[at * slots + idx] = flit;
    (x.state, len)
}

/// VC allocation's grant of output VC index `pick` (VC `pick - obase` of output port `op`,
/// whose state is `port`) to head `j` of the router's `nio` input VCs `ivc`: the allocator's
/// pointers move past the match, the VC is in use and the head active.
#[inline(always)]
fn take_vc(
    ivc: &mut [InputVc],
    port: &mut Port,
    (gptr, aptr): (&mut [u16], &mut [u16]),
    (j, op, pick): (usize, usize, usize),
    (obase, nio): (usize, usize),
) {
    gptr[pick] = after(j, nio);
    aptr[j] = after(pick, nio);
    let ov = pick - obase;
    port.in_use |= 1 << ov;
    ivc[j].out = (op as u8, ov as u8);
    ivc[j].state = ACTIVE;
}

/// `i + 1` modulo `n` (for `i < n`), without a division, and by a mask rather than a branch
/// (whether a round-robin pointer wraps depends on the traffic).
fn after(i: usize, n: usize) -> u16 {
    let next = i + 1;
    (next & usize::from(next != n).wrapping_neg()) as u16
}

/// The output among `free` (VC bits of the output port whose (port, VC) outputs start at
/// `base`) nearest `from` round-robin over all (port, VC) outputs: from inside this port's
/// block, the first at or after it, else (and after wrapping) the lowest.
fn nearest(free: u32, from: usize, base: usize, v: usize) -> usize {
    // From the block's first output, "at or after it" is all of `free`, as after wrapping.
    // By a rotation, not a choice (which the compiler may turn into a branch): where the
    // pointer stands depends on the traffic. Rotated right by the offset, the VCs at or after
    // it come first and those before it land above all of them (`free` is not empty and
    // holds VC bits only, below `v` <= 32).
    let off = from.wrapping_sub(base);
    let off = off & usize::from(off < v).wrapping_neg();
    base + ((off + free.rotate_right(off as u32).trailing_zeros() as usize) & 31)
}

/// The VC bits `first..=last`.
fn vc_range(first: u8, last: u8) -> u32 {
    (u32::MAX >> (31 - u32::from(last))) & (u32::MAX << first)
}

/// Charge an output port's blocked counter `blocked` with the cycles `from..until` not yet
/// charged (`charged` is the end of those already counted), so that a cycle counts once
/// however many flits find the port without a credit. Cycles are charged when switch
/// allocation stalls a flit, for as long as the stall holds it (`sw_alloc_delay` cycles, or
/// the one cycle of BookSim's credit check at the end of a longer stage).
#[inline]
fn mark_blocked(blocked: &mut u64, charged: &mut u64, from: u64, until: u64) {
    let start = from.max(*charged);
    if until > start {
        *blocked += until - start;
        *charged = until;
    }
}

/// [`mark_blocked`] for this cycle on each of a router's output ports (`blocked` and `until`
/// its ports' entries) whose bit is in `stalled`: switch allocation found a flit for it whose
/// output VC had no credit.
fn mark_stalled(blocked: &mut [u64], until: &mut [u64], stalled: u64, now: u64) {
    for o in bits(stalled) {
        mark_blocked(&mut blocked[o], &mut until[o], now, now + 1);
    }
}

/// The set bits of `m`, lowest first.
fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let j = m.trailing_zeros() as usize;
            m &= m - 1;
            j
        })
    })
}

/// BookSim's expanded crossbar ports (with `input_speedup` `si` and `output_speedup` `so`),
/// tabulated: input VC `c` of port `p` (bit `j = p * vcs + c`) crosses on crossbar input
/// `input[j] = p * si + c % si`, towards crossbar output `o * so + out_of[p]` of its output port
/// `o` (`out_of[p] = p % so`); crossbar input `i` serves the VCs `on_input[i % si]` of its port
/// (`c % si == i % si`), and its round-robin offset moves from VC `c` to `next[c] = (c + si) %
/// vcs` when `c` wins.
#[derive(Debug, Clone, Default)]
struct Crossbar {
    input: Vec<u8>,
    out_of: Vec<u8>,
    on_input: Vec<u64>,
    next: Vec<u16>,
}

impl Crossbar {
    fn new((ports, vcs): (usize, usize), (si, so): (usize, usize)) -> Self {
        Crossbar {
            input: (0..ports * vcs)
                .map(|j| (j / vcs * si + j % vcs % si) as u8)
                .collect(),
            out_of: (0..ports).map(|p| (p % so) as u8).collect(),
            on_input: (0..si)
                .map(|k| (k..vcs).step_by(si).fold(0u64, |m, c| m | 1 << c))
                .collect(),
            next: (0..vcs).map(|c| ((c + si) % vcs) as u16).collect(),
        }
    }
}

/// The set bits of `m` (lowest first, or with `keys` in the order of their keys: BookSim's
/// queue order, see [`BookSim::keys`]) written to `out`: returns how many.
#[inline(always)]
fn by_key(m: u64, keys: Option<&[u64]>, out: &mut [u8; 64]) -> usize {
    if m & m.wrapping_sub(1) == 0 {
        // None or one (the usual case).
        out[0] = m.trailing_zeros() as u8;
        return usize::from(m != 0);
    }
    let mut n = 0;
    for j in bits(m) {
        let mut k = n;
        if let Some(keys) = keys {
            while k > 0 && keys[out[k - 1] as usize] > keys[j] {
                out[k] = out[k - 1];
                k -= 1;
            }
        }
        out[k] = j as u8;
        n += 1;
    }
    n
}

/// The bit of `mask` (not empty) nearest `from` (below 64) round-robin: the lowest at or after
/// it, else the lowest. By a rotation, so that no branch depends on where the pointer stands:
/// rotated right by `from`, the bits at or after it come first, then those before it.
fn rr_pick(mask: u64, from: usize) -> usize {
    (from + mask.rotate_right(from as u32).trailing_zeros() as usize) & 63
}

/// The switch allocator's round-robin pointers over `n` ports: each output's grant pointer and
/// each input's accept pointer.
trait Pointers {
    /// Output `o`'s grant pointer.
    fn gptr(&self, o: usize) -> usize;
    /// Input `i`'s accept pointer.
    fn aptr(&self, i: usize) -> usize;
    /// Input `i` matched output `o`: each pointer moves just past the other (modulo the
    /// number of inputs `ni` and of outputs `no`).
    fn matched(&mut self, i: usize, o: usize, ni: usize, no: usize);
}

/// The pointers as two slices, grant and accept.
impl Pointers for (&mut [u16], &mut [u16]) {
    fn gptr(&self, o: usize) -> usize {
        self.0[o] as usize
    }
    fn aptr(&self, i: usize) -> usize {
        self.1[i] as usize
    }
    fn matched(&mut self, i: usize, o: usize, ni: usize, no: usize) {
        self.0[o] = after(i, ni);
        self.1[i] = after(o, no);
    }
}

/// The pointers in a router's ports.
impl Pointers for [Port] {
    fn gptr(&self, o: usize) -> usize {
        self[o].sw_gptr as usize
    }
    fn aptr(&self, i: usize) -> usize {
        self[i].sw_aptr as usize
    }
    fn matched(&mut self, i: usize, o: usize, ni: usize, no: usize) {
        self[o].sw_gptr = after(i, ni);
        self[i].sw_aptr = after(o, no);
    }
}

/// [`allocate`] on bit sets, for at most 64 inputs and outputs (`ni` and `no`): `ins` are the
/// asking inputs and `req[i]` the outputs input `i` asks for; `outs` are the outputs asked for
/// and `col[o]` the inputs asking for output `o` (entries outside `ins` and `outs` are not
/// read). Returns the matched inputs, `matched[i]` holding each one's output; `grants` is
/// scratch of `max(ni, no)` entries. Round-robin picks are [`rr_pick`] from the pointers, which is the
/// smallest round-robin distance that [`allocate`] takes.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn allocate_bits<T: Pointers + ?Sized>(
    kind: Allocator,
    iters: u32,
    (ni, no): (usize, usize),
    ptrs: &mut T,
    (ins, req): (u64, &[u64]),
    (outs, col): (u64, &[u64]),
    grants: &mut [u64],
    matched: &mut [u8],
) -> u64 {
    match kind {
        Allocator::Islip | Allocator::SeparableOutputFirst if iters == 1 => {
            // One round: every input granted accepts, and the pointers move. (Only the asking
            // inputs' grants are read; clearing all `ni` is a loop of fixed length.)
            grants[..ni].fill(0);
            let mut granted = 0u64;
            for o in bits(outs) {
                let cand = col[o] & ins;
                if cand == 0 {
                    continue;
                }
                let i = rr_pick(cand, ptrs.gptr(o));
                granted |= 1 << i;
                grants[i] |= 1 << o;
            }
            for i in bits(granted) {
                let o = rr_pick(grants[i], ptrs.aptr(i));
                matched[i] = o as u8;
                ptrs.matched(i, o, ni, no);
            }
            granted
        }
        Allocator::Islip | Allocator::SeparableOutputFirst => {
            let (mut free_in, mut free_out) = (ins, outs);
            for iter in 0..iters {
                // Grant: each free output picks a free asking input; accept: each input picks
                // one of the outputs that granted it. Pointers move in the first round only.
                let mut granted = 0u64;
                // Only the free inputs' grants are read.
                for i in bits(free_in) {
                    grants[i] = 0;
                }
                for o in bits(free_out) {
                    let cand = col[o] & free_in;
                    if cand == 0 {
                        continue;
                    }
                    let i = rr_pick(cand, ptrs.gptr(o));
                    granted |= 1 << i;
                    grants[i] |= 1 << o;
                }
                if granted == 0 {
                    break;
                }
                for i in bits(granted) {
                    let o = rr_pick(grants[i], ptrs.aptr(i));
                    matched[i] = o as u8;
                    free_in &= !(1 << i);
                    free_out &= !(1 << o);
                    if iter == 0 {
                        ptrs.matched(i, o, ni, no);
                    }
                }
            }
            ins & !free_in
        }
        Allocator::SeparableInputFirst => {
            // Input arbiters pick an output each; output arbiters pick among their pickers.
            let mut picked = 0u64;
            // Only the picked outputs' grants are read.
            for o in bits(outs) {
                grants[o] = 0;
            }
            for i in bits(ins) {
                let o = rr_pick(req[i], ptrs.aptr(i));
                picked |= 1 << o;
                grants[o] |= 1 << i;
            }
            let mut won = 0u64;
            for o in bits(picked) {
                let i = rr_pick(grants[o], ptrs.gptr(o));
                matched[i] = o as u8;
                won |= 1 << i;
                ptrs.matched(i, o, ni, no);
            }
            won
        }
    }
}

/// VC allocation at output port `op` (of `v` VCs) among the heads `heads` (input-VC bits, more
/// than one), as [`BookSim::va_shared_port`] (one round) and [`BookSim::va_port`] (`iters`
/// iSLIP rounds) do it, on bit sets: `free(j)` is the VC bits head `j` may take; `gptr` and
/// `aptr` are the router's pointers over its (port, VC) outputs and inputs. Returns the heads
/// granted a VC, each one's VC in `picks` (the VC's number in the port), and those that got
/// none. The pointers move past the matches of the first round only.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn shared_port_bits(
    kind: Allocator,
    iters: u32,
    (op, v): (usize, usize),
    heads: u64,
    free: impl Fn(usize) -> u32,
    gptr: &mut [u16],
    aptr: &mut [u16],
    picks: &mut [u8; 64],
) -> (u64, u64) {
    let nio = gptr.len();
    let base = op * v;
    let (mut won, mut lost) = (0u64, 0u64);
    // The VCs some head may take, those every asking head may take, and the asking heads.
    let (mut union, mut common, mut asking) = (0u32, u32::MAX, 0u64);
    for j in bits(heads) {
        let f = free(j);
        if f == 0 {
            lost |= 1 << j;
            continue;
        }
        union |= f;
        common &= f;
        asking |= 1 << j;
    }
    match kind {
        Allocator::Islip | Allocator::SeparableOutputFirst => {
            // The heads that may take each VC: all the asking heads when they may take the
            // same VCs (always on a mesh, whose heads all may take any free VC), which saves
            // a loop over each head's VCs.
            let mut want = [0u64; 32];
            if union != common {
                for j in bits(asking) {
                    for ov in bits(u64::from(free(j))) {
                        want[ov] |= 1 << j;
                    }
                }
            }
            // Grant: each asked-for VC still free grants the unmatched head nearest its
            // pointer; accept: each head takes the granting VC nearest its pointer.
            let (mut heads_left, mut vcs_left) = (asking, union);
            for round in 0..iters {
                let mut granted = [0u32; 64];
                let mut got = 0u64;
                for ov in bits(u64::from(vcs_left)) {
                    let candidates = if union == common { asking } else { want[ov] } & heads_left;
                    if candidates == 0 {
                        continue;
                    }
                    let j = rr_pick(candidates, gptr[base + ov] as usize);
                    granted[j] |= 1 << ov;
                    got |= 1 << j;
                }
                if got == 0 {
                    break;
                }
                for j in bits(got) {
                    let o = nearest(granted[j], aptr[j] as usize, base, v);
                    if round == 0 {
                        gptr[o] = after(j, nio);
                        aptr[j] = after(o, nio);
                    }
                    picks[j] = (o - base) as u8;
                    won |= 1 << j;
                    heads_left &= !(1 << j);
                    vcs_left &= !(1 << (o - base));
                }
            }
            lost |= heads & !lost & !won;
        }
        Allocator::SeparableInputFirst => {
            // Input arbiters: each head picks the free VC nearest its pointer; output arbiters:
            // each picked VC takes the head nearest its pointer.
            let mut picked = [0u64; 32];
            let mut outs = 0u64;
            for j in bits(heads & !lost) {
                let ov = nearest(free(j), aptr[j] as usize, base, v) - base;
                picked[ov] |= 1 << j;
                outs |= 1 << ov;
            }
            for ov in bits(outs) {
                let j = rr_pick(picked[ov], gptr[base + ov] as usize);
                won |= 1 << j;
                lost |= picked[ov] & !(1 << j);
                gptr[base + ov] = after(j, nio);
                aptr[j] = after(base + ov, nio);
                picks[j] = ov as u8;
            }
        }
    }
    (won, lost)
}

/// Match inputs to outputs for the requests in `s.reqs`: afterwards `s.inmatch[input]` is the
/// output granted to every requesting input, or -1.
#[allow(clippy::too_many_arguments)]
fn allocate<T: Pointers + ?Sized>(
    kind: Allocator,
    iters: u32,
    ni: usize,
    no: usize,
    ptrs: &mut T,
    reqs: &[(u16, u16)],
    s: &mut Scratch,
) {
    for &(i, o) in reqs {
        s.inmatch[i as usize] = -1;
        s.outmatch[o as usize] = -1;
    }
    // Round-robin distance from a pointer (both below n).
    let dist = |a: usize, from: usize, _n: usize| {
        (if a >= from { a - from } else { a + _n - from }) as u32
    };
    // One input asking (the usual case: one head wanting any VC of one output, or one flit
    // wanting the switch): every output grants it, it takes the nearest round-robin.
    if let Some(&(i0, _)) = reqs.first()
        && reqs.iter().all(|&(i, _)| i == i0)
    {
        let iu = i0 as usize;
        let mut best = u32::MAX;
        for &(_, o) in reqs {
            best = best.min(dist(o as usize, ptrs.aptr(iu), no) << 16 | u32::from(o));
        }
        let o = (best & 0xffff) as usize;
        s.inmatch[iu] = o as i32;
        ptrs.matched(iu, o, ni, no);
        return;
    }
    // No two requests share an input or an output: each output grants its one requester and
    // each input accepts its one grant.
    let mut distinct = true;
    for &(i, o) in reqs {
        if s.best_in[i as usize] != u32::MAX || s.best_out[o as usize] != u32::MAX {
            distinct = false;
            break;
        }
        s.best_in[i as usize] = 0;
        s.best_out[o as usize] = 0;
    }
    for &(i, o) in reqs {
        s.best_in[i as usize] = u32::MAX;
        s.best_out[o as usize] = u32::MAX;
    }
    if distinct {
        for &(i, o) in reqs {
            let (iu, ou) = (i as usize, o as usize);
            s.inmatch[iu] = ou as i32;
            ptrs.matched(iu, ou, ni, no);
        }
        return;
    }
    match kind {
        Allocator::Islip | Allocator::SeparableOutputFirst => {
            for iter in 0..iters {
                // Grant: each free output picks, round-robin from its pointer, a free input.
                s.touched_out.clear();
                for &(i, o) in reqs {
                    let (iu, ou) = (i as usize, o as usize);
                    if s.inmatch[iu] != -1 || s.outmatch[ou] != -1 {
                        continue;
                    }
                    let key = dist(iu, ptrs.gptr(ou), ni) << 16 | u32::from(i);
                    if s.best_out[ou] == u32::MAX {
                        s.touched_out.push(o);
                    }
                    s.best_out[ou] = s.best_out[ou].min(key);
                }
                if s.touched_out.is_empty() {
                    break;
                }
                // Accept: each input picks, round-robin from its pointer, a granting output.
                s.touched_in.clear();
                for &o in &s.touched_out {
                    let ou = o as usize;
                    let i = (s.best_out[ou] & 0xffff) as usize;
                    s.best_out[ou] = u32::MAX;
                    let key = dist(ou, ptrs.aptr(i), no) << 16 | u32::from(o);
                    if s.best_in[i] == u32::MAX {
                        s.touched_in.push(i as u16);
                    }
                    s.best_in[i] = s.best_in[i].min(key);
                }
                for &i in &s.touched_in {
                    let iu = i as usize;
                    let o = (s.best_in[iu] & 0xffff) as usize;
                    s.best_in[iu] = u32::MAX;
                    s.inmatch[iu] = o as i32;
                    s.outmatch[o] = iu as i32;
                    if iter == 0 {
                        ptrs.matched(iu, o, ni, no);
                    }
                }
            }
        }
        Allocator::SeparableInputFirst => {
            // Input arbiters: each input picks one of its requests round-robin.
            s.touched_in.clear();
            for &(i, o) in reqs {
                let (iu, ou) = (i as usize, o as usize);
                let key = dist(ou, ptrs.aptr(iu), no) << 16 | u32::from(o);
                if s.best_in[iu] == u32::MAX {
                    s.touched_in.push(i);
                }
                s.best_in[iu] = s.best_in[iu].min(key);
            }
            // Output arbiters: each output picks one of the inputs that picked it.
            s.touched_out.clear();
            for &i in &s.touched_in {
                let iu = i as usize;
                let o = (s.best_in[iu] & 0xffff) as usize;
                s.best_in[iu] = u32::MAX;
                let key = dist(iu, ptrs.gptr(o), ni) << 16 | u32::from(i);
                if s.best_out[o] == u32::MAX {
                    s.touched_out.push(o as u16);
                }
                s.best_out[o] = s.best_out[o].min(key);
            }
            for &o in &s.touched_out {
                let ou = o as usize;
                let i = (s.best_out[ou] & 0xffff) as usize;
                s.best_out[ou] = u32::MAX;
                s.inmatch[i] = ou as i32;
                s.outmatch[ou] = i as i32;
                ptrs.matched(i, ou, ni, no);
            }
        }
    }
}

/// A network of BookSim `iq` routers with its terminals.
struct BookSim {
    // Shape.
    routers: usize,
    ports: usize,
    vcs: usize,
    depth: usize,
    dims: Vec<u32>,
    wrap: Vec<bool>,
    /// Coordinates of every router, `routers * dims`.
    coords: Vec<u32>,
    /// Dateline VC partitions (any dimension wraps: BookSim's `dim_order_torus`).
    torus: bool,
    /// Every router's ports, by (router, port).
    port: Vec<Port>,
    /// Without wrap-around links and with at most [`MESH_TABLE_ROUTERS`] routers: the output
    /// port from each router towards each destination, `routers * routers` (the terminal port
    /// at the destination), [`BookSim::mesh_port`] tabulated; empty otherwise.
    mesh_ports: Vec<u8>,
    /// With wrap-around links, at most [`MESH_TABLE_ROUTERS`] routers and at most 64
    /// dimensions: each (router, destination) pair's [`TorusStep`], `routers * routers`, what
    /// [`BookSim::compute_route_slow`] derives from the coordinates; empty otherwise.
    torus_steps: Vec<TorusStep>,
    /// With at most [`HOP_TABLE_ROUTERS`] routers: [`BookSim::hops`] between every two routers,
    /// `routers * routers` (a packet's statistics read it as it leaves); empty otherwise.
    hop_table: Vec<u8>,
    // Delays.
    routing_delay: i64,
    vc_alloc_delay: i64,
    sw_alloc_delay: i64,
    crossbar_delay: i64,
    credit_delay: u64,
    latency: u64,
    /// The allocator as run: separable output-first runs as one round of iSLIP, which it
    /// equals (see [`Allocator::SeparableOutputFirst`]).
    allocator: Allocator,
    alloc_iters: u32,
    /// Crossbar inputs per input port and outputs per output port (BookSim's
    /// `input_speedup`, `output_speedup`); above 1 only the stage queues run.
    in_speedup: usize,
    out_speedup: usize,
    /// A speedup in the fast case: the switch allocates over crossbar ports
    /// ([`Self::sa_fast_sp`]), and the order of BookSim's stage queues, which the bit sets do
    /// not keep, is kept as each input VC's place in them, `keys`, from each router's count of
    /// entries queued, `seq` (BookSim's queue order decides which of the flits that crossed to
    /// one output together leaves first).
    sp: bool,
    /// With a speedup, the crossbar's numbering tabulated for the fast case.
    xbar: Crossbar,
    /// An output speedup in the fast case: `keys` and `seq` are kept.
    ordered: bool,
    keys: Vec<u64>,
    seq: Vec<u64>,
    /// Every match of the switch allocator moves its pointers (one iSLIP round, or the
    /// separable allocator).
    one_round: bool,
    packet_flits: u32,
    watchdog: u64,
    cycle_ps: u64,
    // Router state, by (router, port, VC) unless said.
    /// The input VCs' buffers, by ring position and then input VC (position `k` of input VC
    /// `i` at `k * ivc.len() + i`). A VC's ring starts over at position 0 whenever it empties,
    /// so most flits use position 0 and the buffers in use stay few cache lines.
    buf: Vec<u32>,
    /// Each input VC's buffer position and stage state.
    ivc: Vec<InputVc>,
    /// Delays all 1 (routing 0 or 1) and at most 64 input VCs per router: each stage takes all
    /// its waiting VCs every cycle, so a bit set per router and stage is its queue.
    fast: bool,
    /// In the fast case, each input-VC bit's port and VC.
    bit_port: Vec<u16>,
    bit_vc: Vec<u16>,
    /// Each router's stage sets and stamp.
    rt: Vec<Rt>,
    route_q: Vec<VecDeque<Entry>>,
    va_q: Vec<VecDeque<Entry>>,
    sa_q: Vec<VecDeque<Entry>>,
    xbar_q: Vec<VecDeque<Crossing>>,
    va_gptr: Vec<u16>,
    va_aptr: Vec<u16>,
    /// The stage queues' switch allocator: each crossbar output's grant pointer, by (router,
    /// port, output of the port), and each crossbar input's accept pointer and round-robin
    /// offset among its VCs, by (router, port, input of the port) (BookSim's
    /// `_sw_rr_offset`). With speedups of 1 these are one a port, as the fast case's
    /// [`Port`] fields are.
    sw_gptr: Vec<u16>,
    sw_aptr: Vec<u16>,
    sw_rr: Vec<u16>,
    /// With an output speedup: by (router, port), the first cycle the output's channel is
    /// free, so that the flits crossing to one output in a cycle leave one a cycle, in the
    /// order they crossed (BookSim's output queue, `_output_buffer`).
    out_free: Vec<u64>,
    scratch: Scratch,
    // Channels: events by arrival cycle modulo the wheel's size.
    wheel: usize,
    /// In the fast case, this cycle's channel slots for what the crossbar sends, while the
    /// routers step.
    outbox: Outbox,
    flits_at: Vec<Vec<FlitEvent>>,
    /// Credits by the index in `ivc` (its `occ`) of the output VC they are for.
    credits_at: Vec<Vec<u32>>,
    eject_at: Vec<Vec<FlitEvent>>,
    /// Injection-channel credits by the index in `inj_occ` of the VC they are for.
    inj_credit_at: Vec<Vec<u32>>,
    active: Vec<u32>,
    next_active: Vec<u32>,
    // Terminals.
    nodes: Vec<Node>,
    undrained: usize,
    inj_occ: Vec<u16>,
    threshold: u64,
    // Packets.
    packets: Vec<Packet>,
    /// Each packet's destination, apart from the rest because route computation reads it at
    /// every hop (a small array stays in the cache).
    dst_of: Vec<u32>,
    free: Vec<u32>,
    // Time and bookkeeping.
    now: u64,
    phase: Phase,
    drain_time: u64,
    reset_time: u64,
    stats: Stats,
    in_flight: u64,
    in_flight_ctime: u128,
    measured_in_flight: u64,
    in_network: u64,
    last_progress: u64,
    flit_hops: u64,
    /// Cycles in which switch allocation held a flit for each output port for want of a
    /// credit, since the last reset, by (router, port); see [`mark_blocked`].
    port_blocked: Vec<u64>,
    /// By (router, port): the cycle up to which (exclusive) `port_blocked` is already charged,
    /// so that a cycle counts once however many flits wait for the port.
    blocked_until: Vec<u64>,
    /// `Port::flits` and `port_blocked` as they stood at the end of the measurement window.
    window_flits: Vec<u64>,
    window_blocked: Vec<u64>,
    /// `flit_hops` at the last reset and at the end of the window (the link counters' sum
    /// over the window is their difference; checked in tests).
    hops_at_reset: u64,
    window_hops: u64,
    rng: SimRng,
    route_rng: SimRng,
    dests: Destinations,
    /// Tests: the stage queues step the cycle's routers in the reverse order (nothing may
    /// depend on that order).
    #[cfg(test)]
    reversed: bool,
}

const NO_PACKET: u32 = u32::MAX;

/// The most routers for which a mesh's routes are tabulated (a byte per pair: 1 MiB).
const MESH_TABLE_ROUTERS: usize = 1024;

/// The most routers for which the hops between routers are tabulated (a byte per pair: 64 KiB).
const HOP_TABLE_ROUTERS: usize = 256;

/// Dimension-order routing's decision at a router for a destination on a network with
/// wrap-around links, as far as the two coordinates fix it: the first dimension in which they
/// differ and how to go in it ([`BookSim::torus_step`]); the packet's arrival port, dateline
/// partition and coin decide the rest ([`torus_route`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TorusStep {
    dim: u8,
    flags: u8,
}

impl TorusStep {
    /// At the destination: the terminal port.
    const ARRIVED: TorusStep = TorusStep {
        dim: u8::MAX,
        flags: 0,
    };
    /// The dimension wraps.
    const WRAP: u8 = 1;
    /// The +1 direction: the shorter way round (wrapping), or towards the destination (not).
    const PLUS: u8 = 2;
    /// Wrapping, both ways are as long (distance k/2): the packet's coin decides.
    const TIE: u8 = 4;
    /// Wrapping, the coordinate is above the destination's: dateline partition 1.
    const UPPER: u8 = 8;
}

/// [`BookSim::compute_route_slow`] on a network with wrap-around links from the tabulated
/// `step` (for `p`, arriving on `in_port`, with `ports` ports of `vcs` VCs): the output port and
/// VC range, the packet's partition updated as the slow path updates it.
#[inline(always)]
fn torus_route(
    step: TorusStep,
    in_port: usize,
    p: &mut Packet,
    (ports, vcs): (usize, usize),
) -> (u8, u8, u8) {
    let last = (vcs - 1) as u8;
    if step.dim == u8::MAX {
        return ((ports - 1) as u8, 0, last);
    }
    let d = usize::from(step.dim);
    let turning = in_port / 2 != d;
    let port = if step.flags & TorusStep::WRAP == 0 {
        if turning {
            p.ph = 0;
        }
        if step.flags & TorusStep::PLUS != 0 {
            2 * d
        } else {
            2 * d + 1
        }
    } else if turning {
        let plus = step.flags & TorusStep::PLUS != 0
            || (step.flags & TorusStep::TIE != 0 && (p.coins >> (d % 64)) & 1 == 1);
        p.ph = u8::from(step.flags & TorusStep::UPPER != 0);
        if plus { 2 * d } else { 2 * d + 1 }
    } else {
        in_port ^ 1
    };
    let avail = (vcs / 2) as u8;
    if p.ph == 0 {
        (port as u8, 0, last - avail)
    } else {
        (port as u8, avail, last)
    }
}

impl BookSim {
    fn new(net: &Network, cfg: &RouterConfig, spec: &RunSpec) -> Result<Self, NocError> {
        let Network::Cube(c) = net else {
            return Err(ConfigError::new(
                "router",
                format!(
                    "the booksim router runs k-ary n-cubes (mesh:..., torus:...), as BookSim's \
                     kncube does; {} is not one",
                    net.shorthand()
                ),
            )
            .into());
        };
        let dims = c.dims().to_vec();
        let n = dims.len();
        let wrap: Vec<bool> = (0..n).map(|d| c.has_wrap_link(d)).collect();
        let routers = c.node_count() as usize;
        let ports = 2 * n + 1;
        let vcs = cfg.vcs as usize;
        let depth = cfg.buffer_flits as usize;
        let torus = wrap.iter().any(|&w| w);
        if torus && vcs < 2 {
            return Err(ConfigError::new(
                "vcs",
                format!(
                    "{} has wrap-around links: BookSim's dateline partitions need at least 2 \
                     virtual channels, got {vcs}",
                    net.shorthand()
                ),
            )
            .into());
        }
        if ports > 255 || routers >= (1 << 30) || routers * ports * vcs > u32::MAX as usize {
            return Err(ConfigError::new(
                "topology",
                format!(
                    "{} is larger than the booksim router handles",
                    net.shorthand()
                ),
            )
            .into());
        }
        let slots = routers * ports * vcs;
        let estimate = (slots as u64)
            .saturating_mul(4 * depth as u64 + 64)
            .saturating_add(routers as u64 * 256);
        if estimate > cfg.memory_limit {
            return Err(NocError::Memory {
                what: format!("{routers} BookSim routers"),
                estimate,
                limit: cfg.memory_limit,
            });
        }
        let mut stride = Vec::with_capacity(n);
        let mut s = 1u32;
        for &k in &dims {
            stride.push(s);
            s = s.saturating_mul(k);
        }
        let mut nbr = vec![0u32; routers * ports];
        for r in 0..routers {
            for d in 0..n {
                let k = dims[d];
                let x = (r as u32 / stride[d]) % k;
                let base = r as u32 - x * stride[d];
                nbr[r * ports + 2 * d] = base + ((x + 1) % k) * stride[d];
                nbr[r * ports + 2 * d + 1] = base + ((x + k - 1) % k) * stride[d];
            }
            nbr[r * ports + 2 * n] = r as u32;
        }
        let coords: Vec<u32> = (0..routers)
            .flat_map(|r| {
                let stride = &stride;
                let dims = &dims;
                (0..n).map(move |d| (r as u32 / stride[d]) % dims[d])
            })
            .collect();
        let latency = u64::from(cfg.channel_latency.unwrap_or(if torus { 2 } else { 1 }));
        let (si, so) = (cfg.input_speedup as usize, cfg.output_speedup as usize);
        // An output's queue holds at most what its VCs downstream have credits for, so a flit
        // leaves at most `vcs * depth` cycles after it crossed.
        let queued = if so > 1 { vcs * depth } else { 0 };
        // A credit is written on the wheel for the cycle its router takes it, `credit_delay`
        // after it arrives.
        let wheel = (latency as usize + 3 + queued + cfg.credit_delay as usize).next_power_of_two();
        let p = spec.rate / f64::from(cfg.packet_flits);
        let threshold = if p >= 1.0 {
            u64::MAX
        } else {
            (p * 18_446_744_073_709_551_616.0) as u64
        };
        let nio = ports * vcs;
        let streams = RngStreams::new(spec.seed);
        let mut b = BookSim {
            routers,
            ports,
            vcs,
            depth,
            dims,
            wrap,
            coords,
            torus,
            port: (0..routers * ports)
                .map(|x| {
                    let (r, p) = (x / ports, x % ports);
                    let up_occ = if p == ports - 1 {
                        (r * vcs) as u32
                    } else {
                        ((nbr[x] as usize * ports + (p ^ 1)) * vcs) as u32
                    };
                    Port {
                        nbr: nbr[x],
                        up_occ,
                        ..Port::default()
                    }
                })
                .collect(),
            mesh_ports: Vec::new(),
            torus_steps: Vec::new(),
            hop_table: Vec::new(),
            routing_delay: i64::from(cfg.routing_delay),
            vc_alloc_delay: i64::from(cfg.vc_alloc_delay),
            sw_alloc_delay: i64::from(cfg.sw_alloc_delay),
            crossbar_delay: i64::from(cfg.st_prepare_delay + cfg.st_final_delay),
            credit_delay: u64::from(cfg.credit_delay),
            latency,
            allocator: match cfg.allocator {
                Allocator::SeparableOutputFirst => Allocator::Islip,
                a => a,
            },
            alloc_iters: match cfg.allocator {
                Allocator::Islip => cfg.alloc_iters,
                _ => 1,
            },
            in_speedup: si,
            out_speedup: so,
            sp: si > 1 || so > 1,
            xbar: Crossbar::new((ports, vcs), (si, so)),
            ordered: so > 1,
            keys: if so > 1 { vec![0; slots] } else { Vec::new() },
            seq: if so > 1 { vec![0; routers] } else { Vec::new() },
            one_round: cfg.alloc_iters == 1 || cfg.allocator != Allocator::Islip,
            packet_flits: cfg.packet_flits,
            watchdog: cfg.watchdog_cycles,
            cycle_ps: {
                let bw = net.link().bandwidth.bytes_per_s() as f64;
                ((cfg.flit_bytes as f64 / bw.max(1.0)) * 1e12)
                    .round()
                    .max(1.0) as u64
            },
            buf: vec![0; slots * depth],
            ivc: vec![InputVc::default(); slots],
            fast: cfg.routing_delay <= 1
                && cfg.vc_alloc_delay == 1
                && cfg.sw_alloc_delay == 1
                && cfg.st_prepare_delay + cfg.st_final_delay == 1
                && ports * si <= 64
                && ports * so <= 64
                && ports * vcs <= 64,
            bit_port: (0..ports * vcs).map(|j| (j / vcs) as u16).collect(),
            bit_vc: (0..ports * vcs).map(|j| (j % vcs) as u16).collect(),
            rt: vec![
                Rt {
                    stamp: u64::MAX,
                    ..Rt::default()
                };
                routers
            ],
            route_q: vec![VecDeque::new(); routers],
            va_q: vec![VecDeque::new(); routers],
            sa_q: vec![VecDeque::new(); routers],
            xbar_q: vec![VecDeque::new(); routers],
            va_gptr: vec![0; routers * nio],
            va_aptr: vec![0; routers * nio],
            sw_gptr: vec![0; routers * ports * so],
            sw_aptr: vec![0; routers * ports * si],
            // BookSim starts crossbar input i's offset at its first VC, i % input_speedup.
            sw_rr: (0..routers * ports * si).map(|i| (i % si) as u16).collect(),
            out_free: if so > 1 {
                vec![0; routers * ports]
            } else {
                Vec::new()
            },
            scratch: Scratch {
                reqs: Vec::new(),
                best_out: vec![u32::MAX; nio.max(ports * so)],
                best_in: vec![u32::MAX; nio.max(ports * si)],
                inmatch: vec![-1; nio.max(ports * si)],
                outmatch: vec![-1; nio.max(ports * so)],
                touched_in: Vec::new(),
                touched_out: Vec::new(),
                sw_label: vec![-1; ports * si * ports * so],
                port_count: vec![0; ports],
                items: Vec::new(),
                res: Vec::new(),
                heads_of: vec![0; ports],
                req: vec![0; ports * si],
                col: vec![0; ports * so],
                grants: vec![0; ports * si.max(so)],
                matched: vec![0; ports * si],
                vcs_of: vec![0; ports * so],
                heads: Vec::new(),
                picks: Vec::new(),
            },
            wheel,
            outbox: Outbox::default(),
            flits_at: vec![Vec::new(); wheel],
            credits_at: vec![Vec::new(); wheel],
            eject_at: vec![Vec::new(); wheel],
            inj_credit_at: vec![Vec::new(); wheel],
            active: Vec::new(),
            next_active: Vec::new(),
            nodes: vec![
                Node {
                    cur: NO_PACKET,
                    sent: 0,
                    inj_vc: -1,
                    last_vc: -1,
                    qtime: 0,
                    qdrained: false,
                    inj_in_use: 0,
                };
                routers
            ],
            undrained: routers,
            inj_occ: vec![0; routers * vcs],
            threshold,
            packets: Vec::new(),
            dst_of: Vec::new(),
            free: Vec::new(),
            now: 0,
            phase: Phase::WarmingUp,
            drain_time: 0,
            reset_time: 0,
            stats: Stats::default(),
            in_flight: 0,
            in_flight_ctime: 0,
            measured_in_flight: 0,
            in_network: 0,
            last_progress: 0,
            flit_hops: 0,
            port_blocked: vec![0; routers * ports],
            blocked_until: vec![0; routers * ports],
            window_flits: Vec::new(),
            window_blocked: Vec::new(),
            hops_at_reset: 0,
            window_hops: 0,
            rng: streams.stream("noc.booksim.traffic"),
            route_rng: streams.stream("noc.booksim.routing"),
            dests: Destinations::new(&spec.pattern, net, routers)?,
            #[cfg(test)]
            reversed: false,
        };
        if routers <= HOP_TABLE_ROUTERS {
            // At most 255 hops between 256 routers.
            b.hop_table = (0..routers * routers)
                .map(|x| b.hops_between((x / routers) as u32, (x % routers) as u32) as u8)
                .collect();
        }
        if !torus && routers <= MESH_TABLE_ROUTERS {
            b.mesh_ports = (0..routers * routers)
                .map(|x| b.mesh_port(x / routers, x % routers))
                .collect();
        }
        if torus && routers <= MESH_TABLE_ROUTERS && n <= 64 {
            b.torus_steps = (0..routers * routers)
                .map(|x| b.torus_step(x / routers, x % routers))
                .collect();
        }
        Ok(b)
    }

    /// Dimension-order routing on a network without wrap-around links: the output port from
    /// router `r` towards `dst` (the first dimension where they differ, towards `dst`; the
    /// terminal port at `dst`).
    fn mesh_port(&self, r: usize, dst: usize) -> u8 {
        if r == dst {
            return (self.ports - 1) as u8;
        }
        let n = self.dims.len();
        let here = &self.coords[r * n..r * n + n];
        let there = &self.coords[dst * n..dst * n + n];
        let mut d = 0;
        while here[d] == there[d] {
            d += 1;
        }
        (if here[d] < there[d] { 2 * d } else { 2 * d + 1 }) as u8
    }

    /// BookSim's `dim_order_mesh` / `dim_order_torus` at router `r` for the head of `pkt`
    /// arriving on `in_port`: the output port and the VC range.
    #[inline(always)]
    fn compute_route(&mut self, r: usize, in_port: usize, pkt: u32) -> (u8, u8, u8) {
        if !self.torus
            && let Some(&dst) = self.dst_of.get(pkt as usize)
            && let Some(&port) = self.mesh_ports.get(r * self.routers + dst as usize)
        {
            // A tabulated mesh: no dateline partitions, the packet's own state plays no part.
            return (port, 0, (self.vcs - 1) as u8);
        }
        if let Some(&dst) = self.dst_of.get(pkt as usize)
            && let Some(&step) = self.torus_steps.get(r * self.routers + dst as usize)
        {
            let p = &mut self.packets[pkt as usize];
            return torus_route(step, in_port, p, (self.ports, self.vcs));
        }
        self.compute_route_slow(r, in_port, pkt)
    }

    /// What dimension-order routing on a network with wrap-around links decides at router `r`
    /// for a packet to `dst` from the two coordinates alone (tabulated in `torus_steps`):
    /// [`Self::compute_route_slow`] up to the packet's own state.
    fn torus_step(&self, r: usize, dst: usize) -> TorusStep {
        if r == dst {
            return TorusStep::ARRIVED;
        }
        let n = self.dims.len();
        let here = &self.coords[r * n..r * n + n];
        let there = &self.coords[dst * n..dst * n + n];
        let mut d = 0;
        while here[d] == there[d] {
            d += 1;
        }
        let (cur, dest) = (here[d], there[d]);
        let k = self.dims[d];
        let mut flags = 0u8;
        if self.wrap[d] {
            flags |= TorusStep::WRAP;
            let dist2 = i64::from(k) - 2 * i64::from((dest + k - cur) % k);
            if dist2 > 0 {
                flags |= TorusStep::PLUS;
            } else if dist2 == 0 {
                flags |= TorusStep::TIE;
            }
            if cur > dest {
                flags |= TorusStep::UPPER;
            }
        } else if cur < dest {
            flags |= TorusStep::PLUS;
        }
        TorusStep {
            dim: d as u8,
            flags,
        }
    }

    /// [`Self::compute_route`] off the tabulated mesh.
    #[inline(never)]
    fn compute_route_slow(&mut self, r: usize, in_port: usize, pkt: u32) -> (u8, u8, u8) {
        let n = self.dims.len();
        let last = (self.vcs - 1) as u8;
        let dst = self.dst_of[pkt as usize] as usize;
        if !self.torus {
            // No dateline partitions: the packet's own state plays no part.
            return (self.mesh_port(r, dst), 0, last);
        }
        if r == dst {
            return ((self.ports - 1) as u8, 0, last);
        }
        let here = &self.coords[r * n..r * n + n];
        let there = &self.coords[dst * n..dst * n + n];
        let mut d = 0;
        while here[d] == there[d] {
            d += 1;
        }
        let (cur, dest) = (here[d], there[d]);
        let k = self.dims[d];
        let p = &mut self.packets[pkt as usize];
        let port = if !self.wrap[d] {
            if in_port / 2 != d {
                p.ph = 0;
            }
            if cur < dest { 2 * d } else { 2 * d + 1 }
        } else if in_port / 2 != d {
            // Turning into this dimension: the shorter way round, a coin toss at k/2.
            let dist2 = i64::from(k) - 2 * i64::from((dest + k - cur) % k);
            let plus = dist2 > 0 || (dist2 == 0 && (p.coins >> (d % 64)) & 1 == 1);
            // BookSim's fixed dateline between k-1 and 0: `dor_next_torus` sets partition 1
            // when `(dir == 0 && cur > dest) || (dir == 1 && dest < cur)`, which is
            // `cur > dest` whichever way the packet goes.
            p.ph = u8::from(cur > dest);
            if plus { 2 * d } else { 2 * d + 1 }
        } else {
            in_port ^ 1
        };
        let avail = (self.vcs / 2) as u8;
        if p.ph == 0 {
            (port as u8, 0, last - avail)
        } else {
            (port as u8, avail, last)
        }
    }

    /// Links crossed by a packet from router `src` to `dst`: dimension-order routing is
    /// minimal, so in each dimension the distance, the shorter way round where it wraps (at
    /// k/2 both ways are as long, whatever the coin says). The head crosses one switch more.
    fn hops(&self, src: u32, dst: u32) -> u32 {
        if let Some(&h) = self
            .hop_table
            .get(src as usize * self.routers + dst as usize)
        {
            return u32::from(h);
        }
        self.hops_between(src, dst)
    }

    /// [`Self::hops`], computed.
    fn hops_between(&self, src: u32, dst: u32) -> u32 {
        let n = self.dims.len();
        let (a, b) = (src as usize * n, dst as usize * n);
        let (here, there) = (&self.coords[a..a + n], &self.coords[b..b + n]);
        let (dims, wrap) = (&self.dims[..n], &self.wrap[..n]);
        let mut sum = 0;
        for d in 0..n {
            let m = here[d].abs_diff(there[d]);
            sum += if wrap[d] { m.min(dims[d] - m) } else { m };
        }
        sum
    }

    fn wake(&mut self, r: u32) {
        if self.rt[r as usize].stamp != self.now {
            self.rt[r as usize].stamp = self.now;
            self.active.push(r);
        }
    }

    fn slot(&self, delay: u64) -> usize {
        ((self.now + delay) as usize) & (self.wheel - 1)
    }

    /// Start a packet at node `n`, created at `ctime`.
    fn generate(&mut self, n: usize, ctime: u64) {
        let dst = self.dests.next(n, &mut self.rng) as u32;
        self.generate_to(n, dst, ctime);
    }

    /// Start a packet at node `n` to `dst`, created at `ctime`.
    fn generate_to(&mut self, n: usize, dst: u32, ctime: u64) {
        let measured = self.phase == Phase::Running
            || (self.phase == Phase::Draining && ctime < self.drain_time);
        let p = Packet {
            src: n as u32,
            dst,
            ctime,
            itime: 0,
            ph: 0,
            measured,
            coins: if self.torus {
                self.route_rng.next_u64()
            } else {
                0
            },
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.packets[id as usize] = p;
                self.dst_of[id as usize] = dst;
                id
            }
            None => {
                self.packets.push(p);
                self.dst_of.push(dst);
                (self.packets.len() - 1) as u32
            }
        };
        let f = u64::from(self.packet_flits);
        self.in_flight += f;
        self.in_flight_ctime += u128::from(f) * u128::from(ctime);
        if measured {
            self.measured_in_flight += f;
        }
        self.nodes[n].cur = id;
        self.nodes[n].sent = 0;
    }

    fn terminals(&mut self, log: &mut Option<&mut PacketLog>) {
        let now = self.now;
        let slot = (now as usize) & (self.wheel - 1);
        let counting = self.phase != Phase::Draining;
        // Ejection: retire flits, return credits.
        let mut ej = std::mem::take(&mut self.eject_at[slot]);
        let back = self.slot(2 + self.credit_delay);
        let arrived = ej.len() as u64;
        if arrived > 0 {
            self.in_network -= arrived;
            self.in_flight -= arrived;
            self.last_progress = now;
            if counting {
                self.stats.accepted += arrived;
            }
        }
        let (pn, v) = (self.ports, self.vcs);
        for e in ej.drain(..) {
            self.credits_at[back]
                .push(((e.router as usize * pn + pn - 1) * v) as u32 + u32::from(e.vc));
            let id = e.flit >> 2;
            let p = &self.packets[id as usize];
            self.in_flight_ctime -= u128::from(p.ctime);
            self.measured_in_flight -= u64::from(p.measured);
            if e.flit & TAIL != 0 {
                let p = *p;
                if self.phase == Phase::WarmingUp || p.measured {
                    let plat = now - p.ctime;
                    self.stats.plat_sum += plat;
                    self.stats.nlat_sum += now - p.itime;
                    self.stats.hops_sum += u64::from(self.hops(p.src, p.dst));
                    self.stats.packets += 1;
                    self.stats.hist.record(plat);
                }
                if let Some(l) = log.as_deref_mut() {
                    l.record(&[Delivered {
                        tag: u64::from(p.measured),
                        src: NodeId(u64::from(p.src)),
                        dst: NodeId(u64::from(p.dst)),
                        flits: self.packet_flits,
                        created: p.ctime,
                        injected: p.itime,
                        delivered: now,
                        hops: self.hops(p.src, p.dst),
                    }]);
                }
                self.free.push(id);
            }
        }
        self.eject_at[slot] = ej;
        // Credits for the injection channels.
        let mut cr = std::mem::take(&mut self.inj_credit_at[slot]);
        for c in cr.drain(..) {
            self.inj_occ[c as usize] -= 1;
        }
        self.inj_credit_at[slot] = cr;
        // Generation and injection.
        let inj_slot = self.slot(2);
        let draining = self.phase == Phase::Draining;
        let v = self.vcs;
        let (threshold, depth) = (self.threshold, self.depth);
        let port = (self.ports - 1) as u16;
        // The traffic stream, held here between packets (the generator draws from it too).
        let mut rng = self.rng.clone();
        for n in 0..self.nodes.len() {
            if self.nodes[n].cur == NO_PACKET {
                let mut q = self.nodes[n].qtime;
                while q <= now {
                    let t = q;
                    q += 1;
                    let hit = threshold == u64::MAX || rng.next_u64() < threshold;
                    if hit {
                        self.rng = rng;
                        self.generate(n, t);
                        rng = self.rng.clone();
                        break;
                    }
                }
                let node = &mut self.nodes[n];
                node.qtime = q;
                if draining && !node.qdrained && q > self.drain_time {
                    node.qdrained = true;
                    self.undrained -= 1;
                }
                if node.cur == NO_PACKET {
                    continue;
                }
            }
            let node = &mut self.nodes[n];
            let seq = node.sent;
            let head = seq == 0;
            let occ = &mut self.inj_occ[n * v..n * v + v];
            if head && node.inj_vc < 0 {
                // Round-robin from the VC after the last one used (VC 0 at first).
                let lvc = node.last_vc;
                let mut c = lvc.max(0) as usize;
                for _ in 0..v {
                    if lvc >= 0 {
                        c = after(c, v) as usize;
                    }
                    if node.inj_in_use >> c & 1 == 0 && (occ[c] as usize) < depth {
                        node.inj_vc = c as i32;
                        break;
                    }
                }
            }
            let c = node.inj_vc;
            if c < 0 || occ[c as usize] as usize >= depth {
                continue;
            }
            let c = c as usize;
            let id = node.cur;
            let tail = seq + 1 == self.packet_flits;
            if head {
                node.inj_in_use |= 1 << c;
                node.last_vc = c as i32;
                self.packets[id as usize].itime = now;
            }
            occ[c] += 1;
            if tail {
                node.inj_in_use &= !(1 << c);
            }
            let flit = id << 2 | if head { HEAD } else { 0 } | if tail { TAIL } else { 0 };
            self.flits_at[inj_slot].push(FlitEvent {
                router: n as u32,
                port,
                vc: c as u16,
                flit,
            });
            self.in_network += 1;
            self.last_progress = now;
            if counting {
                self.stats.sent += 1;
            }
            node.sent = seq + 1;
            if tail {
                node.cur = NO_PACKET;
                node.inj_vc = -1;
            }
        }
        self.rng = rng;
    }

    /// This cycle's flits (those in channel slot `slot`) enter their VC buffers, in the fast
    /// case with a routing stage: [`Self::receive`] with the network's shape `(P, V)` known
    /// (as in [`Self::shape`]).
    fn arrive_fast<const P: usize, const V: usize>(&mut self, slot: usize) {
        if !self.mesh_ports.is_empty() {
            self.arrive_tabulated::<P, V, false>(slot)
        } else if !self.torus_steps.is_empty() {
            self.arrive_tabulated::<P, V, true>(slot)
        } else {
            self.arrive_fast_routed::<P, V>(slot)
        }
    }

    /// [`Self::arrive_fast`] where the routes are tabulated, a mesh's ports (`TORUS` false) or
    /// a torus's steps (`TORUS`), each head's route looked up in the loop (`compute_route`).
    fn arrive_tabulated<const P: usize, const V: usize, const TORUS: bool>(&mut self, slot: usize) {
        let (pn, v) = self.shape::<P, V>();
        let (slots, depth, now) = (self.ivc.len(), self.depth, self.now);
        let (routers, last) = (self.routers, (self.vcs - 1) as u8);
        let fl = std::mem::take(&mut self.flits_at[slot]);
        // The arrays this loop touches, taken apart once so that their places and lengths stay
        // in registers (a vector's growth in the loop would otherwise make every one reload).
        let ordered = self.ordered;
        let BookSim {
            ivc,
            buf,
            rt,
            active,
            mesh_ports,
            torus_steps,
            dst_of,
            packets,
            keys,
            seq,
            ..
        } = self;
        let (ivc, buf, rt) = (&mut ivc[..], &mut buf[..], &mut rt[..]);
        let (mesh_ports, torus_steps, dst_of) = (&mesh_ports[..], &torus_steps[..], &dst_of[..]);
        for e in &fl {
            let r = e.router as usize;
            let rr = &mut rt[r];
            // `wake`.
            if rr.stamp != now {
                rr.stamp = now;
                active.push(e.router);
            }
            let j = e.port as usize * v + e.vc as usize;
            let idx = r * pn * v + j;
            let x = &mut ivc[idx];
            let (state, len) = enqueue(x, buf, (slots, depth), idx, e.flit);
            if state == IDLE {
                // `start_head` in the fast case.
                let pkt = (e.flit >> 2) as usize;
                let at = r * routers + dst_of[pkt] as usize;
                x.state = ROUTING;
                x.route = if TORUS {
                    torus_route(torus_steps[at], e.port as usize, &mut packets[pkt], (pn, v))
                } else {
                    (mesh_ports[at], 0, last)
                };
                rr.route_m |= 1 << j;
            } else if state == ACTIVE && len == 0 {
                rr.sa_m |= 1 << j;
            } else {
                continue;
            }
            if ordered {
                // `queued`.
                keys[idx] = seq[r] + u64::from(e.port);
            }
        }
        let mut fl = fl;
        fl.clear();
        self.flits_at[slot] = fl;
    }

    /// [`Self::arrive_fast`] where routes are computed rather than tabulated (networks too large
    /// for the tables).
    fn arrive_fast_routed<const P: usize, const V: usize>(&mut self, slot: usize) {
        let (pn, v) = self.shape::<P, V>();
        let (slots, depth) = (self.ivc.len(), self.depth);
        let mut fl = std::mem::take(&mut self.flits_at[slot]);
        for e in fl.drain(..) {
            self.wake(e.router);
            let r = e.router as usize;
            let j = e.port as usize * v + e.vc as usize;
            let idx = r * pn * v + j;
            let x = &mut self.ivc[idx];
            let (state, len) = enqueue(x, &mut self.buf, (slots, depth), idx, e.flit);
            if state == IDLE {
                // `start_head` in the fast case.
                let route = self.compute_route(r, e.port as usize, e.flit >> 2);
                let x = &mut self.ivc[idx];
                x.state = ROUTING;
                x.route = route;
                self.rt[r].route_m |= 1 << j;
                self.queued(r, idx);
            } else if state == ACTIVE && len == 0 {
                self.rt[r].sa_m |= 1 << j;
                self.queued(r, idx);
            }
        }
        self.flits_at[slot] = fl;
    }

    /// A flit enters its VC buffer (BookSim `_InputQueuing`).
    fn receive(&mut self, e: FlitEvent) {
        let r = e.router as usize;
        let j = e.port as usize * self.vcs + e.vc as usize;
        let idx = r * self.ports * self.vcs + j;
        let mut ivc = self.ivc[idx];
        let len = ivc.len as usize;
        let mut at = ivc.head as usize + len;
        if at >= self.depth {
            at -= self.depth;
        }
        self.buf[at * self.ivc.len() + idx] = e.flit;
        ivc.len += 1;
        let state = ivc.state;
        if state == IDLE && self.fast && self.routing_delay > 0 {
            // `start_head` in the fast case.
            ivc.state = ROUTING;
            ivc.route = self.compute_route(r, e.port as usize, e.flit >> 2);
            self.ivc[idx] = ivc;
            self.rt[r].route_m |= 1 << j;
            self.queued(r, idx);
            return;
        }
        self.ivc[idx] = ivc;
        let entry = Entry {
            time: UNSET,
            input: e.port,
            vc: e.vc,
            result: PENDING,
        };
        match state {
            IDLE => self.start_head(r, idx, entry, e.flit),
            ACTIVE if len == 0 => self.push_sa(r, entry),
            _ => {}
        }
    }

    /// A head at the front of VC `idx`: route computation, or straight to VC allocation with
    /// lookahead routing (`routing_delay = 0`).
    #[inline]
    fn start_head(&mut self, r: usize, idx: usize, entry: Entry, flit: u32) {
        if self.routing_delay > 0 {
            self.ivc[idx].state = ROUTING;
            if self.fast {
                self.ivc[idx].route = self.compute_route(r, entry.input as usize, flit >> 2);
                self.rt[r].route_m |= self.bit(entry);
                self.queued(r, idx);
            } else {
                self.route_q[r].push_back(entry);
            }
        } else {
            self.ivc[idx].route = self.compute_route(r, entry.input as usize, flit >> 2);
            self.ivc[idx].state = VC_ALLOC;
            self.push_va(r, entry);
        }
    }

    /// The ports and VCs per port: `(P, V)`, or the network's with `P = 0` (the fast case's
    /// functions are compiled for the usual shape too, where the constants save work).
    #[inline(always)]
    fn shape<const P: usize, const V: usize>(&self) -> (usize, usize) {
        if P == 0 {
            (self.ports, self.vcs)
        } else {
            debug_assert_eq!((P, V), (self.ports, self.vcs));
            (P, V)
        }
    }

    /// An input VC's bit in a router's stage sets.
    fn bit(&self, e: Entry) -> u64 {
        1 << (e.input as usize * self.vcs + e.vc as usize)
    }

    /// In the fast case with an output speedup, input VC `idx` of router `r` joins the back
    /// of a stage's queue as a flit arrives (see [`BookSim::keys`]): BookSim queues a cycle's
    /// arrivals in the order of their input ports, before the router's step, which moves the
    /// router's count past them ([`Self::step_router_fast`]).
    #[inline]
    fn queued(&mut self, r: usize, idx: usize) {
        if self.ordered {
            self.keys[idx] = self.seq[r] + (idx / self.vcs % self.ports) as u64;
        }
    }

    /// Queue an input VC for VC allocation.
    fn push_va(&mut self, r: usize, e: Entry) {
        if self.fast {
            self.rt[r].va_m |= self.bit(e);
            self.queued(
                r,
                (r * self.ports + e.input as usize) * self.vcs + e.vc as usize,
            );
        } else {
            self.va_q[r].push_back(e);
        }
    }

    /// Queue an input VC for switch allocation.
    fn push_sa(&mut self, r: usize, e: Entry) {
        if self.fast {
            self.rt[r].sa_m |= self.bit(e);
            self.queued(
                r,
                (r * self.ports + e.input as usize) * self.vcs + e.vc as usize,
            );
        } else {
            self.sa_q[r].push_back(e);
        }
    }

    /// One cycle of router `r` in the fast case: route computation, VC and switch allocation
    /// each take every VC waiting for them (those that arrived or were queued before this
    /// cycle's evaluation), as BookSim's one-cycle stages do. A head's route is computed as it
    /// reaches the front of its VC (it depends on nothing that changes in between) and the
    /// head then spends its routing cycle in the route set.
    ///
    /// The stages are evaluated and updated in an order that gives BookSim's result: VC
    /// allocation is applied as soon as it is evaluated (it reads only the `in_use` bits of the
    /// ports it allocates, and switch allocation, which runs after it, reads neither those nor
    /// the VCs it grants, whose bits join the switch set for the next cycle); then switch
    /// allocation is evaluated and the switch winners leave.
    ///
    /// With `SP` (an input or output speedup) the switch allocates over the crossbar's ports
    /// ([`Self::sa_fast_sp`]), and with an output speedup the winners cross in BookSim's queue
    /// order and each VC that joins a queue takes its place at the back ([`BookSim::keys`]) in
    /// the order BookSim's updates push them: route computation's, then VC allocation's
    /// (winners and losers, in its queue's order), then switch allocation's (losers, and
    /// winners with a flit behind, in its queue's order).
    fn step_router_fast<const P: usize, const V: usize, const SP: bool>(&mut self, r: usize) {
        let Rt {
            route_m: route_b,
            va_m: va_b,
            sa_m: sa_b,
            ..
        } = self.rt[r];
        let (va_won, va_lost) = if va_b != 0 {
            self.va_fast::<P, V>(r, va_b)
        } else {
            (0, 0)
        };
        let (won, move_ptrs) = if sa_b == 0 {
            (0, false)
        } else if SP {
            // `sa_fast_sp` moves the pointers itself.
            (self.sa_fast_sp::<P, V>(r, sa_b), false)
        } else {
            self.sa_fast::<P, V>(r, sa_b)
        };
        // Route update: the routes were computed when the heads reached the front, and a head
        // keeps the state `ROUTING` until it is granted a VC (only `IDLE` and `ACTIVE` are read
        // in the fast case; the stage sets tell the other two apart).
        let (pn, v) = self.shape::<P, V>();
        let nio = pn * v;
        let base = r * nio;
        // The stage sets, read above, are written whole below: nothing else adds to them
        // during the step.
        let mut route_m = 0;
        let mut va_m = route_b | va_lost;
        // Switch allocation update: the losers ask again, the winners leave.
        let mut sa_m = va_won | (sa_b & !won);
        // The winners whose VC leaves every queue (its last flit left).
        let mut gone = 0u64;
        if won != 0 {
            let mut order = [0u8; 64];
            let n = if SP {
                let keys = self.ordered.then(|| &self.keys[base..base + nio]);
                by_key(won, keys, &mut order)
            } else {
                0
            };
            let (again, heads) = self.switch_fast::<P, V, SP>(r, won, move_ptrs, &order[..n]);
            sa_m |= again;
            let (route, va) = self.start_heads(r, heads, nio);
            route_m |= route;
            va_m |= va;
            gone = won & !(again | heads);
        }
        if SP && self.ordered {
            let keys = &mut self.keys[base..base + nio];
            let seq = &mut self.seq[r];
            // Past this cycle's arrivals (`queued`).
            *seq += pn as u64;
            for m in [route_b, va_b, sa_b & !gone] {
                let mut order = [0u8; 64];
                let n = by_key(m, Some(keys), &mut order);
                for &j in &order[..n] {
                    keys[j as usize] = *seq;
                    *seq += 1;
                }
            }
        }
        let rt = &mut self.rt[r];
        rt.route_m = route_m;
        rt.va_m = va_m;
        rt.sa_m = sa_m;
        let busy = route_m | va_m | sa_m != 0;
        if busy && rt.stamp != self.now + 1 {
            rt.stamp = self.now + 1;
            self.next_active.push(r as u32);
        }
    }

    /// The next packet's head at the front of each VC of router `r` (of `nio` input VCs) whose
    /// bit is in `heads` (its tail left): route computation, or straight to VC allocation with
    /// lookahead routing (`start_head`). Returns their bits for the route set and for the VC
    /// allocation set.
    #[inline(always)]
    fn start_heads(&mut self, r: usize, heads: u64, nio: usize) -> (u64, u64) {
        let base = r * nio;
        for j in bits(heads) {
            let idx = base + j;
            let flit = self.buf[self.ivc[idx].head as usize * self.ivc.len() + idx];
            self.ivc[idx].route = self.compute_route(r, self.bit_port[j] as usize, flit >> 2);
            self.ivc[idx].state = ROUTING;
        }
        if self.routing_delay > 0 {
            (heads, 0)
        } else {
            (0, heads)
        }
    }

    /// Whether the output VC of input VC `j` (its bit) of router `r`, alone in asking for the
    /// switch, has room downstream; if not, its output port is charged a cycle blocked on
    /// credits.
    #[inline(always)]
    fn lone_fits<const P: usize, const V: usize>(&mut self, r: usize, j: usize) -> bool {
        let (pn, v) = self.shape::<P, V>();
        let base = r * pn * v;
        let (op, ov) = self.ivc[base + j].out;
        if self.ivc[base + op as usize * v + ov as usize].occ as usize >= self.depth {
            self.credit_stall(r * pn + op as usize, 1);
            return false;
        }
        true
    }

    /// Switch allocation at router `r` for the active input VCs whose bits are `sa_b` (fast
    /// case with speedups): [`Self::sa_fast`] over the crossbar's ports (BookSim's expanded
    /// inputs and outputs). Input VC `c` of port `p` asks on crossbar input `p * si + c % si`
    /// for crossbar output `o * so + p % so` of its output port `o`; the allocator matches
    /// crossbar inputs to outputs and moves its pointers; a matched input sends its VC that
    /// asked for the output nearest its round-robin offset, which then moves to that VC + `si`
    /// (BookSim's `_sw_rr_offset`). Returns the winners' bits.
    fn sa_fast_sp<const P: usize, const V: usize>(&mut self, r: usize, sa_b: u64) -> u64 {
        let (pn, v) = self.shape::<P, V>();
        let (si, so) = (self.in_speedup, self.out_speedup);
        let (ni, no) = (pn * si, pn * so);
        if sa_b.is_power_of_two() {
            // One VC asking (the usual case): it wins if its output VC has room, and the
            // pointers move past it.
            let j = sa_b.trailing_zeros() as usize;
            if !self.lone_fits::<P, V>(r, j) {
                return 0;
            }
            let o = self.ivc[r * pn * v + j].out.0 as usize;
            let x = &self.xbar;
            let (p, c) = (j / v, j % v);
            let (ei, eo) = (x.input[j] as usize, o * so + x.out_of[p] as usize);
            self.sw_gptr[no * r + eo] = after(ei, ni);
            self.sw_aptr[ni * r + ei] = after(eo, no);
            self.sw_rr[ni * r + ei] = x.next[c];
            return sa_b;
        }
        let nio = pn * v;
        let rr = r * pn;
        let base = rr * v;
        let depth = self.depth;
        let ivc = &self.ivc[base..base + nio];
        let sc = &mut self.scratch;
        let (col, vcs_of, req) = (&mut sc.col[..no], &mut sc.vcs_of[..no], &mut sc.req[..ni]);
        col.fill(0);
        vcs_of.fill(0);
        req.fill(0);
        let (mut ins, mut outs, mut stalled, mut dup) = (0u64, 0u64, 0u64, 0u64);
        for j in bits(sa_b) {
            let (op, ov) = ivc[j].out;
            let o = op as usize;
            if ivc[o * v + ov as usize].occ as usize >= depth {
                stalled |= 1 << o;
                continue;
            }
            let (ei, eo) = (
                self.xbar.input[j] as usize,
                o * so + self.xbar.out_of[j / v] as usize,
            );
            let (ib, ob) = (1u64 << ei, 1u64 << eo);
            dup |= (ins & ib) | (outs & ob);
            ins |= ib;
            outs |= ob;
            col[eo] |= ib;
            req[ei] |= ob;
            vcs_of[eo] |= 1 << j;
        }
        mark_stalled(
            &mut self.port_blocked[rr..rr + pn],
            &mut self.blocked_until[rr..rr + pn],
            stalled,
            self.now,
        );
        let gptr = &mut self.sw_gptr[no * r..no * (r + 1)];
        let aptr = &mut self.sw_aptr[ni * r..ni * (r + 1)];
        let matched = if dup == 0 {
            // Each crossbar output has one asker and each input one request: all match.
            for ei in bits(ins) {
                let eo = req[ei].trailing_zeros() as usize;
                sc.matched[ei] = eo as u8;
                gptr[eo] = after(ei, ni);
                aptr[ei] = after(eo, no);
            }
            ins
        } else {
            allocate_bits(
                self.allocator,
                self.alloc_iters,
                (ni, no),
                &mut (gptr, aptr),
                (ins, &*req),
                (outs, &*col),
                &mut sc.grants,
                &mut sc.matched,
            )
        };
        let vc_bits = u64::MAX >> (64 - v);
        let rrp = &mut self.sw_rr[ni * r..ni * (r + 1)];
        let mut won = 0u64;
        let x = &self.xbar;
        for ei in bits(matched) {
            let eo = sc.matched[ei] as usize;
            let (p, k) = (ei / si, ei % si);
            // The VCs of the crossbar input (those of port `p` on it) that asked for `eo`.
            let cands = (sc.vcs_of[eo] >> (p * v)) & vc_bits & x.on_input[k];
            let c = rr_pick(cands, rrp[ei] as usize);
            rrp[ei] = x.next[c];
            won |= 1 << (p * v + c);
        }
        won
    }

    /// [`Self::switch_win`] for the input VCs of router `r` whose bits are `won` (fast case: a
    /// one-cycle crossbar): their front flits leave for the next router or the terminal, their
    /// credits go upstream. Returns the bits of the VCs with a flit of the same packet behind
    /// (they ask for the switch again) and of those with the next packet's head at the front
    /// (left in their state for the caller to start). With `move_ptrs` the switch allocator's
    /// pointers move past each winner, as a match with no competition moves them.
    fn switch_fast<const P: usize, const V: usize, const SP: bool>(
        &mut self,
        r: usize,
        won: u64,
        move_ptrs: bool,
        order: &[u8],
    ) -> (u64, u64) {
        let slots = self.ivc.len();
        let ((pn, v), depth) = (self.shape::<P, V>(), self.depth);
        let nio = pn * v;
        let base = r * nio;
        // Which channel each flit and credit goes on is picked by index, not by a branch (it
        // depends on the traffic).
        let out = &mut self.outbox;
        let flits = [&mut out.flits, &mut out.eject];
        let credits = [&mut out.credits, &mut out.inj_credits];
        let ivc = &mut self.ivc[base..base + nio];
        let buf = &self.buf[..];
        let pt = &mut self.port[r * pn..(r + 1) * pn];
        let (bit_port, bit_vc) = (&self.bit_port[..], &self.bit_vc[..]);
        let (mut again, mut heads, mut hops) = (0u64, 0u64, 0u64);
        // With a speedup, the winners in BookSim's queue order (`order`), else by bit.
        let (mut rest, mut k) = (won, 0);
        let (now, mask, lat) = (self.now, self.wheel - 1, self.latency);
        let queue = SP && self.out_speedup > 1;
        loop {
            let j = if SP {
                if k == order.len() {
                    break;
                }
                k += 1;
                order[k - 1] as usize
            } else {
                if rest == 0 {
                    break;
                }
                let j = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                j
            };
            // By arithmetic when the shape is known at compile time, else by table.
            let (p, c) = match (j.checked_div(V), j.checked_rem(V)) {
                (Some(p), Some(c)) => (p, c as u16),
                _ => (bit_port[j] as usize, bit_vc[j]),
            };
            let mut x = ivc[j];
            let flit = buf[x.head as usize * slots + base + j];
            x.len -= 1;
            x.head = if x.len == 0 {
                0
            } else {
                after(x.head as usize, depth)
            };
            let tail = flit & TAIL != 0;
            if x.len == 0 && tail {
                x.state = IDLE;
            }
            ivc[j] = x;
            let (op, ov) = x.out;
            let o = op as usize;
            if move_ptrs {
                pt[o].sw_gptr = after(p, pn);
                pt[p].sw_aptr = after(o, pn);
                pt[p].sw_rr = after(c as usize, v);
            }
            ivc[o * v + ov as usize].occ += 1;
            pt[o].flits += 1;
            pt[o].in_use &= !(u32::from(tail) << ov);
            // The terminal port's neighbour is the router itself, and its port is not read.
            let eject = o == pn - 1;
            hops += u64::from(!eject);
            let ev = FlitEvent {
                router: pt[o].nbr,
                port: u16::from(op) ^ 1,
                vc: u16::from(ov),
                flit,
            };
            // The output's queue ([`Self::send`]): a flit that cannot leave in the crossbar's
            // cycle goes on the channel's later slot.
            let at = if queue {
                let free = &mut self.out_free[r * pn + o];
                let at = (now + 1).max(*free);
                *free = at + 1;
                at
            } else {
                now + 1
            };
            if at == now + 1 {
                flits[usize::from(eject)].push(ev);
            } else if eject {
                self.eject_at[(at as usize + 2) & mask].push(ev);
            } else {
                self.flits_at[(at + lat + 1) as usize & mask].push(ev);
            }
            credits[usize::from(p == pn - 1)].push(pt[p].up_occ + u32::from(c));
            let more = u64::from(x.len > 0).wrapping_neg() & (1 << j);
            let tails = u64::from(tail).wrapping_neg();
            heads |= more & tails;
            again |= more & !tails;
        }
        self.flit_hops += hops;
        self.last_progress = self.now;
        (again, heads)
    }

    /// VC allocation at router `r` for the heads whose input-VC bits are `va_b`, evaluated and
    /// applied (fast case): returns the bits of the heads granted a VC and of those that ask
    /// again next cycle. The heads are grouped by output port; a port with one asker gives it
    /// the free VC of its range nearest its accept pointer, as [`Self::va_evaluate`] does, and
    /// a port with more runs [`Self::va_port`].
    #[inline(always)]
    fn va_fast<const P: usize, const V: usize>(&mut self, r: usize, va_b: u64) -> (u64, u64) {
        let (pn, v) = self.shape::<P, V>();
        let nio = pn * v;
        let base = r * nio;
        let (mut won, mut lost) = (0u64, 0u64);
        let ivc = &mut self.ivc[base..base + nio];
        if va_b.is_power_of_two() {
            // One head (the usual case), alone at its port.
            let j = va_b.trailing_zeros() as usize;
            let (op, vs, ve) = ivc[j].route;
            let op = op as usize;
            let in_use = &mut self.port[r * pn + op].in_use;
            let free = if self.torus {
                vc_range(vs, ve)
            } else {
                u32::MAX >> (32 - v)
            } & !*in_use;
            if free == 0 {
                return (0, va_b);
            }
            let aptr = &mut self.va_aptr[base + j];
            let pick = nearest(free, *aptr as usize, op * v, v);
            self.va_gptr[base + pick] = after(j, nio);
            *aptr = after(pick, nio);
            let ov = pick - op * v;
            *in_use |= 1 << ov;
            ivc[j].out = (op as u8, ov as u8);
            ivc[j].state = ACTIVE;
            return (va_b, 0);
        }
        let heads_of = &mut self.scratch.heads_of[..pn];
        // The ports asked for, those asked for by more than one head, and the heads asking for
        // each port (cleared whole and written as found). The ports' allocations are
        // independent (each touches its own VCs and its heads' pointers), so they may run port
        // by port.
        let (mut ports, mut shared) = (0u64, 0u64);
        heads_of.fill(0);
        for j in bits(va_b) {
            let op = ivc[j].route.0 as usize;
            let ob = 1u64 << op;
            shared |= ports & ob;
            ports |= ob;
            heads_of[op] |= 1 << j;
        }
        let pt = &mut self.port[r * pn..(r + 1) * pn];
        let gptr = &mut self.va_gptr[base..base + nio];
        let aptr = &mut self.va_aptr[base..base + nio];
        if self.alloc_iters == 1 && self.allocator == Allocator::Islip && !self.torus {
            // One iSLIP round on a mesh, where every head may take any VC of its port: the
            // heads asking for a port all ask for its free VCs ([`shared_port_bits`] with every
            // head's VCs the same). The ports are taken in one loop, whether one head asks for
            // them or more (one loop's end to predict rather than two).
            let all = u32::MAX >> (32 - v);
            for op in bits(ports) {
                let heads = heads_of[op];
                let free = all & !pt[op].in_use;
                if free == 0 {
                    lost |= heads;
                    continue;
                }
                let obase = op * v;
                if heads & (heads - 1) == 0 {
                    // One head: the free VC nearest its pointer.
                    let j = heads.trailing_zeros() as usize;
                    let pick = nearest(free, aptr[j] as usize, obase, v);
                    take_vc(ivc, &mut pt[op], (gptr, aptr), (j, op, pick), (obase, nio));
                    won |= heads;
                    continue;
                }
                // Grant: each free VC grants the head nearest its pointer.
                let mut granted = [0u32; 64];
                let mut got = 0u64;
                for ov in bits(u64::from(free)) {
                    let j = rr_pick(heads, gptr[obase + ov] as usize);
                    granted[j] |= 1 << ov;
                    got |= 1 << j;
                }
                lost |= heads & !got;
                // Accept: each granted head takes the granting VC nearest its pointer.
                for j in bits(got) {
                    let pick = nearest(granted[j], aptr[j] as usize, obase, v);
                    take_vc(ivc, &mut pt[op], (gptr, aptr), (j, op, pick), (obase, nio));
                    won |= 1 << j;
                }
            }
            return (won, lost);
        }
        for op in bits(ports & !shared) {
            let j = heads_of[op].trailing_zeros() as usize;
            let (_, vs, ve) = ivc[j].route;
            let free = if self.torus {
                vc_range(vs, ve)
            } else {
                u32::MAX >> (32 - v)
            } & !pt[op].in_use;
            if free == 0 {
                lost |= 1 << j;
                continue;
            }
            let pick = nearest(free, aptr[j] as usize, op * v, v);
            gptr[pick] = after(j, nio);
            aptr[j] = after(pick, nio);
            let ov = pick - op * v;
            pt[op].in_use |= 1 << ov;
            ivc[j].out = (op as u8, ov as u8);
            ivc[j].state = ACTIVE;
            won |= 1 << j;
        }
        // Heads sharing a port: one allocation (all its rounds) a port.
        let mut picks = [0u8; 64];
        for op in bits(shared) {
            let (w, l) = shared_port_bits(
                self.allocator,
                self.alloc_iters,
                (op, v),
                heads_of[op],
                |j| vc_range(ivc[j].route.1, ivc[j].route.2) & !pt[op].in_use,
                gptr,
                aptr,
                &mut picks,
            );
            lost |= l;
            for j in bits(w) {
                let ov = usize::from(picks[j]);
                pt[op].in_use |= 1 << ov;
                ivc[j].out = (op as u8, ov as u8);
                ivc[j].state = ACTIVE;
                won |= 1 << j;
            }
        }
        (won, lost)
    }

    /// Switch allocation at router `r` for the active input VCs whose bits are `sa_b` (fast
    /// case): returns the winners' bits. The same allocation as [`Self::sa_evaluate`] on bit
    /// sets: VCs with a credit ask for their output; the allocator matches inputs to outputs
    /// ([`allocate_bits`]); a matched input sends its VC that asked for the output nearest the
    /// input's round-robin offset. Also returns whether [`Self::switch_fast`] is to move the
    /// switch pointers past each winner: it does so for winners without competition (this
    /// leaves their pointers to it), and after one allocator round it only repeats what the
    /// allocator did.
    fn sa_fast<const P: usize, const V: usize>(&mut self, r: usize, sa_b: u64) -> (u64, bool) {
        if sa_b.is_power_of_two() {
            // One VC asking (the usual case): it wins if its output VC has room
            // (`switch_fast` moves the pointers).
            let won = self.lone_fits::<P, V>(r, sa_b.trailing_zeros() as usize);
            return (sa_b & u64::from(won).wrapping_neg(), won);
        }
        let (pn, v) = self.shape::<P, V>();
        let nio = pn * v;
        let rr = r * pn;
        let base = rr * v;
        let depth = self.depth;
        let ivc = &self.ivc[base..base + nio];
        // The asking VCs with a credit, their inputs and outputs, and the outputs of those
        // without one (charged once each); the requests by input and by output, written as
        // they are found (cleared whole first: a fixed count of stores costs less than a loop
        // over the ports asked for, whose end is hard to predict).
        let (mut ins, mut outs, mut asking, mut stalled) = (0u64, 0u64, 0u64, 0u64);
        // Bits set where two asking VCs share an input or an output.
        let mut dup = 0u64;
        let sc = &mut self.scratch;
        let col = &mut sc.col[..pn];
        let vcs_of = &mut sc.vcs_of[..pn];
        col.fill(0);
        vcs_of.fill(0);
        for j in bits(sa_b) {
            let (op, ov) = ivc[j].out;
            let ob = 1u64 << op;
            if ivc[op as usize * v + ov as usize].occ as usize >= depth {
                stalled |= ob;
                continue;
            }
            asking |= 1 << j;
            let p = j
                .checked_div(V)
                .unwrap_or_else(|| self.bit_port[j] as usize);
            let pb = 1u64 << p;
            dup |= (ins & pb) | (outs & ob);
            ins |= pb;
            outs |= ob;
            col[op as usize] |= pb;
            vcs_of[op as usize] |= 1 << j;
        }
        mark_stalled(
            &mut self.port_blocked[rr..rr + pn],
            &mut self.blocked_until[rr..rr + pn],
            stalled,
            self.now,
        );
        if dup == 0 {
            // Every asking VC is alone at its input and its output: each output grants its
            // one asker, each input accepts its one grant, and the VC is its input's only
            // candidate (`switch_fast` moves the pointers).
            return (asking, true);
        }
        let sc = &mut self.scratch;
        let col = &sc.col[..pn];
        let pt = &mut self.port[rr..rr + pn];
        let vc_bits = u64::MAX >> (64 - v);
        if self.allocator == Allocator::Islip && self.alloc_iters == 1 {
            // One iSLIP round ([`allocate_bits`]), each accepting input picking its VC as it
            // accepts. Every match moves its pointers, and `switch_fast` moves them past each
            // winner in the same way, so they are left to it (the allocation reads each
            // pointer before its match could move it).
            let grants = &mut sc.grants[..pn];
            grants.fill(0);
            // Grant: each output asked for picks an asking input (all of `col[o]` asks).
            let mut granted = 0u64;
            for o in bits(outs) {
                let i = rr_pick(col[o], pt[o].sw_gptr as usize);
                granted |= 1 << i;
                grants[i] |= 1 << o;
            }
            // Accept: each input granted takes an output, and sends its VC that asked for it
            // nearest its round-robin offset.
            let mut won = 0u64;
            for p in bits(granted) {
                let o = rr_pick(grants[p], pt[p].sw_aptr as usize);
                let cands = sc.vcs_of[o] >> (p * v) & vc_bits;
                let c = rr_pick(cands, pt[p].sw_rr as usize);
                won |= 1 << (p * v + c);
            }
            return (won, true);
        }
        // The outputs each input asks for (the separable allocator's input arbiters).
        let req = &mut sc.req[..pn];
        for p in bits(ins) {
            req[p] = 0;
        }
        for j in bits(asking) {
            let p = j / v;
            req[p] |= 1 << ivc[j].out.0;
        }
        let matched = allocate_bits(
            self.allocator,
            self.alloc_iters,
            (pn, pn),
            pt,
            (ins, &*req),
            (outs, col),
            &mut sc.grants,
            &mut sc.matched,
        );
        let mut won = 0u64;
        for p in bits(matched) {
            // The input's VCs that asked for its matched output.
            let m = sc.matched[p] as usize;
            let cands = sc.vcs_of[m] >> (p * v) & vc_bits;
            let c = rr_pick(cands, pt[p].sw_rr as usize);
            pt[p].sw_rr = after(c, v);
            won |= 1 << (p * v + c);
        }
        // With one round (or the separable allocator) every match moved the pointers past it,
        // as `switch_fast` would do again; later iSLIP rounds do not move them.
        (won, self.one_round)
    }

    /// The fast case's router step for this network: compiled for the usual shape (a 2-D
    /// network with 4 VCs, its sizes known at compile time) or any, with or without speedups.
    fn fast_step(&self) -> fn(&mut Self, usize) {
        match (self.ports, self.vcs, self.sp) {
            (5, 4, false) => Self::step_router_fast::<5, 4, false>,
            (_, _, false) => Self::step_router_fast::<0, 0, false>,
            (5, 4, true) => Self::step_router_fast::<5, 4, true>,
            (_, _, true) => Self::step_router_fast::<0, 0, true>,
        }
    }

    /// One cycle of router `r` (BookSim `IQRouter::_InternalStep` and `WriteOutputs`).
    fn step_router(&mut self, r: usize) {
        if self.fast {
            return self.fast_step()(self, r);
        }
        let now = self.now as i64;
        let (pn, v) = (self.ports, self.vcs);
        // Route evaluate.
        for e in self.route_q[r].iter_mut() {
            if e.time >= 0 {
                break;
            }
            e.time = now + self.routing_delay - 1;
        }
        // VC allocation evaluate.
        if self.va_q[r].front().is_some_and(|e| e.time < 0) {
            self.vc_alloc_evaluate(r);
        }
        // Switch allocation evaluate.
        if self.sa_q[r].front().is_some_and(|e| e.time < 0) {
            self.sw_alloc_evaluate(r);
        }
        // Crossbar evaluate.
        for x in self.xbar_q[r].iter_mut() {
            if x.time >= 0 {
                break;
            }
            x.time = now + self.crossbar_delay - 1;
        }
        // Route update.
        while let Some(&e) = self.route_q[r].front() {
            if e.time < 0 || now < e.time {
                break;
            }
            self.route_q[r].pop_front();
            let idx = (r * pn + e.input as usize) * v + e.vc as usize;
            let flit = self.buf[self.ivc[idx].head as usize * self.ivc.len() + idx];
            self.ivc[idx].route = self.compute_route(r, e.input as usize, flit >> 2);
            self.ivc[idx].state = VC_ALLOC;
            self.va_q[r].push_back(Entry {
                time: UNSET,
                result: PENDING,
                ..e
            });
        }
        // VC allocation update.
        while let Some(&e) = self.va_q[r].front() {
            if e.time < 0 || now < e.time {
                break;
            }
            self.va_q[r].pop_front();
            let fresh = Entry {
                time: UNSET,
                result: PENDING,
                ..e
            };
            if e.result >= 0 {
                let (op, ov) = (e.result as usize / v, e.result as usize % v);
                let idx = (r * pn + e.input as usize) * v + e.vc as usize;
                self.port[r * pn + op].in_use |= 1 << ov;
                self.ivc[idx].out = (op as u8, ov as u8);
                self.ivc[idx].state = ACTIVE;
                self.sa_q[r].push_back(fresh);
            } else {
                self.va_q[r].push_back(fresh);
            }
        }
        // Switch allocation update: winners leave their buffers.
        while let Some(&e) = self.sa_q[r].front() {
            if e.time < 0 || now < e.time {
                break;
            }
            self.sa_q[r].pop_front();
            let fresh = Entry {
                time: UNSET,
                result: PENDING,
                ..e
            };
            if e.result < 0 {
                self.sa_q[r].push_back(fresh);
                continue;
            }
            self.switch_win(r, fresh);
        }
        // Crossbar update: flits leave on their output channels.
        while let Some(&x) = self.xbar_q[r].front() {
            if x.time < 0 || now < x.time {
                break;
            }
            self.xbar_q[r].pop_front();
            self.send(r, x, 0);
        }
        let busy = !(self.route_q[r].is_empty()
            && self.va_q[r].is_empty()
            && self.sa_q[r].is_empty()
            && self.xbar_q[r].is_empty());
        if busy && self.rt[r].stamp != self.now + 1 {
            self.rt[r].stamp = self.now + 1;
            self.next_active.push(r as u32);
        }
    }

    /// Input VC `fresh` of router `r` won the switch: its front flit leaves the buffer and goes
    /// through the crossbar, its credit goes upstream, and the VC moves on.
    fn switch_win(&mut self, r: usize, fresh: Entry) {
        let (pn, v) = (self.ports, self.vcs);
        self.last_progress = self.now;

        let (p, c) = (fresh.input as usize, fresh.vc as usize);
        let idx = (r * pn + p) * v + c;
        let mut ivc = self.ivc[idx];
        let slots = self.ivc.len();
        let flit = self.buf[ivc.head as usize * slots + idx];
        ivc.len -= 1;
        ivc.head = if ivc.len == 0 {
            0
        } else {
            after(ivc.head as usize, self.depth)
        };
        // The flit behind (meaningful only if `ivc.len > 0`).
        let next = self.buf[ivc.head as usize * slots + idx];
        if ivc.len == 0 && flit & TAIL != 0 {
            ivc.state = IDLE;
        }
        self.ivc[idx] = ivc;
        let (op, ov) = ivc.out;
        let oport = r * pn + op as usize;
        let oidx = oport * v + ov as usize;
        if op as usize != pn - 1 {
            self.flit_hops += 1;
        }
        self.port[oport].flits += 1;
        self.ivc[oidx].occ += 1;
        if flit & TAIL != 0 {
            self.port[oport].in_use &= !(1 << ov);
        }
        let crossing = Crossing {
            time: UNSET,
            output: u16::from(op),
            vc: u16::from(ov),
            flit,
        };
        if self.crossbar_delay == 1 {
            // A one-cycle crossbar evaluates and delivers each batch in the cycle after
            // switch allocation, so the flit leaves then.
            self.send(r, crossing, 1);
        } else {
            self.xbar_q[r].push_back(crossing);
        }
        // The freed slot's credit goes upstream now.
        if p == pn - 1 {
            let s = self.slot(2);
            self.inj_credit_at[s].push((r * v + c) as u32);
        } else {
            let s = self.slot(self.latency + 1 + self.credit_delay);
            self.credits_at[s].push(self.port[r * pn + p].up_occ + c as u32);
        }
        if ivc.len > 0 {
            if flit & TAIL != 0 {
                self.start_head(r, idx, fresh, next);
            } else {
                self.push_sa(r, fresh);
            }
        }
    }

    /// Write flit `x` on router `r`'s output channel `after` cycles from now: it is read at the
    /// far end one channel latency and one cycle later.
    fn send(&mut self, r: usize, x: Crossing, after: u64) {
        let pn = self.ports;
        let after = if self.out_speedup > 1 {
            // The output's queue: the flit leaves when those queued before it have.
            let free = &mut self.out_free[r * pn + x.output as usize];
            let at = (self.now + after).max(*free);
            *free = at + 1;
            // The queue holds at most what the output's VCs downstream have credits for, which
            // the wheel was sized for.
            debug_assert!(at - self.now + self.latency + 1 < self.wheel as u64);
            at - self.now
        } else {
            after
        };
        if x.output as usize == pn - 1 {
            let s = self.slot(after + 2);
            self.eject_at[s].push(FlitEvent {
                router: r as u32,
                port: x.output,
                vc: x.vc,
                flit: x.flit,
            });
        } else {
            let s = self.slot(after + self.latency + 1);
            self.flits_at[s].push(FlitEvent {
                router: self.port[r * pn + x.output as usize].nbr,
                port: x.output ^ 1,
                vc: x.vc,
                flit: x.flit,
            });
        }
    }

    /// BookSim's `_VCAllocEvaluate` for the entries of router `r`'s VC-allocation queue not yet
    /// evaluated.
    fn vc_alloc_evaluate(&mut self, r: usize) {
        let now = self.now as i64;
        let mut q = std::mem::take(&mut self.va_q[r]);
        let mut items = std::mem::take(&mut self.scratch.items);
        let mut res = std::mem::take(&mut self.scratch.res);
        items.clear();
        items.extend(q.iter().take_while(|e| e.time < 0).map(|e| (e.input, e.vc)));
        self.va_evaluate(r, &items, &mut res);
        for (e, &x) in q.iter_mut().zip(&res) {
            e.time = now + self.vc_alloc_delay - 1;
            e.result = x;
        }
        if self.vc_alloc_delay > 1 {
            for e in q.iter_mut() {
                if now < e.time {
                    break;
                }
                if e.result >= 0
                    && self.port[r * self.ports + e.result as usize / self.vcs].in_use
                        & (1 << (e.result as usize % self.vcs))
                        != 0
                {
                    e.result = STALL;
                }
            }
        }
        self.scratch.items = items;
        self.scratch.res = res;
        self.va_q[r] = q;
    }

    /// VC allocation at router `r` for the heads at input VCs `items`: `res[k]` is the output
    /// VC (port x VCs + VC) granted to `items[k]`, or a stall. Each head asks for the free VCs
    /// of its route's range at one output port, so the ports' allocations are independent: a
    /// port with one asker gives it the free VC nearest its accept pointer (what iSLIP and the
    /// separable allocator both do then); ports with more run the allocator on their requests
    /// alone.
    fn va_evaluate(&mut self, r: usize, items: &[(u16, u16)], res: &mut Vec<i32>) {
        let (pn, v) = (self.ports, self.vcs);
        let nio = pn * v;
        res.clear();
        res.resize(items.len(), PENDING);
        for &(p, c) in items {
            let idx = (r * pn + p as usize) * v + c as usize;
            self.scratch.port_count[self.ivc[idx].route.0 as usize] += 1;
        }
        let mut shared = false;
        for (k, &(p, c)) in items.iter().enumerate() {
            let idx = (r * pn + p as usize) * v + c as usize;
            let (op, vs, ve) = self.ivc[idx].route;
            if self.scratch.port_count[op as usize] > 1 {
                shared = true;
                continue;
            }
            let i = p as usize * v + c as usize;
            // The free VCs of the range, and the first of them round-robin from the input's
            // accept pointer.
            let free = vc_range(vs, ve) & !self.port[r * pn + op as usize].in_use;
            let from = self.va_aptr[r * nio + i] as usize;
            let pick = if free == 0 {
                usize::MAX
            } else {
                nearest(free, from, op as usize * v, v)
            };
            if pick == usize::MAX {
                res[k] = STALL;
            } else {
                self.va_gptr[r * nio + pick] = after(i, nio);
                self.va_aptr[r * nio + i] = after(pick, nio);
                res[k] = pick as i32;
            }
        }
        if shared {
            for port in 0..pn {
                if self.scratch.port_count[port] >= 2 {
                    self.va_port(r, port, items, res);
                }
            }
        }
        for &(p, c) in items {
            let idx = (r * pn + p as usize) * v + c as usize;
            self.scratch.port_count[self.ivc[idx].route.0 as usize] = 0;
        }
    }

    /// VC allocation among the heads of `items` that want output `port` of router `r` (more
    /// than one); heads of other ports are skipped. `res` as in [`Self::va_evaluate`].
    fn va_port(&mut self, r: usize, port: usize, items: &[(u16, u16)], res: &mut [i32]) {
        let (pn, v) = (self.ports, self.vcs);
        let nio = pn * v;
        if self.alloc_iters == 1 {
            return self.va_shared_port(r, port, items, res);
        }
        let mut reqs = std::mem::take(&mut self.scratch.reqs);
        reqs.clear();
        for (k, &(p, c)) in items.iter().enumerate() {
            let idx = (r * pn + p as usize) * v + c as usize;
            let (op, vs, ve) = self.ivc[idx].route;
            if op as usize != port {
                continue;
            }
            let mut elig = false;
            for ov in vs..=ve {
                let o = op as usize * v + ov as usize;
                if self.port[r * pn + op as usize].in_use & (1 << ov) == 0 {
                    elig = true;
                    reqs.push(((p as usize * v + c as usize) as u16, o as u16));
                }
            }
            if !elig {
                res[k] = STALL;
            }
        }
        allocate(
            self.allocator,
            self.alloc_iters,
            nio,
            nio,
            &mut (
                &mut self.va_gptr[r * nio..(r + 1) * nio],
                &mut self.va_aptr[r * nio..(r + 1) * nio],
            ),
            &reqs,
            &mut self.scratch,
        );
        for (k, &(p, c)) in items.iter().enumerate() {
            let idx = (r * pn + p as usize) * v + c as usize;
            if self.ivc[idx].route.0 as usize != port || res[k] < PENDING {
                continue;
            }
            let m = self.scratch.inmatch[p as usize * v + c as usize];
            res[k] = if m >= 0 { m } else { STALL };
        }
        self.scratch.reqs = reqs;
    }

    /// One round of VC allocation among the heads of `items` that want output `port` of router
    /// `r` (more than one): iSLIP's grant and accept, or the separable allocator's input and
    /// output arbiters, over the free VCs of each head's range; `res` as in [`Self::va_evaluate`].
    fn va_shared_port(&mut self, r: usize, port: usize, items: &[(u16, u16)], res: &mut [i32]) {
        let (pn, v) = (self.ports, self.vcs);
        let nio = pn * v;
        let base = port * v;
        let busy = self.port[r * pn + port].in_use;
        let mut heads = std::mem::take(&mut self.scratch.heads);
        heads.clear();
        for (k, &(p, c)) in items.iter().enumerate() {
            let idx = (r * pn + p as usize) * v + c as usize;
            let (op, vs, ve) = self.ivc[idx].route;
            if op as usize != port {
                continue;
            }
            let free = vc_range(vs, ve) & !busy;
            if free == 0 {
                res[k] = STALL;
            } else {
                heads.push((k as u16, (p as usize * v + c as usize) as u16, free));
            }
        }
        let dist = |a: usize, from: usize| if a >= from { a - from } else { a + nio - from };
        let gp = r * nio;
        match self.allocator {
            Allocator::Islip | Allocator::SeparableOutputFirst => {
                // Grant: each asked-for VC grants the head nearest its pointer.
                let union = heads.iter().fold(0u32, |m, h| m | h.2);
                let mut grant = [u16::MAX; 32];
                let mut left = union;
                while left != 0 {
                    let ov = left.trailing_zeros() as usize;
                    left &= left - 1;
                    let g = self.va_gptr[gp + base + ov] as usize;
                    let mut best = (usize::MAX, u16::MAX);
                    for (h, &(_, i, free)) in heads.iter().enumerate() {
                        if free >> ov & 1 == 1 {
                            let d = dist(i as usize, g);
                            if d < best.0 {
                                best = (d, h as u16);
                            }
                        }
                    }
                    grant[ov] = best.1;
                }
                // Accept: each head takes the granting VC nearest its pointer.
                for (h, &(k, i, free)) in heads.iter().enumerate() {
                    let mut granted = 0u32;
                    let mut f = free;
                    while f != 0 {
                        let ov = f.trailing_zeros() as usize;
                        f &= f - 1;
                        if grant[ov] == h as u16 {
                            granted |= 1 << ov;
                        }
                    }
                    if granted == 0 {
                        res[k as usize] = STALL;
                        continue;
                    }
                    let i = i as usize;
                    let o = nearest(granted, self.va_aptr[gp + i] as usize, base, v);
                    self.va_gptr[gp + o] = after(i, nio);
                    self.va_aptr[gp + i] = after(o, nio);
                    res[k as usize] = o as i32;
                }
            }
            Allocator::SeparableInputFirst => {
                // Input arbiters: each head picks the free VC nearest its pointer; output
                // arbiters: each picked VC takes the head nearest its pointer.
                let picks = &mut self.scratch.picks;
                picks.clear();
                picks.extend(heads.iter().map(|&(_, i, free)| {
                    nearest(free, self.va_aptr[gp + i as usize] as usize, base, v)
                }));
                for (h, &(k, i, _)) in heads.iter().enumerate() {
                    let o = picks[h];
                    let g = self.va_gptr[gp + o] as usize;
                    let mine = dist(i as usize, g);
                    let beaten = heads
                        .iter()
                        .zip(picks.iter())
                        .any(|(&(_, j, _), &oj)| oj == o && dist(j as usize, g) < mine);
                    res[k as usize] = if beaten { STALL } else { o as i32 };
                }
                for (h, &(k, i, _)) in heads.iter().enumerate() {
                    if res[k as usize] >= 0 {
                        let o = picks[h];
                        self.va_gptr[gp + o] = after(i as usize, nio);
                        self.va_aptr[gp + i as usize] = after(o, nio);
                    }
                }
            }
        }
        self.scratch.heads = heads;
    }

    /// BookSim's `_SWAllocEvaluate` for the entries of router `r`'s switch-allocation queue not
    /// yet evaluated.
    fn sw_alloc_evaluate(&mut self, r: usize) {
        let now = self.now as i64;
        let (pn, v) = (self.ports, self.vcs);
        let rr = r * pn;
        let mut q = std::mem::take(&mut self.sa_q[r]);
        let mut items = std::mem::take(&mut self.scratch.items);
        let mut res = std::mem::take(&mut self.scratch.res);
        items.clear();
        items.extend(q.iter().take_while(|e| e.time < 0).map(|e| (e.input, e.vc)));
        self.sa_evaluate(r, &items, &mut res);
        for (e, &x) in q.iter_mut().zip(&res) {
            e.time = now + self.sw_alloc_delay - 1;
            e.result = x;
        }
        if self.sw_alloc_delay > 1 {
            for e in q.iter_mut() {
                if now < e.time {
                    break;
                }
                if e.result >= 0 {
                    let idx = (rr + e.input as usize) * v + e.vc as usize;
                    let (op, ov) = self.ivc[idx].out;
                    if self.ivc[(rr + op as usize) * v + ov as usize].occ as usize >= self.depth {
                        e.result = STALL;
                        self.credit_stall(rr + op as usize, 1);
                    }
                }
            }
        }
        self.scratch.items = items;
        self.scratch.res = res;
        self.sa_q[r] = q;
    }

    /// Output port `o` (router * ports + port) holds a flit for want of a credit from now, for
    /// `cycles` cycles.
    #[inline]
    fn credit_stall(&mut self, o: usize, cycles: u64) {
        let now = self.now;
        mark_blocked(
            &mut self.port_blocked[o],
            &mut self.blocked_until[o],
            now,
            now + cycles,
        );
    }

    /// Switch allocation at router `r` for the active input VCs `items`: `res[k]` is the output
    /// port `items[k]` won, or a stall (no credit, or another VC or input won).
    fn sa_evaluate(&mut self, r: usize, items: &[(u16, u16)], res: &mut Vec<i32>) {
        let (pn, v) = (self.ports, self.vcs);
        let (si, so) = (self.in_speedup, self.out_speedup);
        // The crossbar's inputs and outputs (BookSim's expanded ports): input VC `c` of port
        // `p` crosses on input `p * si + c % si`, to output `o * so + p % so` of port `o`.
        let (ni, no) = (pn * si, pn * so);
        let rr = r * pn;
        res.clear();
        res.resize(items.len(), PENDING);
        self.scratch.reqs.clear();
        // Inputs and outputs asked for so far (as bits, modulo 64), and whether two requests
        // share one.
        let (mut ins, mut outs, mut clash) = (0u64, 0u64, ni > 64 || no > 64);
        for (k, &(p, c)) in items.iter().enumerate() {
            let p = p as usize;
            let idx = (rr + p) * v + c as usize;
            let (op, ov) = self.ivc[idx].out;
            if self.ivc[(rr + op as usize) * v + ov as usize].occ as usize >= self.depth {
                res[k] = STALL;
                // Held until the stage's result, `sw_alloc_delay` cycles.
                self.credit_stall(rr + op as usize, self.sw_alloc_delay as u64);
                continue;
            }
            let (ei, eo) = (p * si + c as usize % si, op as usize * so + p % so);
            let cell = ei * no + eo;
            let held = self.scratch.sw_label[cell];
            if held < 0 {
                self.scratch.sw_label[cell] = c as i16;
                self.scratch.reqs.push((ei as u16, eo as u16));
                let (ib, ob) = (1u64 << (ei & 63), 1u64 << (eo & 63));
                clash |= ins & ib != 0 || outs & ob != 0;
                ins |= ib;
                outs |= ob;
            } else {
                // Two VCs of one crossbar input want one output: the nearer one round-robin
                // from the input's offset keeps the request.
                let off = self.sw_rr[ni * r + ei] as usize;
                let d = |x: usize| (x + v - off) % v;
                if d(c as usize) < d(held as usize) {
                    self.scratch.sw_label[cell] = c as i16;
                }
            }
        }
        let reqs = std::mem::take(&mut self.scratch.reqs);
        let gptr = &mut self.sw_gptr[no * r..no * (r + 1)];
        let aptr = &mut self.sw_aptr[ni * r..ni * (r + 1)];
        if clash {
            allocate(
                self.allocator,
                self.alloc_iters,
                ni,
                no,
                &mut (gptr, aptr),
                &reqs,
                &mut self.scratch,
            );
        } else {
            // No input or output asked twice: every request is granted and accepted.
            for &(i, o) in &reqs {
                let (iu, ou) = (i as usize, o as usize);
                self.scratch.inmatch[iu] = ou as i32;
                gptr[ou] = after(iu, ni);
                aptr[iu] = after(ou, no);
            }
        }
        for (k, &(p, c)) in items.iter().enumerate() {
            if res[k] < PENDING {
                continue;
            }
            let p = p as usize;
            let ei = p * si + c as usize % si;
            let m = self.scratch.inmatch[ei];
            if m >= 0 && self.scratch.sw_label[ei * no + m as usize] == c as i16 {
                // BookSim: the offset moves to the crossbar input's next VC.
                self.sw_rr[ni * r + ei] = ((c as usize + si) % v) as u16;
                res[k] = m / so as i32;
            } else {
                res[k] = STALL;
            }
        }
        for &(i, o) in &reqs {
            self.scratch.sw_label[i as usize * no + o as usize] = -1;
        }
        self.scratch.reqs = reqs;
    }

    /// One cycle of the whole network.
    fn step(&mut self, log: &mut Option<&mut PacketLog>) -> Result<(), NocError> {
        podsim_engine::watch::cycles(self.now);
        self.terminals(log);
        let slot = (self.now as usize) & (self.wheel - 1);
        self.active.clear();
        std::mem::swap(&mut self.active, &mut self.next_active);
        if self.fast && self.routing_delay > 0 {
            match (self.ports, self.vcs) {
                (5, 4) => self.arrive_fast::<5, 4>(slot),
                _ => self.arrive_fast::<0, 0>(slot),
            }
        } else {
            let mut fl = std::mem::take(&mut self.flits_at[slot]);
            if self.out_speedup > 1 && !self.fast {
                // BookSim takes a router's arriving flits in the order of its input ports
                // (`_in_queue_flits` is a map by input), and so queues them for the switch in
                // that order; with an output speedup that order is the order in which flits
                // that crossed together leave an output (at most one flit a channel a cycle).
                fl.sort_by_key(|e| (e.router, e.port));
            }
            for e in fl.drain(..) {
                self.wake(e.router);
                self.receive(e);
            }
            self.flits_at[slot] = fl;
        }
        // The credits the routers take now (written for the cycle they arrive plus
        // `credit_delay`, BookSim's `_proc_credits`): each router would take them at the start
        // of its step, before anything reads them, and a router with nothing queued has
        // nothing to do with them.
        let mut cr = std::mem::take(&mut self.credits_at[slot]);
        for &i in &cr {
            self.ivc[i as usize].occ -= 1;
        }
        cr.clear();
        self.credits_at[slot] = cr;
        #[cfg_attr(not(test), allow(unused_mut))]
        let mut active = std::mem::take(&mut self.active);
        #[cfg(test)]
        if self.reversed {
            active.reverse();
        }
        if self.fast {
            // Flits are written now and read one cycle and a channel latency after the
            // crossbar's cycle; credits are written now.
            let now = self.now as usize;
            let (mask, lat) = (self.wheel - 1, self.latency as usize);
            let (fs, es, cs, is) = (
                (now + lat + 2) & mask,
                (now + 3) & mask,
                (now + lat + 1 + self.credit_delay as usize) & mask,
                (now + 2) & mask,
            );
            // The slots are taken out (swapped with the outbox's empty vectors) and put back.
            let swap = |b: &mut Self| {
                std::mem::swap(&mut b.outbox.flits, &mut b.flits_at[fs]);
                std::mem::swap(&mut b.outbox.eject, &mut b.eject_at[es]);
                std::mem::swap(&mut b.outbox.credits, &mut b.credits_at[cs]);
                std::mem::swap(&mut b.outbox.inj_credits, &mut b.inj_credit_at[is]);
            };
            swap(self);
            let step = self.fast_step();
            for &r in &active {
                step(self, r as usize);
            }
            swap(self);
        } else {
            for &r in &active {
                self.step_router(r as usize);
            }
        }
        self.active = active;
        if self.in_network > 0 && self.now - self.last_progress >= self.watchdog {
            return Err(SimError::Deadlock {
                at: SimTime::from_ps(self.now.saturating_mul(self.cycle_ps)),
                waiting: self.blocked(),
            }
            .into());
        }
        self.now += 1;
        Ok(())
    }

    /// The buffers holding flits, by name, for a deadlock report (the first 16).
    fn blocked(&self) -> Vec<String> {
        let (pn, v) = (self.ports, self.vcs);
        (0..self.ivc.len())
            .filter(|&i| self.ivc[i].len > 0)
            .take(16)
            .map(|i| {
                let (r, p, c) = (i / (pn * v), i / v % pn, i % v);
                if p == pn - 1 {
                    format!("n{r}<-inj.vc{c}")
                } else {
                    format!("n{r}<-n{}.vc{c}", self.port[r * pn + p].nbr)
                }
            })
            .collect()
    }

    fn clear_stats(&mut self) {
        self.stats = Stats::default();
        self.reset_time = self.now;
        // The link counters cover the same window as the accepted rate.
        for p in &mut self.port {
            p.flits = 0;
        }
        self.port_blocked.fill(0);
        self.hops_at_reset = self.flit_hops;
    }

    /// The measurement window ends now (BookSim's drain begins, or the run stops): the link
    /// counters are kept as they stand, as the accepted count stops counting here.
    fn end_window(&mut self) {
        self.drain_time = self.now;
        self.window_flits.clear();
        self.window_flits.extend(self.port.iter().map(|p| p.flits));
        self.window_blocked.clone_from(&self.port_blocked);
        self.window_hops = self.flit_hops - self.hops_at_reset;
    }

    /// Average latency of the packets retired since the reset and the flits in flight (from
    /// creation), BookSim's instability test.
    fn over_threshold(&self) -> bool {
        let in_flight_age =
            u128::from(self.in_flight) * u128::from(self.now) - self.in_flight_ctime;
        let sum = self.stats.plat_sum as f64 + in_flight_age as f64;
        let count = self.stats.packets as f64 + self.in_flight as f64;
        sum / count > LATENCY_THRESHOLD
    }

    fn accepted_rate(&self, until: u64) -> f64 {
        self.stats.accepted as f64
            / (until.saturating_sub(self.reset_time).max(1) as f64)
            / self.routers as f64
    }

    /// BookSim's `_SingleSim`: whether the run was stable.
    fn run(&mut self, period: u64, log: &mut Option<&mut PacketLog>) -> Result<bool, NocError> {
        let mut converged = 0u32;
        let (mut prev_lat, mut prev_acc) = (0.0f64, 0.0f64);
        let mut clear_last = false;
        let mut phases = 0u32;
        self.clear_stats();
        while phases < MAX_SAMPLES && (self.phase != Phase::Running || converged < 3) {
            if clear_last || (self.phase == Phase::WarmingUp && phases.is_multiple_of(2)) {
                clear_last = false;
                self.clear_stats();
            }
            for _ in 0..period {
                self.step(log)?;
            }
            let lat = self.stats.plat_sum as f64 / self.stats.packets as f64;
            let acc = self.accepted_rate(self.now);
            let lat_change = ((lat - prev_lat) / lat).abs();
            let acc_change = ((acc - prev_acc) / acc).abs();
            prev_lat = lat;
            prev_acc = acc;
            if self.over_threshold() {
                self.phase = Phase::Draining;
                self.end_window();
                return Ok(false);
            }
            match self.phase {
                Phase::WarmingUp => {
                    if phases + 1 >= WARMUP_PERIODS {
                        clear_last = true;
                        self.phase = Phase::Running;
                    }
                }
                _ => {
                    if lat_change > STOPPING_THRESHOLD || acc_change > STOPPING_THRESHOLD {
                        converged = 0;
                    } else {
                        converged += 1;
                    }
                }
            }
            phases += 1;
        }
        if self.phase != Phase::Running {
            self.end_window();
            return Ok(false);
        }
        self.phase = Phase::Draining;
        self.end_window();
        let mut steps = 0u64;
        while self.measured_in_flight > 0 || self.undrained > 0 {
            self.step(log)?;
            steps += 1;
            if steps.is_multiple_of(1000) && self.over_threshold() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Run `spec` on `net` with BookSim's router, injection and measurement (see the module docs;
/// `spec.cycles` is BookSim's `max_samples x sample_period`, periods of `cycles / 10`).
pub(crate) fn run(
    net: &Network,
    routing: NocRouting,
    cfg: &RouterConfig,
    spec: &RunSpec,
    log: Option<&mut PacketLog>,
) -> Result<NocResult, NocError> {
    run_mode(net, routing, cfg, spec, log, false)
}

/// As [`run`], with the general stage queues even where the fast path applies.
#[cfg(test)]
pub(crate) fn run_general(
    net: &Network,
    cfg: &RouterConfig,
    spec: &RunSpec,
) -> Result<NocResult, NocError> {
    run_mode(net, NocRouting::DimensionOrder, cfg, spec, None, true)
}

/// As [`run_general`], the routers of each cycle stepped in the reverse order.
#[cfg(test)]
pub(crate) fn run_reversed(
    net: &Network,
    cfg: &RouterConfig,
    spec: &RunSpec,
) -> Result<NocResult, NocError> {
    REVERSED.with(|r| r.set(true));
    let got = run_mode(net, NocRouting::DimensionOrder, cfg, spec, None, true);
    REVERSED.with(|r| r.set(false));
    got
}

#[cfg(test)]
thread_local! {
    static REVERSED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn run_mode(
    net: &Network,
    routing: NocRouting,
    cfg: &RouterConfig,
    spec: &RunSpec,
    mut log: Option<&mut PacketLog>,
    general: bool,
) -> Result<NocResult, NocError> {
    cfg.validate()?;
    if !matches!(net, Network::Cube(_)) {
        return Err(ConfigError::new(
            "router",
            format!(
                "the booksim router runs k-ary n-cubes (mesh:..., torus:...), as BookSim's \
                 kncube does; {} is not one",
                net.shorthand()
            ),
        )
        .into());
    }
    if routing != NocRouting::DimensionOrder {
        return Err(ConfigError::new(
            "routing",
            format!(
                "the booksim router routes in dimension order (BookSim's dor); `{}` is not \
                 available with it",
                routing.name()
            ),
        )
        .into());
    }
    let flits = cfg.packet_flits;
    let p = spec.rate / f64::from(flits);
    if !(spec.rate > 0.0 && p <= 1.0) {
        return Err(ConfigError::new(
            "rate",
            format!(
                "expected a load above 0 and at most one packet per cycle ({flits} flits per \
                 endpoint per cycle), got {}",
                spec.rate
            ),
        )
        .into());
    }
    if spec.cycles < MIN_WINDOW_CYCLES {
        return Err(ConfigError::new(
            "cycles",
            format!(
                "{} cycles make sample periods of {} cycles; expected at least \
                 {MIN_WINDOW_CYCLES} cycles",
                spec.cycles,
                spec.cycles / u64::from(MAX_SAMPLES)
            ),
        )
        .into());
    }
    let mut b = BookSim::new(net, cfg, spec)?;
    crate::spec::announce(net, spec);
    b.fast &= !general;
    #[cfg(test)]
    {
        b.reversed = REVERSED.with(|r| r.get());
    }
    let stable = b.run(spec.cycles / u64::from(MAX_SAMPLES), &mut log)?;
    let s = &b.stats;
    let n = s.packets;
    if n == 0 {
        return Err(ConfigError::new(
            "rate",
            format!(
                "no packet was measured at {} flits/node/cycle in {} cycles, so there is nothing \
                 to report; raise the rate or the cycles",
                spec.rate, b.now
            ),
        )
        .into());
    }
    let window = b.drain_time.saturating_sub(b.reset_time).max(1);
    let per_node = (window * b.routers as u64) as f64;
    let mean = s.plat_sum as f64 / n as f64;
    let queueing = (s.plat_sum - s.nlat_sum) as f64 / n as f64;
    Ok(NocResult {
        offered_flits_per_node_cycle: spec.rate,
        generated_flits_per_node_cycle: s.sent as f64 / per_node,
        accepted_flits_per_node_cycle: s.accepted as f64 / per_node,
        average_latency_cycles: mean,
        p50_latency_cycles: s.hist.percentile(0.5),
        p99_latency_cycles: s.hist.percentile(0.99),
        max_latency_cycles: s.hist.max(),
        average_queueing_cycles: queueing,
        average_network_cycles: mean - queueing,
        average_hops: s.hops_sum as f64 / n as f64,
        saturated: !stable,
        measured_packets: n,
        warmup_cycles: b.reset_time,
        simulated_cycles: b.now,
        flit_hops: b.flit_hops,
        links: b.link_stats(net),
        window_cycles: window,
        cycle_ps: b.cycle_ps,
    })
}

impl BookSim {
    /// Every network link's counters over the measurement window, as the podsim mode lists
    /// them: in the fabric's channel order (the network's `LinkTable`: node by node, each
    /// node's links in the order of its cube ports, dimension by dimension, `Plus` before
    /// `Minus`, the ports a mesh's edge lacks left out), so that channel `i` here is channel
    /// `i` there. BookSim's port 2d is the `Plus` neighbour in dimension d and 2d + 1 the
    /// `Minus` one.
    fn link_stats(&self, net: &Network) -> Vec<LinkStat> {
        let Network::Cube(c) = net else {
            return Vec::new();
        };
        let pn = self.ports;
        let mut out = Vec::new();
        for r in 0..self.routers {
            for port in c.ports(NodeId(r as u64)) {
                let p = 2 * port.dim + usize::from(port.dir == Direction::Minus);
                let x = r * pn + p;
                out.push(LinkStat {
                    channel: out.len(),
                    kind: ChannelKind::Link,
                    from: NodeId(r as u64),
                    to: NodeId(u64::from(self.port[x].nbr)),
                    flits: self.window_flits.get(x).copied().unwrap_or(0),
                    blocked_cycles: self.window_blocked.get(x).copied().unwrap_or(0),
                });
            }
        }
        out
    }
}

/// One packet from `src` to `dst` on an idle network (no other traffic): its latency from
/// creation to the tail's ejection, and the links it crossed.
#[cfg(test)]
pub(crate) fn lone_packet(
    net: &Network,
    cfg: &RouterConfig,
    src: usize,
    dst: usize,
) -> Result<(u64, u64), NocError> {
    let spec = RunSpec::new(crate::Pattern::Uniform, 1e-300);
    let mut b = BookSim::new(net, cfg, &spec)?;
    b.generate_to(src, dst as u32, 0);
    let mut log = None;
    while b.stats.packets == 0 {
        b.step(&mut log)?;
        assert!(b.now < 1_000_000, "the packet never arrived");
    }
    Ok((b.stats.plat_sum, b.stats.hops_sum))
}

#[cfg(test)]
#[path = "booksim_tests.rs"]
mod tests;
