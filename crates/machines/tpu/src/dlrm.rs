//! Deep learning recommendation models on TPU v4 and v3 (tpu-v4-isca2023.txt section 3): an
//! embedding layer sharded over the chips' HBM and served by the SparseCores, or held in the
//! CPU hosts' memory, beside dense layers on the TensorCores.
//!
//! One training step, per chip (every chip alike; B examples per chip, F features, valency v,
//! embedding width d):
//!
//! * **Lookups** (forward): B x F x v rows of d fp32 values gathered on the chip that holds
//!   them (tables sharded by rows over all chips, section 3.3) and summed per feature, at the
//!   slower of the HBM's random-access rate and the SparseCores' rate (each SC: 16 tiles with
//!   an 8-wide scVPU, section 3.5, so a d-wide row takes d/8 tile cycles).
//! * **All-to-all** of the pooled vectors (B x F x d bf16 per chip, to the chip that owns each
//!   example), forward, and of their gradients, backward: the variable-length all-to-all of
//!   section 3.4, run on the slice's network (flow model, dimension-wise, so bisection
//!   matters), plus a per-peer overhead on the SparseCore for each of the two exchanges.
//! * **Updates** (backward): the same rows read, updated and written (scatter) at the same
//!   rates as the lookups, twice the bytes.
//! * **Dense layers** on the TensorCores: 6 FLOPs per dense weight per example (forward and
//!   backward) as GEMMs through the chip's matrix units, and an all-reduce of the bf16 dense
//!   gradients over all chips (flow model, all-dimensions: a share of the gradients per
//!   dimension and direction, every link at once, since "injection bandwidth limits" a
//!   data-parallel all-reduce, section 3.4).
//!
//! The step is the longer of the sparse part (lookups + all-to-alls + updates) and the dense
//! part: the SparseCores and TensorCores run in parallel (section 3.5, Fig. 10's caption: "the
//! maximum of SparseComputingTime and DenseComputingTime is the end-to-end training step
//! time").
//!
//! With embeddings in host memory (no SparseCore), the lookups and updates run at the host's
//! DRAM rate shared by its chips (4 TPU v4 per host, Table 4), and the pooled vectors travel
//! between hosts over the data-center network instead of ICI.

use podsim_collective::{Algorithm, CollectiveError, Kind, ModelKind, Setup};
use podsim_compute::chips::{Chip, TpuFeatures};
use podsim_net::Packetization;
use podsim_topology::{KAryNCube, LinkKind, LinkSpec, Network, TopologyError};
use podsim_units::Bandwidth;

/// Where the embedding tables live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Sharded over the chips' HBM, served by the SparseCores.
    SparseCore,
    /// In the CPU hosts' DRAM.
    Host,
}

impl Placement {
    /// From `sparsecore` or `host`.
    pub fn parse(s: &str) -> Option<Placement> {
        match s {
            "sparsecore" => Some(Placement::SparseCore),
            "host" => Some(Placement::Host),
            _ => None,
        }
    }
}

/// A DLRM.
#[derive(Debug, Clone, PartialEq)]
pub struct Dlrm {
    /// Its name.
    pub name: &'static str,
    /// Weights of the dense (fully connected) layers.
    pub dense_params: f64,
    /// Dense layers (the weights split evenly among them, square).
    pub dense_layers: u64,
    /// Embedding tables.
    pub tables: u64,
    /// Categorical features (each looks up one table).
    pub features: u64,
    /// Embedding width.
    pub dim: u64,
    /// Average rows looked up per feature per example.
    pub valency: f64,
    /// Examples per chip per step (the global batch scales with chips).
    pub batch_per_chip: u64,
    /// Where the figures come from.
    pub source: &'static str,
}

impl Dlrm {
    /// Fig. 8's model: ~100M dense weights, ~20B embedding weights, ~300 features into ~150
    /// tables, valency 1-100.
    pub fn fig8() -> Dlrm {
        Dlrm {
            name: "dlrm-fig8",
            dense_params: 100e6,
            dense_layers: 4,
            tables: 150,
            features: 300,
            dim: 128,
            valency: 10.0,
            batch_per_chip: 512,
            source: "tpu-v4-isca2023.txt Fig. 8 caption (100M dense, 20B embedding weights, 300 features, 150 tables, valency 1-100); assumed: width 128 (20e9 / 150 / 128 = 1.04M rows per table), mean valency 10, 4 square dense layers, 512 examples per chip",
        }
    }

    /// Embedding weights.
    pub fn embedding_params(&self) -> f64 {
        // Rows sized so that the tables hold 20B weights for Fig. 8's model: the lookup cost
        // does not depend on the row count, only the capacity check does.
        20e9
    }
}

/// A TPU generation's per-chip figures for embeddings: the chip preset and its Table 4
/// features (SparseCores, HBM, chips per host, ICI).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Generation {
    /// The chip preset (`tpuv4` or `tpuv3`).
    pub chip: Chip,
    /// Its Table 4 features.
    pub tpu: TpuFeatures,
}

impl Generation {
    /// The generation of chip preset `name`, if it is a TPU.
    pub fn of(name: &str) -> Option<Generation> {
        let chip = Chip::preset(name)?;
        Some(Generation {
            chip,
            tpu: chip.tpu?,
        })
    }
    /// TPU v4.
    pub fn tpu_v4() -> Generation {
        Self::of("tpuv4").expect("tpuv4 is a TPU preset")
    }
    /// TPU v3.
    pub fn tpu_v3() -> Generation {
        Self::of("tpuv3").expect("tpuv3 is a TPU preset")
    }
}

/// Tiles per SparseCore, each with its HBM channel and an 8-wide scVPU (section 3.5).
pub const SC_TILES: u64 = 16;
/// scVPU lanes (section 3.5).
pub const SC_LANES: u64 = 8;
/// Fraction of HBM bandwidth that gathers and scatters of whole embedding rows reach: an
/// assumption (random 512-byte accesses spread over all channels).
pub const HBM_GATHER_EFFICIENCY: f64 = 0.5;
/// SparseCore time per peer and exchange of the variable-length all-to-all (building and
/// issuing the per-destination transfers, section 3.4): an assumption, 1 us. It is what makes
/// "SC overheads start to dominate" at 1024 chips (Fig. 8).
pub const SC_PEER_OVERHEAD_S: f64 = 1e-6;
/// A host's DRAM bandwidth for embedding gathers: an assumption, two Skylake sockets of six
/// DDR4-2666 channels at their 256 GB/s peak (the host's caches and prefetchers stream each
/// 512-byte row as eight cache lines; the peak makes the host's time, and so the loss of
/// placing embeddings there, a lower bound).
pub const HOST_DRAM_BYTES_PER_S: f64 = 256e9;
/// Why a DLRM step, or the slice it runs on, cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum DlrmError {
    /// A TPU v3 slice side of 0 or more than 32 chips.
    #[error("a TPU v3 slice is at most 32 x 32 chips, not {a}x{b}")]
    V3Size {
        /// Chips along the first side.
        a: u32,
        /// Chips along the second.
        b: u32,
    },
    /// The TPU v3 slice's torus does not build (the topology's reason).
    #[error("{}", .0.why)]
    Topology(#[source] TopologyError),
    /// A collective could not be timed on the slice.
    #[error(transparent)]
    Collective(#[from] CollectiveError),
    /// The embedding tables do not fit the HBM left after the dense model.
    #[error(
        "the embedding tables with their optimizer state need {gb_per_chip:.1} GB per chip on {chips} chips, more than 3/4 of the 32 GiB of HBM"
    )]
    Capacity {
        /// Bytes per chip the tables and their optimizer state need, GB.
        gb_per_chip: f64,
        /// Chips.
        chips: u64,
    },
    /// The generation's chip is not a chip preset.
    #[error("no chip preset `{chip}`")]
    NoChipPreset {
        /// The chip's name.
        chip: &'static str,
    },
    /// The chip's matrix units cannot run the dense GEMMs (the system crate's message).
    #[error("{0}")]
    Gemm(String),
    /// A network that is neither a 3-D nor a 2-D slice.
    #[error("{network} is neither a TPU v4 slice (3-D) nor a TPU v3 slice (2-D)")]
    Generation {
        /// The network's shorthand.
        network: String,
    },
    /// A `tpuv3:` spec whose sides are not whole numbers.
    #[error("`{spec}`: expected tpuv3:AxB")]
    V3Spec {
        /// The spec as given.
        spec: String,
    },
    /// A `tpuv3:` spec without two sides.
    #[error("`{spec}`: a TPU v3 slice has two sides, tpuv3:AxB")]
    V3Sides {
        /// The spec as given.
        spec: String,
    },
    /// A `tpuv4:slice=` spec whose sides are not whole numbers.
    #[error("`{spec}`: expected tpuv4:slice=AxBxC[:twisted]")]
    V4Spec {
        /// The spec as given.
        spec: String,
    },
    /// A `tpuv4:slice=` spec without three sides.
    #[error("`{spec}`: a TPU v4 slice has three sides")]
    V4Sides {
        /// The spec as given.
        spec: String,
    },
    /// The pod cannot make the TPU v4 slice.
    #[error(transparent)]
    Slice(#[from] podsim_train::TrainError),
    /// A spec that names no TPU slice.
    #[error("`{spec}` is not a TPU slice: tpuv4:slice=AxBxC[:twisted] or tpuv3:AxB")]
    NotTpu {
        /// The spec as given.
        spec: String,
    },
}

/// The message, for callers that report errors as text.
impl From<DlrmError> for String {
    fn from(e: DlrmError) -> String {
        e.to_string()
    }
}

/// A host's data-center network bandwidth each way: an assumption, 100 Gb/s.
pub const HOST_NIC_BYTES_PER_S: f64 = 12.5e9;
/// Bytes per embedding weight (fp32).
const ELEM_EMB: f64 = 4.0;
/// Bytes per pooled activation sent over the network (bf16).
const ELEM_ACT: f64 = 2.0;

/// A TPU v3 slice `a x b` (2-D torus of 4 links at 70 GB/s, Table 4 via the chip preset):
/// wraparound only along a
/// side of 32 (an assumption: the v3 pod's 32 x 32 torus closes only across the full pod, so
/// smaller slices are meshes along their shorter sides), with the ICI hop latency assumption
/// of TPU v4.
pub fn tpuv3_slice(a: u32, b: u32) -> Result<Network, DlrmError> {
    if a == 0 || b == 0 || a > 32 || b > 32 {
        return Err(DlrmError::V3Size { a, b });
    }
    let link = LinkSpec {
        kind: LinkKind::Electrical,
        bandwidth: Bandwidth::from_bytes_per_s(Generation::tpu_v3().tpu.ici_link_bytes_per_s)
            .expect("positive"),
        latency: podsim_system::presets::ICI_HOP_LATENCY,
    };
    KAryNCube::new(vec![a, b], vec![a == 32, b == 32], link)
        .map(Network::Cube)
        .map_err(DlrmError::Topology)
}

/// What a DLRM step costs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DlrmReport {
    /// Chips.
    pub chips: u64,
    /// Seconds per step: the longer of the sparse and dense parts.
    pub step_time_s: f64,
    /// The sparse part: lookups, both all-to-alls and the updates, seconds.
    pub embedding_time_s: f64,
    /// The two all-to-alls (with their per-peer overhead), seconds.
    pub all_to_all_time_s: f64,
    /// Lookups and updates, seconds.
    pub lookup_time_s: f64,
    /// The dense part: the GEMMs and the gradient all-reduce, seconds.
    pub dense_time_s: f64,
    /// Examples per second.
    pub throughput_examples_per_s: f64,
    /// Two-way bisection bandwidth of the slice, bytes/s.
    #[serde(rename = "bisection_bandwidth_bytes_per_s")]
    pub bisection_bytes_per_s: f64,
    /// What the chips did in the step, for the energy model (not printed): the dense GEMMs'
    /// FLOPs; HBM traffic of the lookups and their read-modify-write updates (3 x the rows'
    /// bytes, SparseCore placement; the host's DRAM is not the chip's) and of the dense
    /// weights (3 reads: forward, input and weight gradients); bytes times links of the two
    /// all-to-alls (each pooled byte bound for another chip crosses the slice's average
    /// distance) and of the ring all-reduce (2(n-1)/n of the gradients, one link a step).
    #[serde(skip)]
    pub activity: podsim_system::energy::Activity,
}

/// Time one collective on the slice's flow model.
fn collective(
    net: &Network,
    kind: Kind,
    algorithm: Algorithm,
    bytes: f64,
) -> Result<f64, DlrmError> {
    let setup = Setup {
        kind,
        algorithm,
        bytes: bytes.ceil() as u64,
        model: ModelKind::Flow,
        packets: Packetization::NONE,
        chunk: 0,
        ecmp: false,
        memory_limit: podsim_system::machine::memory_limit(),
    };
    Ok(podsim_system::measure(net, &setup)?.time_s)
}

/// One training step of `model` on `net` (a TPU v4 or v3 slice) of generation `generation`.
pub fn step(
    model: &Dlrm,
    net: &Network,
    generation: Generation,
    placement: Placement,
) -> Result<DlrmReport, DlrmError> {
    let chips = net.endpoints();
    let n = chips as f64;
    let b = model.batch_per_chip as f64;
    let rows = b * model.features as f64 * model.valency;
    let row_bytes = model.dim as f64 * ELEM_EMB;
    let pooled = b * model.features as f64 * model.dim as f64 * ELEM_ACT;
    // Capacity: the tables must fit in the HBM left after the dense model (with SparseCore).
    let bytes_per_chip = model.embedding_params() * ELEM_EMB * 3.0 / n;
    if placement == Placement::SparseCore && bytes_per_chip > 0.75 * (32u64 << 30) as f64 {
        return Err(DlrmError::Capacity {
            gb_per_chip: bytes_per_chip / 1e9,
            chips,
        });
    }
    let (lookup, all_to_all) = match placement {
        Placement::SparseCore => {
            let hbm_bytes_per_s = generation.chip.memory_bytes_per_s as f64;
            let hbm = rows * row_bytes / (hbm_bytes_per_s * HBM_GATHER_EFFICIENCY);
            let sc_rows_per_s = (u64::from(generation.tpu.sparsecores) * SC_TILES) as f64
                * generation.chip.clock_hz as f64
                / (model.dim as f64 / SC_LANES as f64).ceil();
            let sc = rows / sc_rows_per_s;
            // Lookups forward, then read-modify-write of the same rows backward.
            let lookup = hbm.max(sc) + 2.0 * hbm.max(sc);
            let a2a = collective(net, Kind::AllToAll, Algorithm::DimensionWise, pooled)?;
            (lookup, 2.0 * (a2a + n * SC_PEER_OVERHEAD_S))
        }
        Placement::Host => {
            let host = f64::from(generation.tpu.chips_per_host);
            let hosts = (n / host).ceil().max(1.0);
            let dram = host * rows * row_bytes / HOST_DRAM_BYTES_PER_S;
            let lookup = 3.0 * dram;
            // Each host sends its chips' pooled vectors for other hosts' examples over its NIC.
            let a2a = host * pooled * (hosts - 1.0) / hosts / HOST_NIC_BYTES_PER_S;
            (lookup, 2.0 * a2a)
        }
    };
    let embedding = lookup + all_to_all;
    // Dense: forward and backward GEMMs of the square layers on the chip's matrix units.
    let chip = podsim_system::workload::ChipSpec::preset(generation.chip.name).ok_or(
        DlrmError::NoChipPreset {
            chip: generation.chip.name,
        },
    )?;
    let width = (model.dense_params / model.dense_layers as f64)
        .sqrt()
        .round() as u64;
    let g = chip
        .arrays
        .gemm_time(model.batch_per_chip, width, width, "bf16")
        .map_err(DlrmError::Gemm)?
        .as_secs_f64();
    let dense_compute = 3.0 * model.dense_layers as f64 * g;
    let allreduce = collective(
        net,
        Kind::AllReduce,
        Algorithm::AllDimensions,
        model.dense_params * ELEM_ACT,
    )?;
    let dense = dense_compute + allreduce;
    let step = embedding.max(dense);
    let m = net.metrics();
    let sc = placement == Placement::SparseCore;
    let frac = (n - 1.0) / n;
    let per_chip = podsim_system::energy::Activity {
        chips,
        seconds: step,
        matrix_flops: 3.0 * model.dense_layers as f64 * 2.0 * b * (width * width) as f64,
        matrix_busy_s: dense_compute,
        hbm_bytes: if sc { 3.0 * rows * row_bytes } else { 0.0 }
            + 3.0 * model.dense_params * ELEM_ACT,
        onchip_bytes: 0.0,
        link_bytes: if sc {
            2.0 * pooled * frac * m.average_distance
        } else {
            0.0
        } + 2.0 * frac * model.dense_params * ELEM_ACT,
    };
    Ok(DlrmReport {
        chips,
        step_time_s: step,
        embedding_time_s: embedding,
        all_to_all_time_s: all_to_all,
        lookup_time_s: lookup,
        dense_time_s: dense,
        throughput_examples_per_s: b * n / step,
        bisection_bytes_per_s: m.bisection_bandwidth_bytes_per_s as f64,
        activity: per_chip.times(n),
    })
}

/// The generation a network is: TPU v3 for a 2-D slice, v4 for a 3-D one.
pub fn generation_of(net: &Network) -> Result<Generation, DlrmError> {
    match net.cube().map(|c| c.dims().len()) {
        Some(3) => Ok(Generation::tpu_v4()),
        Some(2) => Ok(Generation::tpu_v3()),
        _ => Err(DlrmError::Generation {
            network: net.shorthand(),
        }),
    }
}

/// The slice a `--system` names: `tpuv4:slice=AxBxC[:twisted]` or `tpuv3:AxB`.
pub fn system(spec: &str) -> Result<(Network, Generation), DlrmError> {
    if let Some(rest) = spec.strip_prefix("tpuv3:") {
        let d: Vec<u32> = rest
            .split('x')
            .map(|x| x.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|_| DlrmError::V3Spec {
                spec: spec.to_string(),
            })?;
        let [a, b] = d[..] else {
            return Err(DlrmError::V3Sides {
                spec: spec.to_string(),
            });
        };
        return Ok((tpuv3_slice(a, b)?, Generation::tpu_v3()));
    }
    if let Some(rest) = spec.strip_prefix("tpuv4:slice=") {
        let (shape, twisted) = match rest.strip_suffix(":twisted") {
            Some(s) => (s, true),
            None => (rest, false),
        };
        let d: Vec<u32> = shape
            .split('x')
            .map(|x| x.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|_| DlrmError::V4Spec {
                spec: spec.to_string(),
            })?;
        let [a, b, c] = d[..] else {
            return Err(DlrmError::V4Sides {
                spec: spec.to_string(),
            });
        };
        let net = podsim_train::SliceShape {
            dims: [a, b, c],
            twisted,
        }
        .network()?;
        return Ok((net, Generation::tpu_v4()));
    }
    Err(DlrmError::NotTpu {
        spec: spec.to_string(),
    })
}

/// A DLRM step as a validation case names it (`[case.dlrm]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DlrmCase {
    /// The slice (`tpuv4:slice=...` or `tpuv3:AxB`).
    pub system: String,
    /// Embeddings on the SparseCores or in host memory.
    pub host: bool,
    /// Compare the embedding (sparse) time rather than the step time.
    pub embedding_only: bool,
}

impl DlrmCase {
    /// The time the case compares: the embedding part or the whole step, seconds.
    pub fn time_s(&self) -> Result<f64, DlrmError> {
        let r = self.step()?;
        Ok(if self.embedding_only {
            r.embedding_time_s
        } else {
            r.step_time_s
        })
    }

    /// The step of Fig. 8's model on the case's slice.
    pub fn step(&self) -> Result<DlrmReport, DlrmError> {
        let (net, generation) = system(&self.system)?;
        let placement = if self.host {
            Placement::Host
        } else {
            Placement::SparseCore
        };
        step(&Dlrm::fig8(), &net, generation, placement)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_take_the_hbm_gather_time_by_hand() {
        // Fig. 8's model on 128 TPU v4 chips: 512 x 300 x 10 = 1,536,000 rows of 128 fp32
        // (512 B) per chip: 786.4 MB at half of 1.2 TB/s = 1.3107 ms; the SparseCores would
        // take 1.536e6 / (4 SCs x 16 tiles x 1.05 GHz / 16 cycles per row) = 0.366 ms, so HBM
        // binds; forward lookups plus read-modify-write updates: 3 x 1.3107 = 3.932 ms.
        let (net, generation) = system("tpuv4:slice=4x4x8").unwrap();
        let r = step(&Dlrm::fig8(), &net, generation, Placement::SparseCore).unwrap();
        assert!((r.lookup_time_s - 3.0 * 786_432_000.0 / 0.6e12).abs() < 1e-12);
        assert_eq!(r.chips, 128);
        // The step is the longer part.
        assert_eq!(r.step_time_s, r.embedding_time_s.max(r.dense_time_s));
        // Host placement: 4 chips' rows through one host's 256 GB/s, three passes:
        // 3 x 4 x 786.4 MB / 256 GB/s = 36.86 ms.
        let h = step(&Dlrm::fig8(), &net, generation, Placement::Host).unwrap();
        assert!((h.lookup_time_s - 3.0 * 4.0 * 786_432_000.0 / 256e9).abs() < 1e-12);
    }

    #[test]
    fn tpu_v3_slices_wrap_only_across_the_full_pod() {
        let Network::Cube(c) = tpuv3_slice(16, 32).unwrap() else {
            panic!("a cube");
        };
        assert_eq!(c.wrap(), &[false, true]);
        let e = system("tpuv3:64x64").unwrap_err();
        assert!(matches!(e, DlrmError::V3Size { a: 64, b: 64 }));
        assert_eq!(
            e.to_string(),
            "a TPU v3 slice is at most 32 x 32 chips, not 64x64"
        );
        assert!(system("torus:8x8").is_err());
    }
}
