//! podsim's deterministic discrete-event core.
//!
//! # The ordering guarantee
//! Events are handled in increasing `(time, priority, insertion sequence)`:
//! 1. earlier simulated time first (integer picoseconds, so there are no float ties);
//! 2. at equal times, the lower priority number first (`u8`; [`DEFAULT_PRIORITY`] is 128);
//! 3. at equal time and priority, the event scheduled first.
//!
//! The key is unique, so the order is total: a run is a pure function of the model, its initial
//! events and the master seed, whatever the machine, thread count or queue geometry.
//!
//! # Parts
//! * [`EventQueue`]: a timing wheel for near events with an overflow heap for far ones.
//! * [`RngStreams`]: one random stream per component path, from a master seed.
//! * [`Histogram`]: exact percentiles of latencies (the packet level's).
//! * [`SimError`]: a deadlock, with the cycle of waits.
//! * [`watch`]: how far the run in progress has got, for a run stopped by `--time-limit`.
//!
//! The engine is what the models use: the workload executor runs on the [`EventQueue`], the
//! packet level draws its traffic from [`RngStreams`] and keeps its latencies in a
//! [`Histogram`]; each model owns its own loop.
//!
//! Architecture invariant: the engine knows nothing about networks, topologies or file formats.

mod error;
mod queue;
mod rng;
mod stats;
pub mod watch;

pub use error::SimError;
pub use queue::EventQueue;
pub use rng::{RngStreams, SimRng, fnv1a64, splitmix64};
pub use stats::Histogram;

#[cfg(test)]
mod tests;
