//! The cycle engine: routers, network interfaces, channels, credits and the watchdog.
//!
//! State is kept in flat vectors indexed by channel or by (channel, VC), so one simulation is
//! one value with no globals; many can run side by side.

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

#[derive(Debug, Clone, Copy, Default)]
struct Flit {
    pkt: u32,
    seq: u16,
    tail: bool,
}

#[derive(Debug, Clone, Copy)]
struct Arrival {
    ch: u32,
    vc: u16,
    flit: Flit,
    /// For a head flit coming to a router, its route there (a path word, see [`Packet::next`]).
    next: u32,
}

/// One cache line, so a hop reads its route from one line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
struct Packet {
    src: u32,
    dst: u32,
    len: u16,
    delivered: u16,
    path: u32,
    path_len: u16,
    hop: u16,
    eject: u32,
    created: u64,
    injected: u64,
    tag: u64,
    /// The VC lane the packet is held to ([`ANY_LANE`]: any free VC of its class).
    lane: u16,
    /// The route of its head at the router it is heading to or waiting in: the output channel,
    /// with the VC class in the top bit. Worked out (and `hop` advanced) when the head leaves
    /// the router before, so the route computation does not wait on the path's memory; the
    /// head's flit carries a copy.
    next: u32,
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
    // Flit slots of every input VC, and the cycle each slot's flit becomes ready (kept only
    // when it matters: a pipeline over one stage, or oldest-first arbitration); input VCs and
    // output VCs, index c * V + v; channels.
    buf: Vec<Flit>,
    ready: Vec<u64>,
    ivc: Vec<InVc>,
    /// Per input VC, when its front packet entered the network (kept only for oldest-first
    /// arbitration, which ranks by it).
    since: Vec<u64>,
    port: Vec<Port>,
    // Per router, one bit per input port: VCs waiting for VC allocation; VCs holding an output
    // VC with a flit buffered.
    masks: Vec<Masks>,
    ch_flits: Vec<u64>,
    ch_blocked: Vec<u64>,
    ch_blocked_at: Vec<u64>,
    /// The first ejection channel (channels from here on lead to interfaces).
    first_ejection: usize,
    // Channel pipelines as timing wheels. `arrive` holds two wheels: flits for routers in
    // slots 0..wheel, flits for interfaces (on ejection channels) in slots wheel..2 wheel, so
    // each kind is received by its own loop; within a kind, flits keep the order they were sent.
    wheel: usize,
    slot: usize,
    arrive: Vec<Vec<Arrival>>,
    credit_back: Vec<Vec<u32>>,
    // Packets and interfaces.
    packets: Vec<Packet>,
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
    // endpoint, the buffer slots (VC index, tail) its ejected flits still occupy, oldest first.
    hold_ch: Vec<u32>,
    held: Vec<VecDeque<(u32, bool)>>,
    // Scratch.
    va_reqs: Vec<(u32, u8, u64, u32, u32, u16)>,
    va_keys: Vec<u64>,
    /// Visit routers last to first (tests use it to show the order does not matter).
    pub(crate) reverse_visit: bool,
    /// Take the VC allocator's shortcuts for a lone request (one VC waiting) and for two
    /// requests (ordered without a sort); tests clear it to check that the general paths
    /// decide the same.
    pub(crate) fast_paths: bool,
    sa_reqs: Vec<(u32, u64, u32, u16)>,
}

/// A VC of a channel, both ends of it: at the downstream router, the input VC's FIFO of flits
/// (`len` from `head` in its port's slots) and the state of the packet at its front; at the
/// upstream router, the output VC's credits and holder. Kept in one half cache line, which a
/// flit's hop touches from both sides in turn. The front flit is kept here, not in its slot:
/// a flit that reaches an empty VC is never written to the slots, and one that queues behind
/// another is copied here when it reaches the front, so a hop through an uncongested router
/// touches no slot at all.
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
    /// The output channel its front packet leaves by (valid when waiting or active).
    out: u32,
    /// Upstream: credits for this buffer, and the input VC holding this VC (`FREE` if none,
    /// `NI_OWNER` for an interface).
    credits: u32,
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

/// A channel: its downstream input port's VC masks and arbiters, and its upstream output
/// port's state; one cache line, so a flit's visit to a port touches one line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
struct Port {
    /// First cycle the channel can take another flit.
    next_free: u64,
    /// The best switch request for this output this cycle (`u64::MAX`: none).
    sa_key: u64,
    /// VCs with flits; waiting for VC allocation; holding an output VC.
    nonempty: VcMask,
    wait: VcMask,
    active: VcMask,
    /// Output VCs nobody holds, and the VCs each class may use.
    free: VcMask,
    class_vcs: [VcMask; 2],
    /// Its downstream router.
    dst: u32,
    /// Latency and cycles per flit.
    latency: u16,
    period: u16,
    /// Buffer depth of each of its VCs.
    depth: u16,
    /// Round-robin pointers: input port (switch), requester (VC allocation), input VC
    /// (switch), output VC (VC allocation).
    rr_out: u16,
    rr_va: u16,
    rr_in: u8,
    rr_vc: u8,
    /// Its position among its downstream router's input ports.
    in_local: u8,
    /// The first of its buffer slots: VC `v`'s are `depth` slots from `base + v * depth`.
    base: u32,
}

// A port is one cache line, an input VC half of one.
const _: () = assert!(std::mem::size_of::<Port>() == 64 && std::mem::size_of::<InVc>() == 32);

impl Noc {
    /// A network of idle routers for `net`, routed by `routing`, built to `cfg`.
    pub fn new(net: &Network, routing: NocRouting, cfg: &RouterConfig) -> Result<Self, NocError> {
        let f = Fabric::new(net, routing, cfg)?;
        let ch = f.channels();
        let v = f.vcs;
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
        let mut buf_base = Vec::with_capacity(ch * v);
        let mut total = 0u64;
        for &d in &depth {
            for _ in 0..v {
                buf_base.push(total as u32);
                total += u64::from(d);
            }
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
        let ivc: Vec<InVc> = buf_base
            .iter()
            .enumerate()
            .map(|(i, _)| InVc {
                front: Flit::default(),
                head: 0,
                len: 0,
                state: IDLE,
                class: 0,
                ovc: 0,
                out: 0,
                credits: depth[i / v],
                owner: FREE,
            })
            .collect();
        let all_vcs = VcMask::MAX >> (VcMask::BITS as usize - v);
        let port: Vec<Port> = depth
            .iter()
            .enumerate()
            .map(|(c, &depth)| Port {
                depth: depth as u16,
                free: all_vcs,
                class_vcs: [0u8, 1].map(|k| {
                    let (lo, hi) = f.class_range(c, k);
                    (all_vcs >> lo) << lo & (all_vcs >> (v - hi))
                }),
                dst: f.ch_dst[c],
                in_local: f.ch_in_local[c] as u8,
                latency: f.ch_latency[c] as u16,
                period: f.ch_period[c] as u16,
                sa_key: u64::MAX,
                base: buf_base[c * v],
                ..Port::default()
            })
            .collect();
        let wheel = f.ch_latency.iter().copied().max().unwrap_or(1) as usize + 1;
        let ifaces = f.endpoints * f.ifaces;
        Ok(Noc {
            stages: u64::from(cfg.pipeline_stages),
            arbitration: cfg.arbitration,
            watchdog: cfg.watchdog_cycles,
            now: 0,
            buf: vec![Flit::default(); total as usize],
            ready: if cfg.pipeline_stages > 1 || cfg.arbitration == Arbitration::Fcfs {
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
            port,
            masks: vec![Masks::default(); f.nodes],
            ch_flits: vec![0; ch],
            ch_blocked: vec![0; ch],
            ch_blocked_at: vec![u64::MAX; ch],
            first_ejection: f.links + f.endpoints * f.ifaces,
            wheel,
            slot: 0,
            arrive: vec![Vec::new(); 2 * wheel],
            credit_back: vec![Vec::new(); wheel],
            packets: Vec::new(),
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
            va_reqs: Vec::new(),
            va_keys: Vec::new(),
            reverse_visit: false,
            fast_paths: true,
            sa_reqs: Vec::new(),
            f,
        })
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
        // Per channel: the port, three counters, five fabric tables of u32 and the input list.
        let per_channel = size_of::<Port>() as u64 + 3 * 8 + 6 * 4;
        let per_router = size_of::<Masks>() as u64 + 2 * 4;
        let per_endpoint =
            size_of::<VecDeque<u32>>() as u64 + f.ifaces as u64 * size_of::<Interface>() as u64;
        slots
            .saturating_mul(per_slot)
            .saturating_add(vcs.saturating_mul(size_of::<InVc>() as u64 + 4))
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
        let e = self.f.endpoints;
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
        let r = self
            .f
            .route(src as u32, dst as u32)
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
            path: r.start + choice * u32::from(r.len),
            path_len: r.len,
            hop: 0,
            eject: self.f.ejection(
                dst,
                if self.f.ifaces == 1 {
                    0
                } else {
                    (serial % self.f.ifaces as u64) as usize
                },
            ) as u32,
            created: self.now,
            injected: 0,
            tag,
            lane: ANY_LANE,
            next: 0,
        };
        self.serial = serial + 1;
        let id = match self.free_packets.pop() {
            Some(id) => {
                self.packets[id as usize] = p;
                id
            }
            None => {
                self.packets.push(p);
                (self.packets.len() - 1) as u32
            }
        };
        self.queues[src].push_back(id);
        self.busy[src / 64] |= 1 << (src % 64);
        self.queued += 1;
        Ok(())
    }

    /// Packets delivered since the last call, in delivery order.
    pub fn take_delivered(&mut self, out: &mut Vec<Delivered>) {
        out.append(&mut self.done);
    }

    /// Run one cycle: read (arrivals and credits due now), evaluate (interfaces, then every
    /// router's route computation, VC allocation and switch allocation on the state read) and
    /// write (flits and credits into channel pipelines, due one latency later). Nothing written
    /// in a cycle is read in the same cycle, so the order routers are visited in cannot matter.
    pub fn step(&mut self) -> Result<(), SimError> {
        let now = self.now;
        let slot = (now % self.wheel as u64) as usize;
        self.slot = slot;
        let mut arrivals = std::mem::take(&mut self.arrive[slot]);
        for a in arrivals.drain(..) {
            self.receive(a);
        }
        self.arrive[slot] = arrivals;
        let done_before = self.done.len();
        let mut arrivals = std::mem::take(&mut self.arrive[self.wheel + slot]);
        for a in arrivals.drain(..) {
            self.eject(a);
        }
        self.arrive[self.wheel + slot] = arrivals;
        // Tails arrive in the order their routers were visited; report them in a fixed order.
        self.done[done_before..].sort_unstable_by_key(|d| (d.dst, d.src, d.created, d.tag));
        let mut credits = std::mem::take(&mut self.credit_back[slot]);
        for o in credits.drain(..) {
            self.ivc[o as usize].credits += 1;
        }
        self.credit_back[slot] = credits;
        self.interfaces();
        for i in 0..self.f.nodes {
            let r = if self.reverse_visit {
                self.f.nodes - 1 - i
            } else {
                i
            };
            let m = self.masks[r];
            if m.va != 0 {
                self.allocate_vcs(r);
            }
            if m.va | m.sa != 0 && self.masks[r].sa != 0 {
                self.allocate_switch(r);
            }
        }
        if self.injected > self.ejected && now.saturating_sub(self.last_progress) >= self.watchdog {
            return Err(SimError::Deadlock {
                at: SimTime::from_ps(now.saturating_mul(self.f.cycle.as_ps())),
                waiting: self.waiting_cycle(),
            });
        }
        self.now += 1;
        Ok(())
    }

    /// A flit reaching a router's input buffer.
    fn receive(&mut self, a: Arrival) {
        let c = a.ch as usize;
        let v = usize::from(a.vc);
        let idx = c * self.f.vcs + v;
        self.last_progress = self.now;
        let p = &mut self.port[c];
        let depth = usize::from(p.depth);
        let x = &mut self.ivc[idx];
        let len = usize::from(x.len);
        if len == depth {
            self.overflowed += 1;
            return;
        }
        x.len += 1;
        if len > 0 || !self.ready.is_empty() {
            // The flit's slot (the front's own, when it is the front).
            let pos = usize::from(x.head) + len;
            let at = p.base as usize + v * depth + if pos >= depth { pos - depth } else { pos };
            if len > 0 {
                self.buf[at] = a.flit;
            }
            if let Some(r) = self.ready.get_mut(at) {
                *r = self.now + self.stages - 1;
            }
        }
        p.nonempty |= 1 << v;
        if len == 0 {
            x.front = a.flit;
            if x.state == IDLE {
                Self::route_head(x, p, v, a.next);
                if !self.since.is_empty() {
                    self.since[idx] = self.packets[a.flit.pkt as usize].injected;
                }
            }
        }
        Self::refresh_port(&mut self.masks, p);
    }

    /// A flit reaching an interface by its ejection channel: the interface takes it at once
    /// and frees its slot, unless its endpoint holds the slot until it accepts the packet; a
    /// tail delivers its packet.
    fn eject(&mut self, a: Arrival) {
        let (c, flit) = (a.ch as usize, a.flit);
        let idx = c * self.f.vcs + usize::from(a.vc);
        self.last_progress = self.now;
        match self.hold_ch.get(c).copied().filter(|&e| e != NONE) {
            Some(e) => self.held[e as usize].push_back((idx as u32, flit.tail)),
            None => self.ivc[idx].credits += 1,
        }
        self.ejected += 1;
        let p = &mut self.packets[flit.pkt as usize];
        if p.delivered != flit.seq {
            self.misordered += 1;
        }
        p.delivered += 1;
        if flit.tail {
            if p.delivered != p.len {
                self.misordered += 1;
            }
            self.done.push(Delivered {
                tag: p.tag,
                src: NodeId(u64::from(p.src)),
                dst: NodeId(u64::from(p.dst)),
                flits: u32::from(p.len),
                created: p.created,
                injected: p.injected,
                delivered: self.now,
                hops: u32::from(p.path_len),
            });
            self.free_packets.push(flit.pkt);
        }
    }

    /// Bring input port `p`'s bits in its router's allocator masks up to date.
    fn refresh_port(masks: &mut [Masks], p: &Port) {
        let bit = 1u64 << p.in_local;
        let va = if p.wait != 0 { bit } else { 0 };
        let sa = if p.active & p.nonempty != 0 { bit } else { 0 };
        let m = &mut masks[p.dst as usize];
        m.va = (m.va & !bit) | va;
        m.sa = (m.sa & !bit) | sa;
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
            let c = self.f.links + slot;
            if self.ni[slot].pkt == NONE {
                let Some(&p) = self.queues[e].front() else {
                    continue;
                };
                let lane = self.packets[p as usize].lane;
                let Some(vc) = pick_from(
                    self.port[c].free & lane_mask(all_of(v), lane),
                    self.port[c].rr_vc,
                ) else {
                    continue;
                };
                self.queues[e].pop_front();
                self.queued -= 1;
                self.ivc[c * v + vc].owner = NI_OWNER;
                self.port[c].free &= !(1 << vc);
                self.port[c].rr_vc = next_after(vc as u32, v as u32) as u8;
                self.ni[slot] = Interface {
                    pkt: p,
                    seq: 0,
                    vc: vc as u16,
                };
            }
            let ni = self.ni[slot];
            let o = c * v + usize::from(ni.vc);
            if self.ivc[o].credits == 0 || self.port[c].next_free > now {
                continue;
            }
            let pk = &mut self.packets[ni.pkt as usize];
            if ni.seq == 0 {
                pk.injected = now;
            }
            let tail = ni.seq + 1 == pk.len;
            self.ivc[o].credits -= 1;
            self.port[c].next_free = now + u64::from(self.port[c].period);
            let next = if ni.seq == 0 { self.advance(ni.pkt) } else { 0 };
            self.send(
                c,
                ni.vc,
                Flit {
                    pkt: ni.pkt,
                    seq: ni.seq,
                    tail,
                },
                next,
            );
            self.injected += 1;
            if tail {
                self.ivc[o].owner = FREE;
                self.port[c].free |= 1 << ni.vc;
                self.ni[slot].pkt = NONE;
            } else {
                self.ni[slot].seq += 1;
            }
        }
    }

    /// Put a flit on channel `c`, VC `vc`, due at its far end one latency from now.
    fn send(&mut self, c: usize, vc: u16, flit: Flit, next: u32) {
        let to_interface = usize::from(c >= self.first_ejection);
        let due = self.slot_after(u32::from(self.port[c].latency)) + to_interface * self.wheel;
        self.arrive[due].push(Arrival {
            ch: c as u32,
            vc,
            flit,
            next,
        });
        self.ch_flits[c] += 1;
        self.last_progress = self.now;
    }

    /// The wheel slot `lat` cycles from now (`lat` is below the wheel's size).
    fn slot_after(&self, lat: u32) -> usize {
        let s = self.slot + lat as usize;
        if s >= self.wheel { s - self.wheel } else { s }
    }

    /// The route of packet `pkt`'s head at the next router on its way: the next link of its
    /// path, or at the last router its ejection channel (class 0), as a path word; kept in the
    /// packet too, for a head that queues behind another packet there.
    /// At the last router (or past it: a head leaving for its interface) the packet stays on
    /// its ejection channel. Written without a branch on which case it is: the path word is
    /// read either way (the last one's, at the end) and the choice made on the values.
    fn advance(&mut self, pkt: u32) -> u32 {
        let p = &mut self.packets[pkt as usize];
        let more = p.hop < p.path_len;
        let i = (p.path + u32::from(p.hop)).wrapping_sub(u32::from(!more));
        let word = self.f.arena.get(i as usize).copied().unwrap_or(0);
        p.next = if more { word } else { p.eject };
        p.hop += u16::from(more);
        p.next
    }

    /// The slot of the front flit of VC `vc` of input `c`.
    fn front_slot(&self, c: usize, vc: usize) -> usize {
        let p = &self.port[c];
        let idx = c * self.f.vcs + vc;
        p.base as usize + vc * usize::from(p.depth) + usize::from(self.ivc[idx].head)
    }

    fn front(&self, idx: usize) -> Flit {
        self.ivc[idx].front
    }

    /// Route computation for the head flit now at the front of idle input VC `x`, VC `vc` of
    /// its port `p`: it learns its output (the next link of its path, or its ejection channel)
    /// and class, and waits for VC allocation. Runs when a head reaches the front: on arrival
    /// at an empty buffer, or when the packet ahead of it leaves. `next` is the head's route
    /// here, worked out when it left the router before ([`Noc::advance`]). With oldest-first
    /// arbitration the caller also records when the packet entered the network (`since`).
    fn route_head(x: &mut InVc, p: &mut Port, vc: usize, next: u32) {
        x.out = next & !(1 << CLASS_SHIFT);
        x.class = (next >> CLASS_SHIFT) as u8;
        x.state = WAIT_VC;
        p.wait |= 1 << vc;
    }

    /// VC allocation: requests for the same output and class are ordered by the arbitration
    /// (round-robin from the last winner, or oldest first), and the free VCs of that class,
    /// taken round-robin from the last one granted, go to them in that order.
    fn allocate_vcs(&mut self, r: usize) {
        let v = self.f.vcs;
        let (a, b) = (self.f.in_off[r] as usize, self.f.in_off[r + 1] as usize);
        let nloc = ((b - a) * v) as u32;
        let ports = self.masks[r].va;
        if ports & (ports - 1) == 0 && self.fast_paths {
            // One input port waits: if one VC of it waits, there is nothing to arbitrate.
            let c = self.f.in_list[a + ports.trailing_zeros() as usize] as usize;
            let m = self.port[c].wait;
            if m & (m - 1) == 0 {
                let vc = m.trailing_zeros() as usize;
                let idx = c * v + vc;
                self.grant_vc(c, vc, self.ivc[idx].out as usize, self.ivc[idx].class, nloc);
                return;
            }
        }
        if self.arbitration == Arbitration::RoundRobin {
            self.allocate_vcs_rr(r, a, nloc);
            return;
        }
        let mut reqs = std::mem::take(&mut self.va_reqs);
        reqs.clear();
        let mut ports = ports;
        while ports != 0 {
            let j = a + ports.trailing_zeros() as usize;
            ports &= ports - 1;
            let c = self.f.in_list[j] as usize;
            let mut m = self.port[c].wait;
            while m != 0 {
                let vc = m.trailing_zeros() as usize;
                m &= m - 1;
                let idx = c * v + vc;
                let out = self.ivc[idx].out;
                let local = ((j - a) * v + vc) as u32;
                let dist = wrap_sub(local, u32::from(self.port[out as usize].rr_va), nloc);
                let age = match self.arbitration {
                    Arbitration::RoundRobin => 0,
                    Arbitration::Fcfs => self.since[idx],
                };
                reqs.push((out, self.ivc[idx].class, age, dist, c as u32, vc as u16));
            }
        }
        if reqs.is_empty() {
            self.va_reqs = reqs;
            return;
        }
        if reqs.len() > 1 {
            reqs.sort_unstable();
        }
        // Requests come in arbitration order, so earlier ones take the VCs first.
        for &(out, class, _, _, c, vc) in &reqs {
            self.grant_vc(c as usize, usize::from(vc), out as usize, class, nloc);
        }
        self.va_reqs = reqs;
    }

    /// [`Noc::allocate_vcs`] by round-robin: each request is one word that sorts as the
    /// request's (output, class, distance from the round-robin pointer), above the input's
    /// position; no two requests of a router tie (their distances differ), so the order is the
    /// one the tuples of the general case give.
    fn allocate_vcs_rr(&mut self, r: usize, a: usize, nloc: u32) {
        let v = self.f.vcs;
        let mut keys = std::mem::take(&mut self.va_keys);
        keys.clear();
        let mut ports = self.masks[r].va;
        while ports != 0 {
            let j = ports.trailing_zeros() as usize;
            ports &= ports - 1;
            let c = self.f.in_list[a + j] as usize;
            let mut m = self.port[c].wait;
            while m != 0 {
                let vc = m.trailing_zeros() as usize;
                m &= m - 1;
                let x = &self.ivc[c * v + vc];
                let out = u64::from(x.out);
                let local = (j * v + vc) as u32;
                let dist = wrap_sub(local, u32::from(self.port[out as usize].rr_va), nloc);
                // Channels are below 2^26, classes 0 or 1, distances below 64 x 32 = 2^11;
                // the input takes 6 + 5 bits.
                keys.push(
                    out << 23
                        | u64::from(x.class) << 22
                        | u64::from(dist) << 11
                        | (j as u64) << 5
                        | vc as u64,
                );
            }
        }
        if let [x, y] = keys[..]
            && self.fast_paths
        {
            // Two requests (the common case under load): ordered without a sort.
            keys[0] = x.min(y);
            keys[1] = x.max(y);
        } else {
            keys.sort_unstable();
        }
        // Requests come in arbitration order, so earlier ones take the VCs first.
        for &k in &keys {
            let c = self.f.in_list[a + (k >> 5 & 63) as usize] as usize;
            let vc = (k & 31) as usize;
            let class = (k >> 22 & 1) as u8;
            self.grant_vc(c, vc, (k >> 23) as usize, class, nloc);
        }
        self.va_keys = keys;
    }

    /// Give input VC `vc` of port `c` the next free VC of `class` on output `out`, round-robin
    /// from the last one granted, if there is one.
    fn grant_vc(&mut self, c: usize, vc: usize, out: usize, class: u8, nloc: u32) {
        let v = self.f.vcs;
        let idx = c * v + vc;
        let lane = if self.lanes {
            self.packets[self.front(idx).pkt as usize].lane
        } else {
            ANY_LANE
        };
        let o = &self.port[out];
        let allowed = lane_mask(o.class_vcs[usize::from(class)], lane);
        let Some(ov) = pick_from(o.free & allowed, o.rr_vc) else {
            return;
        };
        self.ivc[out * v + ov].owner = idx as u32;
        let x = &mut self.ivc[idx];
        x.ovc = ov as u16;
        x.state = ACTIVE;
        let p = &mut self.port[c];
        p.wait &= !(1 << vc);
        p.active |= 1 << vc;
        let local = u32::from(p.in_local) * v as u32 + vc as u32;
        Self::refresh_port(&mut self.masks, p);
        let o = &mut self.port[out];
        o.free &= !(1 << ov);
        o.rr_va = next_after(local, nloc) as u16;
        o.rr_vc = next_after(ov as u32, v as u32) as u8;
    }

    /// Switch allocation, separable input-first: each input port picks one of its VCs whose
    /// front flit is ready, has a credit downstream and whose output is free this cycle
    /// (round-robin from the last winner, or oldest flit first); each output then grants one of
    /// the inputs that picked it by the same arbitration. Winners cross the switch.
    fn allocate_switch(&mut self, r: usize) {
        let v = self.f.vcs;
        let now = self.now;
        let fcfs = self.arbitration == Arbitration::Fcfs;
        let (a, b) = (self.f.in_off[r] as usize, self.f.in_off[r + 1] as usize);
        let nin = (b - a) as u32;
        let mut reqs = std::mem::take(&mut self.sa_reqs);
        reqs.clear();
        let mut ports = self.masks[r].sa;
        while ports != 0 {
            let j = a + ports.trailing_zeros() as usize;
            ports &= ports - 1;
            let c = self.f.in_list[j] as usize;
            let p = &self.port[c];
            let m = p.active & p.nonempty;
            // VCs from the round-robin pointer up, then from 0 below it.
            let above = m & (VcMask::MAX << p.rr_in);
            let mut pick: Option<(u64, usize, usize)> = None;
            'parts: for mut part in [above, m & !above] {
                while part != 0 {
                    let vc = part.trailing_zeros() as usize;
                    part &= part - 1;
                    let idx = c * v + vc;
                    // A flit is ready S - 1 cycles after it arrived (at once with S = 1).
                    if !self.ready.is_empty() && self.ready[self.front_slot(c, vc)] > now {
                        continue;
                    }
                    let x = &self.ivc[idx];
                    let out = x.out as usize;
                    if self.ivc[out * v + usize::from(x.ovc)].credits == 0 {
                        if self.ch_blocked_at[out] != now {
                            self.ch_blocked_at[out] = now;
                            self.ch_blocked[out] += 1;
                        }
                        continue;
                    }
                    if self.port[out].next_free > now {
                        continue;
                    }
                    let key = if fcfs {
                        self.packets[x.front.pkt as usize].injected
                    } else {
                        0
                    };
                    if pick.is_none_or(|(best, ..)| key < best) {
                        pick = Some((key, vc, out));
                        if !fcfs {
                            break 'parts;
                        }
                    }
                }
            }
            if let Some((key, vc, o)) = pick {
                let local = (j - a) as u32;
                let op = &mut self.port[o];
                let dist = wrap_sub(local, u32::from(op.rr_out), nin);
                let key = (key << 20) | u64::from(dist);
                op.sa_key = op.sa_key.min(key);
                reqs.push((o as u32, key, c as u32, vc as u16));
            }
        }
        // Keys of one output differ (their distances do), so each output has one winner, which
        // clears the output's best key: no key is u64::MAX, so no later request matches it.
        for &(out, key, c, vc) in &reqs {
            let op = &mut self.port[out as usize];
            if op.sa_key == key {
                op.sa_key = u64::MAX;
                self.traverse(c as usize, usize::from(vc), nin);
            }
        }
        self.sa_reqs = reqs;
    }

    /// The front flit of VC `vc` of input `c` crosses the switch to its output VC.
    fn traverse(&mut self, c: usize, vc: usize, nin: u32) {
        let v = self.f.vcs;
        let idx = c * v + vc;
        let now = self.now;
        let p = &self.port[c];
        let (depth, base, back, in_local) = (
            usize::from(p.depth),
            p.base as usize,
            u32::from(p.latency),
            u32::from(p.in_local),
        );
        let x = &mut self.ivc[idx];
        let (out, ov, flit) = (x.out as usize, usize::from(x.ovc), x.front);
        let mut head = usize::from(x.head) + 1;
        if head == depth {
            head = 0;
        }
        x.head = head as u16;
        x.len -= 1;
        let left = x.len;
        if left > 0 {
            x.front = self.buf[base + vc * depth + head];
        }
        if flit.tail {
            x.state = IDLE;
        }
        let d = &mut self.ivc[out * v + ov];
        d.credits -= 1;
        if flit.tail {
            d.owner = FREE;
        }
        let o = &mut self.port[out];
        o.next_free = now + u64::from(o.period);
        o.rr_out = next_after(in_local, nin) as u16;
        if flit.tail {
            o.free |= 1 << ov;
        }
        // A head learns its route at the next router now (one leaving for its interface
        // learns its ejection channel again, unused).
        let link = out < self.f.links;
        let next = if flit.seq == 0 {
            self.advance(flit.pkt)
        } else {
            0
        };
        self.send(out, ov as u16, flit, next);
        self.flit_hops += u64::from(link);
        // The freed slot's credit goes back upstream, one channel latency away.
        let due = self.slot_after(back);
        self.credit_back[due].push(idx as u32);
        let p = &mut self.port[c];
        p.rr_in = next_after(vc as u32, v as u32) as u8;
        if left == 0 {
            p.nonempty &= !(1 << vc);
        }
        if flit.tail {
            p.active &= !(1 << vc);
            if left > 0 {
                // The next packet's head is at the front now.
                let x = &mut self.ivc[idx];
                let pk = &self.packets[x.front.pkt as usize];
                Self::route_head(x, p, vc, pk.next);
                if !self.since.is_empty() {
                    self.since[idx] = pk.injected;
                }
            }
        }
        Self::refresh_port(&mut self.masks, p);
    }

    /// Jump an idle network forward to `cycle` (credits still on their way back land first).
    /// Does nothing unless the network is idle and `cycle` is ahead.
    pub fn skip_to(&mut self, cycle: u64) {
        if !self.is_idle() || cycle <= self.now {
            return;
        }
        for slot in &mut self.credit_back {
            for o in slot.drain(..) {
                self.ivc[o as usize].credits += 1;
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
            on_channels: self.arrive.iter().map(|s| s.len() as u64).sum(),
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
                    flits: self.ch_flits[c],
                    blocked_cycles: self.ch_blocked[c],
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
            self.ivc[idx as usize].credits += 1;
            if tail {
                break;
            }
        }
        self.last_progress = self.now;
        true
    }

    /// Start the link counters again from zero.
    pub fn reset_link_stats(&mut self) {
        self.ch_flits.iter_mut().for_each(|x| *x = 0);
        self.ch_blocked.iter_mut().for_each(|x| *x = 0);
    }

    /// The input VC that buffer `idx` waits on, if it waits on one: the downstream VC it has
    /// no credit for, the holder of the output VC it wants, or (empty but mid-packet) the
    /// upstream VC holding the rest of its packet.
    fn waits_on(&self, idx: usize) -> Option<usize> {
        let v = self.f.vcs;
        let out = self.ivc[idx].out as usize;
        match self.ivc[idx].state {
            WAIT_VC => {
                let (lo, _) = self.f.class_range(out, self.ivc[idx].class);
                let o = self.ivc[out * v + lo].owner;
                (o < NI_OWNER).then_some(o as usize)
            }
            ACTIVE if self.ivc[idx].len > 0 => {
                (out < self.f.links).then_some(out * v + usize::from(self.ivc[idx].ovc))
            }
            ACTIVE => {
                let o = self.ivc[idx].owner;
                (o < NI_OWNER).then_some(o as usize)
            }
            _ => None,
        }
    }

    /// A cycle of buffers each waiting on the next, found by following waits from every
    /// occupied buffer; if none closes, the occupied buffers themselves.
    fn waiting_cycle(&self) -> Vec<String> {
        let v = self.f.vcs;
        let n = self.ivc.len();
        let mut seen = vec![u32::MAX; n];
        for start in (0..n).filter(|&i| self.ivc[i].len > 0) {
            let mut walk = Vec::new();
            let mut at = start;
            loop {
                if seen[at] == start as u32 {
                    let from = walk.iter().position(|&x| x == at).unwrap_or(0);
                    return walk[from..]
                        .iter()
                        .map(|&i| self.f.buffer_name(i / v, i % v))
                        .collect();
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
            .map(|i| self.f.buffer_name(i / v, i % v))
            .collect()
    }
}

/// `a - b` modulo `n`, for `a, b < n`.
fn wrap_sub(a: u32, b: u32, n: u32) -> u32 {
    if a >= b { a - b } else { a + n - b }
}

/// The index after `i` modulo `n`, for `i < n`.
fn next_after(i: u32, n: u32) -> u32 {
    if i + 1 >= n { 0 } else { i + 1 }
}

/// The lowest set bit of `mask` at or above `from`, else the lowest set bit: a round-robin pick.
/// Every VC of a port with `v` of them.
fn all_of(v: usize) -> VcMask {
    VcMask::MAX >> (VcMask::BITS as usize - v)
}

fn pick_from(mask: VcMask, from: u8) -> Option<usize> {
    if mask == 0 {
        return None;
    }
    let above = mask & (VcMask::MAX << from);
    Some(if above != 0 { above } else { mask }.trailing_zeros() as usize)
}
