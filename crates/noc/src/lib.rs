//! The packet level: cycle-level input-queued routers with virtual channels and credit-based
//! flow control, network interfaces, synthetic traffic and latency-throughput curves.
//!
//! # The router model
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
//!    or oldest first with `fcfs`; free VCs of that class handed out round-robin), then
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
mod model;
mod sim;
mod traffic;

pub use config::{Allocator, Arbitration, ConfigError, LinkCycles, RouterConfig, RouterMode};
pub use fabric::{ChannelKind, Fabric, NocRouting};
pub use model::{PACKET_FLIT_LIMIT, PacketModel};
pub use sim::{ANY_LANE, Audit, Delivered, LinkStat, Noc};
pub use traffic::{
    MIN_DRAIN_CYCLES, MIN_WINDOW_CYCLES, NocResult, PATTERNS, PacketLog, Pattern, RunSpec,
    SATURATION_RATIO, check as check_pattern, parse_rates, run, run_logged, sweep,
};

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
