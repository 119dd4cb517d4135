//! Typed simulation errors.

use podsim_units::SimTime;

/// Why a simulation could not go on, or could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// Work is outstanding but nothing can move: `waiting` names the buffers (or resources) in
    /// the cycle of waits, each waiting on the next and the last on the first.
    #[error("deadlock at {at}: {} waiting in a cycle: {}", waiting.len(), waiting.join(" -> "))]
    Deadlock {
        /// When the deadlock was detected.
        at: SimTime,
        /// The cycle of waits, by name.
        waiting: Vec<String>,
    },
}
