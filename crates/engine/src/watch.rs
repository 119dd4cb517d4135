//! How far the run in progress has got: the models record what they have done (units done
//! of a total, simulated time or cycles) as they go, and a run stopped from outside
//! (`--time-limit`) says so in its last message. Recording is a relaxed atomic store, cheap
//! enough for a model's main loop; nothing here changes what a run computes.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// What is counted, as it reads after "N of M" (`transfers delivered`, ...), set by [`begin`].
static UNIT: Mutex<&'static str> = Mutex::new("");
static DONE: AtomicU64 = AtomicU64::new(0);
static TOTAL: AtomicU64 = AtomicU64::new(0);
/// Simulated time reached, ps (`u64::MAX`: none recorded).
static SIMULATED_PS: AtomicU64 = AtomicU64::new(u64::MAX);
/// Cycles simulated (`u64::MAX`: none recorded).
static CYCLES: AtomicU64 = AtomicU64::new(u64::MAX);
/// A line the command adds (where finished work is kept).
static NOTE: Mutex<String> = Mutex::new(String::new());
/// Who hears a model's estimate of its run's wall time (the CLI prints long ones).
static ANNOUNCER: std::sync::OnceLock<fn(&str, f64)> = std::sync::OnceLock::new();

/// Let `f` hear every [`estimate`] (once per process; later calls are ignored).
pub fn set_announcer(f: fn(&str, f64)) {
    let _ = ANNOUNCER.set(f);
}

/// A model, before it runs, estimates its wall time on one core: `work` says what it counted,
/// `seconds` what it expects. Nothing happens unless an announcer is set.
pub fn estimate(work: &str, seconds: f64) {
    if let Some(f) = ANNOUNCER.get() {
        f(work, seconds);
    }
}

/// A run of `total` units starts; `unit` reads after "N of M" (`transfers delivered`) (0:
/// the total is not known).
pub fn begin(unit: &'static str, total: u64) {
    if let Ok(mut u) = UNIT.lock() {
        *u = unit;
    }
    DONE.store(0, Ordering::Relaxed);
    TOTAL.store(total, Ordering::Relaxed);
}

/// `n` units are done in all.
pub fn done(n: u64) {
    DONE.store(n, Ordering::Relaxed);
}

/// The run has simulated up to `ps` picoseconds.
pub fn simulated_ps(ps: u64) {
    SIMULATED_PS.store(ps, Ordering::Relaxed);
}

/// The run has simulated `c` cycles.
pub fn cycles(c: u64) {
    CYCLES.store(c, Ordering::Relaxed);
}

/// Where the command keeps what is finished, for the stop message.
pub fn note(text: impl Into<String>) {
    if let Ok(mut n) = NOTE.lock() {
        *n = text.into();
    }
}

/// What has been recorded, as a sentence (empty when nothing was).
pub fn summary() -> String {
    let mut parts = Vec::new();
    let ps = SIMULATED_PS.load(Ordering::Relaxed);
    if ps != u64::MAX {
        parts.push(format!("simulated {} s", fmt_s(ps as f64 * 1e-12)));
    }
    let c = CYCLES.load(Ordering::Relaxed);
    if c != u64::MAX {
        parts.push(format!("{c} cycles simulated"));
    }
    let unit = UNIT.lock().map(|u| *u).unwrap_or("");
    if !unit.is_empty() {
        let (d, t) = (DONE.load(Ordering::Relaxed), TOTAL.load(Ordering::Relaxed));
        parts.push(if t > 0 {
            format!("{d} of {t} {unit}")
        } else {
            format!("{d} {unit}")
        });
    }
    if let Ok(n) = NOTE.lock()
        && !n.is_empty()
    {
        parts.push(n.clone());
    }
    parts.join("; ")
}

fn fmt_s(s: f64) -> String {
    format!("{s:.6e}")
}
