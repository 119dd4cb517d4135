//! One collective's settings, resolved and checked: what every size of a run or a sweep runs
//! with, and what is said of it.

use podsim_net::Packetization;
use podsim_topology::Network;

use crate::{
    Algorithm, BuildModel, CollectiveError, CollectiveOutput, Kind, LinkTiming, Measurement,
    ModelKind, Setup,
};

/// A collective on a network: kind, algorithm, model and settings, run at any size.
#[derive(Debug, Clone)]
pub struct CollectiveJob<'a> {
    /// The network.
    pub net: &'a Network,
    /// The topology as given (a shorthand, a file).
    pub topology: &'a str,
    /// The collective.
    pub kind: Kind,
    /// Its algorithm.
    pub algorithm: Algorithm,
    /// The network model.
    pub model: ModelKind,
    /// Packet overheads.
    pub packets: Packetization,
    /// Pipeline piece or DMA size in bytes (0: none).
    pub chunk: u64,
    /// The timing the runs take, as their output keys.
    pub timing: LinkTiming,
    /// The most memory a run may hold, bytes.
    pub memory_limit: u64,
}

/// A chunk that cuts a ring broadcast into more pieces than it pipelines.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} cuts {} into {pieces} pieces; the ring broadcast pipelines at most {most} (64 a rank on {ranks} ranks): give at least {}",
    podsim_units::Bytes(*chunk),
    podsim_units::Bytes(*bytes),
    podsim_units::Bytes(bytes.div_ceil(*most))
)]
pub struct TooManyPieces {
    /// The chunk, bytes.
    pub chunk: u64,
    /// The buffer, bytes.
    pub bytes: u64,
    /// The pieces it would take.
    pub pieces: u64,
    /// The most the broadcast pipelines.
    pub most: u64,
    /// The ranks.
    pub ranks: u64,
}

/// Why a sweep's sizes cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepSizeError {
    /// A size given twice.
    #[error(
        "{} is given twice (points {first} and {second}): each size is one point",
        podsim_units::Bytes(*bytes)
    )]
    Twice {
        /// The size.
        bytes: u64,
        /// Its first point, from 1.
        first: usize,
        /// Its second point.
        second: usize,
    },
    /// A size the chunk cuts into too many pieces.
    #[error(transparent)]
    Pieces(#[from] TooManyPieces),
}

impl CollectiveJob<'_> {
    /// Whether a sweep may run `sizes`: each once and each within the pieces a chunk allows.
    pub fn check_sweep(&self, sizes: &[u64]) -> Result<(), SweepSizeError> {
        if let Some(i) = (1..sizes.len()).find(|&i| sizes[..i].contains(&sizes[i])) {
            return Err(SweepSizeError::Twice {
                bytes: sizes[i],
                first: sizes[..i].iter().position(|&s| s == sizes[i]).unwrap_or(0) + 1,
                second: i + 1,
            });
        }
        for &b in sizes {
            self.check_pieces(b)?;
        }
        Ok(())
    }

    /// The title of a heatmap of the run of `bytes` per rank that took `time_s` seconds.
    pub fn heatmap_title(&self, bytes: u64, time_s: f64) -> String {
        format!(
            "{} ({}) of {} per rank on {}: link utilisation over {:.4e} s",
            self.kind,
            self.algorithm.name(),
            podsim_units::Bytes(bytes),
            self.topology,
            time_s
        )
    }

    /// The algorithm to run `kind` with on `net`: `alg` when `given`, else, on a machine
    /// file of several nodes where the kind has it, NCCL's `multi-ring` (one ring per chip
    /// of a node, each crossing the nodes on its own rails), else `alg` (the kind's first).
    pub fn default_algorithm(net: &Network, kind: Kind, alg: Algorithm, given: bool) -> Algorithm {
        match net {
            Network::Graph(g)
                if !given
                    && g.grid().len() > 1
                    && kind.algorithms().contains(&Algorithm::MultiRing) =>
            {
                Algorithm::MultiRing
            }
            _ => alg,
        }
    }

    /// The setup of one size.
    pub fn setup(&self, bytes: u64) -> Setup {
        Setup {
            kind: self.kind,
            algorithm: self.algorithm,
            bytes,
            model: self.model,
            packets: self.packets,
            chunk: self.chunk,
            ecmp: true,
            memory_limit: self.memory_limit,
        }
    }

    /// The ring broadcast pipelines at most 64 pieces a rank: a smaller chunk would be
    /// raised without a word, so it is refused with the least chunk that is taken as given.
    pub fn check_pieces(&self, bytes: u64) -> Result<(), TooManyPieces> {
        let (chunk, net) = (self.chunk, self.net);
        if chunk == 0 || self.kind != Kind::Broadcast || self.algorithm != Algorithm::Ring {
            return Ok(());
        }
        let most = net.endpoints().saturating_mul(64).max(1);
        let pieces = bytes.div_ceil(chunk);
        if pieces > most {
            return Err(TooManyPieces {
                chunk,
                bytes,
                pieces,
                most,
                ranks: net.endpoints(),
            });
        }
        Ok(())
    }

    /// Run one size on the models `models` builds.
    pub fn measure(
        &self,
        bytes: u64,
        models: &dyn BuildModel,
    ) -> Result<Measurement, CollectiveError> {
        crate::measure(self.net, &self.setup(bytes), models)
    }

    /// A run's output: the measurement `m` with the timing it ran with.
    pub fn output<'b>(&'b self, m: &'b Measurement) -> CollectiveOutput<'b> {
        CollectiveOutput::new(self.kind, self.algorithm, self.model, self.topology, m)
            .with_timing(self.timing.clone())
    }

    /// The heading of the collective: `all-reduce (ring) on torus:4x4 with the flow model`.
    pub fn described(&self) -> String {
        format!(
            "{} ({}) on {} with the {} model",
            self.kind,
            self.algorithm.name(),
            self.topology,
            self.model.name()
        )
    }

    /// The title of a sweep's plot: `all-reduce (ring) on torus:4x4, flow model`.
    pub fn plot_title(&self) -> String {
        format!(
            "{} ({}) on {}, {} model",
            self.kind,
            self.algorithm.name(),
            self.topology,
            self.model.name()
        )
    }

    /// How many of the sizes `todo` run at once on `threads` cores of each of `ranks` ranks:
    /// each rank runs its share of a batch on every core when the batch's simulations fit in
    /// the memory limit side by side, else one at a time. Each point runs within the whole
    /// limit either way, so the numbers (and whether a point's result is checked) do not
    /// depend on the thread count.
    pub fn batch(&self, todo: &[u64], threads: usize, ranks: usize) -> usize {
        let limit = u128::from(self.memory_limit);
        let footprint = |b: u64| {
            let s = self.setup(b);
            let n = self.net.endpoints() as u128;
            let request = crate::Request {
                kind: self.kind,
                algorithm: self.algorithm,
                bytes: if self.kind == Kind::Barrier { 0 } else { b },
                ranks: n as usize,
                dims: self.net.rank_grid(),
                chunk: s.chunk,
            };
            // The model and plan, and the functional check's buffers (at most ranks^2
            // entries).
            let model = if crate::by_exchange(self.net, &request, self.model) {
                crate::exchange_memory_estimate(self.net)
            } else {
                crate::memory_estimate(self.net, self.model, crate::transfers(&request))
            };
            model + n * n * u128::from(crate::CHECK_ENTRY_BYTES)
        };
        let side_by_side = || {
            let mut per: Vec<u128> = todo.iter().map(|&b| footprint(b)).collect();
            per.sort_unstable_by(|a, b| b.cmp(a));
            per.iter().take(threads).sum::<u128>() <= limit
        };
        if threads > 1 && side_by_side() {
            threads * ranks
        } else {
            ranks
        }
    }
}
