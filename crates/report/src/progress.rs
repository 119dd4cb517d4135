//! Progress on stderr for runs longer than a second: a bar when the work has a count (cases,
//! sweep points: done of total and the time left), a spinner with the elapsed time otherwise,
//! and a last line with the wall time (and the simulated time, where the run has one). What
//! the command prints on stdout is written with the bar cleared (it is drawn again below), so
//! no frame is left in the output. Nothing is drawn when stderr is not a terminal or with
//! `--quiet`, so piped and scripted output is unchanged.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

static QUIET: AtomicBool = AtomicBool::new(false);
/// The bar of the run in progress, for [`count`], [`tick`] and [`suspend`].
static ACTIVE: std::sync::Mutex<Option<ProgressBar>> = std::sync::Mutex::new(None);
static SIMULATED: std::sync::Mutex<Option<f64>> = std::sync::Mutex::new(None);

/// The simulated time of the run in progress, seconds, for the last line.
pub fn simulated(seconds: f64) {
    if let Ok(mut s) = SIMULATED.lock() {
        *s = Some(seconds);
    }
}

/// How long a run goes before its progress shows.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Silence progress for the whole process (`--quiet`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// One run's progress.
pub struct Progress {
    bar: ProgressBar,
    label: String,
    started: Instant,
    on: bool,
}

impl Progress {
    /// Progress for `label`, with `len` steps if the work has a count.
    pub fn start(label: &str, len: Option<u64>) -> Progress {
        let on = !QUIET.load(Ordering::Relaxed) && std::io::stderr().is_terminal();
        let bar = match len {
            Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::hidden())
                .with_style(
                    ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                ),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden()).with_style(
                ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        };
        bar.set_message(label.to_string());
        if let Ok(mut a) = ACTIVE.lock() {
            *a = Some(bar.clone());
        }
        if on {
            // Shown only once the run has lasted a second: short runs print nothing.
            let b = bar.clone();
            std::thread::spawn(move || {
                std::thread::sleep(SHOW_AFTER);
                if !b.is_finished() {
                    b.set_draw_target(ProgressDrawTarget::stderr());
                    b.enable_steady_tick(Duration::from_millis(120));
                }
            });
        }
        Progress {
            bar,
            label: label.to_string(),
            started: Instant::now(),
            on,
        }
    }

    /// One step done (thread-safe: steps may finish on any core).
    pub fn inc(&self) {
        self.bar.inc(1);
    }

    /// The run is over: clear the bar and, if it was shown, say how long it took (and the
    /// simulated time the command reported with [`simulated`], if any).
    pub fn finish(self) {
        let simulated = SIMULATED.lock().ok().and_then(|s| *s);
        let wall = self.started.elapsed();
        if let Ok(mut a) = ACTIVE.lock() {
            *a = None;
        }
        self.bar.finish_and_clear();
        if self.on && wall >= SHOW_AFTER {
            let sim = simulated
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| {
                    let ps = (s * 1e12).round().min(u64::MAX as f64) as u64;
                    format!(", {} simulated", podsim_units::SimDuration::from_ps(ps))
                })
                .unwrap_or_default();
            eprintln!(
                "{}: done in {:.1} s wall{sim}",
                self.label,
                wall.as_secs_f64()
            );
        }
    }
}

/// The run in progress has `total` points to go (a sweep's sizes or loads not kept from its
/// file): its spinner becomes a bar of points done, with the time left.
pub fn count(total: u64) {
    if let Ok(a) = ACTIVE.lock()
        && let Some(bar) = a.as_ref()
    {
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:20}] {pos}/{len} points, {elapsed} so far, ~{eta} left",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_position(0);
        bar.set_length(total);
    }
}

/// One point of the run in progress done (thread-safe).
pub fn tick() {
    if let Ok(a) = ACTIVE.lock()
        && let Some(bar) = a.as_ref()
    {
        bar.inc(1);
    }
}

/// Run `f` (a write to stdout) with the bar cleared, then draw it again.
pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
    let bar = ACTIVE.lock().ok().and_then(|a| a.clone());
    match bar {
        Some(b) => b.suspend(f),
        None => f(),
    }
}
