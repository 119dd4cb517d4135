//! Several seeds of one load (`podsim noc --seeds N`): each seed is its own run, exact as run
//! alone; the summary is the mean and spread of the runs' average latency and accepted
//! throughput, for confidence intervals.

use podsim_topology::Network;
use rayon::prelude::*;
use serde::Serialize;

use crate::NocError;
use crate::config::{ConfigError, RouterConfig};
use crate::fabric::NocRouting;
use crate::spec::{NocResult, RunSpec};
use crate::traffic::run;

/// One load run with the seeds `first_seed`, `first_seed + 1`, ..., `first_seed + seeds - 1`:
/// the mean, the sample standard deviation (n - 1 in the denominator; 0 for one seed) and the
/// least and greatest value over the seeds of the runs' average latency (cycles) and accepted
/// throughput (flits per node per cycle), and every run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedSummary {
    /// The load asked for, flits per endpoint per cycle.
    pub offered_flits_per_node_cycle: f64,
    /// How many seeds ran.
    pub seeds: u32,
    /// The first seed (`--seed`).
    pub first_seed: u64,
    /// Mean over the seeds of the average latency, cycles.
    pub latency_mean: f64,
    /// Sample standard deviation of the average latency over the seeds, cycles.
    pub latency_stddev: f64,
    /// Least average latency of a seed, cycles.
    pub latency_min: f64,
    /// Greatest average latency of a seed, cycles.
    pub latency_max: f64,
    /// Mean over the seeds of the accepted throughput, flits per node per cycle.
    pub accepted_mean: f64,
    /// Sample standard deviation of the accepted throughput over the seeds.
    pub accepted_stddev: f64,
    /// Least accepted throughput of a seed.
    pub accepted_min: f64,
    /// Greatest accepted throughput of a seed.
    pub accepted_max: f64,
    /// Seeds whose run saturated (their latency counts only the packets that arrived).
    pub saturated_runs: u32,
    /// Each seed's run, in seed order.
    pub runs: Vec<NocResult>,
}

/// Mean, sample standard deviation, least and greatest of `xs` (not empty), summed in order.
fn spread(xs: &[f64]) -> (f64, f64, f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let stddev = if xs.len() > 1 {
        (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, stddev, min, max)
}

impl SeedSummary {
    /// The summary of `runs` (not empty), those of the seeds from `first_seed` in order.
    pub fn new(first_seed: u64, runs: Vec<NocResult>) -> SeedSummary {
        let lat: Vec<f64> = runs.iter().map(|r| r.average_latency_cycles).collect();
        let acc: Vec<f64> = runs
            .iter()
            .map(|r| r.accepted_flits_per_node_cycle)
            .collect();
        let (latency_mean, latency_stddev, latency_min, latency_max) = spread(&lat);
        let (accepted_mean, accepted_stddev, accepted_min, accepted_max) = spread(&acc);
        SeedSummary {
            offered_flits_per_node_cycle: runs[0].offered_flits_per_node_cycle,
            seeds: runs.len() as u32,
            first_seed,
            latency_mean,
            latency_stddev,
            latency_min,
            latency_max,
            accepted_mean,
            accepted_stddev,
            accepted_min,
            accepted_max,
            saturated_runs: runs.iter().filter(|r| r.saturated).count() as u32,
            runs,
        }
    }
}

/// Run `spec` at each of `rates` in order with the seeds `spec.seed` to `spec.seed + seeds - 1`
/// (the seeds of a load on every worker thread at once; each run is its own simulation, so
/// the numbers are the same on any thread count), stopping after the first load at which a
/// seed saturated.
pub fn sweep_seeds(
    net: &Network,
    routing: NocRouting,
    cfg: &RouterConfig,
    spec: &RunSpec,
    rates: &[f64],
    seeds: u32,
) -> Result<Vec<SeedSummary>, NocError> {
    if seeds == 0 || spec.seed.checked_add(u64::from(seeds) - 1).is_none() {
        return Err(ConfigError::new(
            "seeds",
            format!(
                "expected at least 1 seed, the last (seed + N - 1) within 64 bits; got {seeds} \
                 from seed {}",
                spec.seed
            ),
        )
        .into());
    }
    // The runs in flight at once share the memory limit; a load whose runs do not fit side by
    // side runs its seeds one at a time under the whole limit (the same numbers either way).
    let at_once = rayon::current_num_threads().clamp(1, seeds as usize) as u64;
    let shared = RouterConfig {
        memory_limit: cfg.memory_limit / at_once,
        ..cfg.clone()
    };
    let one = |cfg: &RouterConfig, rate: f64, k: u64| {
        let s = RunSpec {
            rate,
            seed: spec.seed + k,
            ..spec.clone()
        };
        run(net, routing, cfg, &s)
    };
    let mut out = Vec::with_capacity(rates.len());
    for &rate in rates {
        let side_by_side: Result<Vec<NocResult>, NocError> = (0..u64::from(seeds))
            .into_par_iter()
            .map(|k| one(&shared, rate, k))
            .collect();
        let runs = match side_by_side {
            Err(NocError::Memory { .. }) if at_once > 1 => (0..u64::from(seeds))
                .map(|k| one(cfg, rate, k))
                .collect::<Result<Vec<_>, _>>()?,
            r => r?,
        };
        let summary = SeedSummary::new(spec.seed, runs);
        let stop = summary.saturated_runs > 0;
        out.push(summary);
        if stop {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{SeedSummary, spread, sweep_seeds};
    use crate::{NocRouting, Pattern, RouterConfig, RouterMode, RunSpec, run};
    use podsim_topology::{KAryNCube, LinkKind, LinkSpec, Network};
    use podsim_units::{Bandwidth, SimDuration};

    fn cube(dims: &[u32], wrap: bool) -> Network {
        let link = LinkSpec {
            kind: LinkKind::OnChip,
            bandwidth: Bandwidth::from_gbps(16).unwrap(),
            latency: SimDuration::from_ns(1),
        };
        Network::Cube(KAryNCube::new(dims.to_vec(), vec![wrap; dims.len()], link).unwrap())
    }

    fn spec(seed: u64) -> RunSpec {
        RunSpec {
            seed,
            cycles: 2_000,
            ..RunSpec::new(Pattern::Uniform, 0.2)
        }
    }

    /// By hand: 1, 2, 3, 4 have mean 10 / 4 = 2.5, squared deviations 2.25 + 0.25 + 0.25 +
    /// 2.25 = 5, sample variance 5 / 3, standard deviation sqrt(5 / 3) = 1.2909944487358056;
    /// one value has no spread.
    #[test]
    fn the_spread_is_the_sample_standard_deviation() {
        let (mean, sd, min, max) = spread(&[3.0, 1.0, 4.0, 2.0]);
        assert_eq!((mean, min, max), (2.5, 1.0, 4.0));
        assert!((sd - 1.290_994_448_735_805_6).abs() < 1e-15, "{sd}");
        assert_eq!(spread(&[7.5]), (7.5, 0.0, 7.5, 7.5));
    }

    /// With one seed the summary is the run alone; with three, each run is the single run of
    /// its seed and the mean, spread and extremes are those of the three single runs, computed
    /// here from them by the formulas; both router modes, on one thread and on three.
    #[test]
    fn seeds_summarize_the_single_runs() {
        let booksim = RouterConfig {
            router: RouterMode::Booksim,
            ..RouterConfig::default()
        };
        for (net, cfg) in [
            (cube(&[4, 4], false), RouterConfig::default()),
            (cube(&[4, 4], true), booksim),
        ] {
            let one =
                sweep_seeds(&net, NocRouting::DimensionOrder, &cfg, &spec(5), &[0.2], 1).unwrap();
            let alone = run(&net, NocRouting::DimensionOrder, &cfg, &spec(5)).unwrap();
            assert_eq!(one.len(), 1);
            assert_eq!(one[0].runs, vec![alone.clone()]);
            assert_eq!(one[0].latency_mean, alone.average_latency_cycles);
            assert_eq!(one[0].accepted_mean, alone.accepted_flits_per_node_cycle);
            assert_eq!((one[0].latency_stddev, one[0].accepted_stddev), (0.0, 0.0));
            let singles: Vec<_> = (5..8)
                .map(|s| run(&net, NocRouting::DimensionOrder, &cfg, &spec(s)).unwrap())
                .collect();
            let (a, b, c) = (
                singles[0].average_latency_cycles,
                singles[1].average_latency_cycles,
                singles[2].average_latency_cycles,
            );
            assert!(a != b || b != c, "the seeds should differ");
            let mean = (a + b + c) / 3.0;
            let sd = (((a - mean).powi(2) + (b - mean).powi(2) + (c - mean).powi(2)) / 2.0).sqrt();
            let (x, y, z) = (
                singles[0].accepted_flits_per_node_cycle,
                singles[1].accepted_flits_per_node_cycle,
                singles[2].accepted_flits_per_node_cycle,
            );
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let three = pool
                    .install(|| {
                        sweep_seeds(&net, NocRouting::DimensionOrder, &cfg, &spec(5), &[0.2], 3)
                    })
                    .unwrap();
                let s = &three[0];
                assert_eq!(s.runs, singles);
                assert_eq!((s.seeds, s.first_seed, s.saturated_runs), (3, 5, 0));
                assert!((s.latency_mean - mean).abs() < 1e-9 * mean);
                assert!((s.latency_stddev - sd).abs() < 1e-9 * mean);
                assert_eq!(s.latency_min, a.min(b).min(c));
                assert_eq!(s.latency_max, a.max(b).max(c));
                assert!((s.accepted_mean - (x + y + z) / 3.0).abs() < 1e-12);
                assert_eq!(s.accepted_max, x.max(y).max(z));
                assert_eq!(*s, SeedSummary::new(5, singles.clone()));
            }
        }
    }

    /// A sweep of seeds stops after the first load at which a seed saturated: on a 4x4 mesh
    /// 0.1 flits per node per cycle is far below saturation and 0.9 past it (the bisection
    /// alone bounds uniform traffic at 1.0: 8 nodes a side each send half their load across 4
    /// links a direction, 4r <= 4; the single runs confirm it), so the sweep ends at 0.9; no
    /// seeds, or seeds past 64 bits, are refused naming `seeds`.
    #[test]
    fn a_sweep_of_seeds_stops_at_saturation_and_checks_the_count() {
        let net = cube(&[4, 4], false);
        let cfg = RouterConfig::default();
        let r = &[0.1, 0.9, 0.95];
        let got = sweep_seeds(&net, NocRouting::DimensionOrder, &cfg, &spec(1), r, 2).unwrap();
        let alone = |rate: f64, seed: u64| {
            let s = RunSpec { rate, ..spec(seed) };
            run(&net, NocRouting::DimensionOrder, &cfg, &s)
                .unwrap()
                .saturated
        };
        assert!(!alone(0.1, 1) && !alone(0.1, 2));
        assert!(alone(0.9, 1) || alone(0.9, 2));
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].saturated_runs, 0);
        assert!(got[1].saturated_runs > 0);
        let e = sweep_seeds(&net, NocRouting::DimensionOrder, &cfg, &spec(1), r, 0).unwrap_err();
        assert!(e.to_string().contains("at least 1 seed"), "{e}");
        let e = sweep_seeds(
            &net,
            NocRouting::DimensionOrder,
            &cfg,
            &spec(u64::MAX),
            r,
            2,
        )
        .unwrap_err();
        let crate::NocError::Config(c) = e else {
            panic!("{e}")
        };
        assert_eq!(c.key, "seeds");
    }
}
