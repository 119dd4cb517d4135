//! OCS availability and goodput (tpu-v4-isca2023.txt section 2.4 and Fig. 4): how much of a
//! TPU v4 pod does useful work when hosts fail, with and without optical circuit switches.
//!
//! The pod: 1,024 CPU hosts of 4 chips each, 16 hosts per 4x4x4 block, 64 blocks. Each host is
//! up with probability `A`, independently. Every job asks for a slice of `N` chips (Fig. 4
//! assumes all requests are of one size).
//! - **With OCS** (`N` a multiple of 64): a slice is any `N / 64` blocks whose 16 hosts are all
//!   up, wherever they are; the pod runs `min(floor(H / b), floor(64 / b))` slices, H the
//!   healthy blocks and b = N / 64.
//! - **Static** (no OCS; `N` dividing 4,096): the pod is wired as fixed regions of `N` chips; a
//!   region runs a slice only when all of its `N / 4` hosts are up.
//!
//! Goodput is the expected fraction of the pod's chips running slices. It is computed two ways:
//! exactly (the binomial sums above) and by Monte Carlo over host failures from a seeded
//! stream; tests hold them together.

use podsim_engine::RngStreams;
use rand::RngCore;

/// Chips per host.
pub const CHIPS_PER_HOST: u64 = 4;
/// Hosts per 4x4x4 block.
pub const HOSTS_PER_BLOCK: u64 = 16;
/// Blocks per pod.
pub const BLOCKS: u64 = 64;
/// Chips per pod.
pub const POD_CHIPS: u64 = BLOCKS * HOSTS_PER_BLOCK * CHIPS_PER_HOST;

/// What the pod is asked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Availability {
    /// Chips per slice.
    pub slice_chips: u64,
    /// Probability that a host is up.
    pub host_availability: f64,
    /// Static wiring instead of OCS.
    pub static_wiring: bool,
}

/// The answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Goodput {
    /// Expected fraction of the pod's chips running slices.
    pub goodput: f64,
    /// Expected slices running.
    pub slices: f64,
    /// Probability that at least one slice can be scheduled.
    pub p_schedulable: f64,
}

/// Why a question cannot be asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AvailabilityError {
    /// A slice size the wiring cannot make.
    #[error("a slice of {chips} chips: {why} (the pod has {POD_CHIPS} chips in 64 blocks of 64)")]
    Size {
        /// The size asked.
        chips: u64,
        /// What is needed.
        why: &'static str,
    },
    /// Not a probability.
    #[error("host availability {0} is not a probability in [0, 1]")]
    Probability(f64),
}

impl Availability {
    fn check(&self) -> Result<(), AvailabilityError> {
        let n = self.slice_chips;
        if !(0.0..=1.0).contains(&self.host_availability) {
            return Err(AvailabilityError::Probability(self.host_availability));
        }
        let why = if n == 0 || n > POD_CHIPS {
            Some("expected 1 to 4096 chips")
        } else if !self.static_wiring && !n.is_multiple_of(HOSTS_PER_BLOCK * CHIPS_PER_HOST) {
            Some("the OCS joins whole 4x4x4 blocks: a multiple of 64 chips")
        } else if self.static_wiring
            && (!POD_CHIPS.is_multiple_of(n) || !n.is_multiple_of(CHIPS_PER_HOST))
        {
            Some(
                "static wiring cuts the pod into equal regions of whole hosts: a divisor of 4096 and a multiple of 4",
            )
        } else {
            None
        };
        match why {
            Some(why) => Err(AvailabilityError::Size { chips: n, why }),
            None => Ok(()),
        }
    }

    /// The probability that a unit (block or region) of `hosts` hosts is fully up, the number
    /// of units, and the units a slice needs.
    fn units(&self) -> (f64, u64, u64) {
        if self.static_wiring {
            let hosts = self.slice_chips / CHIPS_PER_HOST;
            (
                self.host_availability.powi(hosts as i32),
                POD_CHIPS / self.slice_chips,
                1,
            )
        } else {
            (
                self.host_availability.powi(HOSTS_PER_BLOCK as i32),
                BLOCKS,
                self.slice_chips / (HOSTS_PER_BLOCK * CHIPS_PER_HOST),
            )
        }
    }

    /// Goodput by the closed form: a binomial over healthy units.
    pub fn exact(&self) -> Result<Goodput, AvailabilityError> {
        self.check()?;
        let (p, units, need) = self.units();
        let max_slices = units / need;
        // P(H = h) for H ~ Binomial(units, p), summed in logs to stay finite.
        let ln_choose =
            |n: u64, k: u64| -> f64 { (1..=k).map(|i| ((n - k + i) as f64 / i as f64).ln()).sum() };
        let (mut slices, mut schedulable) = (0.0, 0.0);
        for h in 0..=units {
            let prob = if p == 0.0 {
                f64::from(u8::from(h == 0))
            } else if p == 1.0 {
                f64::from(u8::from(h == units))
            } else {
                (ln_choose(units, h) + h as f64 * p.ln() + (units - h) as f64 * (1.0 - p).ln())
                    .exp()
            };
            let s = (h / need).min(max_slices);
            slices += prob * s as f64;
            if s > 0 {
                schedulable += prob;
            }
        }
        Ok(Goodput {
            goodput: slices * self.slice_chips as f64 / POD_CHIPS as f64,
            slices,
            p_schedulable: schedulable,
        })
    }

    /// Goodput by Monte Carlo: `trials` pods with every host drawn up or down from the stream
    /// `availability` of `seed`.
    pub fn monte_carlo(&self, trials: u64, seed: u64) -> Result<Goodput, AvailabilityError> {
        self.check()?;
        let (_, units, need) = self.units();
        let hosts_per_unit = POD_CHIPS / CHIPS_PER_HOST / units;
        let mut rng = RngStreams::new(seed).stream("availability");
        // A host is up when a 64-bit draw falls below A x 2^64.
        let threshold = (self.host_availability * 18_446_744_073_709_551_616.0) as u64;
        let up = |rng: &mut podsim_engine::SimRng| {
            self.host_availability >= 1.0 || rng.next_u64() < threshold
        };
        let (mut slices, mut schedulable) = (0u64, 0u64);
        podsim_engine::watch::begin("trials drawn", trials);
        for trial in 0..trials {
            podsim_engine::watch::done(trial);
            let mut healthy = 0;
            for _ in 0..units {
                // Draw every host, so the stream does not depend on which fail first.
                let mut all = true;
                for _ in 0..hosts_per_unit {
                    all &= up(&mut rng);
                }
                healthy += u64::from(all);
            }
            let s = (healthy / need).min(units / need);
            slices += s;
            schedulable += u64::from(s > 0);
        }
        let t = trials.max(1) as f64;
        let slices = slices as f64 / t;
        Ok(Goodput {
            goodput: slices * self.slice_chips as f64 / POD_CHIPS as f64,
            slices,
            p_schedulable: schedulable as f64 / t,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ocs(chips: u64, a: f64) -> Availability {
        Availability {
            slice_chips: chips,
            host_availability: a,
            static_wiring: false,
        }
    }

    #[test]
    fn fig_4_caption_with_ocs() {
        // tpu-v4-isca2023.txt Fig. 4 caption: at 99.0% and 99.5% host availability, 1024-chip
        // slices give 75% goodput (3 slices, the 4th has no spares), 2048 give 50%, 3072 75%.
        // A block is up with 0.99^16 = 0.851 (0.995^16 = 0.923): about 54 (59) of 64 blocks,
        // so floor(54 / 16) = 3 slices of 16 blocks, 1 of 32, 1 of 48.
        for a in [0.99, 0.995] {
            for (chips, want) in [(1024, 0.75), (2048, 0.50), (3072, 0.75)] {
                let g = ocs(chips, a).exact().unwrap().goodput;
                assert!((g - want).abs() < 0.01, "{chips} at {a}: {g}");
            }
        }
    }

    #[test]
    fn without_ocs_only_99_9_percent_is_reasonable() {
        // Static regions of 1024 chips need all 256 hosts up: 0.999^256 = 0.774 at 99.9%,
        // 0.99^256 = 0.076 at 99.0% (section 2.4: "host availability must be 99.9%").
        let s = |a| Availability {
            slice_chips: 1024,
            host_availability: a,
            static_wiring: true,
        };
        assert!((s(0.999).exact().unwrap().goodput - 0.999f64.powi(256)).abs() < 1e-12);
        assert!((s(0.99).exact().unwrap().goodput - 0.99f64.powi(256)).abs() < 1e-12);
    }

    #[test]
    fn monte_carlo_agrees_with_the_closed_form() {
        for q in [
            ocs(1024, 0.99),
            ocs(192, 0.995),
            Availability {
                slice_chips: 256,
                host_availability: 0.995,
                static_wiring: true,
            },
        ] {
            let e = q.exact().unwrap();
            let m = q.monte_carlo(4000, 7).unwrap();
            // 4000 trials: the standard error of the goodput is below 0.01.
            assert!(
                (e.goodput - m.goodput).abs() < 0.02,
                "{q:?}: {e:?} vs {m:?}"
            );
            assert!((e.p_schedulable - m.p_schedulable).abs() < 0.03);
        }
        // Same seed, same answer.
        assert_eq!(
            ocs(512, 0.99).monte_carlo(100, 3).unwrap(),
            ocs(512, 0.99).monte_carlo(100, 3).unwrap()
        );
    }

    #[test]
    fn sizes_the_wiring_cannot_make_are_errors() {
        assert!(ocs(100, 0.99).exact().is_err());
        assert!(ocs(8192, 0.99).exact().is_err());
        assert!(ocs(1024, 1.5).exact().is_err());
    }
}
