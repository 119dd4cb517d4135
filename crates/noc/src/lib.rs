//! The packet level: cycle-level input-queued routers with virtual channels and credit-based
//! flow control, network interfaces, synthetic traffic and latency-throughput curves.
//!
//! # Two router modes
//! [`RouterConfig::router`] picks the router model (`podsim noc --router podsim|booksim`, or
//! `router = "..."` in the router TOML file):
//!
//! | | `podsim` (default) | `booksim` |
//! |---|---|---|
//! | what it is | podsim's own input-queued VC router, described below | BookSim 2's `iq` router (commit 28f43299), stage by stage |
//! | pipeline | `pipeline_stages` S folded into one wait: a flit crosses the switch S - 1 cycles after it arrives | separate stages with their own delays: `routing_delay` (0 = lookahead), `vc_alloc_delay`, `sw_alloc_delay`, crossbar `st_prepare_delay + st_final_delay`, `credit_delay`; a stage with delay d takes a new batch only when the last has left, as BookSim's stage queues do |
//! | links | `link_cycles` per kind of link (or from the topology's latency) | `channel_latency`, unset: BookSim's 1 cycle on a mesh, 2 on a torus; a flit written at t is read at t + L + 1 (BookSim's channel latch) |
//! | allocators | separable input-first, round-robin or `fcfs` | iSLIP with `alloc_iters` rounds (BookSim's default), separable input-first or separable output-first (which decides as one iSLIP round), round-robin arbiters over BookSim's port numbering; `input_speedup` and `output_speedup` crossbar ports per router port, the output queue unbounded |
//! | torus deadlock | dateline classes from `podsim-routing` (class 1 after the wrap link) | BookSim's `dim_order_torus`: packets whose dimension's coordinate is above the destination's take the upper half of the VCs for that dimension, all VCs at the destination router; ties at k/2 go either way at random |
//! | networks | every topology and routing | k-ary n-cubes with dimension-order routing, one terminal per router |
//! | injection | every packet created is queued at its interface (infinite queue), `interfaces` channels per node | BookSim's: Bernoulli trials run lazily while the node's one packet slot is empty, so creation times are those of an infinite queue; one injection channel per node; a head takes a free, non-full VC round-robin |
//! | measurement | warm-up until two samples agree within 5%, a window of `cycles`, a drain; saturated when accepted < 95% of generated or the drain does not finish | BookSim's `sim_type = latency`: periods of `cycles / 10`, 3 of warm-up, then until 3 periods agree within 5% (10 periods at most), drain the measured packets; saturated ("unstable") when the average latency of retired packets and flits in flight passes 500 cycles |
//! | latency | creation to the tail's arrival at the interface | creation to the tail's ejection (BookSim's packet latency) |
//! | zero-load latency | S + h (S - 1 + L) + P | H (R + VA + SA + X) + D L + 3 + (P - 1), H = D + 1 routers |
//! | link counters ([`NocResult::links`], over [`NocResult::window_cycles`]) | over the window of `cycles`: flits each link carried, cycles in which a flit waiting for it had no credit | over BookSim's window (the accepted rate's, from the reset after warm-up to the drain): flits that won the switch for the link, cycles in which switch allocation held a flit for it for want of a credit (with `sw_alloc_delay` d > 1 a stall holds the flit d cycles, and they count); same channel numbers and order as the podsim mode |
//!
//! The booksim mode reproduces BookSim's own curves (`tools/booksim/curves/`): on the 8x8 mesh
//! and torus and the 16x16 mesh, zero-load latency within 0.5 cycle of BookSim's exact value,
//! saturation throughput within 2%; the podsim mode's outputs are unchanged by its existence.
//!
//! # The router model (`podsim` mode)
//! Every node of the topology is a router; every endpoint also has `interfaces` network
//! interfaces (Tofu 6, DOJO 1, as the topology says), each with an injection channel into its
//! router and an ejection channel out of it. Every input port (a network link or an injection
//! channel) has `vcs` virtual channels of `buffer_flits` flits each. Packets are `packet_flits`
//! flits long and move wormhole: a packet holds a VC at each router from its head's VC
//! allocation until its tail leaves.
//!
//! Each cycle runs in three phases, so no result depends on the order routers are visited in:
//! 1. **read**: flits and credits due this cycle come off the channel pipelines into input
//!    buffers and credit counters;
//! 2. **evaluate**: each interface starts a queued packet on a free VC of its injection channel
//!    and sends one flit if it holds a credit; each router computes the route of every head flit
//!    at the front of an idle VC (the next link of its path, from the routing layer), allocates
//!    output VCs (requests for one output and class ordered by round-robin from the last winner,
//!    or oldest first with `fcfs`, age being the cycle a packet entered the network; free VCs of that class handed out round-robin), then
//!    allocates the switch (separable, input first: each input port picks one ready VC with a
//!    downstream credit, each output grants one input, both round-robin or oldest first); a
//!    packet injected with [`Noc::inject_lane`] takes only its lane's VC of the class at every
//!    port, so packets of one lane queue first come first served and different lanes share
//!    the switch round-robin;
//! 3. **write**: each winner crosses the switch onto its output channel, due at the far end
//!    `link cycles` later, and a credit for its freed slot goes upstream, due one latency of
//!    the channel it came in on later.
//!
//! A flit that arrives in cycle t can cross the switch from cycle t + stages - 1 on; it then
//! spends the channel's latency L in flight. Interface channels take one cycle. Ejection is
//! never blocked for long: the interface takes a flit the cycle it arrives and returns the
//! credit at once.
//!
//! # Zero-load latency
//! A packet of P flits created in cycle g on an idle network, h router-to-router hops from its
//! destination, with S stages and L-cycle links:
//! * its head leaves the source interface in cycle g and reaches the first router in g + 1;
//! * at each of the h routers it waits S - 1 cycles, crosses the switch and spends L cycles on
//!   the link: the head is at the last router in g + 1 + h (S - 1 + L);
//! * there it waits S - 1 cycles, crosses to the ejection channel and arrives one cycle later:
//!   g + 1 + h (S - 1 + L) + S;
//! * the body follows one flit per cycle, so the tail arrives P - 1 cycles after the head.
//!
//! Latency T0 = S + h (S - 1 + L) + P, provided buffers cover the credit round trip (a link
//! needs 2L + S - 1 flits per VC, an injection channel S + 1). Tests check it hop by hop.
//!
//! # Deadlock
//! Routes on wrapped dimensions use dateline classes from `podsim-routing` (VCs split into two
//! halves, class 0 before the wrap-around link, class 1 after). A watchdog stops the run with
//! [`podsim_engine::SimError::Deadlock`] when flits are in flight and none has moved for
//! `watchdog_cycles`, naming a cycle of buffers each waiting on the next. Routes are fixed and
//! minimal, so a packet cannot wander: livelock cannot happen and the same watchdog covers
//! starvation that stops all movement.
//!
//! Architecture invariant: the packet level is a pure function of (topology, routing, router
//! configuration, traffic, seed); a simulation is one value with no global state, so any number
//! run side by side, and a sweep run in parallel gives the sequential sweep's numbers.

mod booksim;
mod config;
mod fabric;
mod lean;
mod model;
mod overrides;
mod seeds;
mod sim;
mod spec;
mod traffic;

pub use config::{Allocator, Arbitration, ConfigError, LinkCycles, RouterConfig, RouterMode};
pub use fabric::{ChannelKind, Fabric, NocRouting};
pub use model::{PACKET_FLIT_LIMIT, PacketModel};
pub use overrides::{MAX_ROUTER_CYCLES, RouterOverrides, check_cycles, check_nodes, resolve_run};
pub use seeds::{SeedSummary, sweep_seeds};
pub use sim::{ANY_LANE, Audit, Delivered, LinkStat, MAX_PARTS, MIN_ROUTERS_TO_SPLIT, Noc};
pub use spec::{
    MIN_DRAIN_CYCLES, MIN_WINDOW_CYCLES, NocResult, PATTERNS, PacketLog, Pattern, RunSpec,
    SATURATION_RATIO, check as check_pattern, parse_rates,
};
pub use traffic::{run, run_logged, sweep};

/// Why a packet-level run could not start or go on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NocError {
    /// A configuration value is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A packet cannot be routed.
    #[error("{0}")]
    Route(String),
    /// The simulation stopped (a deadlock).
    #[error(transparent)]
    Sim(#[from] podsim_engine::SimError),
    /// The simulation would hold more memory than it may.
    #[error(
        "the packet level needs about {} for {what}, more than the memory limit of {} (--memory-limit)",
        podsim_units::Bytes(*estimate),
        podsim_units::Bytes(*limit)
    )]
    Memory {
        /// What the estimate covers.
        what: String,
        /// Estimated bytes.
        estimate: u64,
        /// The limit in bytes.
        limit: u64,
    },
}

#[cfg(test)]
mod tests;
