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

/// A wall-clock time: a positive number and `ms`, `s`, `min` or `h` (a bare number is seconds).
pub fn parse_wall_time(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    if number.is_empty() {
        return Err("expected a time such as \"30 s\" or \"10 min\"".into());
    }
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "min" => 60.0,
        "h" => 3600.0,
        u => return Err(format!("unknown unit `{u}`; expected ms, s, min or h")),
    };
    let v: f64 = number
        .parse()
        .map_err(|_| "expected a time such as \"30 s\" or \"10 min\"".to_string())?;
    let secs = v * scale;
    if !(secs > 0.0 && secs <= 1e9) {
        return Err("expected a time above zero and at most 10^9 s".into());
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// An announcer for [`set_announcer`]: a note on stderr, before a run starts, when its estimated wall time passes 10 s: `work` says
/// what is counted, `seconds` is the estimate on one core.
pub fn announce_on_stderr(work: &str, seconds: f64) {
    // The same note once (a sweep's loads each announce the same run).
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    if seconds > 10.0 {
        if let Ok(mut said) = SAID.lock() {
            if said.iter().any(|s| s == work) {
                return;
            }
            said.push(work.to_string());
        }
        let t = if seconds < 120.0 {
            format!("{seconds:.0} s")
        } else if seconds < 7200.0 {
            format!("{:.0} min", seconds / 60.0)
        } else {
            format!("{:.1} h", seconds / 3600.0)
        };
        eprintln!(
            "note: {work}: about {t} on one core (estimated); --time-limit stops it at a time you choose"
        );
    }
}
