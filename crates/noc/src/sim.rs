//! The cycle engine: routers, network interfaces, channels, credits and the watchdog.
//!
//! State is kept in flat vectors, so one simulation is one value with no globals; many can
//! run side by side. A channel's two ends are kept apart: its downstream end (input port, input
//! VCs and their buffer slots) by its position among the inputs of its router, routers in
//! order (`Fabric::in_list`), and its upstream end (output port, output VCs' credits and
//! holders) by its position among the outputs of its router, routers in order, with the
//! injection channels (whose upstream ends are interfaces) last. So everything a router
//! writes in a cycle lies in one contiguous range of each vector, and the routers can be split
//! into parts evaluated on separate threads, each with its own ranges.

use std::collections::VecDeque;

use podsim_engine::SimError;
use podsim_topology::{Network, NodeId};
use podsim_units::SimTime;

use crate::NocError;
use crate::config::{Arbitration, ConfigError, RouterConfig};
use crate::fabric::{CLASS_SHIFT, ChannelKind, Fabric, NocRouting};

const IDLE: u8 = 0;
const WAIT_VC: u8 = 1;
const ACTIVE: u8 = 2;
const FREE: u32 = u32::MAX;
const NI_OWNER: u32 = u32::MAX - 1;
const NONE: u32 = u32::MAX;

/// A flit: its packet, its place in it, and (for a head) its place on its path.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Flit {
    pub(crate) pkt: u32,
    pub(crate) seq: u16,
    /// Router-to-router links crossed so far (a head's place on its path).
    pub(crate) hop: u16,
    pub(crate) tail: bool,
}

/// A flit due at the far end of a channel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arrival {
    /// Where it arrives: for a router, the input position of its channel; for an interface,
    /// the ejection channel.
    pub(crate) to: u32,
    pub(crate) vc: u16,
    pub(crate) flit: Flit,
}

/// A packet's identity and times: written when it is handed over, leaves its source and is
/// delivered (all outside the phase run part by part), read by the allocators.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Packet {
    pub(crate) src: u32,
    pub(crate) dst: u32,
    pub(crate) len: u16,
    pub(crate) delivered: u16,
    /// The VC lane the packet is held to ([`ANY_LANE`]: any free VC of its class).
    pub(crate) lane: u16,
    pub(crate) created: u64,
    pub(crate) injected: u64,
    pub(crate) tag: u64,
}

/// A packet's way through the network: fixed when it is handed over.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Route {
    path: u32,
    pub(crate) path_len: u16,
    eject: u32,
}

impl Route {
    /// The channel a head that has crossed `hop` links leaves its router by: the next link of
    /// its path, or at the last router its ejection channel (class 0), as a path word. Written
    /// without a branch on which case it is: the path word is read either way (the last one's,
    /// at the end) and the choice made on the values.
    pub(crate) fn word(&self, hop: u16, arena: &[u32]) -> u32 {
        let more = hop < self.path_len;
        let i = (self.path + u32::from(hop)).wrapping_sub(u32::from(!more));
        let word = arena.get(i as usize).copied().unwrap_or(0);
        if more { word } else { self.eject }
    }
}

/// A packet that may take any free VC.
pub const ANY_LANE: u16 = u16::MAX;

/// The VCs of `mask` a packet on `lane` may take: all of them, or the lane's one (the
/// `lane`-th VC of the mask, counting round when the mask has fewer).
fn lane_mask(mask: VcMask, lane: u16) -> VcMask {
    if lane == ANY_LANE || mask == 0 {
        return mask;
    }
    let mut m = mask;
    for _ in 0..(u32::from(lane) % mask.count_ones()) {
        m &= m - 1;
    }
    m & m.wrapping_neg()
}

#[derive(Debug, Clone, Copy)]
struct Interface {
    pkt: u32,
    seq: u16,
    vc: u16,
}

/// A packet that has left the network: its tail reached the destination's interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivered {
    /// The tag given to [`Noc::inject`].
    pub tag: u64,
    /// Source endpoint.
    pub src: NodeId,
    /// Destination endpoint.
    pub dst: NodeId,
    /// Flits, head and tail included.
    pub flits: u32,
    /// Cycle it was handed to the source interface.
    pub created: u64,
    /// Cycle its head flit left the source interface.
    pub injected: u64,
    /// Cycle its tail flit reached the destination interface.
    pub delivered: u64,
    /// Router-to-router links crossed.
    pub hops: u32,
}

impl Delivered {
    /// Cycles from creation to the tail's arrival.
    pub fn latency(&self) -> u64 {
        self.delivered - self.created
    }
    /// Cycles spent in the source queue before the head left.
    pub fn queueing(&self) -> u64 {
        self.injected - self.created
    }
}

/// Traffic counters of one channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkStat {
    /// The channel's index in the fabric.
    pub channel: usize,
    /// What it joins.
    pub kind: ChannelKind,
    /// Upstream node.
    pub from: NodeId,
    /// Downstream node.
    pub to: NodeId,
    /// Flits it carried since the statistics were last reset.
    pub flits: u64,
    /// Cycles in which a flit waiting for it had no credit.
    pub blocked_cycles: u64,
}

/// Flit accounting at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Audit {
    /// Flits that have left a source interface.
    pub injected: u64,
    /// Flits that have reached a destination interface.
    pub ejected: u64,
    /// Flits sitting in router input buffers (counted by walking every buffer).
    pub buffered: u64,
    /// Flits on channels (counted by walking every channel's pipeline).
    pub on_channels: u64,
    /// Flits that arrived at a full buffer (a flow-control failure) and were lost.
    pub overflowed: u64,
    /// Flits delivered out of order within their packet, or packets delivered short or twice.
    pub misordered: u64,
}

impl Audit {
    /// Whether injected = ejected + in flight, nothing lost, nothing duplicated.
    pub fn conserved(&self) -> bool {
        self.injected == self.ejected + self.buffered + self.on_channels
            && self.overflowed == 0
            && self.misordered == 0
    }
}

/// One packet-level simulation of a network.
#[derive(Debug, Clone)]
pub struct Noc {
    f: Fabric,
    stages: u64,
    arbitration: Arbitration,
    watchdog: u64,
    now: u64,
    /// Per channel, its output position.
    out_pos: Vec<u32>,
    /// Per router, its first output position (and one past the last router's outputs); per
    /// output position, its channel.
    out_off: Vec<u32>,
    out_list: Vec<u32>,
    // Downstream ends: flit slots of every input VC, and the cycle each slot's flit becomes
    // ready (kept only when it matters: a pipeline over one stage, or oldest-first
    // arbitration); input VCs (index j * V + v) and ports (index j).
    buf: Vec<Flit>,
    ready: Vec<u64>,
    ivc: Vec<InVc>,
    /// Per input VC, when its front packet entered the network (kept only for oldest-first
    /// arbitration, which ranks by it).
    since: Vec<u64>,
    inp: Vec<InPort>,
    // Upstream ends: output VCs (index k * V + v) and ports (index k).
    ovc: Vec<OutVc>,
    outp: Vec<OutPort>,
    // Per router, one bit per input port: VCs waiting for VC allocation; VCs holding an output
    // VC with a flit buffered.
    masks: Vec<Masks>,
    /// Channel pipelines are timing wheels of `wheel` slots (the longest latency + 1), the
    /// one for now at `slot`, in the outboxes.
    wheel: usize,
    slot: usize,
    /// One outbox per part of the routers (each part evaluated on its own thread); the
    /// interfaces send through the first.
    outs: Vec<Outbox>,
    /// Per part, per outbox: the flits arriving now, taken from the outboxes' wheels (the
    /// emptied lists go back in their place the next cycle).
    inbox: Vec<Vec<Vec<Arrival>>>,
    /// Per part, per outbox: the credits returning now to the part's routers, likewise.
    credit_inbox: Vec<Vec<Vec<u32>>>,
    /// The routers' parts: the first router of each, and the number of routers.
    parts: Vec<usize>,
    // Packets and interfaces.
    packets: Vec<Packet>,
    routes: Vec<Route>,
    free_packets: Vec<u32>,
    serial: u64,
    queues: Vec<VecDeque<u32>>,
    queued: usize,
    ni: Vec<Interface>,
    /// Endpoints with work for their interfaces, one bit each.
    busy: Vec<u64>,
    /// Whether any packet has been held to a lane (else no VC allocation looks one up).
    lanes: bool,
    done: Vec<Delivered>,
    // Counters.
    injected: u64,
    ejected: u64,
    flit_hops: u64,
    last_progress: u64,
    overflowed: u64,
    misordered: u64,
    // Endpoints that take packets only when the caller accepts them: per channel, the
    // endpoint it ejects to when that endpoint holds its credits (NONE otherwise); per such
    // endpoint, the output VCs (index k * V + v, with the flit's tail bit) whose buffer slots
    // its ejected flits still occupy, oldest first.
    hold_ch: Vec<u32>,
    held: Vec<VecDeque<(u32, bool)>>,
    /// Visit routers last to first within each part (tests use it to show the order does not
    /// matter).
    pub(crate) reverse_visit: bool,
    /// Take the VC allocator's shortcuts for a lone request (one VC waiting) and for two
    /// requests (ordered without a sort); tests clear it to check that the general paths
    /// decide the same.
    pub(crate) fast_paths: bool,
}

/// A VC of a channel at its downstream router: the input VC's FIFO of flits (`len` from
/// `head` in its port's slots) and the state of the packet at its front. The front flit is
/// kept here, not in its slot: a flit that reaches an empty VC is never written to the slots,
/// and one that queues behind another is copied here when it reaches the front, so a hop
/// through an uncongested router touches no slot at all.
#[derive(Debug, Clone, Copy)]
#[repr(align(32))]
struct InVc {
    /// The flit at the front (valid when `len > 0`).
    front: Flit,
    head: u16,
    len: u16,
    state: u8,
    class: u8,
    /// The output VC granted (valid when active).
    ovc: u16,
    /// The output position its front packet leaves by (valid when waiting or active).
    out: u32,
}

/// The same VC at its upstream router: credits for its buffer, and the input VC holding it
/// (`FREE` if none, `NI_OWNER` for an interface).
#[derive(Debug, Clone, Copy)]
pub(crate) struct OutVc {
    pub(crate) credits: u32,
    owner: u32,
}

/// A router's input ports with work for each allocator, one bit per port.
#[derive(Debug, Clone, Copy, Default)]
struct Masks {
    va: u64,
    sa: u64,
}

/// One bit per virtual channel of a port (at most 32 VCs).
type VcMask = u32;

/// A channel at its downstream router: the input port's VC masks and arbiter.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(32))]
pub(crate) struct InPort {
    /// VCs with flits; waiting for VC allocation; holding an output VC.
    nonempty: VcMask,
    wait: VcMask,
    active: VcMask,
    /// The first of its buffer slots: VC `v`'s are `depth` slots from `base + v * depth`.
    pub(crate) base: u32,
    /// Its output position (where its credits go back to).
    up: u32,
    /// Its router.
    dst: u32,
    /// The part of the routers its upstream router is in ([`TO_NI`]: it starts at an
    /// interface).
    up_part: u8,
    /// Buffer depth of each of its VCs.
    pub(crate) depth: u16,
    /// Latency (a freed slot's credit takes it back upstream).
    pub(crate) latency: u16,
    /// Round-robin pointer over its VCs (switch).
    rr_in: u8,
    /// Its position among its router's input ports.
    in_local: u8,
}

/// A channel at its upstream router: the output port's state and counters; one cache line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
pub(crate) struct OutPort {
    /// First cycle the channel can take another flit.
    next_free: u64,
    /// The best switch request for this output this cycle (`u64::MAX`: none).
    sa_key: u64,
    /// Flits it carried since the statistics were last reset, cycles in which a flit
    /// waiting for it had no credit, and the last such cycle.
    flits: u64,
    blocked: u64,
    blocked_at: u64,
    /// Output VCs nobody holds, and the VCs each class may use.
    free: VcMask,
    pub(crate) class_vcs: [VcMask; 2],
    /// Where its flits arrive: the input position of its channel, with the part of the
    /// routers its router is in from bit [`PART_SHIFT`]; or (with [`TO_INTERFACE`] set) its
    /// channel, an ejection channel.
    down: u32,
    /// Latency and cycles per flit.
    pub(crate) latency: u16,
    period: u16,
    /// Round-robin pointers: requester (VC allocation), input port (switch), output VC (VC
    /// allocation).
    rr_va: u16,
    rr_out: u8,
    rr_vc: u8,
}

/// The flag of [`OutPort::down`] for a channel that ends at an interface.
const TO_INTERFACE: u32 = 1 << 31;
/// Where [`OutPort::down`] keeps the part; below it, the input position (channels are
/// fewer than 2^26).
const PART_SHIFT: u32 = 26;
/// [`InPort::up_part`] of an injection channel.
const TO_NI: u8 = u8::MAX;
/// The most parts the routers are split into (the part takes 5 bits of `OutPort::down`).
pub const MAX_PARTS: usize = 32;

// An output port is one cache line, an input port and an input VC half of one.
const _: () = assert!(
    std::mem::size_of::<OutPort>() == 64
        && std::mem::size_of::<InPort>() == 32
        && std::mem::size_of::<InVc>() == 32
);

/// What one part of the routers sends in a cycle: flits into channel pipelines (timing
/// wheels of `wheel` slots: flits for routers, one wheel per part of the routers they go to;
/// flits for interfaces), credits (as output VC indices, in their own wheel), and its
/// counters. Each part receives its flits from every outbox, and the interfaces theirs, in
/// outbox order: the order of the routers that sent them, whatever the parts.
#[derive(Debug, Clone, Default)]
struct Outbox {
    to_routers: Vec<Vec<Arrival>>,
    to_ifaces: Vec<Vec<Arrival>>,
    /// Credits for routers' output VCs, one wheel per part of the routers they go to; credits
    /// for interfaces' injection channels.
    credits_to: Vec<Vec<u32>>,
    credits_ni: Vec<Vec<u32>>,
    flit_hops: u64,
    overflowed: u64,
    progressed: bool,
    // Scratch.
    va_reqs: Vec<(u32, u8, u64, u32, u32, u16)>,
    va_keys: Vec<u64>,
    sa_reqs: Vec<(u32, u64, u32, u16)>,
}

impl Outbox {
    fn new(wheel: usize, parts: usize) -> Self {
        Outbox {
            to_routers: vec![Vec::new(); parts * wheel],
            to_ifaces: vec![Vec::new(); wheel],
            credits_to: vec![Vec::new(); parts * wheel],
            credits_ni: vec![Vec::new(); wheel],
            ..Outbox::default()
        }
    }

    /// Put a flit on output port `o`'s channel, VC `vc`, due at its far end one latency
    /// from now.
    fn send(&mut self, o: &mut OutPort, vc: u16, flit: Flit, at: Clock) {
        let due = at.slot_after(u32::from(o.latency));
        let to = o.down & ((1 << PART_SHIFT) - 1);
        let list = if o.down & TO_INTERFACE != 0 {
            &mut self.to_ifaces[due]
        } else {
            let part = (o.down >> PART_SHIFT & (MAX_PARTS as u32 - 1)) as usize;
            &mut self.to_routers[part * at.wheel + due]
        };
        list.push(Arrival { to, vc, flit });
        o.flits += 1;
        self.progressed = true;
    }

    /// Flits on channels.
    fn in_flight(&self) -> u64 {
        let lists = self.to_routers.iter().chain(&self.to_ifaces);
        lists.map(|l| l.len() as u64).sum()
    }
}

/// The cycle's place in the timing wheels.
#[derive(Debug, Clone, Copy)]
struct Clock {
    now: u64,
    slot: usize,
    wheel: usize,
}

impl Clock {
    /// The wheel slot `lat` cycles from now (`lat` is below the wheel's size).
    fn slot_after(&self, lat: u32) -> usize {
        let s = self.slot + lat as usize;
        if s >= self.wheel { s - self.wheel } else { s }
    }
}

/// What every part reads and nobody writes in the phase of a cycle that runs part by part
/// (credits and flits arriving at routers, allocation, traversal: [`Part::run`]).
struct Shared<'a> {
    f: &'a Fabric,
    packets: &'a [Packet],
    routes: &'a [Route],
    out_pos: &'a [u32],
    at: Clock,
    stages: u64,
    arbitration: Arbitration,
    lanes: bool,
    fast_paths: bool,
    reverse_visit: bool,
}

impl Shared<'_> {
    /// The route of head `flit` at the router it is in: the output position of the channel
    /// it leaves by, with the VC class in the top bit.
    fn next_of(&self, flit: Flit) -> u32 {
        let word = self.routes[flit.pkt as usize].word(flit.hop, &self.f.arena);
        let c = word & !(1 << CLASS_SHIFT);
        self.out_pos[c as usize] | (word & (1 << CLASS_SHIFT))
    }
}

/// The state a part of the routers (routers `r0..r1`) writes in that phase: the
/// downstream ends of their input channels (from input position `j0`, buffer slot `s0`), the
/// upstream ends of their output channels (from output position `k0`) and their masks. Indices
/// into these are global positions minus the offsets.
struct Part<'a> {
    r0: usize,
    r1: usize,
    j0: usize,
    k0: usize,
    s0: usize,
    ivc: &'a mut [InVc],
    inp: &'a mut [InPort],
    since: &'a mut [u64],
    buf: &'a mut [Flit],
    ready: &'a mut [u64],
    ovc: &'a mut [OutVc],
    outp: &'a mut [OutPort],
    masks: &'a mut [Masks],
}

/// A network's settings and tables as [`crate::lean::Lean`] needs them (see [`Noc`]'s fields
/// of the same names).
pub(crate) struct LeanView<'a> {
    pub(crate) stages: u64,
    pub(crate) arbitration: Arbitration,
    pub(crate) parts: usize,
    pub(crate) fast_paths: bool,
    pub(crate) reverse_visit: bool,
    pub(crate) lanes: bool,
    pub(crate) holds: bool,
    pub(crate) out_off: &'a [u32],
    pub(crate) out_list: &'a [u32],
    pub(crate) out_pos: &'a [u32],
    pub(crate) inp: &'a [InPort],
    pub(crate) outp: &'a [OutPort],
    pub(crate) ovc: &'a [OutVc],
    pub(crate) wheel: usize,
    pub(crate) watchdog: u64,
}

/// Routers below which a network is not split across threads: a cycle's work must outweigh
/// the cost of handing parts of it to threads (a 16x16 mesh at 0.3 load is as fast on two
/// threads as on one; a 32x32 mesh is faster, BENCHMARKS.md).
pub const MIN_ROUTERS_TO_SPLIT: usize = 512;

impl Noc {
    /// A network of idle routers for `net`, routed by `routing`, built to `cfg`.
    pub fn new(net: &Network, routing: NocRouting, cfg: &RouterConfig) -> Result<Self, NocError> {
        let f = Fabric::new(net, routing, cfg)?;
        let ch = f.channels();
        let v = f.vcs;
        if ch >= 1 << 26 {
            return Err(ConfigError::new(
                "topology",
                format!("{ch} channels is more than the packet level handles (2^26)"),
            )
            .into());
        }
        // Each channel's buffer depth: the configured one, or (with `cover_round_trip`) enough
        // to keep the channel busy through a credit's round trip, 2L + S - 1 flits.
        let depth: Vec<u32> = (0..ch)
            .map(|c| {
                let rt = 2 * f.ch_latency[c] + cfg.pipeline_stages;
                if cfg.cover_round_trip {
                    cfg.buffer_flits.max(rt.min(u32::from(u16::MAX)))
                } else {
                    cfg.buffer_flits
                }
            })
            .collect();
        // Buffer slots, for the channels that end at a router, in input position order.
        let mut port_base = Vec::with_capacity(f.in_list.len());
        let mut total = 0u64;
        for &c in &f.in_list {
            port_base.push(total);
            total += u64::from(depth[c as usize]) * v as u64;
        }
        if total > u64::from(u32::MAX) {
            return Err(ConfigError::new(
                "buffer_flits",
                format!("{total} buffer slots in all is more than the packet level holds"),
            )
            .into());
        }
        let with_ready = cfg.pipeline_stages > 1 || cfg.arbitration == Arbitration::Fcfs;
        let estimate = Noc::state_bytes(&f, total, with_ready);
        if estimate > cfg.memory_limit {
            return Err(NocError::Memory {
                what: format!(
                    "{} routers, {ch} channels and {total} flit buffers",
                    f.nodes
                ),
                estimate,
                limit: cfg.memory_limit,
            });
        }
        // Output positions: each router's links, then its ejection channels; the injection
        // channels last.
        let mut outs_of: Vec<Vec<u32>> = vec![Vec::new(); f.nodes];
        for c in 0..f.links {
            outs_of[f.ch_src[c] as usize].push(c as u32);
        }
        for (e, list) in outs_of.iter_mut().enumerate().take(f.endpoints) {
            list.extend((0..f.ifaces).map(|i| f.ejection(e, i) as u32));
        }
        let mut out_off = Vec::with_capacity(f.nodes + 1);
        let mut out_list = Vec::with_capacity(ch);
        for list in &outs_of {
            out_off.push(out_list.len() as u32);
            out_list.extend_from_slice(list);
        }
        out_off.push(out_list.len() as u32);
        out_list.extend((0..f.endpoints * f.ifaces).map(|s| (f.links + s) as u32));
        let mut out_pos = vec![NONE; ch];
        for (k, &c) in out_list.iter().enumerate() {
            out_pos[c as usize] = k as u32;
        }
        let mut in_pos = vec![NONE; ch];
        for (j, &c) in f.in_list.iter().enumerate() {
            in_pos[c as usize] = j as u32;
        }
        let ivc = vec![
            InVc {
                front: Flit::default(),
                head: 0,
                len: 0,
                state: IDLE,
                class: 0,
                ovc: 0,
                out: 0,
            };
            f.in_list.len() * v
        ];
        let ovc: Vec<OutVc> = out_list
            .iter()
            .flat_map(|&c| {
                let credits = depth[c as usize];
                (0..v).map(move |_| OutVc {
                    credits,
                    owner: FREE,
                })
            })
            .collect();
        let all_vcs = VcMask::MAX >> (VcMask::BITS as usize - v);
        let inp: Vec<InPort> = f
            .in_list
            .iter()
            .zip(&port_base)
            .map(|(&c, &base)| InPort {
                depth: depth[c as usize] as u16,
                up: out_pos[c as usize],
                dst: f.ch_dst[c as usize],
                in_local: f.ch_in_local[c as usize] as u8,
                latency: f.ch_latency[c as usize] as u16,
                base: base as u32,
                ..InPort::default()
            })
            .collect();
        let outp: Vec<OutPort> = out_list
            .iter()
            .map(|&c| {
                let c = c as usize;
                OutPort {
                    free: all_vcs,
                    class_vcs: [0u8, 1].map(|k| {
                        let (lo, hi) = f.class_range(c, k);
                        (all_vcs >> lo) << lo & (all_vcs >> (v - hi))
                    }),
                    down: if in_pos[c] == NONE {
                        c as u32 | TO_INTERFACE
                    } else {
                        in_pos[c]
                    },
                    latency: f.ch_latency[c] as u16,
                    period: f.ch_period[c] as u16,
                    sa_key: u64::MAX,
                    blocked_at: u64::MAX,
                    ..OutPort::default()
                }
            })
            .collect();
        let wheel = f.ch_latency.iter().copied().max().unwrap_or(1) as usize + 1;
        let ifaces = f.endpoints * f.ifaces;
        let parts = if f.nodes >= MIN_ROUTERS_TO_SPLIT {
            rayon::current_num_threads()
        } else {
            1
        };
        let mut noc = Noc {
            stages: u64::from(cfg.pipeline_stages),
            arbitration: cfg.arbitration,
            watchdog: cfg.watchdog_cycles,
            now: 0,
            out_pos,
            out_off,
            out_list,
            buf: vec![Flit::default(); total as usize],
            ready: if with_ready {
                vec![0; total as usize]
            } else {
                Vec::new()
            },
            since: if cfg.arbitration == Arbitration::Fcfs {
                vec![0; ivc.len()]
            } else {
                Vec::new()
            },
            ivc,
            inp,
            ovc,
            outp,
            masks: vec![Masks::default(); f.nodes],
            wheel,
            slot: 0,
            outs: Vec::new(),
            inbox: Vec::new(),
            credit_inbox: Vec::new(),
            parts: Vec::new(),
            packets: Vec::new(),
            routes: Vec::new(),
            free_packets: Vec::new(),
            serial: 0,
            queues: vec![VecDeque::new(); f.endpoints],
            queued: 0,
            ni: vec![
                Interface {
                    pkt: NONE,
                    seq: 0,
                    vc: 0
                };
                ifaces
            ],
            done: Vec::new(),
            busy: vec![0; f.endpoints.div_ceil(64)],
            lanes: false,
            injected: 0,
            ejected: 0,
            flit_hops: 0,
            last_progress: 0,
            overflowed: 0,
            misordered: 0,
            hold_ch: Vec::new(),
            held: Vec::new(),
            reverse_visit: false,
            fast_paths: true,
            f,
        };
        noc.set_parts(parts);
        Ok(noc)
    }

    /// Split the routers into `parts` parts (at least one, at most one per router), each
    /// evaluated on its own thread in every cycle; the results do not depend on it.
    /// [`Noc::new`] takes one part per thread (up to [`MAX_PARTS`]) on a network of at least
    /// [`MIN_ROUTERS_TO_SPLIT`] routers, else one.
    pub fn set_parts(&mut self, parts: usize) {
        let parts = parts.clamp(1, self.f.nodes.clamp(1, MAX_PARTS));
        // Flits on their way move to the new parts' wheels, in outbox order.
        let mut outs: Vec<Outbox> = (0..parts).map(|_| Outbox::new(self.wheel, parts)).collect();
        self.parts = split(self.f.nodes, parts);
        for old in std::mem::take(&mut self.outs) {
            for (slot, lists) in old.to_routers.into_iter().enumerate() {
                for a in lists {
                    let p = self.part_of_router(self.inp[a.to as usize].dst as usize);
                    outs[0].to_routers[p * self.wheel + slot % self.wheel].push(a);
                }
            }
            for (to, from) in outs[0].to_ifaces.iter_mut().zip(old.to_ifaces) {
                to.extend(from);
            }
            for (slot, lists) in old.credits_to.into_iter().enumerate() {
                for o in lists {
                    let p = self.part_of_output(o as usize / self.f.vcs);
                    outs[0].credits_to[p * self.wheel + slot % self.wheel].push(o);
                }
            }
            for (to, from) in outs[0].credits_ni.iter_mut().zip(old.credits_ni) {
                to.extend(from);
            }
        }
        self.outs = outs;
        self.inbox = vec![vec![Vec::new(); parts]; parts];
        self.credit_inbox = vec![vec![Vec::new(); parts]; parts];
        for j in 0..self.inp.len() {
            let k = self.inp[j].up as usize;
            self.inp[j].up_part = if k < self.out_off[self.f.nodes] as usize {
                self.part_of_output(k) as u8
            } else {
                TO_NI
            };
        }
        for k in 0..self.outp.len() {
            let down = self.outp[k].down;
            if down & TO_INTERFACE == 0 {
                let j = down & ((1 << PART_SHIFT) - 1);
                let p = self.part_of_router(self.inp[j as usize].dst as usize);
                self.outp[k].down = j | (p as u32) << PART_SHIFT;
            }
        }
    }

    /// The part router `r` is in.
    fn part_of_router(&self, r: usize) -> usize {
        self.parts.partition_point(|&first| first <= r) - 1
    }

    /// The part the router of output position `k` (not an injection channel's) is in.
    fn part_of_output(&self, k: usize) -> usize {
        let r = self.out_off.partition_point(|&first| first as usize <= k) - 1;
        self.part_of_router(r)
    }

    /// How many parts the routers are evaluated in.
    pub fn parts(&self) -> usize {
        self.outs.len()
    }

    /// The bytes a network's routers, channels and `slots` flit buffers take (a little
    /// above what `Noc::new` allocates: every per-channel, per-VC, per-slot and per-router
    /// vector, and the fabric's channel tables with [`Fabric::LINK_TABLE_BYTES`] per link).
    /// Routes and packets come on top, as traffic needs them.
    pub fn state_bytes(f: &Fabric, slots: u64, with_ready: bool) -> u64 {
        use std::mem::size_of;
        let ch = f.channels() as u64;
        let vcs = ch * f.vcs as u64;
        let per_slot = size_of::<Flit>() as u64 + if with_ready { 8 } else { 0 };
        // Per channel: both ends, two positions, five fabric tables of u32 and the input and
        // output lists.
        let per_channel = (size_of::<InPort>() + size_of::<OutPort>()) as u64 + 9 * 4;
        let per_router = size_of::<Masks>() as u64 + 3 * 4;
        let per_endpoint =
            size_of::<VecDeque<u32>>() as u64 + f.ifaces as u64 * size_of::<Interface>() as u64;
        let per_vc = (size_of::<InVc>() + size_of::<OutVc>()) as u64 + 8;
        slots
            .saturating_mul(per_slot)
            .saturating_add(vcs.saturating_mul(per_vc))
            .saturating_add(ch.saturating_mul(per_channel))
            .saturating_add((f.links as u64).saturating_mul(Fabric::LINK_TABLE_BYTES))
            .saturating_add((f.nodes as u64).saturating_mul(per_router))
            .saturating_add((f.endpoints as u64).saturating_mul(per_endpoint))
            .saturating_add(f.dense_bytes())
    }
    /// The fabric (channels, cycle time, routes).
    pub fn fabric(&self) -> &Fabric {
        &self.f
    }
    /// Flit buffer slots.
    pub(crate) fn slots(&self) -> usize {
        self.buf.len()
    }
    /// The fabric and the flit buffers (idle), taking the network apart.
    pub(crate) fn into_parts(self) -> (Fabric, Vec<Flit>) {
        (self.f, self.buf)
    }
    /// What [`crate::lean::Lean`] is built from.
    pub(crate) fn lean_view(&self) -> LeanView<'_> {
        LeanView {
            stages: self.stages,
            arbitration: self.arbitration,
            parts: self.outs.len(),
            fast_paths: self.fast_paths,
            reverse_visit: self.reverse_visit,
            lanes: self.lanes,
            holds: !self.hold_ch.is_empty(),
            out_off: &self.out_off,
            out_list: &self.out_list,
            out_pos: &self.out_pos,
            inp: &self.inp,
            outp: &self.outp,
            ovc: &self.ovc,
            wheel: self.wheel,
            watchdog: self.watchdog,
        }
    }
    /// The current cycle (the next one [`Noc::step`] runs).
    pub fn now(&self) -> u64 {
        self.now
    }
    /// Flit traversals of router-to-router links so far.
    pub fn flit_hops(&self) -> u64 {
        self.flit_hops
    }
    /// Packets waiting in source queues (not yet started by an interface).
    pub fn queued(&self) -> usize {
        self.queued
    }
    /// Whether nothing is queued, being injected or in flight.
    pub fn is_idle(&self) -> bool {
        self.queued == 0 && self.injected == self.ejected && self.ni.iter().all(|i| i.pkt == NONE)
    }

    /// Packets waiting in endpoint `src`'s source queue.
    pub fn queued_at(&self, src: usize) -> usize {
        self.queues.get(src).map_or(0, VecDeque::len)
    }

    /// Hand a packet of `flits` flits from endpoint `src` to endpoint `dst` to the source's
    /// interfaces, now. `tag` comes back in its [`Delivered`] record. Packets are numbered in
    /// the order they are handed over; the number picks among equal-cost paths and ejection
    /// interfaces.
    pub fn inject(&mut self, src: usize, dst: usize, flits: u32, tag: u64) -> Result<(), NocError> {
        let serial = self.serial;
        self.inject_numbered(src, dst, flits, tag, serial)
    }

    /// [`Noc::inject`] held to one VC lane at every port: the `lane`-th VC of the class the
    /// route needs there (modulo the class's VCs). Packets of different lanes never share a VC
    /// and the switch serves the lanes round-robin; packets of one lane queue for its VC in
    /// the order they reach it (one lane per reader: Tenstorrent's fix for a reader that takes
    /// every slot of a shared VC, tenstorrent-dram-bandwidth.txt).
    pub fn inject_lane(
        &mut self,
        src: usize,
        dst: usize,
        flits: u32,
        tag: u64,
        lane: u16,
    ) -> Result<(), NocError> {
        let serial = self.serial;
        self.inject_numbered(src, dst, flits, tag, serial)?;
        if let Some(&id) = self.queues[src].back() {
            self.packets[id as usize].lane = lane;
            self.lanes |= lane != ANY_LANE;
        }
        Ok(())
    }

    /// [`Noc::inject`] with the packet's number given: a caller that hands packets over
    /// lazily (as buffers allow) numbers them as if all had been handed over at once, so the
    /// choice of paths and ejection interfaces does not depend on when they enter.
    pub fn inject_numbered(
        &mut self,
        src: usize,
        dst: usize,
        flits: u32,
        tag: u64,
        serial: u64,
    ) -> Result<(), NocError> {
        let (p, route) = new_packet(&mut self.f, self.now, src, dst, flits, tag, serial, None)?;
        self.serial = serial + 1;
        let id = store(
            &mut self.packets,
            &mut self.routes,
            &mut self.free_packets,
            p,
            route,
        );
        self.queues[src].push_back(id);
        self.busy[src / 64] |= 1 << (src % 64);
        self.queued += 1;
        Ok(())
    }

    /// Packets delivered since the last call, in delivery order.
    pub fn take_delivered(&mut self, out: &mut Vec<Delivered>) {
        out.append(&mut self.done);
    }

    /// Run one cycle: read (flits and credits due now), evaluate (interfaces, then every
    /// router's route computation, VC allocation and switch allocation on the state read) and
    /// write (flits and credits into channel pipelines, due one latency later). Nothing written
    /// in a cycle is read in the same cycle, so the order routers are visited in cannot matter,
    /// nor how they are split across threads.
    pub fn step(&mut self) -> Result<(), SimError> {
        let now = self.now;
        podsim_engine::watch::cycles(now);
        let slot = (now % self.wheel as u64) as usize;
        self.slot = slot;
        let done_before = self.done.len();
        for q in 0..self.outs.len() {
            let mut arrivals = std::mem::take(&mut self.outs[q].to_ifaces[slot]);
            for a in arrivals.drain(..) {
                self.eject(a);
            }
            self.outs[q].to_ifaces[slot] = arrivals;
        }
        // Tails arrive in the order their routers were visited; report them in a fixed order.
        self.done[done_before..].sort_unstable_by_key(|d| (d.dst, d.src, d.created, d.tag));
        for q in 0..self.outs.len() {
            let mut credits = std::mem::take(&mut self.outs[q].credits_ni[slot]);
            for o in credits.drain(..) {
                self.ovc[o as usize].credits += 1;
            }
            self.outs[q].credits_ni[slot] = credits;
        }
        self.interfaces();
        self.evaluate();
        if self.injected > self.ejected && now.saturating_sub(self.last_progress) >= self.watchdog {
            return Err(SimError::Deadlock {
                at: SimTime::from_ps(now.saturating_mul(self.f.cycle.as_ps())),
                waiting: self.waiting_cycle(),
            });
        }
        self.now += 1;
        Ok(())
    }

    fn clock(&self) -> Clock {
        Clock {
            now: self.now,
            slot: self.slot,
            wheel: self.wheel,
        }
    }

    /// Every router's arrivals, allocations and traversals, part by part (on as many threads
    /// as there are parts).
    fn evaluate(&mut self) {
        let (slot, wheel) = (self.slot, self.wheel);
        for (p, lists) in self.inbox.iter_mut().enumerate() {
            for (list, out) in lists.iter_mut().zip(&mut self.outs) {
                std::mem::swap(list, &mut out.to_routers[p * wheel + slot]);
            }
        }
        for (p, lists) in self.credit_inbox.iter_mut().enumerate() {
            for (list, out) in lists.iter_mut().zip(&mut self.outs) {
                std::mem::swap(list, &mut out.credits_to[p * wheel + slot]);
            }
        }
        let shared = Shared {
            f: &self.f,
            packets: &self.packets,
            routes: &self.routes,
            out_pos: &self.out_pos,
            at: self.clock(),
            stages: self.stages,
            arbitration: self.arbitration,
            lanes: self.lanes,
            fast_paths: self.fast_paths,
            reverse_visit: self.reverse_visit,
        };
        let v = self.f.vcs;
        let n = self.f.nodes;
        if self.outs.len() == 1 {
            let mut part = Part {
                r0: 0,
                r1: n,
                j0: 0,
                k0: 0,
                s0: 0,
                ivc: &mut self.ivc,
                inp: &mut self.inp,
                since: &mut self.since,
                buf: &mut self.buf,
                ready: &mut self.ready,
                ovc: &mut self.ovc,
                outp: &mut self.outp,
                masks: &mut self.masks,
            };
            part.run(
                &shared,
                &mut self.credit_inbox[0],
                &mut self.inbox[0],
                &mut self.outs[0],
            );
        } else {
            // Each part's ranges: its routers' input positions (and their VCs and slots),
            // output positions (and their VCs) and masks.
            let jb: Vec<usize> = self
                .parts
                .iter()
                .map(|&r| self.f.in_off[r] as usize)
                .collect();
            let kb: Vec<usize> = self
                .parts
                .iter()
                .map(|&r| self.out_off[r] as usize)
                .collect();
            let sb: Vec<usize> = jb
                .iter()
                .map(|&j| self.inp.get(j).map_or(self.buf.len(), |p| p.base as usize))
                .collect();
            let scaled = |b: &[usize]| b.iter().map(|&x| x * v).collect::<Vec<_>>();
            let opt = |b: Vec<usize>, len: usize| if len == 0 { vec![0; b.len()] } else { b };
            let since_b = opt(scaled(&jb), self.since.len());
            let ready_b = opt(sb.clone(), self.ready.len());
            let mut ivc = split_at(&mut self.ivc, &scaled(&jb));
            let mut since = split_at(&mut self.since, &since_b);
            let mut inp = split_at(&mut self.inp, &jb);
            let mut buf = split_at(&mut self.buf, &sb);
            let mut ready = split_at(&mut self.ready, &ready_b);
            let mut ovc = split_at(&mut self.ovc, &scaled(&kb));
            let mut outp = split_at(&mut self.outp, &kb);
            let mut masks = split_at(&mut self.masks, &self.parts);
            let mut parts: Vec<Part> = (0..self.outs.len())
                .rev()
                .map(|p| Part {
                    r0: self.parts[p],
                    r1: self.parts[p + 1],
                    j0: jb[p],
                    k0: kb[p],
                    s0: sb[p],
                    ivc: ivc.pop().unwrap_or_default(),
                    inp: inp.pop().unwrap_or_default(),
                    since: since.pop().unwrap_or_default(),
                    buf: buf.pop().unwrap_or_default(),
                    ready: ready.pop().unwrap_or_default(),
                    ovc: ovc.pop().unwrap_or_default(),
                    outp: outp.pop().unwrap_or_default(),
                    masks: masks.pop().unwrap_or_default(),
                })
                .collect();
            parts.reverse();
            use rayon::prelude::*;
            parts
                .par_iter_mut()
                .zip(self.credit_inbox.par_iter_mut())
                .zip(self.inbox.par_iter_mut())
                .zip(self.outs.par_iter_mut())
                .for_each(|(((part, credits), inbox), out)| part.run(&shared, credits, inbox, out));
        }
        for out in &mut self.outs {
            self.flit_hops += std::mem::take(&mut out.flit_hops);
            self.overflowed += std::mem::take(&mut out.overflowed);
            if std::mem::take(&mut out.progressed) {
                self.last_progress = self.now;
            }
        }
    }

    /// A flit reaching an interface by its ejection channel: the interface takes it at once
    /// and frees its slot, unless its endpoint holds the slot until it accepts the packet; a
    /// tail delivers its packet.
    fn eject(&mut self, a: Arrival) {
        let (c, flit) = (a.to as usize, a.flit);
        let o = self.out_pos[c] as usize * self.f.vcs + usize::from(a.vc);
        self.last_progress = self.now;
        match self.hold_ch.get(c).copied().filter(|&e| e != NONE) {
            Some(e) => self.held[e as usize].push_back((o as u32, flit.tail)),
            None => self.ovc[o].credits += 1,
        }
        self.ejected += 1;
        arrive(
            &mut self.packets,
            &self.routes,
            flit,
            self.now,
            &mut self.misordered,
            &mut self.done,
            &mut self.free_packets,
        );
    }

    fn interfaces(&mut self) {
        let v = self.f.vcs;
        let now = self.now;
        // Endpoints with a queued packet or a packet being sent, 64 to a word.
        for word in 0..self.busy.len() {
            let mut bits = self.busy[word];
            while bits != 0 {
                let e = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.interface(e, v, now);
                let idle = self.queues[e].is_empty()
                    && (0..self.f.ifaces).all(|i| self.ni[e * self.f.ifaces + i].pkt == NONE);
                if idle {
                    self.busy[word] &= !(1 << (e % 64));
                }
            }
        }
    }

    /// Endpoint `e`'s interfaces: each idle one takes the next queued packet onto a free VC of
    /// its injection channel; each busy one sends a flit if it holds a credit.
    fn interface(&mut self, e: usize, v: usize, now: u64) {
        for i in 0..self.f.ifaces {
            let slot = e * self.f.ifaces + i;
            let k = self.out_pos[self.f.injection(e, i)] as usize;
            if self.ni[slot].pkt == NONE {
                let Some(&p) = self.queues[e].front() else {
                    continue;
                };
                let lane = self.packets[p as usize].lane;
                let op = &mut self.outp[k];
                let Some(vc) = pick_from(op.free & lane_mask(all_of(v), lane), op.rr_vc) else {
                    continue;
                };
                op.free &= !(1 << vc);
                op.rr_vc = next_after(vc as u32, v as u32) as u8;
                self.queues[e].pop_front();
                self.queued -= 1;
                self.ovc[k * v + vc].owner = NI_OWNER;
                self.ni[slot] = Interface {
                    pkt: p,
                    seq: 0,
                    vc: vc as u16,
                };
            }
            let ni = self.ni[slot];
            let o = k * v + usize::from(ni.vc);
            if self.ovc[o].credits == 0 || self.outp[k].next_free > now {
                continue;
            }
            let pk = &mut self.packets[ni.pkt as usize];
            if ni.seq == 0 {
                pk.injected = now;
            }
            let tail = ni.seq + 1 == pk.len;
            self.ovc[o].credits -= 1;
            let at = self.clock();
            let op = &mut self.outp[k];
            op.next_free = now + u64::from(op.period);
            let flit = Flit {
                pkt: ni.pkt,
                seq: ni.seq,
                hop: 0,
                tail,
            };
            self.outs[0].send(op, ni.vc, flit, at);
            self.last_progress = now;
            self.injected += 1;
            if tail {
                self.ovc[o].owner = FREE;
                self.outp[k].free |= 1 << ni.vc;
                self.ni[slot].pkt = NONE;
            } else {
                self.ni[slot].seq += 1;
            }
        }
    }

    /// Jump an idle network forward to `cycle` (credits still on their way back land first).
    /// Does nothing unless the network is idle and `cycle` is ahead.
    pub fn skip_to(&mut self, cycle: u64) {
        if !self.is_idle() || cycle <= self.now {
            return;
        }
        for out in &mut self.outs {
            for slot in out.credits_to.iter_mut().chain(&mut out.credits_ni) {
                for o in slot.drain(..) {
                    self.ovc[o as usize].credits += 1;
                }
            }
        }
        self.now = cycle;
        self.last_progress = cycle;
    }

    /// Count every flit: injected, ejected, in buffers, on channels.
    pub fn audit(&self) -> Audit {
        Audit {
            injected: self.injected,
            ejected: self.ejected,
            buffered: self.ivc.iter().map(|x| u64::from(x.len)).sum(),
            on_channels: self.outs.iter().map(Outbox::in_flight).sum(),
            overflowed: self.overflowed,
            misordered: self.misordered,
        }
    }

    /// Every network link's counters.
    pub fn link_stats(&self) -> Vec<LinkStat> {
        (0..self.f.channels())
            .map(|c| {
                let (from, to) = self.f.ends(c);
                LinkStat {
                    channel: c,
                    kind: self.f.kind(c),
                    from,
                    to,
                    flits: self.outp[self.out_pos[c] as usize].flits,
                    blocked_cycles: self.outp[self.out_pos[c] as usize].blocked,
                }
            })
            .collect()
    }

    /// Make endpoint `e` hold the buffer slots of the flits it receives until
    /// [`Noc::accept`] takes their packet: a receiver with a bounded queue (a DRAM bank's
    /// request queue) whose backlog stays in the network, in the VCs it came by, and blocks
    /// what queues behind it there. Packets are still reported delivered on arrival.
    pub fn hold_credits(&mut self, e: usize) {
        if e >= self.f.endpoints {
            return;
        }
        if self.hold_ch.is_empty() {
            self.hold_ch = vec![NONE; self.f.channels()];
            self.held = vec![VecDeque::new(); self.f.endpoints];
        }
        for i in 0..self.f.ifaces {
            self.hold_ch[self.f.ejection(e, i)] = e as u32;
        }
    }

    /// Endpoint `e` (made to hold its credits) takes its oldest held packet: that packet's
    /// buffer slots are freed. False when it holds none.
    pub fn accept(&mut self, e: usize) -> bool {
        let Some(q) = self.held.get_mut(e) else {
            return false;
        };
        if q.is_empty() {
            return false;
        }
        while let Some((idx, tail)) = q.pop_front() {
            self.ovc[idx as usize].credits += 1;
            if tail {
                break;
            }
        }
        self.last_progress = self.now;
        true
    }

    /// Start the link counters again from zero.
    pub fn reset_link_stats(&mut self) {
        for o in &mut self.outp {
            o.flits = 0;
            o.blocked = 0;
        }
    }

    /// The name of input VC `idx` (its channel and VC).
    fn buffer_name(&self, idx: usize) -> String {
        let v = self.f.vcs;
        self.f
            .buffer_name(self.f.in_list[idx / v] as usize, idx % v)
    }

    /// The input VC that buffer `idx` waits on, if it waits on one: the downstream VC it has
    /// no credit for, the holder of the output VC it wants, or (empty but mid-packet) the
    /// upstream VC holding the rest of its packet.
    fn waits_on(&self, idx: usize) -> Option<usize> {
        let v = self.f.vcs;
        let out = self.ivc[idx].out as usize;
        match self.ivc[idx].state {
            WAIT_VC => {
                let c = self.out_list[out] as usize;
                let (lo, _) = self.f.class_range(c, self.ivc[idx].class);
                let o = self.ovc[out * v + lo].owner;
                (o < NI_OWNER).then_some(o as usize)
            }
            ACTIVE if self.ivc[idx].len > 0 => {
                let down = self.outp[out].down;
                (down & TO_INTERFACE == 0)
                    .then_some(down as usize * v + usize::from(self.ivc[idx].ovc))
            }
            ACTIVE => {
                let up = self.inp[idx / v].up as usize;
                let o = self.ovc[up * v + idx % v].owner;
                (o < NI_OWNER).then_some(o as usize)
            }
            _ => None,
        }
    }

    /// A cycle of buffers each waiting on the next, found by following waits from every
    /// occupied buffer; if none closes, the occupied buffers themselves.
    fn waiting_cycle(&self) -> Vec<String> {
        let n = self.ivc.len();
        let mut seen = vec![u32::MAX; n];
        for start in (0..n).filter(|&i| self.ivc[i].len > 0) {
            let mut walk = Vec::new();
            let mut at = start;
            loop {
                if seen[at] == start as u32 {
                    let from = walk.iter().position(|&x| x == at).unwrap_or(0);
                    return walk[from..].iter().map(|&i| self.buffer_name(i)).collect();
                }
                if seen[at] != u32::MAX {
                    break;
                }
                seen[at] = start as u32;
                walk.push(at);
                match self.waits_on(at) {
                    Some(next) => at = next,
                    None => break,
                }
            }
        }
        (0..n)
            .filter(|&i| self.ivc[i].len > 0)
            .take(16)
            .map(|i| self.buffer_name(i))
            .collect()
    }
}

/// Flit `flit` reaching its destination's interface at cycle `now`: a flit out of order
/// within its packet, or a tail whose packet is short, counts in `misordered`; a tail
/// delivers its packet into `done` and frees its number into `free`.
pub(crate) fn arrive(
    packets: &mut [Packet],
    routes: &[Route],
    flit: Flit,
    now: u64,
    misordered: &mut u64,
    done: &mut Vec<Delivered>,
    free: &mut Vec<u32>,
) {
    let p = &mut packets[flit.pkt as usize];
    if p.delivered != flit.seq {
        *misordered += 1;
    }
    p.delivered += 1;
    if flit.tail {
        if p.delivered != p.len {
            *misordered += 1;
        }
        done.push(Delivered {
            tag: p.tag,
            src: NodeId(u64::from(p.src)),
            dst: NodeId(u64::from(p.dst)),
            flits: u32::from(p.len),
            created: p.created,
            injected: p.injected,
            delivered: now,
            hops: u32::from(routes[flit.pkt as usize].path_len),
        });
        free.push(flit.pkt);
    }
}

/// Keep packet `p` and its route under a free number (one a delivered packet left, else a new
/// one) and return the number.
pub(crate) fn store(
    packets: &mut Vec<Packet>,
    routes: &mut Vec<Route>,
    free: &mut Vec<u32>,
    p: Packet,
    route: Route,
) -> u32 {
    match free.pop() {
        Some(id) => {
            packets[id as usize] = p;
            routes[id as usize] = route;
            id
        }
        None => {
            packets.push(p);
            routes.push(route);
            (packets.len() - 1) as u32
        }
    }
}

/// A packet of `flits` flits from endpoint `src` to `dst`, handed over at cycle `now` as
/// number `serial` (which picks among equal-cost paths and ejection interfaces), and its route
/// (`found`: the route, where it was found ahead; see [`Fabric::route_found`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn new_packet(
    f: &mut Fabric,
    now: u64,
    src: usize,
    dst: usize,
    flits: u32,
    tag: u64,
    serial: u64,
    found: Option<&crate::fabric::Found>,
) -> Result<(Packet, Route), NocError> {
    let e = f.endpoints;
    if src >= e || dst >= e {
        return Err(NocError::Route(format!(
            "endpoint {} does not exist (the network has {e})",
            src.max(dst)
        )));
    }
    if flits == 0 || flits > u32::from(u16::MAX) {
        return Err(NocError::Route(format!(
            "a packet has 1 to 65535 flits, got {flits}"
        )));
    }
    let r = f
        .route_found(src as u32, dst as u32, found)
        .map_err(NocError::Route)?;
    let choice = if r.count == 1 {
        0
    } else {
        (serial % u64::from(r.count)) as u32
    };
    let p = Packet {
        src: src as u32,
        dst: dst as u32,
        len: flits as u16,
        delivered: 0,
        created: now,
        injected: 0,
        tag,
        lane: ANY_LANE,
    };
    let route = Route {
        path: r.start + choice * u32::from(r.len),
        path_len: r.len,
        eject: f.ejection(
            dst,
            if f.ifaces == 1 {
                0
            } else {
                (serial % f.ifaces as u64) as usize
            },
        ) as u32,
    };
    Ok((p, route))
}

/// `a - b` modulo `n`, for `a, b < n`.
fn wrap_sub(a: u32, b: u32, n: u32) -> u32 {
    if a >= b { a - b } else { a + n - b }
}

/// The index after `i` modulo `n`, for `i < n`.
fn next_after(i: u32, n: u32) -> u32 {
    if i + 1 >= n { 0 } else { i + 1 }
}

/// Every VC of a port with `v` of them.
fn all_of(v: usize) -> VcMask {
    VcMask::MAX >> (VcMask::BITS as usize - v)
}

/// The lowest set bit of `mask` at or above `from`, else the lowest set bit: a round-robin pick.
fn pick_from(mask: VcMask, from: u8) -> Option<usize> {
    if mask == 0 {
        return None;
    }
    let above = mask & (VcMask::MAX << from);
    Some(if above != 0 { above } else { mask }.trailing_zeros() as usize)
}

/// `n` routers in `parts` parts of sizes differing by at most one: the first router of each
/// part, and `n`.
fn split(n: usize, parts: usize) -> Vec<usize> {
    (0..=parts).map(|k| k * n / parts).collect()
}

/// `s` cut at `bounds` (ascending, the first 0 or the start of the first piece, the last at
/// most `s.len()`): the pieces between consecutive bounds.
pub(crate) fn split_at<'a, T>(mut s: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    let mut pieces = Vec::with_capacity(bounds.len().saturating_sub(1));
    let mut at = bounds.first().copied().unwrap_or(0);
    s = &mut s[at..];
    for &b in &bounds[1..] {
        let (head, tail) = std::mem::take(&mut s).split_at_mut(b - at);
        pieces.push(head);
        s = tail;
        at = b;
    }
    pieces
}

/// Bring input port `p`'s bits in its router's allocator masks `m` up to date.
fn refresh_port(m: &mut Masks, p: &InPort) {
    let bit = 1u64 << p.in_local;
    let va = if p.wait != 0 { bit } else { 0 };
    let sa = if p.active & p.nonempty != 0 { bit } else { 0 };
    m.va = (m.va & !bit) | va;
    m.sa = (m.sa & !bit) | sa;
}

/// Route computation for the head flit now at the front of idle input VC `x`, VC `vc` of
/// its port `p`: it learns its output (the next channel of its path, or its ejection
/// channel, as an output position) and class, and waits for VC allocation. Runs when a head
/// reaches the front: on arrival at an empty buffer, or when the packet ahead of it leaves.
/// `next` is the head's route here, worked out when it arrived ([`Route::word`]). With
/// oldest-first arbitration the caller also records when the packet entered the network
/// (`since`).
fn route_head(x: &mut InVc, p: &mut InPort, vc: usize, next: u32) {
    x.out = next & !(1 << CLASS_SHIFT);
    x.class = (next >> CLASS_SHIFT) as u8;
    x.state = WAIT_VC;
    p.wait |= 1 << vc;
}

impl Part<'_> {
    /// The part's routers take the credits returning now (`credits`) and the flits arriving
    /// now (`inbox`), one list per outbox, then allocate and send into `out`.
    fn run(
        &mut self,
        s: &Shared,
        credits: &mut [Vec<u32>],
        inbox: &mut [Vec<Arrival>],
        out: &mut Outbox,
    ) {
        let first = self.k0 * s.f.vcs;
        for list in credits {
            for o in list.drain(..) {
                self.ovc[o as usize - first].credits += 1;
            }
        }
        for list in inbox {
            for a in list.drain(..) {
                self.receive(s, a, out);
            }
        }
        let (lo, hi) = (self.r0, self.r1);
        for i in lo..hi {
            let r = if s.reverse_visit {
                hi - 1 - (i - lo)
            } else {
                i
            };
            let m = self.masks[r - lo];
            if m.va != 0 {
                self.allocate_vcs(s, r, out);
            }
            if m.va | m.sa != 0 && self.masks[r - lo].sa != 0 {
                self.allocate_switch(s, r, out);
            }
        }
    }

    /// A flit reaching a router's input buffer; a head at the front learns its route.
    fn receive(&mut self, s: &Shared, a: Arrival, out: &mut Outbox) {
        let v = s.f.vcs;
        let jl = a.to as usize - self.j0;
        let vc = usize::from(a.vc);
        out.progressed = true;
        let p = &mut self.inp[jl];
        let depth = usize::from(p.depth);
        let x = &mut self.ivc[jl * v + vc];
        let len = usize::from(x.len);
        if len == depth {
            out.overflowed += 1;
            return;
        }
        x.len += 1;
        if len > 0 || !self.ready.is_empty() {
            // The flit's slot (the front's own, when it is the front).
            let pos = usize::from(x.head) + len;
            let at = p.base as usize - self.s0
                + vc * depth
                + if pos >= depth { pos - depth } else { pos };
            if len > 0 {
                self.buf[at] = a.flit;
            }
            if let Some(r) = self.ready.get_mut(at) {
                *r = s.at.now + s.stages - 1;
            }
        }
        p.nonempty |= 1 << vc;
        // The port's allocator bits can only be set here: switch allocation's when the VC
        // holds an output VC (it has a flit now), VC allocation's when a head is routed.
        let m = &mut self.masks[p.dst as usize - self.r0];
        let bit = 1u64 << p.in_local;
        if x.state == ACTIVE {
            m.sa |= bit;
        }
        if len == 0 {
            x.front = a.flit;
            if x.state == IDLE {
                route_head(x, p, vc, s.next_of(a.flit));
                m.va |= bit;
                if !self.since.is_empty() {
                    self.since[jl * v + vc] = s.packets[a.flit.pkt as usize].injected;
                }
            }
        }
    }

    /// VC allocation: requests for the same output and class are ordered by the arbitration
    /// (round-robin from the last winner, or oldest first), and the free VCs of that class,
    /// taken round-robin from the last one granted, go to them in that order.
    fn allocate_vcs(&mut self, s: &Shared, r: usize, out: &mut Outbox) {
        let v = s.f.vcs;
        let (a, b) = (s.f.in_off[r] as usize, s.f.in_off[r + 1] as usize);
        let nloc = ((b - a) * v) as u32;
        let ports = self.masks[r - self.r0].va;
        if ports & (ports - 1) == 0 && s.fast_paths {
            // One input port waits: if one VC of it waits, there is nothing to arbitrate.
            let j = a + ports.trailing_zeros() as usize;
            let m = self.inp[j - self.j0].wait;
            if m & (m - 1) == 0 {
                let vc = m.trailing_zeros() as usize;
                let x = self.ivc[(j - self.j0) * v + vc];
                self.grant_vc(s, j, vc, x.out as usize, x.class, nloc);
                return;
            }
        }
        if s.arbitration == Arbitration::RoundRobin {
            self.allocate_vcs_rr(s, r, a, nloc, out);
            return;
        }
        let mut reqs = std::mem::take(&mut out.va_reqs);
        reqs.clear();
        let mut ports = ports;
        while ports != 0 {
            let j = a + ports.trailing_zeros() as usize;
            ports &= ports - 1;
            let mut m = self.inp[j - self.j0].wait;
            while m != 0 {
                let vc = m.trailing_zeros() as usize;
                m &= m - 1;
                let idx = (j - self.j0) * v + vc;
                let x = self.ivc[idx];
                let rr = self.outp[x.out as usize - self.k0].rr_va;
                let local = ((j - a) * v + vc) as u32;
                let dist = wrap_sub(local, u32::from(rr), nloc);
                let age = match s.arbitration {
                    Arbitration::RoundRobin => 0,
                    Arbitration::Fcfs => self.since[idx],
                };
                reqs.push((x.out, x.class, age, dist, j as u32, vc as u16));
            }
        }
        if reqs.len() > 1 {
            reqs.sort_unstable();
        }
        // Requests come in arbitration order, so earlier ones take the VCs first.
        for &(o, class, _, _, j, vc) in &reqs {
            self.grant_vc(s, j as usize, usize::from(vc), o as usize, class, nloc);
        }
        out.va_reqs = reqs;
    }

    /// [`Part::allocate_vcs`] by round-robin: each request is one word that sorts as the
    /// request's (output, class, distance from the round-robin pointer), above the input's
    /// position; no two requests of a router tie (their distances differ), so the order is the
    /// one the tuples of the general case give.
    fn allocate_vcs_rr(&mut self, s: &Shared, r: usize, a: usize, nloc: u32, out: &mut Outbox) {
        let v = s.f.vcs;
        let mut keys = std::mem::take(&mut out.va_keys);
        keys.clear();
        let mut ports = self.masks[r - self.r0].va;
        while ports != 0 {
            let j = ports.trailing_zeros() as usize;
            ports &= ports - 1;
            let mut m = self.inp[a + j - self.j0].wait;
            while m != 0 {
                let vc = m.trailing_zeros() as usize;
                m &= m - 1;
                let x = self.ivc[(a + j - self.j0) * v + vc];
                let rr = self.outp[x.out as usize - self.k0].rr_va;
                let local = (j * v + vc) as u32;
                let dist = wrap_sub(local, u32::from(rr), nloc);
                // Output positions are below 2^26, classes 0 or 1, distances below
                // 64 x 32 = 2^11; the input takes 6 + 5 bits.
                keys.push(
                    u64::from(x.out) << 23
                        | u64::from(x.class) << 22
                        | u64::from(dist) << 11
                        | (j as u64) << 5
                        | vc as u64,
                );
            }
        }
        if let [x, y] = keys[..]
            && s.fast_paths
        {
            // Two requests (the common case under load): ordered without a sort.
            keys[0] = x.min(y);
            keys[1] = x.max(y);
        } else {
            keys.sort_unstable();
        }
        // Requests come in arbitration order, so earlier ones take the VCs first.
        for &k in &keys {
            let j = a + (k >> 5 & 63) as usize;
            let vc = (k & 31) as usize;
            let class = (k >> 22 & 1) as u8;
            self.grant_vc(s, j, vc, (k >> 23) as usize, class, nloc);
        }
        out.va_keys = keys;
    }

    /// Give input VC `vc` of input position `j` the next free VC of `class` on output
    /// position `o`, round-robin from the last one granted, if there is one.
    fn grant_vc(&mut self, s: &Shared, j: usize, vc: usize, o: usize, class: u8, nloc: u32) {
        let v = s.f.vcs;
        let jl = j - self.j0;
        let x = &mut self.ivc[jl * v + vc];
        let lane = if s.lanes {
            s.packets[x.front.pkt as usize].lane
        } else {
            ANY_LANE
        };
        let op = &mut self.outp[o - self.k0];
        let allowed = lane_mask(op.class_vcs[usize::from(class)], lane);
        let Some(ov) = pick_from(op.free & allowed, op.rr_vc) else {
            return;
        };
        self.ovc[(o - self.k0) * v + ov].owner = (j * v + vc) as u32;
        x.ovc = ov as u16;
        x.state = ACTIVE;
        let p = &mut self.inp[jl];
        p.wait &= !(1 << vc);
        p.active |= 1 << vc;
        let local = u32::from(p.in_local) * v as u32 + vc as u32;
        // The VC holds an output VC and its head is at the front: the port requests the
        // switch; it leaves VC allocation when no other VC of it waits.
        let m = &mut self.masks[p.dst as usize - self.r0];
        let bit = 1u64 << p.in_local;
        m.sa |= bit;
        if p.wait == 0 {
            m.va &= !bit;
        }
        op.free &= !(1 << ov);
        op.rr_va = next_after(local, nloc) as u16;
        op.rr_vc = next_after(ov as u32, v as u32) as u8;
    }

    /// Switch allocation, separable input-first: each input port picks one of its VCs whose
    /// front flit is ready, has a credit downstream and whose output is free this cycle
    /// (round-robin from the last winner, or oldest flit first); each output then grants one of
    /// the inputs that picked it by the same arbitration. Winners cross the switch.
    fn allocate_switch(&mut self, s: &Shared, r: usize, out: &mut Outbox) {
        let v = s.f.vcs;
        let now = s.at.now;
        let fcfs = s.arbitration == Arbitration::Fcfs;
        let (a, b) = (s.f.in_off[r] as usize, s.f.in_off[r + 1] as usize);
        let nin = (b - a) as u32;
        let mut reqs = std::mem::take(&mut out.sa_reqs);
        reqs.clear();
        let mut ports = self.masks[r - self.r0].sa;
        while ports != 0 {
            let j = a + ports.trailing_zeros() as usize;
            ports &= ports - 1;
            let jl = j - self.j0;
            let p = self.inp[jl];
            let m = p.active & p.nonempty;
            // VCs from the round-robin pointer up, then from 0 below it.
            let above = m & (VcMask::MAX << p.rr_in);
            let mut pick: Option<(u64, usize, usize)> = None;
            'parts: for mut part in [above, m & !above] {
                while part != 0 {
                    let vc = part.trailing_zeros() as usize;
                    part &= part - 1;
                    let x = self.ivc[jl * v + vc];
                    // A flit is ready S - 1 cycles after it arrived (at once with S = 1).
                    if !self.ready.is_empty() {
                        let slot =
                            p.base as usize + vc * usize::from(p.depth) + usize::from(x.head);
                        if self.ready[slot - self.s0] > now {
                            continue;
                        }
                    }
                    let ol = x.out as usize - self.k0;
                    let op = &mut self.outp[ol];
                    if self.ovc[ol * v + usize::from(x.ovc)].credits == 0 {
                        if op.blocked_at != now {
                            op.blocked_at = now;
                            op.blocked += 1;
                        }
                        continue;
                    }
                    if op.next_free > now {
                        continue;
                    }
                    let key = if fcfs {
                        s.packets[x.front.pkt as usize].injected
                    } else {
                        0
                    };
                    if pick.is_none_or(|(best, ..)| key < best) {
                        pick = Some((key, vc, ol));
                        if !fcfs {
                            break 'parts;
                        }
                    }
                }
            }
            if let Some((key, vc, ol)) = pick {
                let local = (j - a) as u32;
                let op = &mut self.outp[ol];
                let dist = wrap_sub(local, u32::from(op.rr_out), nin);
                let key = (key << 20) | u64::from(dist);
                op.sa_key = op.sa_key.min(key);
                reqs.push((ol as u32, key, j as u32, vc as u16));
            }
        }
        // Keys of one output differ (their distances do), so each output has one winner, which
        // clears the output's best key: no key is u64::MAX, so no later request matches it.
        for &(ol, key, j, vc) in &reqs {
            let op = &mut self.outp[ol as usize];
            if op.sa_key == key {
                op.sa_key = u64::MAX;
                self.traverse(s, j as usize, usize::from(vc), nin, out);
            }
        }
        out.sa_reqs = reqs;
    }

    /// The front flit of VC `vc` of input position `j` crosses the switch to its output VC.
    fn traverse(&mut self, s: &Shared, j: usize, vc: usize, nin: u32, out: &mut Outbox) {
        let v = s.f.vcs;
        let now = s.at.now;
        let jl = j - self.j0;
        let p = &mut self.inp[jl];
        let depth = usize::from(p.depth);
        let x = &mut self.ivc[jl * v + vc];
        let (ol, ov, flit) = (x.out as usize - self.k0, usize::from(x.ovc), x.front);
        let mut head = usize::from(x.head) + 1;
        if head == depth {
            head = 0;
        }
        x.head = head as u16;
        x.len -= 1;
        let left = x.len;
        if left > 0 {
            x.front = self.buf[p.base as usize - self.s0 + vc * depth + head];
        }
        if flit.tail {
            x.state = IDLE;
        }
        let d = &mut self.ovc[ol * v + ov];
        d.credits -= 1;
        if flit.tail {
            d.owner = FREE;
        }
        let op = &mut self.outp[ol];
        op.next_free = now + u64::from(op.period);
        op.rr_out = next_after(u32::from(p.in_local), nin) as u8;
        if flit.tail {
            op.free |= 1 << ov;
        }
        let link = op.down & TO_INTERFACE == 0;
        out.flit_hops += u64::from(link);
        let crossed = Flit {
            hop: flit.hop + u16::from(link),
            ..flit
        };
        out.send(op, ov as u16, crossed, s.at);
        // The freed slot's credit goes back upstream, one channel latency away.
        let due = s.at.slot_after(u32::from(p.latency));
        let credit = p.up * v as u32 + vc as u32;
        if p.up_part == TO_NI {
            out.credits_ni[due].push(credit);
        } else {
            out.credits_to[usize::from(p.up_part) * s.at.wheel + due].push(credit);
        }
        p.rr_in = next_after(vc as u32, v as u32) as u8;
        if left == 0 {
            p.nonempty &= !(1 << vc);
        }
        if flit.tail {
            p.active &= !(1 << vc);
            if left > 0 {
                // The next packet's head is at the front now.
                let pkt = x.front.pkt as usize;
                route_head(x, p, vc, s.next_of(x.front));
                if !self.since.is_empty() {
                    self.since[jl * v + vc] = s.packets[pkt].injected;
                }
            }
        }
        refresh_port(&mut self.masks[p.dst as usize - self.r0], p);
    }
}
