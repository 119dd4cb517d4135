//! The packet level's run as the engines share it: what is asked (a traffic [`Pattern`] and its
//! destinations, a [`RunSpec`]), what is measured ([`NocResult`], a [`PacketLog`] of delivered
//! packets) and the protocol's constants. Both engines (podsim's routers in `traffic.rs`, the
//! BookSim-exact router in `booksim.rs`) read it; neither reads the other.

use rand::RngCore;
use serde::Serialize;

use podsim_topology::Network;

use crate::config::ConfigError;
use crate::sim::{Delivered, LinkStat};

/// Where each source sends.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern {
    /// Every endpoint equally likely (the source itself included, as in BookSim).
    Uniform,
    /// Coordinates reversed: (x, y) to (y, x) on a square grid (any cube whose dimensions read
    /// the same backwards).
    Transpose,
    /// Every address bit inverted (power-of-two endpoint counts).
    BitComplement,
    /// Address bits reversed (power-of-two endpoint counts).
    BitReverse,
    /// Address bits rotated left by one (power-of-two endpoint counts).
    Shuffle,
    /// Each coordinate advanced by ceil(k/2) - 1 (Dally and Towles' tornado).
    Tornado,
    /// Each coordinate advanced by one.
    Neighbor,
    /// With probability `fraction` to one of `nodes` (chosen uniformly), else uniform.
    Hotspot {
        /// The hot endpoints.
        nodes: Vec<usize>,
        /// Share of packets sent to them.
        fraction: f64,
    },
    /// Source s sends its i-th packet to (s + 1 + i mod (N - 1)) mod N: every source walks
    /// every other endpoint, and at each step the sources together form a permutation.
    AllToAll,
}

/// Every pattern name, for messages.
pub const PATTERNS: &str = "uniform, transpose, bitcomp, bitrev, shuffle, tornado, neighbor, \
                            hotspot[:N,N...][@FRACTION], all-to-all";

impl Pattern {
    /// The pattern called `s`; `hotspot` alone is node 0 at 10%, `hotspot:0,63@0.2` two hot
    /// nodes taking 20% of packets.
    pub fn parse(s: &str) -> Result<Self, ConfigError> {
        let bad = |why: String| ConfigError::new("traffic", why);
        Ok(match s {
            "uniform" => Pattern::Uniform,
            "transpose" => Pattern::Transpose,
            "bitcomp" => Pattern::BitComplement,
            "bitrev" => Pattern::BitReverse,
            "shuffle" => Pattern::Shuffle,
            "tornado" => Pattern::Tornado,
            "neighbor" => Pattern::Neighbor,
            "all-to-all" => Pattern::AllToAll,
            _ if s.starts_with("hotspot") => {
                let rest = &s["hotspot".len()..];
                let (list, frac) = match rest.split_once('@') {
                    Some((l, f)) => (l, Some(f)),
                    None => (rest, None),
                };
                let nodes = match list.strip_prefix(':') {
                    Some(l) => l
                        .split(',')
                        .map(|n| {
                            n.trim().parse::<usize>().map_err(|_| {
                                bad(format!("hotspot node `{n}` is not a whole number"))
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    None if list.is_empty() => vec![0],
                    None => return Err(bad(format!("unknown pattern `{s}`; expected {PATTERNS}"))),
                };
                let fraction = match frac {
                    Some(f) => f
                        .parse::<f64>()
                        .ok()
                        .filter(|f| (0.0..=1.0).contains(f))
                        .ok_or_else(|| {
                            bad(format!(
                                "hotspot fraction `{f}`: expected a number from 0 to 1"
                            ))
                        })?,
                    None => 0.1,
                };
                Pattern::Hotspot { nodes, fraction }
            }
            _ => return Err(bad(format!("unknown pattern `{s}`; expected {PATTERNS}"))),
        })
    }
}

/// A map from (coordinates, dimensions) to coordinates.
type CoordMap = dyn Fn(&[u32], &[u32]) -> Vec<u32>;

/// Destinations for a pattern on one network.
pub(crate) struct Destinations {
    pattern: Pattern,
    n: usize,
    perm: Vec<u32>,
    sent: Vec<u64>,
}

impl Destinations {
    pub(crate) fn new(pattern: &Pattern, net: &Network, n: usize) -> Result<Self, ConfigError> {
        let bad = |why: String| ConfigError::new("traffic", why);
        let pow2 = || -> Result<u32, ConfigError> {
            if n.is_power_of_two() {
                Ok(n.trailing_zeros())
            } else {
                Err(bad(format!(
                    "this pattern permutes address bits, so it needs a power-of-two number of \
                     endpoints; {} has {n}",
                    net.shorthand()
                )))
            }
        };
        let cube =
            || {
                net.cube().filter(|c| c.node_count() as usize == n).ok_or_else(|| {
                bad(format!(
                    "this pattern moves coordinates, so it needs a k-ary n-cube; {} is not one",
                    net.shorthand()
                ))
            })
            };
        let by_coords = |f: &CoordMap| -> Result<Vec<u32>, ConfigError> {
            let c = cube()?;
            (0..n as u64)
                .map(|i| {
                    let x = c.coords(podsim_topology::NodeId(i)).unwrap_or_default();
                    let y = f(&x, c.dims());
                    c.node_at(&y)
                        .map(|v| v.0 as u32)
                        .ok_or_else(|| bad("pattern left the network".into()))
                })
                .collect()
        };
        let perm: Vec<u32> = match pattern {
            Pattern::BitComplement => {
                let b = pow2()?;
                (0..n as u32)
                    .map(|i| !i & ((1u64 << b) - 1) as u32)
                    .collect()
            }
            Pattern::BitReverse => {
                let b = pow2()?;
                (0..n as u32)
                    .map(|i| {
                        if b == 0 {
                            0
                        } else {
                            i.reverse_bits() >> (32 - b)
                        }
                    })
                    .collect()
            }
            Pattern::Shuffle => {
                let b = pow2()?;
                (0..n as u32)
                    .map(|i| {
                        if b == 0 {
                            0
                        } else {
                            ((i << 1) | (i >> (b - 1))) & ((1u64 << b) - 1) as u32
                        }
                    })
                    .collect()
            }
            Pattern::Transpose => {
                let c = cube()?;
                let d = c.dims();
                if d.iter().ne(d.iter().rev()) {
                    return Err(bad(format!(
                        "transpose needs dimensions that read the same backwards; {} has {d:?}",
                        net.shorthand()
                    )));
                }
                by_coords(&|x, _| x.iter().rev().copied().collect())?
            }
            Pattern::Tornado => by_coords(&|x, k| {
                x.iter()
                    .zip(k)
                    .map(|(&x, &k)| (x + k.div_ceil(2) - 1) % k)
                    .collect()
            })?,
            Pattern::Neighbor => {
                by_coords(&|x, k| x.iter().zip(k).map(|(&x, &k)| (x + 1) % k).collect())?
            }
            Pattern::Hotspot { nodes, .. } => {
                if let Some(&h) = nodes.iter().find(|&&h| h >= n) {
                    return Err(bad(format!(
                        "hotspot node {h} does not exist ({} has {n} endpoints)",
                        net.shorthand()
                    )));
                }
                Vec::new()
            }
            Pattern::Uniform | Pattern::AllToAll => Vec::new(),
        };
        Ok(Destinations {
            pattern: pattern.clone(),
            n,
            perm,
            sent: vec![0; n],
        })
    }

    pub(crate) fn next(&mut self, src: usize, rng: &mut impl RngCore) -> usize {
        fn below(rng: &mut impl RngCore, n: usize) -> usize {
            ((u128::from(rng.next_u64()) * n as u128) >> 64) as usize
        }
        match &self.pattern {
            Pattern::Uniform => below(rng, self.n),
            Pattern::Hotspot { nodes, fraction } => {
                let hot = (rng.next_u64() as f64) < fraction * 18_446_744_073_709_551_616.0;
                if hot {
                    nodes[below(rng, nodes.len())]
                } else {
                    below(rng, self.n)
                }
            }
            Pattern::AllToAll => {
                let i = self.sent[src];
                self.sent[src] += 1;
                if self.n < 2 {
                    src
                } else {
                    (src + 1 + (i % (self.n as u64 - 1)) as usize) % self.n
                }
            }
            _ => self.perm[src] as usize,
        }
    }
}

/// One synthetic run: pattern, load, seed and measurement length.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// Where packets go.
    pub pattern: Pattern,
    /// Offered load in flits per endpoint per cycle (a packet starts at each endpoint each
    /// cycle with probability rate / packet flits).
    pub rate: f64,
    /// Master seed of the traffic's random stream.
    pub seed: u64,
    /// Cycles in the measurement window.
    pub cycles: u64,
    /// Cycles per warm-up sample (warm-up ends when two consecutive samples agree on average
    /// latency and accepted throughput within 5%, or after 20 samples).
    pub sample_cycles: u64,
}

impl RunSpec {
    /// `pattern` at `rate`, seed 1, 10,000 measured cycles, 1,000-cycle warm-up samples.
    pub fn new(pattern: Pattern, rate: f64) -> Self {
        RunSpec {
            pattern,
            rate,
            seed: 1,
            cycles: 10_000,
            sample_cycles: 1_000,
        }
    }
}

/// What a synthetic run measured. Latencies are in cycles, from a packet's creation at its
/// source to its tail flit's arrival at the destination interface, over the packets created
/// in the measurement window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NocResult {
    /// The load asked for, flits per endpoint per cycle.
    pub offered_flits_per_node_cycle: f64,
    /// The load the sources actually generated in the window.
    pub generated_flits_per_node_cycle: f64,
    /// Flits delivered per endpoint per cycle in the window.
    pub accepted_flits_per_node_cycle: f64,
    /// Mean latency of measured packets (delivered ones, if saturated).
    pub average_latency_cycles: f64,
    /// Median latency.
    pub p50_latency_cycles: u64,
    /// 99th-percentile latency.
    pub p99_latency_cycles: u64,
    /// Largest latency.
    pub max_latency_cycles: u64,
    /// Mean time in the source queue, before the head flit left the interface.
    pub average_queueing_cycles: f64,
    /// Mean time from the head leaving the source interface to the tail arriving.
    pub average_network_cycles: f64,
    /// Mean router-to-router hops of measured packets.
    pub average_hops: f64,
    /// Whether the network could not carry the load (see [`run`]).
    pub saturated: bool,
    /// Measured packets (created in the window).
    pub measured_packets: u64,
    /// Warm-up cycles before the window.
    pub warmup_cycles: u64,
    /// Every cycle simulated: warm-up, window and drain.
    pub simulated_cycles: u64,
    /// Flit traversals of router-to-router links over the whole run.
    pub flit_hops: u64,
    /// Per-link counters over the window (network links only).
    #[serde(skip)]
    pub links: Vec<LinkStat>,
    /// The cycles `links` counts over, to divide their flits by for a utilisation: the
    /// measured cycles in the podsim mode; in the booksim mode BookSim's measurement window,
    /// from the reset after warm-up to the end of the last sample period (the window of the
    /// accepted rate).
    #[serde(skip)]
    pub window_cycles: u64,
    /// The fabric's cycle, in picoseconds (one flit on the fastest link).
    #[serde(skip)]
    pub cycle_ps: u64,
}

/// The shortest measurement window: fewer cycles cannot tell a latency or a saturation (a
/// 1-cycle window measured nothing and was called saturated).
pub const MIN_WINDOW_CYCLES: u64 = 100;

/// The drain runs at least this many cycles (and at least as long as the window) before a run
/// whose measured packets have not all arrived is called saturated.
pub const MIN_DRAIN_CYCLES: u64 = 1_000;

/// Below this ratio of accepted to generated load the network is called saturated.
pub const SATURATION_RATIO: f64 = 0.95;
/// Router-cycles the packet level runs a second on one core, for the up-front estimate
/// (measured: 35 M on mesh:8x8, uniform traffic at 0.1 flits per node per cycle).
pub const ROUTER_CYCLES_PER_S: f64 = 30e6;

/// Say how long a run of `spec` on `net` will take, once it is built and about to start
/// ([`podsim_engine::watch::estimate`]): the window and a drain of up to as long again.
pub(crate) fn announce(net: &Network, spec: &RunSpec) {
    let routers = net.node_count() as f64;
    let cycles = spec.cycles as f64 * 2.0 + MIN_DRAIN_CYCLES as f64;
    podsim_engine::watch::estimate(
        &format!(
            "a load of {:.1e} router-cycles with warm-up and drain",
            routers * cycles
        ),
        routers * cycles / ROUTER_CYCLES_PER_S,
    );
}

/// The packets a run delivered (warm-up, window and drain), for traces: the first `limit`
/// kept, the rest counted.
#[derive(Debug, Clone, Default)]
pub struct PacketLog {
    /// The most packets kept.
    pub limit: usize,
    /// Delivered packets, in the order they arrived.
    pub kept: Vec<Delivered>,
    /// Packets past the limit.
    pub cut: u64,
}

impl PacketLog {
    pub(crate) fn record(&mut self, got: &[Delivered]) {
        let room = self.limit.saturating_sub(self.kept.len());
        self.kept.extend(got.iter().take(room).copied());
        self.cut += got.len().saturating_sub(room) as u64;
    }
}

/// Rates `from`, `from + step`, ... up to `to` (inclusive, within rounding), from `A:B:S`.
pub fn parse_rates(s: &str) -> Result<Vec<f64>, ConfigError> {
    let bad = || {
        ConfigError::new(
            "sweep",
            format!("expected FROM:TO:STEP with 0 < FROM <= TO and STEP > 0, got `{s}`"),
        )
    };
    let parts: Vec<f64> = s
        .split(':')
        .map(|x| x.trim().parse::<f64>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let [a, b, st] = parts[..] else {
        return Err(bad());
    };
    if !(a > 0.0 && b >= a && st > 0.0 && a.is_finite() && b.is_finite()) {
        return Err(bad());
    }
    let n = ((b - a) / st + 1e-9).floor() as u64;
    if n > 10_000 {
        return Err(bad());
    }
    // Rounded to 12 decimals so 0.05 + 2 x 0.05 prints as 0.15.
    Ok((0..=n)
        .map(|i| ((a + i as f64 * st) * 1e12).round() / 1e12)
        .collect())
}

/// Whether `pattern` can run on `net` (bit patterns need a power-of-two endpoint count,
/// coordinate patterns a k-ary n-cube, hotspots existing nodes).
pub fn check(pattern: &Pattern, net: &Network) -> Result<(), ConfigError> {
    Destinations::new(pattern, net, net.endpoints() as usize).map(|_| ())
}

#[cfg(test)]
pub(crate) fn dests_for_tests(
    p: &Pattern,
    net: &Network,
) -> impl FnMut(usize, &mut podsim_engine::SimRng) -> usize {
    let mut d = Destinations::new(p, net, net.endpoints() as usize).unwrap();
    move |s, rng| d.next(s, rng)
}
