//! Progress on stderr for runs longer than a second: a bar when the work has a count (cases,
//! sweep points), a spinner with the elapsed time otherwise, and a last line with the wall time
//! (and the simulated time, where the run has one). Nothing is drawn when stderr is not a
//! terminal or with `--quiet`, so piped and scripted output is unchanged.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

static QUIET: AtomicBool = AtomicBool::new(false);
static SIMULATED: std::sync::Mutex<Option<f64>> = std::sync::Mutex::new(None);

/// The simulated time of the run in progress, seconds, for the last line.
pub(crate) fn simulated(seconds: f64) {
    if let Ok(mut s) = SIMULATED.lock() {
        *s = Some(seconds);
    }
}

/// How long a run goes before its progress shows.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Silence progress for the whole process (`--quiet`).
pub(crate) fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// One run's progress.
pub(crate) struct Progress {
    bar: ProgressBar,
    label: String,
    started: Instant,
    on: bool,
}

impl Progress {
    /// Progress for `label`, with `len` steps if the work has a count.
    pub(crate) fn start(label: &str, len: Option<u64>) -> Progress {
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
    pub(crate) fn inc(&self) {
        self.bar.inc(1);
    }

    /// The run is over: clear the bar and, if it was shown, say how long it took (and the
    /// simulated time the command reported with [`simulated`], if any).
    pub(crate) fn finish(self) {
        let simulated = SIMULATED.lock().ok().and_then(|s| *s);
        let wall = self.started.elapsed();
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
