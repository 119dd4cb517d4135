//! Collectives: algorithms that turn a collective on a group of ranks into a DAG of transfers
//! ([`plan`]), run on any [`podsim_net::NetworkModel`] ([`run`]) with a functional check (every
//! rank's buffer holds small integers and the result is verified), reported with the
//! nccl-tests conventions and against the physical lower bound ([`lower_bound`]).
//!
//! Architecture invariant: collectives see the network only through the endpoint interface
//! (`send` and completions); they know ranks, not links.

mod exec;
mod plan;

pub use exec::{Outcome, RunError, VERIFY_LIMIT, Verified, initial, run};
pub use plan::{Algorithm, Combine, Kind, Op, Plan, PlanError, Request, plan};

use podsim_topology::Metrics;

/// The time below which no algorithm can finish `kind` on `n` ranks with `bytes` per rank,
/// in seconds: the larger of
/// * injection: what each rank must send (all-reduce 2(n-1)/n of its buffer, reduce-scatter,
///   all-gather and all-to-all (n-1)/n, broadcast and reduce the whole buffer) over its
///   injection bandwidth;
/// * bisection (all-to-all): the a x b x (bytes/n) bytes that must cross each way between the
///   halves of the bisection, over half its two-way bandwidth;
/// * latency: one hop's latency when any data moves (`hop_latency_s`).
pub fn lower_bound(kind: Kind, n: usize, bytes: u64, m: &Metrics, hop_latency_s: f64) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let nf = n as f64;
    let b = bytes as f64;
    let must_send = match kind {
        Kind::AllReduce => 2.0 * (nf - 1.0) / nf * b,
        Kind::ReduceScatter | Kind::AllGather | Kind::AllToAll => (nf - 1.0) / nf * b,
        Kind::Broadcast | Kind::Reduce => b,
        Kind::Barrier => 0.0,
    };
    let injection = must_send / m.injection_bandwidth_bytes_per_s as f64;
    let bisection = if kind == Kind::AllToAll && m.bisection_bandwidth_bytes_per_s > 0 {
        let (a, c) = ((n / 2) as f64, (n - n / 2) as f64);
        a * c * (b / nf) / (m.bisection_bandwidth_bytes_per_s as f64 / 2.0)
    } else {
        0.0
    };
    injection.max(bisection).max(hop_latency_s)
}

#[cfg(test)]
mod tests;
