//! The packet level's common case, router by router: podsim's own router with one pipeline
//! stage, round-robin arbitration, channels that take a flit every cycle, at most 8 VCs and
//! at most 16 input and 16 output ports per router (64 input VCs in all, the VCs of a port
//! rounded up to a power of two), in one part or, where [`Noc`] would split the network
//! across threads and every channel has the same latency, in parts of whole 64-router words,
//! eight per thread, which the threads share out as they come free, while beside them the
//! interfaces eject and send and the traffic's next cycle is drawn. It decides exactly as
//! [`Noc`] does (the same flits cross the same switches in the same cycles; tests compare the
//! two whole, and the parts with one part), with each router's state in one value of
//! fixed-size arrays and its allocators as operations on bit masks of its input VCs. [`Noc`]
//! stays the general engine (deeper pipelines, oldest-first arbitration, VC lanes,
//! credit-holding endpoints, channels of several latencies on threads, the deadlock report)
//! and the one every other caller uses; `podsim noc` runs this one when the configuration
//! allows.

use std::collections::VecDeque;

use crate::NocError;
use crate::config::Arbitration;
use crate::fabric::{CLASS_SHIFT, Fabric, Found};
use crate::sim::{Arrival, Audit, Delivered, Flit, LinkStat, Noc, Packet, Route};

/// Ports per router (in and out) and VCs per port the fast engine takes.
const MAX_PORTS: usize = 16;
const MAX_VCS: usize = 8;
const NONE: u32 = u32::MAX;
/// The flag of an arrival's or a credit's target that is an interface, not a router.
const TO_NI: u32 = 1 << 31;

const IDLE: u8 = 0;
const WAIT_VC: u8 = 1;
const ACTIVE: u8 = 2;

/// An input VC (index `port << sh | vc` in its router, [`Router::sh`]): its FIFO (`len` flits from `head` in
/// its buffer slots, the front one kept here) and its front packet's state.
#[derive(Debug, Clone, Copy, Default)]
struct Vc {
    front: Flit,
    head: u16,
    len: u16,
    state: u8,
    class: u8,
    /// The output port (local) its front packet leaves by, and the output VC granted.
    out: u8,
    ovc: u8,
}

/// An input port of a router.
#[derive(Debug, Clone, Copy, Default)]
struct InPort {
    /// First buffer slot; VC `v`'s are `depth` slots from `base + v * depth`.
    base: u32,
    depth: u16,
    /// Latency of its channel (a credit takes it back).
    latency: u16,
    /// Where its credits go: `router << 6 | output << sh` (the upstream router's shift), or
    /// [`TO_NI`] with the interface's index `<< 3`; the VC is or-ed in.
    up: u32,
    rr_in: u8,
}

/// An output port of a router.
#[derive(Debug, Clone, Copy, Default)]
struct OutPort {
    /// Where its flits arrive: `router << 4 | input port`, or [`TO_NI`] with its ejection
    /// channel.
    down: u32,
    latency: u16,
    /// Whether it is a router-to-router link (its crossings are flit-hops).
    link: bool,
    free: u8,
    class_vcs: [u8; 2],
    /// Round-robin pointers: VC allocation's requester (an input VC index), switch
    /// allocation's input port, the next output VC.
    rr_va: u8,
    rr_out: u8,
    rr_vc: u8,
    /// Flits it carried since the counters were last reset.
    flits: u64,
}

/// An output port's cycles blocked on credits, and the last one (kept apart from its
/// state: only a congested port counts them).
#[derive(Debug, Clone, Copy)]
struct Counters {
    blocked: u64,
    blocked_at: u64,
}

/// One router: bit `port << sh | vc` of each mask is an input VC (and `output << sh | vc` of
/// `credits` an output VC). Laid out as written, the parts read every cycle first.
#[derive(Debug, Clone)]
#[repr(C)]
struct Router {
    nonempty: u64,
    wait: u64,
    active: u64,
    inputs: u8,
    outputs: u8,
    /// Bits of a VC index: the VCs per port rounded up to a power of two, 2^sh.
    sh: u8,
    inp: [InPort; MAX_PORTS],
    out: [OutPort; MAX_PORTS],
    credits: [u16; 64],
    vc: [Vc; 64],
}

/// A network interface: its injection channel's upstream end and the packet it sends.
#[derive(Debug, Clone, Copy)]
struct Ni {
    pkt: u32,
    seq: u16,
    vc: u8,
    free: u8,
    rr_vc: u8,
    latency: u16,
    credits: [u16; MAX_VCS],
    down: u32,
    flits: u64,
}

/// The fast engine (see the module's documentation).
#[derive(Debug, Clone)]
pub(crate) struct Lean {
    f: Fabric,
    v: usize,
    /// Every router's [`Router::sh`].
    sh: u32,
    now: u64,
    watchdog: u64,
    routers: Vec<Router>,
    /// Per router and output port (`r << 4 | o`), its counters.
    counters: Vec<Counters>,
    /// Routers with a flit buffered, one bit each.
    loaded: Vec<u64>,
    buf: Vec<Flit>,
    /// Per channel: the local output port it leaves its router by (interface channels: 0).
    ch_out: Vec<u8>,
    /// Per channel, whose counters it has: `router << 4 | output`, or [`TO_NI`] with the
    /// interface (injection channels).
    ch_up: Vec<u32>,
    wheel: usize,
    /// The latency of every router's channels, in and out, where they all have the same
    /// one (the usual case), else 0.
    uniform: u16,
    /// The parts the routers step in, shared out over the threads: the first router of each
    /// (a multiple of 64) and the number of routers; one part unless the network is split
    /// across threads, which needs `uniform`.
    bounds: Vec<usize>,
    /// The first buffer slot of each part, and the number of slots.
    slot_bounds: Vec<usize>,
    /// What each part sends in a cycle.
    outs: Vec<PartOut>,
    /// Each 64-router word's part.
    part_of: Vec<u8>,
    /// The flits bound for routers, by slot and then by the part of the router they reach
    /// (`slot * parts + part`; one list a slot with one part).
    to_routers: Vec<Vec<Arrival>>,
    to_ifaces: Vec<Vec<Arrival>>,
    /// The credits, by slot and then by the part of the router they are for, the interfaces'
    /// last (`slot * (parts + 1) + part`, the interfaces' at `part = parts`); with one part,
    /// one list a slot of both.
    credits: Vec<Vec<u32>>,
    /// The cycle's arrivals and credits of each part, while the parts take them.
    cur_arrivals: Vec<Vec<Arrival>>,
    cur_credits: Vec<Vec<u32>>,
    packets: Vec<Packet>,
    routes: Vec<Route>,
    free_packets: Vec<u32>,
    serial: u64,
    queues: Vec<VecDeque<u32>>,
    ni: Vec<Ni>,
    busy: Vec<u64>,
    done: Vec<Delivered>,
    injected: u64,
    ejected: u64,
    flit_hops: u64,
    last_progress: u64,
    overflowed: u64,
    misordered: u64,
}

/// What one part of the routers sends in a cycle, and its counts: where `uniform` is set, the
/// channel slots its crossings fill (with one part, the slots themselves, taken out of their
/// wheels while the routers step): flits to routers by the part they reach, then to
/// interfaces (`outbox[parts]`), credits by the part they are for (as `Lean::credits`); the
/// flit-hops, whether a flit crossed and the flits that found their buffer full.
///
/// Aligned to two cache lines, so that the parts' counts, written as their routers send, are
/// never in one line (which the threads would pass back and forth).
#[derive(Debug, Clone, Default)]
#[repr(align(128))]
struct PartOut {
    outbox: Vec<Vec<Arrival>>,
    credits: Vec<Vec<u32>>,
    flit_hops: u64,
    moved: bool,
    overflowed: u64,
}

/// What stopped a fast run: the watchdog saw no progress (the general engine, run again,
/// names the cycle of waits).
#[derive(Debug)]
pub(crate) struct Stuck;

/// The index after `i` modulo `n`.
fn next_after(i: usize, n: usize) -> usize {
    (i + 1) & usize::from(i + 1 < n).wrapping_neg()
}

/// The lowest set bit of `mask` at or above `from`, else the lowest: a round-robin pick.
fn pick_from(mask: u32, from: u8) -> Option<usize> {
    if mask == 0 {
        return None;
    }
    let above = mask & (u32::MAX << from);
    Some(if above != 0 { above } else { mask }.trailing_zeros() as usize)
}

/// Give input VC `iv` of router `rt` (`inputs` ports of `v` VCs) the next free VC of `class`
/// on output `o`, round-robin from the last one granted; false if there is none.
fn grant<const SH: u32>(
    rt: &mut Router,
    iv: usize,
    o: usize,
    class: usize,
    v: usize,
    inputs: usize,
) -> bool {
    let op = &mut rt.out[o & 15];
    let allowed = u32::from(op.free & op.class_vcs[class & 1]);
    let Some(ov) = pick_from(allowed, op.rr_vc) else {
        return false;
    };
    op.free &= !(1 << ov);
    op.rr_vc = next_after(ov, v) as u8;
    // The next requester after this one, as an input VC index.
    let (j, vc) = (iv >> SH, iv & ((1 << SH) - 1));
    // By masks, not branches: where the pointer wraps depends on the traffic.
    let same_port = usize::from(vc + 1 < v).wrapping_neg();
    let next_port = usize::from(j + 1 < inputs).wrapping_neg() & ((j + 1) << SH);
    op.rr_va = ((same_port & (iv + 1)) | (!same_port & next_port)) as u8;
    let x = &mut rt.vc[iv & 63];
    x.ovc = ov as u8;
    x.state = ACTIVE;
    rt.wait &= !(1 << (iv & 63));
    rt.active |= 1 << (iv & 63);
    true
}

/// Whether input VC `iv` of router `r` (`rt`) has a credit for its output VC: its output
/// port if it has, else none, and the output counts a cycle blocked (once per cycle `now`).
fn credited<const SH: u32>(
    rt: &Router,
    counters: &mut [Counters],
    r: usize,
    iv: usize,
    now: u64,
) -> Option<usize> {
    let x = rt.vc[iv & 63];
    let o = usize::from(x.out) & 15;
    if rt.credits[(o << SH | usize::from(x.ovc)) & 63] > 0 {
        return Some(o);
    }
    let op = &mut counters[r << 4 | o];
    if op.blocked_at != now {
        op.blocked_at = now;
        op.blocked += 1;
    }
    None
}

impl Lean {
    /// The fast engine for `noc`'s network and configuration, as it is when built (idle), or
    /// `noc` back when the configuration needs the general engine or the fast engine's
    /// routers (held beside `noc`'s state while they are built) would take the memory above
    /// `memory_limit`.
    pub(crate) fn from_noc(noc: Noc, memory_limit: u64) -> Result<Lean, Box<Noc>> {
        let s = noc.lean_view();
        let f = noc.fabric();
        let v = f.vcs;
        // A port's VCs take 2^sh bits of a router's 64-bit masks.
        let sh = v.next_power_of_two().trailing_zeros() as u8;
        let ports = MAX_PORTS.min(64 >> sh);
        let own = (f.nodes * (size_of::<Router>() + MAX_PORTS * size_of::<Counters>())) as u64;
        let held = Noc::state_bytes(f, noc.slots() as u64, false);
        let fits = own.saturating_add(held) <= memory_limit
            && s.stages == 1
            && s.arbitration == Arbitration::RoundRobin
            && s.fast_paths
            && !s.reverse_visit
            && !s.lanes
            && !s.holds
            && v <= MAX_VCS
            && f.ch_period.iter().all(|&p| p == 1)
            && (0..f.nodes).all(|r| {
                (s.out_off[r + 1] - s.out_off[r]) as usize <= ports
                    && (f.in_off[r + 1] - f.in_off[r]) as usize <= ports
            });
        if !fits {
            return Err(Box::new(noc));
        }
        let ch = f.channels();
        let mut ch_out = vec![0u8; ch];
        let mut ch_up = vec![0u32; ch];
        for r in 0..f.nodes {
            for k in s.out_off[r]..s.out_off[r + 1] {
                let c = s.out_list[k as usize] as usize;
                let o = k - s.out_off[r];
                ch_out[c] = o as u8;
                ch_up[c] = (r as u32) << 4 | o;
            }
        }
        // Where each channel's flits arrive: its router and input port, or its interface.
        let mut down = vec![0u32; ch];
        for (j, &c) in f.in_list.iter().enumerate() {
            let r = f.ch_dst[c as usize];
            down[c as usize] = r << 4 | (j as u32 - f.in_off[r as usize]);
        }
        let all = (u32::MAX >> (32 - v)) as u8;
        let mut routers = Vec::with_capacity(f.nodes);
        for r in 0..f.nodes {
            let mut rt = Router {
                nonempty: 0,
                wait: 0,
                active: 0,
                inputs: (f.in_off[r + 1] - f.in_off[r]) as u8,
                outputs: (s.out_off[r + 1] - s.out_off[r]) as u8,
                sh,
                vc: [Vc::default(); 64],
                credits: [0; 64],
                inp: [InPort::default(); MAX_PORTS],
                out: [OutPort::default(); MAX_PORTS],
            };
            for j in 0..rt.inputs as usize {
                let p = s.inp[f.in_off[r] as usize + j];
                let c = f.in_list[f.in_off[r] as usize + j] as usize;
                let up = if c >= f.links {
                    // An injection channel: its interface.
                    TO_NI | ((c - f.links) as u32) << 3
                } else {
                    // The upstream router and output.
                    (ch_up[c] >> 4) << 6 | (ch_up[c] & 15) << sh
                };
                rt.inp[j] = InPort {
                    base: p.base,
                    depth: p.depth,
                    latency: p.latency,
                    up,
                    rr_in: 0,
                };
            }
            for o in 0..rt.outputs as usize {
                let k = s.out_off[r] as usize + o;
                let c = s.out_list[k] as usize;
                let p = s.outp[k];
                for ov in 0..v {
                    rt.credits[o << sh | ov] = s.ovc[k * v + ov].credits as u16;
                }
                rt.out[o] = OutPort {
                    down: if c < f.links {
                        down[c]
                    } else {
                        TO_NI | c as u32
                    },
                    latency: p.latency,
                    link: c < f.links,
                    free: all,
                    class_vcs: p.class_vcs.map(|m| m as u8),
                    ..OutPort::default()
                };
            }
            routers.push(rt);
        }
        let mut ni = Vec::with_capacity(f.endpoints * f.ifaces);
        for e in 0..f.endpoints {
            for i in 0..f.ifaces {
                let c = f.injection(e, i);
                let k = s.out_pos[c] as usize;
                ch_up[c] = TO_NI | (e * f.ifaces + i) as u32;
                let mut credits = [0u16; MAX_VCS];
                for (ov, cr) in credits.iter_mut().enumerate().take(v) {
                    *cr = s.ovc[k * v + ov].credits as u16;
                }
                ni.push(Ni {
                    pkt: NONE,
                    seq: 0,
                    vc: 0,
                    free: all,
                    rr_vc: 0,
                    latency: s.outp[k].latency,
                    credits,
                    down: down[c],
                    flits: 0,
                });
            }
        }
        let wheel = s.wheel;
        let watchdog = s.watchdog;
        let lat = routers.first().map_or(0, |r| r.out[0].latency);
        let uniform = if routers.iter().all(|r| {
            r.out[..usize::from(r.outputs)]
                .iter()
                .all(|o| o.latency == lat)
                && r.inp[..usize::from(r.inputs)]
                    .iter()
                    .all(|p| p.latency == lat)
        }) {
            lat
        } else {
            0
        };
        // The parts: eight for each part the general engine takes (one per thread on a large
        // network), each whole 64-router words of the busy bits, with its routers' buffer slots
        // in one run. Eight a thread, so that the threads even out the parts' work and what
        // runs beside them (see `Lean::evaluate`): the thread that ends its share first takes
        // the next part (on two threads, a 32x32 mesh in 16 parts ran 1.15x as fast as in 8,
        // with the arrivals and credits by part).
        let n = routers.len();
        let mut bounds = vec![0];
        let words = n.div_ceil(64);
        let parts = if s.parts > 1 { 8 * s.parts } else { 1 };
        for k in 1..parts {
            let b = k * words / parts * 64;
            if b > bounds[bounds.len() - 1] && b < n {
                bounds.push(b);
            }
        }
        bounds.push(n);
        let np = bounds.len() - 1;
        let mut part_of = vec![0u8; words];
        for (k, b) in bounds.windows(2).enumerate() {
            part_of[b[0] / 64..b[1].div_ceil(64)].fill(k as u8);
        }
        let slots = noc.slots();
        let first_slot = |r: usize| {
            routers[r..]
                .iter()
                .find(|rt| rt.inputs > 0)
                .map_or(slots, |rt| rt.inp[0].base as usize)
        };
        let slot_bounds: Vec<usize> = bounds.iter().map(|&b| first_slot(b)).collect();
        let contained = bounds
            .windows(2)
            .zip(slot_bounds.windows(2))
            .all(|(r, sl)| {
                routers[r[0]..r[1]].iter().all(|rt| {
                    rt.inp[..usize::from(rt.inputs)].iter().all(|p| {
                        let b = p.base as usize;
                        b >= sl[0] && b + v * usize::from(p.depth) <= sl[1]
                    })
                })
            });
        // Several parts write the channel slots of one latency (see `evaluate`); otherwise the
        // general engine takes the threads.
        if bounds.len() > 2 && (uniform == 0 || !contained) {
            return Err(Box::new(noc));
        }
        let endpoints = f.endpoints;
        let (f, buf) = noc.into_parts();
        Ok(Lean {
            v,
            sh: u32::from(sh),
            now: 0,
            watchdog,
            counters: vec![
                Counters {
                    blocked: 0,
                    blocked_at: u64::MAX
                };
                routers.len() * MAX_PORTS
            ],
            loaded: vec![0; routers.len().div_ceil(64)],
            routers,
            buf,
            ch_out,
            ch_up,
            wheel,
            uniform,
            outs: vec![
                PartOut {
                    outbox: vec![Vec::new(); np + 1],
                    credits: vec![Vec::new(); credit_lists(np)],
                    ..PartOut::default()
                };
                np
            ],
            part_of,
            bounds,
            slot_bounds,
            to_routers: vec![Vec::new(); wheel * np],
            to_ifaces: vec![Vec::new(); wheel],
            credits: vec![Vec::new(); wheel * credit_lists(np)],
            cur_arrivals: vec![Vec::new(); np],
            cur_credits: vec![Vec::new(); np + 1],
            packets: Vec::new(),
            routes: Vec::new(),
            free_packets: Vec::new(),
            serial: 0,
            queues: vec![VecDeque::new(); endpoints],
            ni,
            busy: vec![0; endpoints.div_ceil(64)],
            done: Vec::new(),
            injected: 0,
            ejected: 0,
            flit_hops: 0,
            last_progress: 0,
            overflowed: 0,
            misordered: 0,
            f,
        })
    }

    /// The fabric (channels, cycle time, routes).
    pub(crate) fn fabric(&self) -> &Fabric {
        &self.f
    }
    /// The current cycle.
    pub(crate) fn now(&self) -> u64 {
        self.now
    }
    /// The parts the routers step in (eight per thread on a large network, else one).
    pub(crate) fn parts(&self) -> usize {
        self.outs.len()
    }
    /// Flit traversals of router-to-router links so far.
    pub(crate) fn flit_hops(&self) -> u64 {
        self.flit_hops
    }

    /// As [`Noc::inject`], with the route where it was found ahead (`found`).
    pub(crate) fn inject(
        &mut self,
        src: usize,
        dst: usize,
        flits: u32,
        tag: u64,
        found: Option<&Found>,
    ) -> Result<(), NocError> {
        let (p, route) = crate::sim::new_packet(
            &mut self.f,
            self.now,
            src,
            dst,
            flits,
            tag,
            self.serial,
            found,
        )?;
        self.serial += 1;
        let id = crate::sim::store(
            &mut self.packets,
            &mut self.routes,
            &mut self.free_packets,
            p,
            route,
        );
        self.queues[src].push_back(id);
        self.busy[src / 64] |= 1 << (src % 64);
        Ok(())
    }

    /// Packets delivered since the last call, in delivery order.
    pub(crate) fn take_delivered(&mut self, out: &mut Vec<Delivered>) {
        out.append(&mut self.done);
    }

    /// As [`Noc::audit`].
    pub(crate) fn audit(&self) -> Audit {
        let buffered = self
            .routers
            .iter()
            .map(|r| r.vc.iter().map(|x| u64::from(x.len)).sum::<u64>())
            .sum();
        let on_channels = self
            .to_routers
            .iter()
            .chain(&self.to_ifaces)
            .map(|l| l.len() as u64)
            .sum();
        Audit {
            injected: self.injected,
            ejected: self.ejected,
            buffered,
            on_channels,
            overflowed: self.overflowed,
            misordered: self.misordered,
        }
    }

    /// As [`Noc::link_stats`].
    pub(crate) fn link_stats(&self) -> Vec<LinkStat> {
        (0..self.f.channels())
            .map(|c| {
                let (from, to) = self.f.ends(c);
                let up = self.ch_up[c];
                let (flits, blocked_cycles) = if up & TO_NI != 0 {
                    (self.ni[(up & !TO_NI) as usize].flits, 0)
                } else {
                    let o = &self.routers[(up >> 4) as usize].out[(up & 15) as usize];
                    (o.flits, self.counters[up as usize].blocked)
                };
                LinkStat {
                    channel: c,
                    kind: self.f.kind(c),
                    from,
                    to,
                    flits,
                    blocked_cycles,
                }
            })
            .collect()
    }

    /// Start the link counters again from zero.
    pub(crate) fn reset_link_stats(&mut self) {
        for o in &mut self.counters {
            o.blocked = 0;
        }
        for r in &mut self.routers {
            for o in &mut r.out {
                o.flits = 0;
            }
        }
        for n in &mut self.ni {
            n.flits = 0;
        }
    }

    /// One cycle, as [`Noc::step`]; [`Stuck`] where it reports a deadlock. `beside` runs
    /// once during the cycle, beside the routers where they step in parts on several
    /// threads; it reads the fabric as it is (routes are added to it only between cycles).
    pub(crate) fn step(&mut self, beside: &mut (dyn FnMut(&Fabric) + Send)) -> Result<(), Stuck> {
        let now = self.now;
        podsim_engine::watch::cycles(now);
        let slot = (now % self.wheel as u64) as usize;
        let mut arrivals = std::mem::take(&mut self.to_ifaces[slot]);
        let np = self.outs.len();
        if np == 1 {
            // Ejections, credits and the interfaces, then the routers.
            let mut credits = std::mem::take(&mut self.credits[slot]);
            let done_before = self.done.len();
            for a in arrivals.drain(..) {
                self.eject(a);
            }
            self.done[done_before..].sort_unstable_by_key(|d| (d.dst, d.src, d.created, d.tag));
            for &c in &credits {
                if c & TO_NI != 0 {
                    self.ni[((c & !TO_NI) >> 3) as usize].credits[(c & 7) as usize] += 1;
                } else {
                    self.routers[(c >> 6) as usize].credits[(c & 63) as usize] += 1;
                }
            }
            credits.clear();
            self.credits[slot] = credits;
            self.interfaces(slot);
        } else {
            // In parts: each ejection's credit goes back to its router with the cycle's
            // credits, which the router's part takes (increments, in any order); the
            // interfaces take the ejected flits, their credits and send beside the parts (see
            // `evaluate`).
            for a in &arrivals {
                let up = self.ch_up[(a.to & !TO_NI) as usize];
                let iv = ((up & 15) << self.sh | u32::from(a.vc)) & 63;
                let c = (up >> 4) << 6 | iv;
                let q = usize::from(self.part_of[(c >> 12) as usize]);
                self.credits[slot * (np + 1) + q].push(c);
            }
        }
        // The routers' part, with the VC index's shift known at compile time.
        match self.sh {
            0 => self.evaluate::<0>(slot, &mut arrivals, beside),
            1 => self.evaluate::<1>(slot, &mut arrivals, beside),
            2 => self.evaluate::<2>(slot, &mut arrivals, beside),
            _ => self.evaluate::<3>(slot, &mut arrivals, beside),
        }
        arrivals.clear();
        self.to_ifaces[slot] = arrivals;
        if self.injected > self.ejected && now.saturating_sub(self.last_progress) >= self.watchdog {
            return Err(Stuck);
        }
        self.now += 1;
        Ok(())
    }

    /// The routers' arrivals, then each router with work allocates and sends (`SH` is
    /// [`Router::sh`]), part by part: on one thread, or with several parts on the pool's
    /// threads. With several parts, each takes the arrivals and credits of its own routers,
    /// which were put in lists by part as they were sent, and its sends are then put in the
    /// channel slots in the order of the parts, which is the order of the routers, as one
    /// part would have put them (a list by part holds what one list would, in the same
    /// order, less the other parts' entries); `beside` runs beside the parts (see
    /// [`Lean::step`]), and so do the interfaces: they take the flits `ejected` this cycle
    /// and their own credits, and send into the channel slots before the parts' sends, as
    /// one part would have them.
    fn evaluate<const SH: u32>(
        &mut self,
        slot: usize,
        ejected: &mut Vec<Arrival>,
        beside: &mut (dyn FnMut(&Fabric) + Send),
    ) {
        let np = self.outs.len();
        let cl = credit_lists(np);
        for q in 0..np {
            std::mem::swap(
                &mut self.cur_arrivals[q],
                &mut self.to_routers[slot * np + q],
            );
        }
        if np > 1 {
            for q in 0..cl {
                std::mem::swap(&mut self.cur_credits[q], &mut self.credits[slot * cl + q]);
            }
        }
        if self.cur_arrivals.iter().any(|a| !a.is_empty()) {
            self.last_progress = self.now;
        }
        let due = self.slot_after(slot, self.uniform);
        let uniform = self.uniform != 0;
        if uniform && np == 1 {
            let o = &mut self.outs[0];
            o.outbox[0] = std::mem::take(&mut self.to_routers[due]);
            o.outbox[1] = std::mem::take(&mut self.to_ifaces[due]);
            o.credits[0] = std::mem::take(&mut self.credits[due]);
        }
        let Lean {
            f,
            v,
            now,
            wheel,
            routers,
            counters,
            loaded,
            buf,
            ch_out,
            to_routers,
            to_ifaces,
            credits: wheel_credits,
            cur_arrivals,
            cur_credits,
            part_of,
            routes,
            bounds,
            slot_bounds,
            outs,
            ni,
            queues,
            busy,
            packets,
            free_packets,
            done,
            misordered,
            injected,
            ejected: ejected_count,
            ..
        } = self;
        let f: &Fabric = f;
        let shared = Shared {
            now: *now,
            v: *v,
            np,
            part_of,
            routes,
            arena: &f.arena,
            ch_out,
        };
        if np == 1 {
            let mut shard = Shard {
                r0: 0,
                s0: 0,
                routers,
                counters,
                loaded,
                buf,
                out: &mut outs[0],
                wheels: (!uniform).then_some(Wheels {
                    slot,
                    wheel: *wheel,
                    to_routers,
                    to_ifaces,
                    credits: wheel_credits,
                }),
            };
            shard.run::<SH>(&shared, &cur_arrivals[0], &[]);
            beside(f);
        } else {
            use rayon::prelude::*;
            let words: Vec<usize> = bounds.iter().map(|&b| b.div_ceil(64)).collect();
            let counter_bounds: Vec<usize> = bounds.iter().map(|&b| b * MAX_PORTS).collect();
            let mut shards: Vec<Shard> = crate::sim::split_at(routers, bounds)
                .into_iter()
                .zip(crate::sim::split_at(counters, &counter_bounds))
                .zip(crate::sim::split_at(loaded, &words))
                .zip(crate::sim::split_at(buf, slot_bounds))
                .zip(outs.iter_mut())
                .enumerate()
                .map(|(k, ((((routers, counters), loaded), buf), out))| Shard {
                    r0: bounds[k],
                    s0: slot_bounds[k],
                    routers,
                    counters,
                    loaded,
                    buf,
                    out,
                    wheels: None,
                })
                .collect();
            let mut ends = Ends {
                now: *now,
                v: *v,
                ifaces: f.ifaces,
                ni,
                queues,
                busy,
                packets,
                routes,
                free_packets,
                done,
                misordered,
                injected,
                ejected: ejected_count,
                progressed: false,
            };
            let sent = &mut to_routers[due * np..(due + 1) * np];
            let (theirs, ours) = cur_credits.split_at(np);
            let part_of: &[u8] = part_of;
            rayon::join(
                || {
                    shards
                        .par_iter_mut()
                        .zip(cur_arrivals.par_iter())
                        .zip(theirs.par_iter())
                        .for_each(|((s, a), c)| s.run::<SH>(&shared, a, c));
                },
                || {
                    let done_before = ends.done.len();
                    for a in ejected.drain(..) {
                        ends.eject(a.flit);
                    }
                    ends.done[done_before..]
                        .sort_unstable_by_key(|d| (d.dst, d.src, d.created, d.tag));
                    for &c in &ours[0] {
                        ends.ni[((c & !TO_NI) >> 3) as usize].credits[(c & 7) as usize] += 1;
                    }
                    ends.interfaces(|_, a| {
                        sent[usize::from(part_of[(a.to >> 10) as usize])].push(a)
                    });
                    beside(f);
                },
            );
            if ends.progressed {
                self.last_progress = self.now;
            }
        }
        for o in &mut self.outs {
            self.flit_hops += std::mem::take(&mut o.flit_hops);
            self.overflowed += std::mem::take(&mut o.overflowed);
            if std::mem::take(&mut o.moved) {
                self.last_progress = self.now;
            }
        }
        if uniform && np == 1 {
            let o = &mut self.outs[0];
            self.to_routers[due] = std::mem::take(&mut o.outbox[0]);
            self.to_ifaces[due] = std::mem::take(&mut o.outbox[1]);
            self.credits[due] = std::mem::take(&mut o.credits[0]);
        } else if uniform {
            // The interfaces' sends are in the slots already; the parts' follow in order.
            for o in &mut self.outs {
                for q in 0..np {
                    self.to_routers[due * np + q].append(&mut o.outbox[q]);
                }
                self.to_ifaces[due].append(&mut o.outbox[np]);
                for q in 0..cl {
                    self.credits[due * cl + q].append(&mut o.credits[q]);
                }
            }
        }
        for a in &mut self.cur_arrivals {
            a.clear();
        }
        for c in &mut self.cur_credits {
            c.clear();
        }
    }
    /// The wheel slot `lat` cycles after `slot`.
    fn slot_after(&self, slot: usize, lat: u16) -> usize {
        slot_after(slot, lat, self.wheel)
    }

    /// As [`Noc`]'s ejection: the interface takes the flit and frees its slot at once.
    fn eject(&mut self, a: Arrival) {
        let c = (a.to & !TO_NI) as usize;
        let up = self.ch_up[c];
        let rt = &mut self.routers[(up >> 4) as usize];
        rt.credits[(((up & 15) << rt.sh | u32::from(a.vc)) & 63) as usize] += 1;
        let mut ends = self.ends();
        ends.eject(a.flit);
        if ends.progressed {
            self.last_progress = self.now;
        }
    }

    /// Every endpoint with work sends (see [`Ends::interfaces`]), into the channel slots.
    fn interfaces(&mut self, slot: usize) {
        let wheel = self.wheel;
        let mut to_routers = std::mem::take(&mut self.to_routers);
        let mut ends = self.ends();
        ends.interfaces(|lat, a| to_routers[slot_after(slot, lat, wheel)].push(a));
        if ends.progressed {
            self.last_progress = self.now;
        }
        self.to_routers = to_routers;
    }

    /// The interfaces' state, apart from the routers'.
    fn ends(&mut self) -> Ends<'_> {
        Ends {
            now: self.now,
            v: self.v,
            ifaces: self.f.ifaces,
            ni: &mut self.ni,
            queues: &mut self.queues,
            busy: &mut self.busy,
            packets: &mut self.packets,
            routes: &self.routes,
            free_packets: &mut self.free_packets,
            done: &mut self.done,
            misordered: &mut self.misordered,
            injected: &mut self.injected,
            ejected: &mut self.ejected,
            progressed: false,
        }
    }
}

/// The network interfaces and the packets they send and take: what changes at the network's
/// ends, apart from the routers (so that it can change beside them).
struct Ends<'a> {
    now: u64,
    v: usize,
    ifaces: usize,
    ni: &'a mut [Ni],
    queues: &'a mut [VecDeque<u32>],
    busy: &'a mut [u64],
    packets: &'a mut Vec<Packet>,
    routes: &'a [Route],
    free_packets: &'a mut Vec<u32>,
    done: &'a mut Vec<Delivered>,
    misordered: &'a mut u64,
    injected: &'a mut u64,
    ejected: &'a mut u64,
    /// Whether a flit was sent or taken.
    progressed: bool,
}

impl Ends<'_> {
    /// The interface takes an ejected flit (its credit is the caller's to return).
    fn eject(&mut self, flit: Flit) {
        self.progressed = true;
        *self.ejected += 1;
        crate::sim::arrive(
            self.packets,
            self.routes,
            flit,
            self.now,
            self.misordered,
            self.done,
            self.free_packets,
        );
    }

    /// Every endpoint with work: each idle interface takes the next queued packet onto a free
    /// VC of its injection channel; each busy one sends a flit if it holds a credit, by
    /// `send` (with its channel's latency).
    fn interfaces(&mut self, mut send: impl FnMut(u16, Arrival)) {
        let v = self.v;
        let ifaces = self.ifaces;
        let all = (u32::MAX >> (32 - v)) as u8;
        for word in 0..self.busy.len() {
            let mut bits = self.busy[word];
            while bits != 0 {
                let e = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let mut idle = true;
                for i in 0..ifaces {
                    let n = e * ifaces + i;
                    if self.ni[n].pkt == NONE
                        && let Some(&p) = self.queues[e].front()
                    {
                        let x = &mut self.ni[n];
                        if let Some(vc) = pick_from(u32::from(x.free & all), x.rr_vc) {
                            x.free &= !(1 << vc);
                            x.rr_vc = next_after(vc, v) as u8;
                            x.pkt = p;
                            x.seq = 0;
                            x.vc = vc as u8;
                            self.queues[e].pop_front();
                        }
                    }
                    let x = self.ni[n];
                    if x.pkt != NONE && x.credits[usize::from(x.vc)] > 0 {
                        let pk = &mut self.packets[x.pkt as usize];
                        if x.seq == 0 {
                            pk.injected = self.now;
                        }
                        let tail = x.seq + 1 == pk.len;
                        let flit = Flit {
                            pkt: x.pkt,
                            seq: x.seq,
                            hop: 0,
                            tail,
                        };
                        send(
                            x.latency,
                            Arrival {
                                to: x.down,
                                vc: u16::from(x.vc),
                                flit,
                            },
                        );
                        self.progressed = true;
                        *self.injected += 1;
                        let y = &mut self.ni[n];
                        y.credits[usize::from(x.vc)] -= 1;
                        y.flits += 1;
                        if tail {
                            y.free |= 1 << x.vc;
                            y.pkt = NONE;
                        } else {
                            y.seq += 1;
                        }
                    }
                    idle &= self.ni[n].pkt == NONE;
                }
                if idle && self.queues[e].is_empty() {
                    self.busy[word] &= !(1 << (e % 64));
                }
            }
        }
    }
}

/// The credit lists a slot has with `parts` parts: one, or one a part and the interfaces'.
fn credit_lists(parts: usize) -> usize {
    if parts == 1 { 1 } else { parts + 1 }
}

/// The wheel slot `lat` cycles after `slot` on a wheel of `wheel` slots.
fn slot_after(slot: usize, lat: u16, wheel: usize) -> usize {
    let s = slot + usize::from(lat);
    if s >= wheel { s - wheel } else { s }
}

/// What every part reads and none writes during the routers' step.
struct Shared<'a> {
    now: u64,
    v: usize,
    /// The number of parts, and each 64-router word's part.
    np: usize,
    part_of: &'a [u8],
    routes: &'a [Route],
    arena: &'a [u32],
    ch_out: &'a [u8],
}

/// The channel wheels, written directly where channels differ in latency (one part only).
struct Wheels<'a> {
    slot: usize,
    wheel: usize,
    to_routers: &'a mut [Vec<Arrival>],
    to_ifaces: &'a mut [Vec<Arrival>],
    credits: &'a mut [Vec<u32>],
}

/// One part's routers `r0..` with their state: router `r0 + i` is `routers[i]` (its counters
/// from `i << 4`, its bit in `loaded` bit `i`, a part starting on a multiple of 64), buffer
/// slot `s0 + k` is `buf[k]`; and where it sends.
struct Shard<'a> {
    r0: usize,
    s0: usize,
    routers: &'a mut [Router],
    counters: &'a mut [Counters],
    loaded: &'a mut [u64],
    buf: &'a mut [Flit],
    out: &'a mut PartOut,
    wheels: Option<Wheels<'a>>,
}

impl Shard<'_> {
    /// The part's cycle: its routers' `credits`, its `arrivals` (every one for a router of
    /// the part), then each of its routers with work allocates and sends.
    fn run<const SH: u32>(&mut self, s: &Shared, arrivals: &[Arrival], credits: &[u32]) {
        for &c in credits {
            debug_assert!(c & TO_NI == 0);
            self.routers[(c >> 6) as usize - self.r0].credits[(c & 63) as usize] += 1;
        }
        for a in arrivals {
            self.receive::<SH>(s, (a.to >> 4) as usize - self.r0, a);
        }
        // Every buffered flit's VC waits for an output VC or holds one, so these are the
        // routers with work, in order.
        for word in 0..self.loaded.len() {
            let mut bits = self.loaded[word];
            while bits != 0 {
                let r = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if self.routers[r].wait != 0 {
                    self.allocate_vcs::<SH>(s.v, r);
                }
                let rt = &self.routers[r];
                if rt.active & rt.nonempty != 0 {
                    self.allocate_switch::<SH>(s, r);
                }
                if self.routers[r].nonempty == 0 {
                    self.loaded[word] &= !(1 << (r % 64));
                }
            }
        }
    }

    /// A flit reaching input buffer `a.to` of the part's router `r`; a head at the front
    /// learns its route.
    fn receive<const SH: u32>(&mut self, s: &Shared, r: usize, a: &Arrival) {
        let (j, vc) = ((a.to & 15) as usize, usize::from(a.vc));
        let iv = (j << SH | vc) & 63;
        let bit = 1u64 << iv;
        let rt = &mut self.routers[r];
        let x = &mut rt.vc[iv];
        let len = x.len;
        if len == 0 {
            x.len = 1;
            x.front = a.flit;
            if x.state == IDLE {
                // A head at the front: its output.
                let word = s.routes[a.flit.pkt as usize].word(a.flit.hop, s.arena);
                x.out = s.ch_out[(word & !(1 << CLASS_SHIFT)) as usize];
                x.class = (word >> CLASS_SHIFT) as u8;
                x.state = WAIT_VC;
                rt.wait |= bit;
            }
        } else {
            let p = &rt.inp[j & 15];
            if len == p.depth {
                self.out.overflowed += 1;
                return;
            }
            x.len = len + 1;
            let pos = usize::from(x.head) + usize::from(len);
            let depth = usize::from(p.depth);
            let at = p.base as usize - self.s0
                + vc * depth
                + if pos >= depth { pos - depth } else { pos };
            self.buf[at] = a.flit;
        }
        rt.nonempty |= bit;
        self.loaded[r >> 6] |= 1 << (r & 63);
    }

    /// VC allocation, as [`Noc`]'s by round-robin: the requests for each output (in output
    /// order) and class, in order from the output's round-robin pointer, take its free VCs of
    /// the class, each from the last one granted.
    fn allocate_vcs<const SH: u32>(&mut self, v: usize, r: usize) {
        let rt = &mut self.routers[r];
        let inputs = usize::from(rt.inputs);
        let wait = rt.wait;
        // Where no two requests share an output (the usual case), each is alone at its output
        // and a grant touches only its output's state and its own VC: the order of outputs
        // does not matter and there is nothing to arbitrate.
        let (mut seen, mut shared) = (0u32, 0u32);
        let mut m = wait;
        while m != 0 {
            let iv = m.trailing_zeros() as usize & 63;
            m &= m - 1;
            let ob = 1u32 << (rt.vc[iv].out & 15);
            shared |= seen & ob;
            seen |= ob;
        }
        if shared == 0 {
            let mut m = wait;
            while m != 0 {
                let iv = m.trailing_zeros() as usize & 63;
                m &= m - 1;
                let (o, class) = (rt.vc[iv].out, rt.vc[iv].class);
                grant::<SH>(
                    rt,
                    iv,
                    usize::from(o) & 15,
                    usize::from(class) & 1,
                    v,
                    inputs,
                );
            }
            return;
        }
        // Requests by output and class.
        let mut by = [[0u64; 2]; MAX_PORTS];
        let mut outs = 0u32;
        let mut m = wait;
        while m != 0 {
            let iv = m.trailing_zeros() as usize;
            m &= m - 1;
            let x = rt.vc[iv];
            let o = usize::from(x.out) & 15;
            by[o][usize::from(x.class) & 1] |= 1 << iv;
            outs |= 1 << o;
        }
        while outs != 0 {
            let o = outs.trailing_zeros() as usize;
            outs &= outs - 1;
            let rr = rt.out[o].rr_va;
            for (class, &reqs) in by[o].iter().enumerate() {
                if reqs == 0 {
                    continue;
                }
                let hi = reqs & (u64::MAX << rr);
                'class: for mut part in [hi, reqs & !hi] {
                    while part != 0 {
                        let iv = part.trailing_zeros() as usize;
                        part &= part - 1;
                        if !grant::<SH>(rt, iv, o, class, v, inputs) {
                            // No free VC of the class is left for the later requests.
                            break 'class;
                        }
                    }
                }
            }
        }
    }

    /// Switch allocation, as [`Noc`]'s by round-robin: each input port picks its first VC
    /// from its pointer with a credit downstream; each output grants the first input port
    /// from its pointer that picked it; winners cross.
    fn allocate_switch<const SH: u32>(&mut self, s: &Shared, r: usize) {
        let now = s.now;
        let rt = &mut self.routers[r];
        let inputs = usize::from(rt.inputs);
        let sh = SH;
        let cand = rt.active & rt.nonempty;
        if cand & (cand - 1) == 0 {
            // One VC with a flit to send: it crosses if it has a credit.
            let iv = cand.trailing_zeros() as usize & 63;
            if credited::<SH>(rt, self.counters, r, iv, now).is_some() {
                self.traverse::<SH>(s, r, iv >> sh, iv & ((1 << sh) - 1), inputs);
            }
            return;
        }
        // Each port's pick and its output; the ports that picked, the outputs picked and those
        // picked by more than one port.
        let mut picks = [0u8; MAX_PORTS];
        let mut out_of = [0u8; MAX_PORTS];
        let (mut ports, mut outs, mut shared) = (0u32, 0u32, 0u32);
        // Each port with a candidate, in order: a port's VCs are a lane of 2^sh bits.
        let lane = (1u64 << (1 << sh)) - 1;
        let mut left = cand;
        while left != 0 {
            let j = (left.trailing_zeros() >> sh) as usize & 15;
            let m = ((cand >> (j << sh)) & lane) as u32;
            left &= !(lane << (j << sh));
            let above = m & (u32::MAX << rt.inp[j].rr_in);
            'parts: for mut part in [above, m & !above] {
                while part != 0 {
                    let vc = part.trailing_zeros() as usize;
                    part &= part - 1;
                    let Some(o) = credited::<SH>(rt, self.counters, r, j << sh | vc, now) else {
                        continue;
                    };
                    picks[j] = vc as u8;
                    out_of[j] = o as u8;
                    ports |= 1 << j;
                    shared |= outs & 1 << o;
                    outs |= 1 << o;
                    break 'parts;
                }
            }
        }
        // Each output's winner: the first requesting port from its pointer (every port that
        // picked where no two picked the same output, the usual case).
        let mut winners = ports;
        if shared != 0 {
            let mut wanted = [0u32; MAX_PORTS];
            let mut m = ports;
            while m != 0 {
                let j = m.trailing_zeros() as usize & 15;
                m &= m - 1;
                wanted[usize::from(out_of[j]) & 15] |= 1 << j;
            }
            winners = 0;
            while outs != 0 {
                let o = outs.trailing_zeros() as usize & 15;
                outs &= outs - 1;
                let w = wanted[o];
                let hi = w & (u32::MAX << rt.out[o].rr_out);
                winners |= 1 << (if hi != 0 { hi } else { w }).trailing_zeros();
            }
        }
        while winners != 0 {
            let j = winners.trailing_zeros() as usize;
            winners &= winners - 1;
            self.traverse::<SH>(s, r, j & 15, usize::from(picks[j & 15]), inputs);
        }
    }

    /// The front flit of VC `vc` of input port `j` of the part's router `r` crosses the
    /// switch.
    #[inline(always)]
    fn traverse<const SH: u32>(
        &mut self,
        s: &Shared,
        r: usize,
        j: usize,
        vc: usize,
        inputs: usize,
    ) {
        self.out.moved = true;
        let rt = &mut self.routers[r];
        let iv = (j << SH | vc) & 63;
        let p = rt.inp[j];
        let depth = usize::from(p.depth);
        let x = &mut rt.vc[iv];
        let (o, ov, flit) = (usize::from(x.out) & 15, usize::from(x.ovc), x.front);
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
        let next_front = x.front;
        rt.credits[(o << SH | ov) & 63] -= 1;
        let op = &mut rt.out[o];
        op.rr_out = next_after(j, inputs) as u8;
        if flit.tail {
            op.free |= 1 << ov;
        }
        op.flits += 1;
        let link = op.link;
        let (down, lat) = (op.down, op.latency);
        rt.inp[j].rr_in = next_after(vc, s.v) as u8;
        let bit = 1u64 << iv;
        if left == 0 {
            rt.nonempty &= !bit;
        }
        if flit.tail {
            rt.active &= !bit;
        }
        self.out.flit_hops += u64::from(link);
        let crossed = Flit {
            hop: flit.hop + u16::from(link),
            ..flit
        };
        let arrival = Arrival {
            to: down,
            vc: ov as u16,
            flit: crossed,
        };
        match &mut self.wheels {
            None => {
                // The slots taken out for this cycle, or the part's lists by the part they
                // are for (see `evaluate`), picked by index.
                let k = if down & TO_NI != 0 {
                    s.np
                } else if s.np == 1 {
                    0
                } else {
                    usize::from(s.part_of[(down >> 10) as usize])
                };
                self.out.outbox[k].push(arrival);
                let c = p.up | vc as u32;
                let k = if s.np == 1 {
                    0
                } else if c & TO_NI != 0 {
                    s.np
                } else {
                    usize::from(s.part_of[(c >> 12) as usize])
                };
                self.out.credits[k].push(c);
            }
            Some(w) => {
                let due = slot_after(w.slot, lat, w.wheel);
                let list = if down & TO_NI != 0 {
                    &mut w.to_ifaces[due]
                } else {
                    &mut w.to_routers[due]
                };
                list.push(arrival);
                let back = slot_after(w.slot, p.latency, w.wheel);
                w.credits[back].push(p.up | vc as u32);
            }
        }
        if flit.tail && left > 0 {
            // The next packet's head is at the front now: its output.
            let word = s.routes[next_front.pkt as usize].word(next_front.hop, s.arena);
            let rt = &mut self.routers[r];
            let x = &mut rt.vc[iv];
            x.out = s.ch_out[(word & !(1 << CLASS_SHIFT)) as usize];
            x.class = (word >> CLASS_SHIFT) as u8;
            x.state = WAIT_VC;
            rt.wait |= bit;
        }
    }
}
