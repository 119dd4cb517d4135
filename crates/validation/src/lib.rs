//! Validation cases as typed values, and measuring them: a published figure, its source, the
//! system or compute model that should reproduce it, and a tolerance. `podsim-config` reads
//! them from `validation/`; here each quantity is computed on the models.
//!
//! Architecture invariant: this crate sits above the machines it validates (`podsim-system`
//! and the machine crates under `crates/machines/`), and none of them depends on it.

use podsim_collective::{Micro, ModelKind, Setup};
use podsim_compute::chips::{CHIPS, Chip};
use podsim_net::Packetization;
use podsim_routing::{Faults, Shortcut, dojo_route, mesh_links};
use podsim_topology::{Metrics, Network, metrics};
use podsim_units::{Bandwidth, Bytes};

use podsim_system::machine::{measure, microbench};
use podsim_system::spec::SystemSpec;

mod run;
pub use run::{
    CASE_FILES, CSV_HEADER, CaseError, ValidationReport, case_keys, csv_row, evaluate,
    evaluate_batch, fingerprint, kept_value,
};

/// Why a case's quantity could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum QuantityError {
    /// The system has no such quantity.
    #[error("{0}")]
    NotApplicable(&'static str),
    /// The case lacks what the quantity needs.
    #[error("{0}")]
    Missing(&'static str),
    /// A value of the case is out of range or unknown.
    #[error("{0}")]
    Invalid(String),
    /// A system of the case could not be built.
    #[error("{}", .0.why)]
    Topology(podsim_topology::TopologyError),
    /// The collective or microbenchmark failed.
    #[error(transparent)]
    Collective(#[from] podsim_collective::CollectiveError),
}

/// What a case measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Node count.
    Nodes,
    /// Bidirectional link count.
    Links,
    /// Ports of the best-connected node.
    DegreeMax,
    /// Longest minimal route in hops.
    Diameter,
    /// Links cut by the bisection.
    BisectionLinks,
    /// Two-way bisection bandwidth.
    BisectionBandwidth,
    /// Injection bandwidth of one node.
    InjectionBandwidth,
    /// Injection bandwidth of all nodes together.
    TotalInjectionBandwidth,
    /// Bandwidth of one link in one direction.
    LinkBandwidth,
    /// Two-way bisection bandwidth of the virtual torus laid over the network (Tofu).
    VirtualBisectionBandwidth,
    /// Optical circuit switches a TPU v4 system programs.
    OcsSwitches,
    /// On-chip SRAM of all compute nodes, in bytes (DOJO).
    Sram,
    /// Mesh links a DOJO route between the case's two routers occupies.
    RouteMeshLinks,
    /// DRAM banks of a Tenstorrent chip.
    DramBanks,
    /// Usable Tensix workers of a Tenstorrent chip.
    Workers,
    /// How many times faster the case's collective runs on its system than on its baseline
    /// (baseline time / system time), held in thousandths.
    CollectiveSpeedup,
    /// nccl-tests' bus bandwidth of the case's collective on its system, to the nearest MB/s.
    BusBandwidth,
    /// The exponent e in bisection ~ N^e between the baseline and the system:
    /// ln(B / B_base) / ln(N / N_base), held in thousandths.
    BisectionScalingExponent,
    /// Payload throughput of one large put between neighbours (flow model, the case's packet
    /// overheads), to the nearest MB/s.
    PutThroughput,
    /// Payload throughput of one node putting to as many neighbours as it has interfaces, at
    /// once (flow model, the case's packet overheads; Tofu's injection rate), to the nearest
    /// MB/s.
    InjectionRate,
    /// Peak matrix-unit FLOP/s of `[case.compute] chip`.
    PeakFlops,
    /// Peak FP32 FLOP/s of `[case.compute] chip` outside its matrix units.
    Fp32Flops,
    /// Cycles from a tensor core's inputs to its output (`[case.compute] size`), measured on
    /// the register-level model.
    TensorCoreLatency,
    /// MACs a tensor core of `[case.compute] size` completes per cycle in steady state,
    /// measured on the register-level model.
    TensorCoreMacsPerCycle,
    /// The cycle from which every output of the lecture's `size` x `size` array, streaming
    /// K = `k`, holds its final value, measured on the register-level model.
    SystolicCompletion,
    /// One-way 8-byte put between neighbours (flow model, the case's `endpoint` setting), in
    /// picoseconds.
    PutLatency,
    /// The roofline's ridge point of `[case.compute] chip`: peak FLOP/s over memory bandwidth,
    /// FLOPs per byte, held in thousandths.
    RidgePoint,
    /// A TPU v4 pod's goodput for `[case.availability]` (closed form of
    /// [`podsim_tpu::availability`]), a fraction held in thousandths.
    Goodput,
    /// Training throughput of `[case.train]` ([`podsim_train`]), sequences per second
    /// held in thousandths.
    TrainThroughput,
    /// Throughput of `[case.train]` over that of `[case.train_baseline]`, held in thousandths.
    TrainSpeedup,
    /// Model-FLOPs utilisation of `[case.train]`'s step, a fraction held in thousandths.
    TrainMfu,
    /// A step's hardware FLOP/s per chip as Megatron-LM counts them (Narayanan et al. 2021,
    /// SC'21, arXiv 2104.04473, section 5.1: F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) a
    /// step of B sequences, full recomputation included), over the step time and the chips.
    TrainTflopsPerChip,
    /// Two-way bisection bandwidth of the system over its baseline's, held in thousandths.
    BisectionRatio,
    /// Time of `[case.dlrm_baseline]` over that of `[case.dlrm]` ([`podsim_tpu::dlrm`]),
    /// held in thousandths.
    DlrmSpeedup,
    /// A Tofu node's count of one communication resource (`[case.tofu_node]`, Table II).
    TofuNodeResource,
    /// One of Table VI's counts for the Tofu barrier of `[case.tofu_barrier]` (TNIs, BCHs or
    /// BGs on the busiest TNI, stages).
    TofuBarrier,
    /// The serialized latency of the Tofu barrier of `[case.tofu_barrier]`
    /// ([`podsim_tofu::barrier`]), in picoseconds.
    TofuBarrierLatency,
    /// A DOJO node's SRAM load bandwidth from its ports (`[case.compute] chip = "dojo-node"`,
    /// [`podsim_compute::dojo_node`]), bytes/s.
    SramLoadBandwidth,
    /// A DOJO node's SRAM store bandwidth from its ports, bytes/s.
    SramStoreBandwidth,
    /// What one host reaches of a DOJO system: its DIPs' PCIe links together, bytes/s.
    HostBandwidth,
    /// A DOJO plane's links from the first D1 die into its east neighbour, one way: the sum
    /// of the modelled links across that die edge, bytes/s.
    DieEdgeBandwidth,
    /// A DOJO plane's links from the first tile's east-edge die into the next tile, one way,
    /// bytes/s (needs two tiles side by side).
    TileEdgeDieBandwidth,
    /// A DOJO plane's links across the first tile's whole east edge, one way, bytes/s (needs
    /// two tiles side by side).
    TileEdgeBandwidth,
    /// The Tenstorrent DRAM u-benchmark's bandwidth at `[case.tenstorrent]`'s data rate
    /// ([`podsim_tenstorrent::study::Study::u_benchmark`]), bytes/s.
    DramBandwidth,
    /// The same u-benchmark's bandwidth over the banks' spec rate, on `[case.tenstorrent]`'s
    /// chip and harvested rows (readers relocated by the document's rule), held in
    /// thousandths.
    DramUtilization,
    /// The DRAM-bound matmul's DRAM bandwidth for `[case.tenstorrent]`'s shape
    /// ([`podsim_tenstorrent::matmul`]), bytes/s.
    MatmulDramBandwidth,
    /// A Tenstorrent chip's mean power at full load: every Tensix core streaming, the DRAM at
    /// the spec rate of `[case.tenstorrent]`'s chip and data rate, a NoC hop a byte
    /// ([`podsim_tenstorrent::energy::full_load_power_w`]), held in milliwatts.
    TtFullLoadPower,
    /// TPU v3 step time over TPU v4's for `[case.app]` ([`podsim_tpu::apps`]; the geometric
    /// mean of the eight applications when it names none), held in thousandths.
    AppSpeedup,
    /// TPU v4 step time with CMEM off over CMEM on for `[case.app]` (geometric mean when it
    /// names no application), held in thousandths.
    AppCmemGain,
    /// TPU v4's performance per watt over TPU v3's for `[case.app]`: the ratio of the steps'
    /// energies, v3 over v4 ([`podsim_system::energy`]; geometric mean when it names no
    /// application), held in thousandths.
    AppPerfPerWattGain,
    /// TPU v4's performance per watt with CMEM on over off for `[case.app]`, held in
    /// thousandths.
    AppCmemPerfPerWattGain,
    /// The min, mean or max over the applications of each one's mean chip power on `[case.app]`'s
    /// chip (`chip`, `statistic`), held in milliwatts.
    AppPower,
    /// The optical fabric's share of a TPU v4 pod's power with chips at the mean over
    /// `[case.app]`'s applications of each one's TPU v4 power
    /// ([`podsim_tpu::apps::ocs_power_share`]; section 2.10's "<3%"), held in thousandths.
    AppOcsPowerShare,
    /// MLPerf Training 2.0 (`[case.mlperf]`): the A100's time to train over TPU v4's, the
    /// A100s being the case's machine file ([`podsim_tpu::mlperf`]; Figs. 14-15), held in
    /// thousandths.
    MlperfSpeedup,
    /// The mean chip power of `[case.mlperf]`'s chip running its benchmark (Table 6), held in
    /// milliwatts.
    MlperfPower,
    /// The A100's mean chip power over TPU v4's on `[case.mlperf]`'s benchmark (Table 6's
    /// ratio), held in thousandths.
    MlperfPowerRatio,
}

/// A Tenstorrent case: `[case.tenstorrent]`.
#[derive(Debug, Clone, PartialEq)]
pub struct TtCase {
    /// The chip (Wormhole unless the case names Grayskull).
    pub chip: podsim_topology::TtChip,
    /// Harvested worker rows (NoC y coordinates).
    pub harvested_rows: Vec<u32>,
    /// Transfers per second of every bank.
    pub data_rate: f64,
    /// The matmul's M, K, N and in1 format (matmul cases).
    pub matmul: Option<(u64, u64, u64, podsim_tenstorrent::matmul::Dtype)>,
}

/// The quantity names a case may use.
pub const QUANTITIES: [&str; 56] = [
    "nodes",
    "links",
    "degree_max",
    "diameter",
    "bisection_links",
    "bisection_bandwidth",
    "injection_bandwidth",
    "total_injection_bandwidth",
    "link_bandwidth",
    "virtual_bisection_bandwidth",
    "ocs_switches",
    "sram",
    "route_mesh_links",
    "dram_banks",
    "workers",
    "collective_speedup",
    "bus_bandwidth",
    "bisection_scaling_exponent",
    "put_throughput",
    "injection_rate",
    "peak_flops",
    "fp32_flops",
    "tensor_core_latency_cycles",
    "tensor_core_macs_per_cycle",
    "systolic_completion_cycle",
    "put_latency",
    "ridge_point",
    "goodput",
    "train_throughput",
    "train_speedup",
    "train_mfu",
    "train_tflops_per_chip",
    "bisection_ratio",
    "dlrm_speedup",
    "tofu_node_resource",
    "tofu_barrier",
    "tofu_barrier_latency",
    "sram_load_bandwidth",
    "sram_store_bandwidth",
    "host_bandwidth",
    "die_edge_bandwidth",
    "tile_edge_die_bandwidth",
    "tile_edge_bandwidth",
    "dram_bandwidth",
    "dram_utilization",
    "matmul_dram_bandwidth",
    "tt_full_load_power",
    "app_speedup",
    "app_cmem_gain",
    "app_perf_per_watt_gain",
    "app_cmem_perf_per_watt_gain",
    "app_power",
    "app_ocs_power_share",
    "mlperf_speedup",
    "mlperf_power",
    "mlperf_power_ratio",
];

impl Quantity {
    /// Whether the quantity is measured on `[case.app]`'s applications.
    pub fn is_app(self) -> bool {
        matches!(
            self,
            Quantity::AppSpeedup
                | Quantity::AppCmemGain
                | Quantity::AppPerfPerWattGain
                | Quantity::AppCmemPerfPerWattGain
                | Quantity::AppPower
                | Quantity::AppOcsPowerShare
        )
    }

    /// The quantity a case names (see [`QUANTITIES`]).
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "nodes" => Quantity::Nodes,
            "links" => Quantity::Links,
            "degree_max" => Quantity::DegreeMax,
            "diameter" => Quantity::Diameter,
            "bisection_links" => Quantity::BisectionLinks,
            "bisection_bandwidth" => Quantity::BisectionBandwidth,
            "injection_bandwidth" => Quantity::InjectionBandwidth,
            "total_injection_bandwidth" => Quantity::TotalInjectionBandwidth,
            "link_bandwidth" => Quantity::LinkBandwidth,
            "virtual_bisection_bandwidth" => Quantity::VirtualBisectionBandwidth,
            "ocs_switches" => Quantity::OcsSwitches,
            "sram" => Quantity::Sram,
            "route_mesh_links" => Quantity::RouteMeshLinks,
            "dram_banks" => Quantity::DramBanks,
            "workers" => Quantity::Workers,
            "collective_speedup" => Quantity::CollectiveSpeedup,
            "bus_bandwidth" => Quantity::BusBandwidth,
            "bisection_scaling_exponent" => Quantity::BisectionScalingExponent,
            "put_throughput" => Quantity::PutThroughput,
            "injection_rate" => Quantity::InjectionRate,
            "peak_flops" => Quantity::PeakFlops,
            "fp32_flops" => Quantity::Fp32Flops,
            "tensor_core_latency_cycles" => Quantity::TensorCoreLatency,
            "tensor_core_macs_per_cycle" => Quantity::TensorCoreMacsPerCycle,
            "systolic_completion_cycle" => Quantity::SystolicCompletion,
            "put_latency" => Quantity::PutLatency,
            "ridge_point" => Quantity::RidgePoint,
            "goodput" => Quantity::Goodput,
            "train_throughput" => Quantity::TrainThroughput,
            "train_speedup" => Quantity::TrainSpeedup,
            "train_mfu" => Quantity::TrainMfu,
            "train_tflops_per_chip" => Quantity::TrainTflopsPerChip,
            "bisection_ratio" => Quantity::BisectionRatio,
            "dlrm_speedup" => Quantity::DlrmSpeedup,
            "tofu_node_resource" => Quantity::TofuNodeResource,
            "tofu_barrier" => Quantity::TofuBarrier,
            "tofu_barrier_latency" => Quantity::TofuBarrierLatency,
            "sram_load_bandwidth" => Quantity::SramLoadBandwidth,
            "sram_store_bandwidth" => Quantity::SramStoreBandwidth,
            "host_bandwidth" => Quantity::HostBandwidth,
            "die_edge_bandwidth" => Quantity::DieEdgeBandwidth,
            "tile_edge_die_bandwidth" => Quantity::TileEdgeDieBandwidth,
            "tile_edge_bandwidth" => Quantity::TileEdgeBandwidth,
            "dram_bandwidth" => Quantity::DramBandwidth,
            "dram_utilization" => Quantity::DramUtilization,
            "matmul_dram_bandwidth" => Quantity::MatmulDramBandwidth,
            "tt_full_load_power" => Quantity::TtFullLoadPower,
            "app_speedup" => Quantity::AppSpeedup,
            "app_cmem_gain" => Quantity::AppCmemGain,
            "app_perf_per_watt_gain" => Quantity::AppPerfPerWattGain,
            "app_cmem_perf_per_watt_gain" => Quantity::AppCmemPerfPerWattGain,
            "app_power" => Quantity::AppPower,
            "app_ocs_power_share" => Quantity::AppOcsPowerShare,
            "mlperf_speedup" => Quantity::MlperfSpeedup,
            "mlperf_power" => Quantity::MlperfPower,
            "mlperf_power_ratio" => Quantity::MlperfPowerRatio,
            _ => return None,
        })
    }

    /// Whether the quantity is measured on `[case.tenstorrent]`'s chip.
    pub fn is_tenstorrent(self) -> bool {
        matches!(
            self,
            Quantity::DramBandwidth
                | Quantity::DramUtilization
                | Quantity::MatmulDramBandwidth
                | Quantity::TtFullLoadPower
        )
    }

    /// Whether the quantity is measured on a compute model (no `[case.system]`).
    pub fn is_compute(self) -> bool {
        matches!(
            self,
            Quantity::PeakFlops
                | Quantity::Fp32Flops
                | Quantity::RidgePoint
                | Quantity::Goodput
                | Quantity::TrainThroughput
                | Quantity::TrainSpeedup
                | Quantity::TrainMfu
                | Quantity::TrainTflopsPerChip
                | Quantity::DlrmSpeedup
                | Quantity::TofuNodeResource
                | Quantity::TofuBarrier
                | Quantity::TofuBarrierLatency
                | Quantity::SramLoadBandwidth
                | Quantity::SramStoreBandwidth
                | Quantity::TensorCoreLatency
                | Quantity::TensorCoreMacsPerCycle
                | Quantity::SystolicCompletion
                | Quantity::DramBandwidth
                | Quantity::DramUtilization
                | Quantity::MatmulDramBandwidth
                | Quantity::TtFullLoadPower
                | Quantity::AppSpeedup
                | Quantity::AppCmemGain
                | Quantity::AppPerfPerWattGain
                | Quantity::AppCmemPerfPerWattGain
                | Quantity::AppPower
                | Quantity::AppOcsPowerShare
                | Quantity::MlperfSpeedup
                | Quantity::MlperfPower
                | Quantity::MlperfPowerRatio
        )
    }

    /// Whether the quantity is measured on `[case.mlperf]`'s submissions.
    pub fn is_mlperf(self) -> bool {
        matches!(
            self,
            Quantity::MlperfSpeedup | Quantity::MlperfPower | Quantity::MlperfPowerRatio
        )
    }

    /// The value of a compute quantity (or of a quantity measured without a network) for
    /// `case`.
    pub fn measure_compute(self, case: &ValidationCase) -> Result<u64, QuantityError> {
        if self.is_tenstorrent() {
            let c = case.tenstorrent.as_ref().ok_or(QuantityError::Missing(
                "a Tenstorrent case needs [case.tenstorrent]",
            ))?;
            if self == Quantity::TtFullLoadPower {
                let w = podsim_tenstorrent::energy::full_load_power_w(c.chip, c.data_rate)
                    .map_err(|e| QuantityError::Invalid(e.to_string()))?;
                return Ok((w * 1000.0).round() as u64);
            }
            if self == Quantity::DramUtilization {
                let study = podsim_tenstorrent::study::Study {
                    chip: c.chip,
                    harvested_rows: c.harvested_rows.clone(),
                    ..podsim_tenstorrent::study::Study::u_benchmark(c.data_rate)
                };
                let r = podsim_tenstorrent::study::run(&study)
                    .map_err(|e| QuantityError::Invalid(e.to_string()))?;
                return Ok((r.utilization * 1000.0).round() as u64);
            }
            let bw = match (self, c.matmul) {
                (Quantity::DramBandwidth, _) => {
                    let study = podsim_tenstorrent::study::Study {
                        chip: c.chip,
                        harvested_rows: c.harvested_rows.clone(),
                        ..podsim_tenstorrent::study::Study::u_benchmark(c.data_rate)
                    };
                    podsim_tenstorrent::study::run(&study)
                        .map_err(|e| QuantityError::Invalid(e.to_string()))?
                        .run
                        .bandwidth_bytes_per_s
                }
                (_, Some((m, k, n, dtype))) => {
                    let mm = podsim_tenstorrent::matmul::Matmul {
                        dtype,
                        ..podsim_tenstorrent::matmul::Matmul::new(m, k, n, c.data_rate)
                    };
                    podsim_tenstorrent::matmul::run(&mm)
                        .map_err(|e| QuantityError::Invalid(e.to_string()))?
                        .dram_bandwidth_bytes_per_s
                }
                (_, None) => {
                    return Err(QuantityError::Missing(
                        "a matmul case needs m, k and n in [case.tenstorrent]",
                    ));
                }
            };
            return Ok(bw.round() as u64);
        }
        if matches!(self, Quantity::TofuBarrier | Quantity::TofuBarrierLatency) {
            let c = case.tofu_barrier.ok_or(QuantityError::Missing(
                "a Tofu barrier case needs [case.tofu_barrier]",
            ))?;
            let r = podsim_tofu::barrier::node_barrier(c.points, c.allocation)
                .map_err(|e| QuantityError::Invalid(e.to_string()))?;
            return Ok(match c.metric {
                _ if self == Quantity::TofuBarrierLatency => (r.latency_s * 1e12).round() as u64,
                BarrierMetric::Tnis => u64::from(r.tnis),
                BarrierMetric::BchsPerTni => u64::from(r.bchs_per_tni),
                BarrierMetric::BgsPerTni => u64::from(r.bgs_per_tni),
                BarrierMetric::Stages => u64::from(r.stages),
            });
        }
        if self == Quantity::TofuNodeResource {
            let (generation, resource) = case.tofu_node.ok_or(QuantityError::Missing(
                "tofu_node_resource needs [case.tofu_node]",
            ))?;
            return Ok(u64::from(resource.count(generation)));
        }
        if self.is_app() {
            let c = case.app.as_ref().ok_or(QuantityError::Missing(
                "an application case needs [case.app]",
            ))?;
            let v = match self {
                Quantity::AppSpeedup => c.speedup(),
                Quantity::AppCmemGain => c.cmem_gain(),
                Quantity::AppPerfPerWattGain => c.perf_per_watt_gain(),
                Quantity::AppCmemPerfPerWattGain => c.cmem_perf_per_watt_gain(),
                Quantity::AppOcsPowerShare => c.ocs_power_share(),
                _ => c.power_w(),
            }
            .map_err(QuantityError::Invalid)?;
            return Ok((v * 1000.0).round() as u64);
        }
        if self.is_mlperf() {
            let c = case
                .mlperf
                .as_ref()
                .ok_or(QuantityError::Missing("an MLPerf case needs [case.mlperf]"))?;
            let a100 = case.system.as_ref().ok_or(QuantityError::Missing(
                "an MLPerf case runs the A100s of its [case.machine]",
            ))?;
            let v = match self {
                Quantity::MlperfSpeedup => c.speedup(a100),
                Quantity::MlperfPower => c.power_w(a100),
                _ => c.power_ratio(a100),
            }
            .map_err(QuantityError::Invalid)?;
            return Ok((v * 1000.0).round() as u64);
        }
        if self == Quantity::DlrmSpeedup {
            let time = |c: Option<&podsim_tpu::dlrm::DlrmCase>, what: &'static str| {
                c.ok_or(QuantityError::Missing(what))?
                    .time_s()
                    .map_err(|e| QuantityError::Invalid(e.to_string()))
            };
            let t = time(case.dlrm.as_ref(), "dlrm_speedup needs [case.dlrm]")?;
            let base = time(
                case.dlrm_baseline.as_ref(),
                "dlrm_speedup needs [case.dlrm_baseline]",
            )?;
            return Ok((base / t * 1000.0).round() as u64);
        }
        if self == Quantity::TrainMfu {
            let r = case
                .train
                .as_ref()
                .ok_or(QuantityError::Missing("a training case needs [case.train]"))?
                .step()
                .map_err(|e| QuantityError::Invalid(e.to_string()))?;
            return Ok((r.mfu * 1000.0).round() as u64);
        }
        if self == Quantity::TrainTflopsPerChip {
            let c = case
                .train
                .as_ref()
                .ok_or(QuantityError::Missing("a training case needs [case.train]"))?;
            let r = c
                .step()
                .map_err(|e| QuantityError::Invalid(e.to_string()))?;
            let t = &c.model;
            let (s, l, h, v) = (
                t.sequence as f64,
                t.layers as f64,
                t.d_model as f64,
                t.vocabulary as f64,
            );
            let flops = 96.0
                * r.config.batch as f64
                * s
                * l
                * h
                * h
                * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
            return Ok((flops / r.step_time_s / r.config.parallel.chips() as f64).round() as u64);
        }
        if matches!(self, Quantity::TrainThroughput | Quantity::TrainSpeedup) {
            let step = |c: Option<&podsim_train::TrainCase>, what: &'static str| {
                c.ok_or(QuantityError::Missing(what))?
                    .step()
                    .map(|r| r.throughput_seqs_per_s)
                    .map_err(|e| QuantityError::Invalid(e.to_string()))
            };
            let tp = step(case.train.as_ref(), "a training case needs [case.train]")?;
            let v = if self == Quantity::TrainSpeedup {
                tp / step(
                    case.train_baseline.as_ref(),
                    "train_speedup needs [case.train_baseline]",
                )?
            } else {
                tp
            };
            return Ok((v * 1000.0).round() as u64);
        }
        if self == Quantity::Goodput {
            let a = case
                .availability
                .ok_or(QuantityError::Missing("goodput needs [case.availability]"))?;
            let g = a
                .exact()
                .map_err(|e| QuantityError::Invalid(e.to_string()))?;
            return Ok((g.goodput * 1000.0).round() as u64);
        }
        let c = case.compute.as_ref().ok_or(QuantityError::Missing(
            "a compute quantity needs [case.compute]",
        ))?;
        let chip = || {
            let name = c
                .chip
                .as_deref()
                .ok_or(QuantityError::Missing("needs [case.compute] chip"))?;
            Chip::preset(name).ok_or_else(|| {
                let names: Vec<&str> = CHIPS.iter().map(|c| c.name).collect();
                QuantityError::Invalid(format!(
                    "`{name}` is not a chip preset (presets: {})",
                    names.join(", ")
                ))
            })
        };
        let size = || {
            c.size
                .ok_or(QuantityError::Missing("needs [case.compute] size"))
        };
        Ok(match self {
            Quantity::PeakFlops => chip()?.peak_matrix_flops().round() as u64,
            Quantity::Fp32Flops => chip()?.peak_fp32_flops().round() as u64,
            Quantity::SramLoadBandwidth | Quantity::SramStoreBandwidth => {
                let name = chip()?.name;
                if name != "dojo-node" {
                    return Err(QuantityError::Invalid(format!(
                        "`{name}`: only the DOJO node's SRAM ports are modelled (chip = \"dojo-node\")"
                    )));
                }
                if self == Quantity::SramLoadBandwidth {
                    podsim_compute::dojo_node::sram_load_bytes_per_s()
                } else {
                    podsim_compute::dojo_node::sram_store_bytes_per_s()
                }
            }
            Quantity::RidgePoint => (chip()?.ridge_point() * 1000.0).round() as u64,
            Quantity::TensorCoreLatency | Quantity::TensorCoreMacsPerCycle => {
                let (lat, macs) = podsim_compute::lecture::measure_tensor_core(size()? as usize);
                if self == Quantity::TensorCoreLatency {
                    lat
                } else {
                    macs
                }
            }
            Quantity::SystolicCompletion => {
                let s = size()? as usize;
                let k =
                    c.k.ok_or(QuantityError::Missing("needs [case.compute] k"))? as usize;
                podsim_compute::lecture::measure_completion(s, k)
                    .map_err(|e| QuantityError::Invalid(e.to_string()))?
            }
            _ => return Err(QuantityError::NotApplicable("not a compute quantity")),
        })
    }

    /// Whether the quantity is a bandwidth (bytes/s) rather than a count.
    pub fn is_bandwidth(self) -> bool {
        self.unit().0 == "B/s"
    }

    /// The value of this quantity for `net`, whose metrics are `m` (bytes/s for bandwidths);
    /// an error when the network has no such quantity.
    pub fn measure(
        self,
        case: &ValidationCase,
        net: &Network,
        m: &Metrics,
    ) -> Result<u64, QuantityError> {
        let (spec, route) = (&case.system, case.route);
        let (collective, baseline) = (case.collective, case.baseline.as_ref());
        let wide = |v: u128| {
            u64::try_from(v).map_err(|_| {
                QuantityError::Invalid(format!(
                    "{v} does not fit the 64 bits a published figure is compared in"
                ))
            })
        };
        Ok(match self {
            Quantity::Nodes => m.nodes,
            Quantity::Links => m.links,
            Quantity::DegreeMax => u64::from(m.degree_max),
            Quantity::Diameter => m.diameter,
            Quantity::BisectionLinks => m.bisection_links,
            Quantity::BisectionBandwidth => wide(m.bisection_bandwidth_bytes_per_s)?,
            Quantity::InjectionBandwidth => m.injection_bandwidth_bytes_per_s,
            Quantity::TotalInjectionBandwidth => wide(m.total_injection_bandwidth_bytes_per_s)?,
            Quantity::LinkBandwidth => net.link().bandwidth.bytes_per_s(),
            Quantity::VirtualBisectionBandwidth => match net {
                Network::Tofu(t) => t
                    .virtual_torus()
                    .map(|v| wide(metrics(v).bisection_bandwidth_bytes_per_s))
                    .ok_or(QuantityError::Missing(
                        "this Tofu shape has no virtual 3-D torus",
                    ))??,
                Network::Cube(_)
                | Network::FatTree(_)
                | Network::Dojo(_)
                | Network::Tenstorrent(_)
                | Network::Hybrid(_)
                | Network::Graph(_) => {
                    return Err(QuantityError::NotApplicable(
                        "only a Tofu network has a virtual torus",
                    ));
                }
            },
            Quantity::OcsSwitches => {
                spec.as_ref()
                    .and_then(SystemSpec::ocs_switches)
                    .ok_or(QuantityError::Missing(
                        "only a TPU v4 system (tpuv4:...) has optical circuit switches",
                    ))?
            }
            Quantity::Sram => match net {
                Network::Dojo(d) => d.sram().0,
                Network::Cube(_)
                | Network::Tofu(_)
                | Network::FatTree(_)
                | Network::Tenstorrent(_)
                | Network::Hybrid(_)
                | Network::Graph(_) => {
                    return Err(QuantityError::NotApplicable(
                        "only a DOJO system states its SRAM",
                    ));
                }
            },
            Quantity::CollectiveSpeedup => {
                let (Some(c), Some(base)) = (collective, baseline) else {
                    return Err(QuantityError::Missing(
                        "collective_speedup needs [case.collective] and [case.baseline]",
                    ));
                };
                let base_net = base.build().map_err(QuantityError::Topology)?;
                let t_sys = measure(net, &c.setup)?.time_s;
                let t_base = measure(&base_net, &c.setup)?.time_s;
                if t_sys <= 0.0 {
                    return Err(QuantityError::NotApplicable("the collective took no time"));
                }
                (t_base / t_sys * 1000.0).round() as u64
            }
            Quantity::BusBandwidth => {
                let Some(c) = collective else {
                    return Err(QuantityError::Missing(
                        "bus_bandwidth needs [case.collective]",
                    ));
                };
                // To the nearest MB/s: the run's whole-picosecond clock leaves the rest noise.
                let bw = measure(net, &c.setup)?.bus_bandwidth_bytes_per_s;
                ((bw / 1e6).round() * 1e6).max(0.0) as u64
            }
            Quantity::BisectionRatio => {
                let base = baseline.ok_or(QuantityError::Missing(
                    "bisection_ratio needs [case.baseline]",
                ))?;
                let bm = base.build().map_err(QuantityError::Topology)?.metrics();
                let b0 = bm.bisection_bandwidth_bytes_per_s as f64;
                if b0 <= 0.0 {
                    return Err(QuantityError::NotApplicable(
                        "the baseline has no bisection",
                    ));
                }
                (m.bisection_bandwidth_bytes_per_s as f64 / b0 * 1000.0).round() as u64
            }
            Quantity::BisectionScalingExponent => {
                let base = baseline.ok_or(QuantityError::Missing(
                    "bisection_scaling_exponent needs [case.baseline]",
                ))?;
                let bm = base.build().map_err(QuantityError::Topology)?.metrics();
                let (b, n) = (m.bisection_bandwidth_bytes_per_s as f64, m.nodes as f64);
                let (b0, n0) = (bm.bisection_bandwidth_bytes_per_s as f64, bm.nodes as f64);
                if n <= n0 || b0 <= 0.0 {
                    return Err(QuantityError::NotApplicable(
                        "the baseline must be smaller than the system",
                    ));
                }
                ((b / b0).ln() / (n / n0).ln() * 1000.0).round() as u64
            }
            Quantity::DieEdgeBandwidth
            | Quantity::TileEdgeDieBandwidth
            | Quantity::TileEdgeBandwidth => {
                let Network::Dojo(d) = net else {
                    return Err(QuantityError::NotApplicable(
                        "only a DOJO plane has die and tile edges",
                    ));
                };
                let (cols, rows) = (d.spec().die_cols, d.spec().die_rows);
                // The cut: after die column 0, or after the first tile's last die column.
                let (x, ys) = match self {
                    Quantity::DieEdgeBandwidth => (cols - 1, 0..rows),
                    Quantity::TileEdgeDieBandwidth => {
                        (podsim_topology::TILE_DIES * cols - 1, 0..rows)
                    }
                    _ => (
                        podsim_topology::TILE_DIES * cols - 1,
                        0..(podsim_topology::TILE_DIES * rows).min(d.height()),
                    ),
                };
                if x + 1 >= d.width() {
                    return Err(QuantityError::NotApplicable(
                        "the plane has no neighbour east of that edge (tile edges need dojo:system=1x2 or wider)",
                    ));
                }
                ys.map(|y| d.mesh_link(x, y, 0).bandwidth.bytes_per_s())
                    .sum()
            }
            Quantity::HostBandwidth => match net {
                // Host 0 writes 16 GiB into its five DIPs at once, on the flow model
                // (podsim_dojo::dma::host_upload): what its PCIe links carry together.
                Network::Dojo(d) if d.hosts() > 0 => {
                    let dips = podsim_topology::DIPS_PER_HOST.min(d.dips());
                    podsim_dojo::dma::host_upload(d, 0, 16 << 30, dips)
                        .map_err(|_| QuantityError::NotApplicable("the host upload could not run"))?
                        .bandwidth_bytes_per_s
                        .round() as u64
                }
                _ => {
                    return Err(QuantityError::NotApplicable(
                        "only a DOJO system with DIPs has hosts (dojo:system=RxC)",
                    ));
                }
            },
            Quantity::DramBanks | Quantity::Workers => match net {
                Network::Tenstorrent(g) if self == Quantity::DramBanks => g.dram_banks() as u64,
                Network::Tenstorrent(g) => g.workers() as u64,
                Network::Cube(_)
                | Network::Tofu(_)
                | Network::FatTree(_)
                | Network::Dojo(_)
                | Network::Hybrid(_)
                | Network::Graph(_) => {
                    return Err(QuantityError::NotApplicable(
                        "only a Tenstorrent grid has DRAM banks and Tensix workers",
                    ));
                }
            },
            Quantity::PeakFlops
            | Quantity::Fp32Flops
            | Quantity::RidgePoint
            | Quantity::Goodput
            | Quantity::TrainThroughput
            | Quantity::TrainSpeedup
            | Quantity::TrainMfu
            | Quantity::TrainTflopsPerChip
            | Quantity::DlrmSpeedup
            | Quantity::TofuNodeResource
            | Quantity::TofuBarrier
            | Quantity::TofuBarrierLatency
            | Quantity::SramLoadBandwidth
            | Quantity::SramStoreBandwidth
            | Quantity::TensorCoreLatency
            | Quantity::TensorCoreMacsPerCycle
            | Quantity::SystolicCompletion
            | Quantity::DramBandwidth
            | Quantity::DramUtilization
            | Quantity::MatmulDramBandwidth
            | Quantity::TtFullLoadPower
            | Quantity::AppSpeedup
            | Quantity::AppCmemGain
            | Quantity::AppPerfPerWattGain
            | Quantity::AppCmemPerfPerWattGain
            | Quantity::AppPower
            | Quantity::AppOcsPowerShare
            | Quantity::MlperfSpeedup
            | Quantity::MlperfPower
            | Quantity::MlperfPowerRatio => return self.measure_compute(case),
            Quantity::PutThroughput | Quantity::InjectionRate => {
                let micro = if self == Quantity::PutThroughput {
                    Micro::PutThroughput
                } else {
                    Micro::Injection
                };
                let r = microbench(
                    net,
                    micro,
                    micro.default_bytes(),
                    ModelKind::Flow,
                    case.packets,
                    u64::MAX,
                    &podsim_system::Models::default(),
                )?;
                let mut bytes_per_s = r.throughput_bytes_per_s;
                if let Some(m) = case.tofu_frame {
                    if let Network::Tofu(t) = net
                        && t.generation() != m.generation()
                    {
                        return Err(QuantityError::Invalid(format!(
                            "[case.packets] frame = \"{}\" is a {} frame, but the system is {}",
                            m.name(),
                            m.generation().name(),
                            t.generation().name()
                        )));
                    }
                    if self == Quantity::InjectionRate {
                        bytes_per_s = podsim_tofu::family::injection_limit(m, bytes_per_s)
                            .map_err(|e| QuantityError::Invalid(e.to_string()))?;
                    }
                }
                // Reported to the nearest MB/s.
                ((bytes_per_s / 1e6).round() * 1e6) as u64
            }
            Quantity::PutLatency => {
                let models = podsim_system::Models {
                    endpoint: case.endpoint.clone(),
                    record: None,
                };
                let r = microbench(
                    net,
                    Micro::PutLatency,
                    Micro::PutLatency.default_bytes(),
                    ModelKind::Flow,
                    case.packets,
                    u64::MAX,
                    &models,
                )?;
                (r.time_s * 1e12).round() as u64
            }
            Quantity::RouteMeshLinks => {
                let Network::Dojo(d) = net else {
                    return Err(QuantityError::NotApplicable(
                        "route_mesh_links needs a DOJO system",
                    ));
                };
                let [[x0, y0], [x1, y1]] = route.ok_or(QuantityError::Missing(
                    "route_mesh_links needs `route = [[x, y], [x, y]]`",
                ))?;
                if x0.max(x1) >= d.width() || y0.max(y1) >= d.height() {
                    return Err(QuantityError::Invalid(format!(
                        "the route leaves the {}x{} plane",
                        d.width(),
                        d.height()
                    )));
                }
                let (a, b) = (d.router(x0, y0), d.router(x1, y1));
                let path = dojo_route(d, &Faults::new(), a, b, Shortcut::Never)
                    .map_err(|e| QuantityError::Invalid(e.to_string()))?;
                mesh_links(d, a, &path)
            }
        })
    }

    /// The unit a value of this quantity is given in outside podsim (`--json`), and how many
    /// of the held integer's steps make one of that unit (thousandths of a ratio, picoseconds of
    /// a second).
    pub fn unit(self) -> (&'static str, f64) {
        match self {
            Quantity::CollectiveSpeedup
            | Quantity::TrainSpeedup
            | Quantity::DlrmSpeedup
            | Quantity::BisectionRatio
            | Quantity::AppSpeedup
            | Quantity::AppCmemGain
            | Quantity::AppPerfPerWattGain
            | Quantity::AppCmemPerfPerWattGain
            | Quantity::MlperfSpeedup
            | Quantity::MlperfPowerRatio => ("x", 1000.0),
            Quantity::AppPower | Quantity::MlperfPower | Quantity::TtFullLoadPower => ("W", 1000.0),
            Quantity::Goodput
            | Quantity::DramUtilization
            | Quantity::TrainMfu
            | Quantity::AppOcsPowerShare => ("fraction", 1000.0),
            Quantity::TrainThroughput => ("seqs/s", 1000.0),
            Quantity::RidgePoint => ("FLOP/B", 1000.0),
            Quantity::BisectionScalingExponent => ("exponent", 1000.0),
            Quantity::PutLatency | Quantity::TofuBarrierLatency => ("s", 1e12),
            Quantity::PeakFlops | Quantity::Fp32Flops | Quantity::TrainTflopsPerChip => {
                ("FLOP/s", 1.0)
            }
            Quantity::Sram => ("B", 1.0),
            Quantity::BisectionBandwidth
            | Quantity::InjectionBandwidth
            | Quantity::TotalInjectionBandwidth
            | Quantity::LinkBandwidth
            | Quantity::VirtualBisectionBandwidth
            | Quantity::PutThroughput
            | Quantity::InjectionRate
            | Quantity::SramLoadBandwidth
            | Quantity::SramStoreBandwidth
            | Quantity::HostBandwidth
            | Quantity::DieEdgeBandwidth
            | Quantity::TileEdgeDieBandwidth
            | Quantity::TileEdgeBandwidth
            | Quantity::DramBandwidth
            | Quantity::BusBandwidth
            | Quantity::MatmulDramBandwidth => ("B/s", 1.0),
            Quantity::TensorCoreLatency | Quantity::SystolicCompletion => ("cycles", 1.0),
            Quantity::Nodes
            | Quantity::Links
            | Quantity::DegreeMax
            | Quantity::Diameter
            | Quantity::BisectionLinks
            | Quantity::OcsSwitches
            | Quantity::RouteMeshLinks
            | Quantity::DramBanks
            | Quantity::Workers
            | Quantity::TensorCoreMacsPerCycle
            | Quantity::TofuNodeResource
            | Quantity::TofuBarrier => ("count", 1.0),
        }
    }

    /// The name files give this quantity.
    pub fn name(self) -> &'static str {
        QUANTITIES
            .iter()
            .copied()
            .find(|n| Quantity::from_name(n) == Some(self))
            .unwrap_or("?")
    }

    /// Print a value of this quantity for people.
    pub fn show(self, v: u64) -> String {
        if matches!(
            self,
            Quantity::PeakFlops | Quantity::Fp32Flops | Quantity::TrainTflopsPerChip
        ) {
            format!("{:.3} TFLOP/s", v as f64 / 1e12)
        } else if matches!(
            self,
            Quantity::CollectiveSpeedup
                | Quantity::TrainSpeedup
                | Quantity::DlrmSpeedup
                | Quantity::BisectionRatio
                | Quantity::AppSpeedup
                | Quantity::AppCmemGain
                | Quantity::AppPerfPerWattGain
                | Quantity::AppCmemPerfPerWattGain
                | Quantity::MlperfSpeedup
                | Quantity::MlperfPowerRatio
        ) {
            format!("{:.3}x", v as f64 / 1000.0)
        } else if matches!(
            self,
            Quantity::AppPower | Quantity::MlperfPower | Quantity::TtFullLoadPower
        ) {
            format!("{:.1} W", v as f64 / 1000.0)
        } else if matches!(
            self,
            Quantity::Goodput
                | Quantity::DramUtilization
                | Quantity::TrainMfu
                | Quantity::AppOcsPowerShare
        ) {
            format!("{:.1}%", v as f64 / 10.0)
        } else if self == Quantity::TrainThroughput {
            format!("{:.2} seqs/s", v as f64 / 1000.0)
        } else if self == Quantity::RidgePoint {
            format!("{:.1} FLOP/B", v as f64 / 1000.0)
        } else if self == Quantity::BisectionScalingExponent {
            format!("{:.3}", v as f64 / 1000.0)
        } else if matches!(self, Quantity::PutLatency | Quantity::TofuBarrierLatency) {
            format!("{:.3} us", v as f64 / 1e6)
        } else if self == Quantity::Sram {
            Bytes(v).to_string()
        } else if self.is_bandwidth() {
            Bandwidth::from_bytes_per_s(v).map_or_else(|| "0 B/s".into(), |b| b.to_string())
        } else {
            v.to_string()
        }
    }
}

impl ValidationCase {
    /// podsim's value for the case: the compute quantity on its compute model, or the network
    /// quantity on its built system. A case marked not reproduced is measured where it can be
    /// (`None` where it cannot), and never judged.
    pub fn evaluate(&self) -> Result<Option<u64>, QuantityError> {
        if self.not_reproduced.is_some() {
            // Measured where it can be, to show how far off it is; not judged.
            return Ok(self.measure().ok());
        }
        self.measure().map(Some)
    }

    fn measure(&self) -> Result<u64, QuantityError> {
        if self.quantity.is_compute() {
            return self.quantity.measure_compute(self);
        }
        let spec = self
            .system
            .as_ref()
            .ok_or(QuantityError::Missing("needs [case.system]"))?;
        let net = spec.build().map_err(QuantityError::Topology)?;
        let m = net.metrics();
        self.quantity.measure(self, &net, &m)
    }
}

/// What a compute case measures: `[case.compute]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseCompute {
    /// A chip preset (peak_flops, fp32_flops).
    pub chip: Option<String>,
    /// Tensor core or array size.
    pub size: Option<u64>,
    /// Reduction length streamed through the array.
    pub k: Option<u64>,
}

/// A collective a case runs: kind, algorithm, model and bytes per rank.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CaseCollective {
    /// What to run.
    pub setup: Setup,
}

/// How podsim's value for a case is produced, which decides what agreement with the published
/// figure is worth (only predictions are evidence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseClass {
    /// A count or closed form of the configuration (a link count, a sum of typed-in link
    /// bandwidths): it checks that the machine was described as published.
    Structural,
    /// A parameter was fitted to this figure, or the value is typed in: agreement shows the
    /// fit holds, nothing more. The case names the parameter (`calibrated_by`).
    Calibrated,
    /// Computed from lower-level mechanisms with nothing fitted to this figure.
    Prediction,
}

impl CaseClass {
    /// Every class with its name in validation files and output.
    pub const ALL: [(&'static str, CaseClass); 3] = [
        ("structural", CaseClass::Structural),
        ("calibrated", CaseClass::Calibrated),
        ("prediction", CaseClass::Prediction),
    ];

    /// The class's name.
    pub fn name(self) -> &'static str {
        match self {
            CaseClass::Structural => "structural",
            CaseClass::Calibrated => "calibrated",
            CaseClass::Prediction => "prediction",
        }
    }

    /// The class a file names.
    pub fn parse(s: &str) -> Option<CaseClass> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, c)| *c)
    }
}

/// One validated case.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationCase {
    /// What the figure is.
    pub figure: String,
    /// Seed file and section or table.
    pub source: String,
    /// How podsim's value is produced.
    pub class: CaseClass,
    /// The fitted or typed-in parameter behind a calibrated case, and where it is defined.
    pub calibrated_by: Option<String>,
    /// Why the tolerance is what it is (required when it is not zero).
    pub tolerance_reason: Option<String>,
    /// What is measured.
    pub quantity: Quantity,
    /// The published value (bytes/s for bandwidths).
    pub published: u64,
    /// The accepted absolute difference, same unit.
    pub tolerance: u64,
    /// Why podsim cannot reproduce it yet, if it cannot.
    pub not_reproduced: Option<String>,
    /// For route quantities: from and to, as plane coordinates.
    pub route: Option<[[u32; 2]; 2]>,
    /// For collective quantities: the collective.
    pub collective: Option<CaseCollective>,
    /// For speedups: the system the case's system is compared with.
    pub baseline: Option<SystemSpec>,
    /// Packet overheads for the network model (`[case.packets]`; default none).
    pub packets: Packetization,
    /// The Tofu family machine whose frame gave `packets` (`[case.packets] frame`): its host
    /// bus also limits an `injection_rate` ([`podsim_tofu::family`]).
    pub tofu_frame: Option<podsim_tofu::family::Machine>,
    /// The system that should reproduce it (network quantities).
    pub system: Option<SystemSpec>,
    /// The compute model that should reproduce it (compute quantities).
    pub compute: Option<CaseCompute>,
    /// The endpoint setting (`put_latency`; default: the machine's default).
    pub endpoint: Option<String>,
    /// The pod and slice of a `goodput` case (`[case.availability]`).
    pub availability: Option<podsim_tpu::availability::Availability>,
    /// The training step of a `train_throughput` or `train_speedup` case (`[case.train]`).
    pub train: Option<podsim_train::TrainCase>,
    /// The step a `train_speedup` case compares with (`[case.train_baseline]`).
    pub train_baseline: Option<podsim_train::TrainCase>,
    /// The DLRM step of a `dlrm_speedup` case (`[case.dlrm]`).
    pub dlrm: Option<podsim_tpu::dlrm::DlrmCase>,
    /// The step a `dlrm_speedup` case compares with (`[case.dlrm_baseline]`).
    pub dlrm_baseline: Option<podsim_tpu::dlrm::DlrmCase>,
    /// The generation and resource of a `tofu_node_resource` case (`[case.tofu_node]`).
    pub tofu_node: Option<(podsim_topology::TofuGeneration, podsim_tofu::node::Resource)>,
    /// The barrier of a `tofu_barrier` or `tofu_barrier_latency` case (`[case.tofu_barrier]`).
    pub tofu_barrier: Option<BarrierCase>,
    /// The Tenstorrent setting of a `dram_bandwidth`, `dram_utilization`,
    /// `matmul_dram_bandwidth` or `tt_full_load_power` case (`[case.tenstorrent]`).
    pub tenstorrent: Option<TtCase>,
    /// The applications of an `app_speedup` or `app_cmem_gain` case (`[case.app]`).
    pub app: Option<podsim_tpu::apps::AppCase>,
    /// The submissions of an `mlperf_*` case (`[case.mlperf]`).
    pub mlperf: Option<podsim_tpu::mlperf::MlperfCase>,
}

/// Which of Table VI's rows a `tofu_barrier` case reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierMetric {
    /// TNIs used.
    Tnis,
    /// BCHs on the busiest TNI.
    BchsPerTni,
    /// BGs on the busiest TNI.
    BgsPerTni,
    /// Communication stages.
    Stages,
}

impl BarrierMetric {
    /// Every metric with its name in validation files.
    pub const ALL: [(&'static str, BarrierMetric); 4] = [
        ("tnis", BarrierMetric::Tnis),
        ("bchs_per_tni", BarrierMetric::BchsPerTni),
        ("bgs_per_tni", BarrierMetric::BgsPerTni),
        ("stages", BarrierMetric::Stages),
    ];
}

/// `[case.tofu_barrier]`: a barrier on one TofuD node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierCase {
    /// Start-and-end points (processes).
    pub points: u32,
    /// How they get BCHs.
    pub allocation: podsim_tofu::barrier::Allocation,
    /// The row of Table VI (`tofu_barrier` cases; latency cases ignore it and must not set it).
    pub metric: BarrierMetric,
}

/// A case's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within the tolerance.
    Pass,
    /// Outside it.
    Fail,
    /// Marked as not reproduced, with the reason (measured where it can be, never judged).
    NotReproduced,
}

/// One case's outcome: the row `podsim validate` prints and the object of its `--json` `cases`.
/// Values are in [`Quantity::unit`]'s unit.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CaseReport {
    /// What the figure is.
    pub figure: String,
    /// Seed file and section or table.
    pub source: String,
    /// How podsim's value is produced.
    pub class: CaseClass,
    /// The fitted or typed-in parameter (calibrated cases only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibrated_by: Option<String>,
    /// The quantity's name in validation files.
    pub quantity: &'static str,
    /// The unit of `published`, `podsim` and `tolerance`.
    pub unit: &'static str,
    /// The published figure.
    pub published: f64,
    /// podsim's value (`null` where a case marked not reproduced cannot be measured).
    pub podsim: Option<f64>,
    /// The accepted absolute difference.
    pub tolerance: f64,
    /// Why the tolerance is what it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance_reason: Option<String>,
    /// The verdict.
    pub result: Verdict,
    /// Why the case is not reproduced (`not_reproduced` cases only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The published figure as printed for people.
    #[serde(skip)]
    pub published_text: String,
    /// podsim's value as printed for people (`-` when not reproduced).
    #[serde(skip)]
    pub podsim_text: String,
    /// The tolerance as printed for people.
    #[serde(skip)]
    pub tolerance_text: String,
}

impl CaseReport {
    /// The outcome of `case`, whose value podsim measured as `got` (`None`: a case marked not
    /// reproduced that could not be measured).
    pub fn new(case: &ValidationCase, got: Option<u64>) -> CaseReport {
        let q = case.quantity;
        let (unit, steps) = q.unit();
        let result = match got {
            _ if case.not_reproduced.is_some() => Verdict::NotReproduced,
            Some(v) if v.abs_diff(case.published) <= case.tolerance => Verdict::Pass,
            Some(_) | None => Verdict::Fail,
        };
        CaseReport {
            figure: case.figure.clone(),
            source: case.source.clone(),
            class: case.class,
            calibrated_by: case.calibrated_by.clone(),
            quantity: q.name(),
            unit,
            published: case.published as f64 / steps,
            podsim: got.map(|v| v as f64 / steps),
            tolerance: case.tolerance as f64 / steps,
            tolerance_reason: case.tolerance_reason.clone(),
            result,
            reason: case.not_reproduced.clone(),
            published_text: q.show(case.published),
            podsim_text: got.map_or_else(|| "-".to_string(), |v| q.show(v)),
            tolerance_text: format!("±{}", q.show(case.tolerance)),
        }
    }
}

/// The count of cases by class and verdict: `--json`'s `summary`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Predictions within their tolerance.
    pub prediction_pass: u64,
    /// Predictions outside it.
    pub prediction_fail: u64,
    /// Calibrated cases (pass or fail).
    pub calibrated: u64,
    /// Calibrated cases outside their tolerance (the fit drifted).
    pub calibrated_fail: u64,
    /// Structural cases (pass or fail).
    pub structural: u64,
    /// Structural cases outside their tolerance.
    pub structural_fail: u64,
    /// Cases marked not reproduced (not evaluated, whatever their class).
    pub not_reproduced: u64,
}

impl Summary {
    /// The summary of `cases`.
    pub fn of(cases: &[CaseReport]) -> Summary {
        let mut s = Summary::default();
        for c in cases {
            let fail = c.result == Verdict::Fail;
            match (c.result, c.class) {
                (Verdict::NotReproduced, _) => s.not_reproduced += 1,
                (_, CaseClass::Prediction) if fail => s.prediction_fail += 1,
                (_, CaseClass::Prediction) => s.prediction_pass += 1,
                (_, CaseClass::Calibrated) => {
                    s.calibrated += 1;
                    s.calibrated_fail += u64::from(fail);
                }
                (_, CaseClass::Structural) => {
                    s.structural += 1;
                    s.structural_fail += u64::from(fail);
                }
            }
        }
        s
    }

    /// Whether any case failed, whatever its class.
    pub fn failed(&self) -> bool {
        self.prediction_fail + self.calibrated_fail + self.structural_fail > 0
    }

    /// The line `podsim validate` ends with.
    pub fn line(&self) -> String {
        let fails = |n: u64| {
            if n > 0 {
                format!(" ({n} FAIL)")
            } else {
                String::new()
            }
        };
        format!(
            "predictions: {} pass, {} fail; calibrated: {}{}; structural: {}{}; not reproduced: {}",
            self.prediction_pass,
            self.prediction_fail,
            self.calibrated,
            fails(self.calibrated_fail),
            self.structural,
            fails(self.structural_fail),
            self.not_reproduced
        )
    }
}
