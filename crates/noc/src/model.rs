//! The packet level behind the endpoint interface collectives use ([`NetworkModel`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use podsim_net::{
    Completion, NetError, NetReport, NetworkModel, Packetization, TransferId, check_send,
};
use podsim_topology::{Network, NodeId};
use podsim_units::{Bytes, SimTime};

use crate::NocError;
use crate::config::RouterConfig;
use crate::fabric::NocRouting;
use crate::sim::{Delivered, Noc};

#[derive(Debug, Clone)]
struct Transfer {
    c: Completion,
    /// Packets not yet delivered.
    packets_left: u64,
    /// Flits on the wire, and the number of its first packet (see [`Noc::inject_numbered`]).
    flits: u64,
    first_serial: u64,
}

/// A transfer whose packets are still being handed to its source's interfaces.
#[derive(Debug, Clone, Copy)]
struct Backlog {
    transfer: usize,
    next: u64,
    packets: u64,
}

/// Transfers cut into packets and run cycle by cycle on a [`Noc`].
///
/// A transfer of `b` payload bytes puts `packets.wire_bytes(b)` bytes on the wire, as the
/// other models do, in flits of `flit_bytes` (at least one) grouped into packets of
/// `packet_flits`, the last one shorter. Time: cycle `c` spans `[c T, (c + 1) T)` with `T` the
/// fabric's cycle; a send at `t` starts in cycle `ceil(t / T)`; a transfer whose last tail
/// arrives in cycle `d` completes at `(d + 1) T`.
///
/// Packets are handed to the source's interfaces as they can take them: before every cycle
/// each endpoint's source queue is topped up to one packet per interface, which is all its
/// interfaces can start in a cycle, so a transfer of any size holds a few packets' state at a
/// time (a 1 PiB send does not build 2^40 packets), and the result is the same as if every
/// packet had been queued when the transfer started.
#[derive(Debug)]
pub struct PacketModel {
    noc: Noc,
    /// Flits of every transfer sent so far (checked against [`PACKET_FLIT_LIMIT`]).
    flits_sent: u128,
    packets: Packetization,
    flit_bytes: u64,
    packet_flits: u64,
    pending: BinaryHeap<Reverse<(u64, usize)>>,
    transfers: Vec<Transfer>,
    /// Per endpoint, transfers started whose packets have not all been handed over, in order.
    backlog: Vec<VecDeque<Backlog>>,
    /// Endpoints with a backlog.
    backlogged: Vec<usize>,
    /// The number the next started transfer's first packet gets.
    serial: u64,
    in_flight: usize,
    done: Vec<Completion>,
    got: Vec<Delivered>,
    time: SimTime,
    report: NetReport,
    failed: Option<String>,
}

/// The most flits one packet-level run simulates: 10^9 flits at a few hops each is minutes at
/// the ~10^7 flit-hops per second the packet level runs at (measured: a 64 MiB all-reduce on
/// torus:4x4, 3.9 x 10^7 flit-hops, 4.1 s on one core; `cargo bench -p podsim-noc`). A run that asks for more is refused ([`NetError::TooMuchWork`]) rather than
/// left to run for days (a 4 PiB all-reduce is 2^47 flits).
pub const PACKET_FLIT_LIMIT: u64 = 1_000_000_000;

impl PacketModel {
    /// A packet-level model of `net`.
    pub fn new(
        net: &Network,
        routing: NocRouting,
        cfg: &RouterConfig,
        packets: Packetization,
    ) -> Result<Self, NocError> {
        Ok(PacketModel {
            noc: Noc::new(net, routing, cfg)?,
            flits_sent: 0,
            packets,
            flit_bytes: cfg.flit_bytes,
            packet_flits: u64::from(cfg.packet_flits),
            pending: BinaryHeap::new(),
            transfers: Vec::new(),
            backlog: vec![VecDeque::new(); net.endpoints() as usize],
            backlogged: Vec::new(),
            serial: 0,
            in_flight: 0,
            done: Vec::new(),
            got: Vec::new(),
            time: SimTime::ZERO,
            report: NetReport::default(),
            failed: None,
        })
    }

    /// The simulation underneath.
    pub fn noc(&self) -> &Noc {
        &self.noc
    }

    fn cycle_ps(&self) -> u64 {
        self.noc.fabric().cycle().as_ps()
    }

    /// Start transfer `t`: number its packets and put it on its source's backlog.
    fn start(&mut self, t: usize) {
        let src = self.transfers[t].c.src.0 as usize;
        let n = self.transfers[t].packets_left;
        self.transfers[t].first_serial = self.serial;
        self.serial += n;
        if self.backlog[src].is_empty() {
            self.backlogged.push(src);
        }
        self.backlog[src].push_back(Backlog {
            transfer: t,
            next: 0,
            packets: n,
        });
    }

    /// Hand packets to every backlogged source until its queue holds one per interface.
    fn top_up(&mut self) -> Result<(), NocError> {
        let want = self.noc.fabric().ifaces;
        let mut i = 0;
        while i < self.backlogged.len() {
            let src = self.backlogged[i];
            while self.noc.queued_at(src) < want {
                let Some(b) = self.backlog[src].front_mut() else {
                    break;
                };
                let tr = &self.transfers[b.transfer];
                let len = (tr.flits - b.next * self.packet_flits).min(self.packet_flits);
                self.noc.inject_numbered(
                    src,
                    tr.c.dst.0 as usize,
                    len as u32,
                    b.transfer as u64,
                    tr.first_serial + b.next,
                )?;
                b.next += 1;
                if b.next == b.packets {
                    self.backlog[src].pop_front();
                }
            }
            if self.backlog[src].is_empty() {
                self.backlogged.swap_remove(i);
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    fn collect(&mut self) {
        self.got.clear();
        self.noc.take_delivered(&mut self.got);
        let t_ps = self.cycle_ps();
        for d in &self.got {
            let t = d.tag as usize;
            let tr = &mut self.transfers[t];
            tr.packets_left -= 1;
            self.report.bytes_on_wire = self
                .report
                .bytes_on_wire
                .saturating_add(u64::from(d.flits) * self.flit_bytes * u64::from(d.hops));
            if tr.packets_left == 0 {
                tr.c.end = SimTime::from_ps((d.delivered + 1) * t_ps);
                self.report.bytes_delivered += tr.c.bytes.0;
                self.in_flight -= 1;
                self.done.push(tr.c);
            }
        }
    }

    /// Step cycles while the end of the current cycle is at or before `until`.
    fn run_until(&mut self, until: SimTime) -> Result<(), NocError> {
        let t_ps = self.cycle_ps();
        loop {
            let now = self.noc.now();
            if (now + 1).saturating_mul(t_ps) > until.as_ps() {
                return Ok(());
            }
            while let Some(&Reverse((c, t))) = self.pending.peek() {
                if c > now {
                    break;
                }
                self.pending.pop();
                self.start(t);
            }
            self.top_up()?;
            if self.noc.is_idle() {
                // Nothing moves until the next send: jump there (or to `until`).
                let next = self.pending.peek().map_or(u64::MAX, |r| r.0.0);
                let target = next.min(until.as_ps() / t_ps);
                if target > now {
                    self.noc.skip_to(target);
                    continue;
                }
            }
            self.noc.step()?;
            self.collect();
        }
    }
}

impl NetworkModel for PacketModel {
    fn send(
        &mut self,
        at: SimTime,
        src: NodeId,
        dst: NodeId,
        bytes: Bytes,
        tag: u64,
    ) -> Result<TransferId, NetError> {
        let endpoints = self.noc.fabric().endpoints() as u64;
        check_send(self.time, endpoints, at, src, dst)?;
        let id = self.transfers.len();
        let wire = self
            .packets
            .checked_wire_bytes(bytes.0)
            .ok_or(NetError::TooLarge {
                what: "the bytes on the wire",
                bytes: bytes.0,
            })?
            .max(1);
        let flits = wire.div_ceil(self.flit_bytes);
        let total = self.flits_sent + u128::from(flits);
        if total > u128::from(PACKET_FLIT_LIMIT) {
            return Err(NetError::TooMuchWork {
                flits: total,
                limit: PACKET_FLIT_LIMIT,
            });
        }
        self.flits_sent = total;
        self.report.count_send(bytes.0, 0)?;
        self.transfers.push(Transfer {
            c: Completion {
                id: TransferId(id as u64),
                tag,
                src,
                dst,
                bytes,
                start: at,
                end: at,
            },
            packets_left: flits.div_ceil(self.packet_flits),
            flits,
            first_serial: 0,
        });
        self.in_flight += 1;
        let cycle = at.as_ps().div_ceil(self.cycle_ps()).max(self.noc.now());
        self.pending.push(Reverse((cycle, id)));
        Ok(TransferId(id as u64))
    }

    fn next_completion(&mut self) -> Option<SimTime> {
        if let Some(c) = self.done.iter().map(|c| c.end).min() {
            return Some(c);
        }
        if self.in_flight == 0 {
            return None;
        }
        // No transfer can complete before the end of the current cycle (or, with the
        // network idle, of the cycle the next send starts in).
        let t_ps = self.cycle_ps();
        let mut cycle = self.noc.now();
        if self.noc.is_idle()
            && let Some(r) = self.pending.peek()
        {
            cycle = cycle.max(r.0.0);
        }
        Some(SimTime::from_ps((cycle + 1) * t_ps).max(self.time))
    }

    fn advance(&mut self, until: SimTime) -> Vec<Completion> {
        if until > self.time {
            self.time = until;
        }
        if self.failed.is_none()
            && let Err(e) = self.run_until(until)
        {
            // The run cannot go on (a deadlock, say): nothing completes any more, and
            // `failure` says why.
            self.in_flight = 0;
            self.pending.clear();
            self.failed = Some(e.to_string());
        }
        let (mut out, keep): (Vec<Completion>, Vec<Completion>) =
            self.done.drain(..).partition(|c| c.end <= until);
        self.done = keep;
        out.sort_by_key(|c| (c.end, c.id));
        out
    }

    fn report(&self) -> NetReport {
        let cycles = self.noc.now().max(1) as f64;
        let busiest = self
            .noc
            .link_stats()
            .iter()
            .filter(|l| l.kind == crate::ChannelKind::Link)
            .map(|l| l.flits)
            .max()
            .unwrap_or(0);
        NetReport {
            max_link_utilization: busiest as f64 / cycles,
            ..self.report
        }
    }

    fn failure(&self) -> Option<String> {
        self.failed.clone()
    }

    fn name(&self) -> &'static str {
        "packet"
    }
}
