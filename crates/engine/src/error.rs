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
    /// The next event lies beyond the time limit set for the run.
    #[error("time limit {limit} reached with {pending} events still pending")]
    TimeLimit {
        /// The limit that was set.
        limit: SimTime,
        /// Events left in the queue.
        pending: usize,
    },
    /// A configuration value is unusable.
    #[error("{file}: `{key}`: {why}")]
    InvalidConfig {
        /// The file (or `<command line>`) the value came from.
        file: String,
        /// The dotted key of the value.
        key: String,
        /// What was expected instead.
        why: String,
    },
    /// A model asked for an event before the current time.
    #[error("event scheduled at {at}, before the current time {now}")]
    ScheduledInPast {
        /// The requested time.
        at: SimTime,
        /// The time of the event being handled.
        now: SimTime,
    },
}
