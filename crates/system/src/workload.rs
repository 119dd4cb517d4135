//! Workloads: DAGs of tasks bound to the chips of a machine.
//!
//! A [`Workload`] is a list of tasks. Each task does one kind of [`Work`] on a [`Group`] of
//! chips: `compute` (FLOPs at a stated efficiency of the chip's matrix or vector unit),
//! `memory` (bytes between HBM/DRAM and on-chip memory at the chip's bandwidth), `collective`
//! (any collective and algorithm `podsim collective` accepts, on the group's chips) or `send`
//! (chip `group[i]` sends to chip `to[i]`). A task starts when every task it comes `after` has
//! finished on every chip; `repeat = N` runs it N times back to back (a layer stack), and its
//! dependents wait for the last run.
//!
//! Each chip has resources where compute and memory work queues in arrival order: the matrix
//! unit, the vector unit and the DMA engine to HBM. Communication does not queue: every
//! transfer goes to the one network model of the machine (analytic, flow or packet) as soon as
//! it is ready, so concurrent collectives and sends contend on the links they share, as the
//! model sees them. Compute and memory completions are events on the engine's queue; the
//! network model's completions interleave with them in time order.
//!
//! Tasks that only one machine has (DOJO's DMA from its interface processors, its hardware
//! barrier trees) are [`Work::Machine`]: a [`MachineTask`] the machine's crate implements
//! (`podsim-dojo`), which says whether it fits the machine, what jobs a run of it hands out
//! (transfers on the network model, time on a chip's resource) and what it holds on each chip
//! for the whole workload ([`Claim`]). The executor names no machine.

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use podsim_collective::{Algorithm, Kind, Plan, Request};
use podsim_engine::EventQueue;
use podsim_net::{FastMap, NetworkModel, TransferId};
use podsim_topology::{Network, NodeId};
use podsim_units::{Bandwidth, Bytes, FlopRate, Flops, SimDuration, SimTime};

/// A chip's rates, as the workload executor uses them.
#[derive(Debug, Clone, PartialEq)]
pub struct ChipSpec {
    /// Preset name.
    pub name: String,
    /// Peak of the matrix units.
    pub matrix: FlopRate,
    /// Peak outside the matrix units (None: the source gives none).
    pub vector: Option<FlopRate>,
    /// HBM/DRAM bandwidth to on-chip memory.
    pub memory: Bandwidth,
    /// An on-chip memory level between HBM and the cores (TPU v4's CMEM), if the chip has one
    /// and it is on: a memory task whose working set fits streams at its bandwidth.
    pub cmem: Option<OnChipMemory>,
    /// The matrix units, for GEMM tasks.
    pub arrays: Arrays,
    /// Where the figures come from.
    pub source: String,
}

/// An on-chip memory level: capacity and bandwidth to the cores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OnChipMemory {
    /// Capacity, bytes.
    pub bytes: u64,
    /// Bandwidth to the cores.
    pub bandwidth: Bandwidth,
}

/// A chip's matrix units as the GEMM model sees them.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrays {
    /// Matrix units on the chip (cores x units per core).
    pub units: u64,
    /// Rows x columns of MACs per unit.
    pub shape: (u64, u64),
    /// Clock, Hz.
    pub clock_hz: u64,
    /// Input formats the units take (`bf16`, `int8`, `cfp8`).
    pub formats: Vec<String>,
    /// How the units share one product.
    pub tiling: podsim_compute::chips::Tiling,
    /// How a unit gets its next weight tile: serially, or double-buffered as a TPU's MXUs
    /// (`podsim_compute::gemm::WeightLoad`).
    pub weight_load: podsim_compute::gemm::WeightLoad,
    /// The fraction of the tiling model's rate a GEMM kernel sustains (0 < e <= 1): 1 for a
    /// preset, a machine file's `matrix_efficiency` otherwise. A product's time is the tiling
    /// model's divided by it.
    pub efficiency: f64,
}

impl Arrays {
    /// The time of an `m` x `k` by `k` x `n` product in `format` on this chip: the result split
    /// over the units as the chip's [`Tiling`](podsim_compute::chips::Tiling) says (its columns
    /// evenly, or the grid of row and column tiles that finishes first), each unit a
    /// weight-stationary array timed by
    /// [`podsim_compute::gemm::gemm_loaded`] with the units' weight load (podsim's RTL-exact
    /// convention; the next weight tile shifted in after a fold drains, or while it streams on
    /// a double-buffered unit such as a TPU's MXU), scratchpads that hold the
    /// working set, no DRAM stalls: the `memory` tasks carry the HBM traffic), at the clock.
    pub fn gemm_time(&self, m: u64, n: u64, k: u64, format: &str) -> Result<SimDuration, String> {
        if !self.formats.iter().any(|f| f == format) {
            return Err(format!(
                "the matrix units take {}, not `{format}`",
                self.formats.join(", ")
            ));
        }
        // Bytes per input element: the formats matrix units take.
        let input_bytes = match format {
            "fp32" => 4,
            "bf16" | "fp16" => 2,
            _ => 1,
        };
        let units = self.units.max(1);
        // Rows of the result per unit: all of them (columns), or each divisor of the units
        // that leaves every grid row a row of the result (grid).
        let row_splits: Vec<u64> = match self.tiling {
            podsim_compute::chips::Tiling::Columns => vec![1],
            podsim_compute::chips::Tiling::Grid => (1..=units)
                .filter(|d| units.is_multiple_of(*d) && *d <= m.max(1))
                .collect(),
        };
        let mut cycles = u64::MAX;
        for um in row_splits {
            let spec = podsim_compute::gemm::GemmSpec {
                rows: self.shape.0,
                cols: self.shape.1,
                dataflow: podsim_compute::gemm::Dataflow::Ws,
                m: m.div_ceil(um),
                n: n.div_ceil(units / um),
                k,
                convention: podsim_compute::gemm::Convention::Rtl,
                memory: podsim_compute::gemm::MemorySpec {
                    input_bytes,
                    output_bytes: 4,
                    sram_a: u64::MAX / 4,
                    sram_b: u64::MAX / 4,
                    sram_d: u64::MAX / 4,
                    dram_bytes_per_cycle: None,
                },
            };
            let r = podsim_compute::gemm::gemm_loaded(&spec, self.weight_load)
                .map_err(|e| e.to_string())?;
            cycles = cycles.min(r.cycles);
        }
        let ps = (cycles as f64 * 1e12 / self.clock_hz as f64 / self.efficiency).ceil();
        if !(ps.is_finite() && ps < u64::MAX as f64) {
            return Err("the product takes longer than 64-bit picoseconds hold".into());
        }
        Ok(SimDuration::from_ps(ps as u64))
    }
}

impl ChipSpec {
    /// The chip preset `name` (`tpuv4`, `dojo-node`, `d1`: see `podsim_compute::chips`).
    pub fn preset(name: &str) -> Option<ChipSpec> {
        let c = podsim_compute::chips::Chip::preset(name)?;
        let vector = c.peak_fp32_flops();
        Some(ChipSpec {
            name: c.name.to_string(),
            matrix: FlopRate(c.peak_matrix_flops() as u64),
            vector: (vector > 0.0).then_some(FlopRate(vector as u64)),
            memory: Bandwidth::from_bytes_per_s(c.memory_bytes_per_s)?,
            // TPU v4's 128 MiB CMEM (Table 4) at the bandwidth podsim assumes for it.
            cmem: c.tpu.filter(|t| t.cmem_bytes > 0).map(|t| OnChipMemory {
                bytes: t.cmem_bytes,
                bandwidth: Bandwidth::from_bytes_per_s(crate::presets::CMEM_BYTES_PER_S as u64)
                    .expect("positive"),
            }),
            arrays: Arrays {
                units: c.cores * c.units_per_core,
                shape: c.unit,
                clock_hz: c.clock_hz,
                tiling: c.tiling,
                weight_load: c.weight_load,
                efficiency: 1.0,
                formats: c
                    .matrix_formats
                    .split(',')
                    .map(|f| f.trim().to_string())
                    .collect(),
            },
            source: format!(
                "podsim_compute::chips `{}`: {} cores x {} units of {}x{} MACs at {} MHz; {} {}",
                c.name,
                c.cores,
                c.units_per_core,
                c.unit.0,
                c.unit.1,
                c.clock_hz / 1_000_000,
                c.memory,
                Bandwidth::from_bytes_per_s(c.memory_bytes_per_s)?
            ),
        })
    }

    /// A machine file's chip: the preset of its name, else the chip its figures and matrix
    /// units describe (units taking BF16, as the file's `matrix_flops` counts them; no vector
    /// rate or on-chip memory level, which the file does not state).
    pub fn of_machine(c: &crate::cluster::MachineChip) -> Result<ChipSpec, String> {
        if let Some(mut p) = ChipSpec::preset(&c.name) {
            // The file's figures where it states them (its loader fills the rest from the
            // preset, so these are the preset's own otherwise).
            p.memory = c.sustained_memory_bandwidth()?;
            p.arrays.efficiency = c
                .matrix_efficiency
                .map_or(1.0, crate::cluster::Fraction::get);
            if let Some(u) = c.matrix_unit {
                p.matrix = c.matrix_flops;
                p.arrays.units = u64::from(u.count);
                p.arrays.shape = (u64::from(u.rows), u64::from(u.cols));
                p.arrays.clock_hz = u.clock.as_hz();
                p.arrays.tiling = u.tiling;
            }
            return Ok(p);
        }
        let u = c.matrix_unit.ok_or_else(|| {
            format!(
                "chip `{}` is neither a chip preset nor described by its matrix units (matrix_unit, matrix_units and clock: docs/machine-file.md), which time its GEMMs",
                c.name
            )
        })?;
        Ok(ChipSpec {
            name: c.name.clone(),
            matrix: c.matrix_flops,
            vector: None,
            memory: c.sustained_memory_bandwidth()?,
            cmem: None,
            arrays: Arrays {
                units: u64::from(u.count),
                shape: (u64::from(u.rows), u64::from(u.cols)),
                clock_hz: u.clock.as_hz(),
                formats: vec!["bf16".to_string()],
                tiling: u.tiling,
                // A machine file does not say how its units load weights: serially, the
                // tiling model's default.
                weight_load: podsim_compute::gemm::WeightLoad::Serial,
                efficiency: c
                    .matrix_efficiency
                    .map_or(1.0, crate::cluster::Fraction::get),
            },
            source: c.source.clone(),
        })
    }

    /// Every chip preset's name.
    pub fn names() -> Vec<&'static str> {
        podsim_compute::chips::CHIPS
            .iter()
            .map(|c| c.name)
            .collect()
    }
}

/// Which compute unit a compute task uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// The matrix units (MXUs, DOJO's matmul units).
    Matrix,
    /// The vector/SIMD unit.
    Vector,
}

/// What a task does on each chip of its group.
#[derive(Debug, Clone, PartialEq)]
pub enum Work {
    /// `flops` on each chip at `efficiency` (0 < e <= 1) of the unit's peak.
    Compute {
        /// Operations per chip.
        flops: Flops,
        /// Fraction of the peak achieved.
        efficiency: f64,
        /// Which unit.
        unit: Unit,
    },
    /// An `m` x `k` by `k` x `n` product in `format` on each chip's matrix units
    /// ([`Arrays::gemm_time`]).
    Gemm {
        /// Rows of the result.
        m: u64,
        /// Columns of the result.
        n: u64,
        /// The reduction length.
        k: u64,
        /// The input number format.
        format: String,
    },
    /// `bytes` per chip between HBM/DRAM and on-chip memory; from the chip's CMEM instead
    /// when the task's working set fits in it.
    Memory {
        /// Bytes per chip.
        bytes: Bytes,
        /// The data the task streams over and over (`None`: unknown, from HBM).
        working_set: Option<Bytes>,
    },
    /// A collective over the group's chips (per line for a `Group::Dim`).
    Collective {
        /// Which collective.
        kind: Kind,
        /// Its algorithm.
        algorithm: Algorithm,
        /// Per-rank buffer, nccl-tests convention.
        bytes: Bytes,
    },
    /// Chip `group[i]` sends `bytes` to chip `to[i]`.
    Send {
        /// The receivers, one per chip of the group.
        to: Vec<u64>,
        /// Bytes per pair.
        bytes: Bytes,
    },
    /// A task only some machines have, implemented by the machine's crate (DOJO's `dma` and
    /// `barrier`: `podsim_dojo::workload`).
    Machine(Arc<dyn MachineTask>),
}

impl Work {
    /// Whether the work moves data over the network.
    pub fn communicates(&self) -> bool {
        match self {
            Work::Collective { .. } | Work::Send { .. } => true,
            Work::Machine(m) => m.communicates(),
            Work::Compute { .. } | Work::Gemm { .. } | Work::Memory { .. } => false,
        }
    }
}

/// A task only some machines have (DOJO's DMA and hardware barriers), as the executor runs
/// it: the machine's crate implements it and a workload carries it as [`Work::Machine`]. Its
/// chips are its group's ([`Group::All`], a list or lines; a `dim:` group is refused before
/// [`MachineTask::check`] is asked), each one existing on the machine.
pub trait MachineTask: std::fmt::Debug + Send + Sync {
    /// Whether the task fits `net` on `chips`; why not, if not (the executor names the task).
    /// Asked for every task before anything runs.
    fn check(&self, net: &Network, chips: &[u64]) -> Result<(), String>;

    /// What one run does on `chips` (a task that passed [`MachineTask::check`]), in the order
    /// the executor hands it out: the run ends when every job is done.
    fn jobs(&self, net: &Network, chips: &[u64]) -> Result<Vec<Job>, String>;

    /// Whether its runs count as communication (the communication time, the exposed
    /// communication on the critical path).
    fn communicates(&self) -> bool;

    /// What each of its chips holds for the whole workload, counted over every task that
    /// claims the same name (DOJO's barrier trees: a node is in at most four); `None`: nothing.
    fn claim(&self) -> Option<Claim> {
        None
    }

    /// Why `chip` cannot take this task's claim, the others' already counted.
    fn claim_refused(&self, chip: u64) -> String {
        match self.claim() {
            Some(c) => format!("chip {chip} holds more than {} {}", c.most, c.name),
            None => format!("chip {chip} claims nothing"),
        }
    }

    /// The task as [`Any`], to compare tasks of the same type ([`MachineTask::same`]).
    fn as_any(&self) -> &dyn Any;

    /// Whether `other` is the same task (same type, equal values).
    fn same(&self, other: &dyn MachineTask) -> bool;
}

impl PartialEq for dyn MachineTask {
    fn eq(&self, other: &Self) -> bool {
        self.same(other)
    }
}

/// One job of a [`MachineTask`]'s run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// `bytes` from `from` to `to` on the network model (the run starts when it is handed out).
    Send {
        /// The sending node.
        from: u64,
        /// The receiving chip.
        to: u64,
        /// Bytes.
        bytes: u64,
    },
    /// `chip` holds `resource` for `time`, queued behind the resource's other jobs.
    Hold {
        /// The chip.
        chip: u64,
        /// Its resource.
        resource: Resource,
        /// For how long.
        time: SimDuration,
    },
}

/// Something a [`MachineTask`] holds on each of its chips for the whole workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    /// What is held (claims of the same name count together), plural: `barrier trees`.
    pub name: &'static str,
    /// The most a chip may hold.
    pub most: usize,
}

/// The chips a task runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Group {
    /// Every chip.
    All,
    /// Every chip, as independent lines along dimension `d` of a mesh or torus (collectives
    /// run on each line at once).
    Dim(usize),
    /// These chips, in this order (collective ranks follow it).
    List(Vec<u64>),
    /// Several disjoint groups at once, each in rank order and filling a mesh of the given
    /// sizes (x fastest; what dimension-wise algorithms follow): a collective runs on every
    /// line at the same time; compute, memory and send tasks use every chip of every line.
    Lines(Vec<Vec<u64>>, Vec<u32>),
}

/// One task of a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Unique name.
    pub name: String,
    /// What it does.
    pub work: Work,
    /// Where.
    pub group: Group,
    /// Indices of the tasks it waits for (each earlier in the list).
    pub after: Vec<usize>,
    /// Runs back to back (at least 1).
    pub repeat: u32,
}

/// A workload: tasks in an order where every task comes after those it waits for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Workload {
    /// The tasks.
    pub tasks: Vec<Task>,
}

/// Why a workload cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    /// A task does not fit the machine (its chips, its unit, its collective).
    #[error("task `{task}`: {why}")]
    Task {
        /// The task.
        task: String,
        /// Why.
        why: String,
    },
    /// The network refused or stopped.
    #[error("network: {0}")]
    Net(String),
    /// Work remains that can never start.
    #[error("{0} task runs can never start (a cycle of `after`?)")]
    Stuck(usize),
    /// Simulated time beyond 64-bit picoseconds.
    #[error("task `{0}`: its duration exceeds the 213-day range of 64-bit picoseconds")]
    TimeOverflow(String),
    /// The task runs (tasks times their `repeat`) would not fit the memory limit.
    #[error(
        "{runs} task runs (each task times its `repeat`) need about {} of bookkeeping, more than the memory limit of {} (--memory-limit); lower a `repeat`",
        podsim_units::Bytes(u64::try_from(*estimate).unwrap_or(u64::MAX)),
        podsim_units::Bytes(*limit)
    )]
    Memory {
        /// Task runs in all.
        runs: u128,
        /// The estimate, bytes.
        estimate: u128,
        /// The limit, bytes.
        limit: u64,
    },
    /// The collectives' plans and the model's state for their transfers would not fit the
    /// memory limit.
    #[error(
        "the collectives' {transfers} transfers (each collective task's plan, over its groups) need about {} on the {model} model, more than the memory limit of {} (--memory-limit)",
        podsim_units::Bytes(u64::try_from(*estimate).unwrap_or(u64::MAX)),
        podsim_units::Bytes(*limit)
    )]
    CollectiveMemory {
        /// Transfers in all the collective tasks' plans.
        transfers: u128,
        /// The model.
        model: &'static str,
        /// The estimate, bytes.
        estimate: u128,
        /// The limit, bytes.
        limit: u64,
    },
}

/// Bytes the executor keeps for one task run (its record, its place in the queues and its
/// timing): measured at about 128 (a 4x4 torus, 10^6 and 4 x 10^6 repeats of one task: 172 MB
/// and 547 MB peak), taken as 160.
pub const RUN_BYTES: u128 = 160;

/// When one task ran: from the first of its runs' starts to the last run's end.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TaskTiming {
    /// The task's name.
    pub name: String,
    /// Start, seconds.
    pub start_s: f64,
    /// End, seconds.
    pub end_s: f64,
}

/// A workload run as `podsim workload --json` prints it (and `podsim run --json`, `podsim
/// import chakra` a workload's run) and Python's `podsim.workload` returns it. One struct, so
/// the command and the bindings cannot drift; serialize it with `podsim_report::to_json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WorkloadOutput<'a> {
    /// The workload's name.
    pub workload: &'a str,
    /// The machine's name.
    pub machine: &'a str,
    /// The chip's name.
    pub chip: &'a str,
    /// The network model's name.
    pub model: &'static str,
    /// The machine's chips (its network's endpoints).
    pub chips: u64,
    /// From time zero to the last task's end, seconds.
    pub time_s: f64,
    /// The busiest chip's compute time, seconds.
    pub compute_busy_s: f64,
    /// Time during which some communication task was running, seconds.
    pub communication_time_s: f64,
    /// Communication on the critical path, seconds.
    pub exposed_communication_s: f64,
    /// Task names along the critical path, first to last.
    pub critical_path: &'a [String],
    /// Each task's timing, in the workload's order.
    pub tasks: &'a [TaskTiming],
    /// The run's energy (`--energy`): `energy_j`, `average_power_w`, `energy_breakdown_j`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::energy::EnergyOutput>,
}

impl<'a> WorkloadOutput<'a> {
    /// `r`, the run of `spec` on `model` on a machine of `chips` chips.
    pub fn new(
        spec: &'a WorkloadSpec,
        r: &'a WorkloadResult,
        model: podsim_collective::ModelKind,
        chips: u64,
    ) -> WorkloadOutput<'a> {
        WorkloadOutput {
            workload: &spec.name,
            machine: &spec.system.name,
            chip: &spec.chip.name,
            model: model.name(),
            chips,
            time_s: r.time_s,
            compute_busy_s: r.compute_busy_s,
            communication_time_s: r.communication_time_s,
            exposed_communication_s: r.exposed_communication_s,
            critical_path: &r.critical_path,
            tasks: &r.tasks,
            energy: None,
        }
    }

    /// `self` with the run's energy on chips of `power`, from what the run did
    /// ([`WorkloadResult::activity`]).
    pub fn with_energy(
        mut self,
        r: &WorkloadResult,
        power: &crate::energy::ChipPower,
    ) -> Result<WorkloadOutput<'a>, String> {
        self.energy = Some(crate::energy::EnergyOutput::new(power, &r.activity, None)?);
        Ok(self)
    }
}

impl WorkloadOutput<'_> {
    /// The heading `podsim workload` prints: workload, machine, chips, chip and model.
    pub fn heading(&self) -> String {
        format!(
            "{} on {} ({} chips of {}), {} model",
            self.workload, self.machine, self.chips, self.chip, self.model
        )
    }

    /// The table of tasks `podsim workload` prints: each task's start, end and duration.
    pub fn task_rows(&self) -> Vec<(String, Vec<String>)> {
        let mut rows = vec![(
            "task".to_string(),
            vec!["start".into(), "end".into(), "duration".into()],
        )];
        for t in self.tasks {
            rows.push((
                t.name.clone(),
                vec![ms(t.start_s), ms(t.end_s), ms(t.end_s - t.start_s)],
            ));
        }
        rows
    }
}

/// Seconds as milliseconds, four decimals.
fn ms(s: f64) -> String {
    format!("{:.4} ms", s * 1e3)
}

impl WorkloadResult {
    /// The summary rows of the run: time, the busiest chip's compute, communication, the
    /// exposed part of it and the critical path.
    pub fn summary_rows(&self) -> Vec<(String, Vec<String>)> {
        vec![
            ("time".to_string(), vec![ms(self.time_s)]),
            (
                "compute (busiest chip)".into(),
                vec![ms(self.compute_busy_s)],
            ),
            ("communication".into(), vec![ms(self.communication_time_s)]),
            ("  exposed".into(), vec![ms(self.exposed_communication_s)]),
            (
                "critical path".into(),
                vec![self.critical_path.join(" -> ")],
            ),
        ]
    }
}

/// What a workload run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadResult {
    /// From time zero to the last task's end, seconds.
    pub time_s: f64,
    /// The busiest chip's compute time (matrix and vector units), seconds.
    pub compute_busy_s: f64,
    /// Time during which some communication task was running, seconds.
    pub communication_time_s: f64,
    /// Communication on the critical path, seconds: the time of the communication runs the
    /// last task waited for through its chain of dependencies and resources, which no overlap
    /// hid (the step would have been that much shorter with free communication, other things
    /// equal).
    pub exposed_communication_s: f64,
    /// Task names along the critical path, first to last (consecutive runs of one task once).
    pub critical_path: Vec<String>,
    /// Each task's timing, in the workload's order.
    pub tasks: Vec<TaskTiming>,
    /// Busy intervals for traces: (task, run, chip, resource, start, end); communication
    /// transfers have resource `Resource::Network`.
    pub intervals: Vec<Interval>,
    /// What each directed link carried over the run, on models that route over links (the
    /// flow model; empty on the others).
    pub link_loads: Vec<podsim_net::LinkLoad>,
    /// What the chips did over the run (matrix FLOPs, memory bytes, bytes times links on
    /// models that report link loads), for [`crate::energy`]. Repeated runs count each time;
    /// a task on some chips counts on those chips only.
    pub activity: crate::energy::Activity,
}

/// A resource a chip spends time on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Resource {
    /// The matrix units.
    Matrix,
    /// The vector unit.
    Vector,
    /// The DMA engine to HBM/DRAM.
    Memory,
    /// The network endpoint (a transfer leaving this chip).
    Network,
    /// A barrier this chip waits at (a machine's hardware barrier: DOJO's barrier trees).
    Sync,
}

impl Resource {
    /// Every resource, in trace order.
    pub const ALL: [Resource; 5] = [
        Resource::Matrix,
        Resource::Vector,
        Resource::Memory,
        Resource::Network,
        Resource::Sync,
    ];
    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            Resource::Matrix => "matrix unit",
            Resource::Vector => "vector unit",
            Resource::Memory => "DMA/HBM",
            Resource::Network => "network",
            Resource::Sync => "barrier",
        }
    }
    fn index(self) -> usize {
        self as usize
    }
}

/// One busy interval of a chip's resource.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Index of the task.
    pub task: usize,
    /// Which run of it.
    pub run: u32,
    /// The chip.
    pub chip: u64,
    /// The resource.
    pub resource: Resource,
    /// Start.
    pub start: SimTime,
    /// End.
    pub end: SimTime,
}

/// How many busy intervals a result keeps for traces (the run's figures use all of them).
pub const INTERVAL_LIMIT: usize = 1_000_000;

/// The chips of one collective, in rank order, and the sizes of the dimensions they fill.
type Ranks = (Vec<u64>, Vec<u32>);

/// A planned collective's identity: kind, algorithm, bytes, dimensions and ranks.
type PlanKey = (Kind, Algorithm, u64, Vec<u32>, usize);

/// The ranks (chips in rank order) and dimension sizes of each collective a task runs.
fn collective_groups(net: &Network, group: &Group, chips: u64) -> Result<Vec<Ranks>, String> {
    match group {
        Group::All => {
            let dims = net.rank_grid();
            Ok(vec![((0..chips).collect(), dims)])
        }
        Group::List(l) => Ok(vec![(l.clone(), vec![l.len() as u32])]),
        Group::Lines(lines, dims) => Ok(lines.iter().map(|l| (l.clone(), dims.clone())).collect()),
        Group::Dim(d) if matches!(net, Network::Dojo(_)) => {
            // A DOJO plane's rows (dim:x) or columns (dim:y) of routers.
            let Network::Dojo(p) = net else {
                return Err("not a DOJO plane".into());
            };
            let (w, h) = (u64::from(p.width()), u64::from(p.height()));
            match d {
                0 => Ok((0..h)
                    .map(|y| ((y * w..(y + 1) * w).collect(), vec![w as u32]))
                    .collect()),
                1 => Ok((0..w)
                    .map(|x| ((0..h).map(|y| x + y * w).collect(), vec![h as u32]))
                    .collect()),
                _ => Err(format!(
                    "a DOJO plane has two dimensions (dim:x, dim:y), so there is no dimension {d}"
                )),
            }
        }
        Group::Dim(d) => {
            let c = net.cube().ok_or_else(|| {
                format!(
                    "`dim:` groups need a mesh or torus, and {} is not one",
                    net.shorthand()
                )
            })?;
            let dims = c.dims();
            let k = *dims.get(*d).ok_or_else(|| {
                format!(
                    "the machine has {} dimensions, so there is no dimension {d}",
                    dims.len()
                )
            })?;
            let stride: u64 = dims[..*d].iter().map(|&x| u64::from(x)).product();
            let mut lines = Vec::new();
            for id in 0..chips {
                if c.coord(NodeId(id), *d) == 0 {
                    lines.push((
                        (0..u64::from(k)).map(|i| id + i * stride).collect(),
                        vec![k],
                    ));
                }
            }
            Ok(lines)
        }
    }
}

/// The chips of a compute, memory or send group.
fn chips_of(group: &Group, chips: u64) -> Result<Vec<u64>, String> {
    match group {
        Group::All => Ok((0..chips).collect()),
        Group::List(l) => Ok(l.clone()),
        Group::Lines(lines, _) => Ok(lines.concat()),
        Group::Dim(_) => Err(
            "a `dim:` group names lines for collectives; compute, memory and send tasks take `all` or a list of chips"
                .into(),
        ),
    }
}

/// A planned collective, shared by every run that uses it.
struct PlanInfo {
    plan: Plan,
    dependents: Vec<Vec<u32>>,
    /// Per op, its sender's next op in program order ([`Plan::next_in_order`]).
    next_in_order: Vec<Option<usize>>,
}

/// One collective of a run in progress.
struct Coll {
    info: Rc<PlanInfo>,
    ranks: Vec<u64>,
    waiting: Vec<u32>,
}

#[derive(Debug, Clone, Copy)]
enum Flight {
    /// Op `op` of collective `coll` of run `run`.
    Op { run: usize, coll: usize, op: u32 },
    /// A point-to-point send of run `run`.
    Send { run: usize },
}

struct Run {
    task: usize,
    rep: u32,
    deps_left: u32,
    released: Option<SimTime>,
    jobs_left: u64,
    start: Option<SimTime>,
    end: SimTime,
    /// The run whose end let this one finish where it did (critical path).
    pred: Option<usize>,
    /// The latest start of one of its jobs that waited for a resource, and who held it.
    blocked: Option<(SimTime, usize)>,
    colls: Vec<Coll>,
}

/// Run `w` on `net` with `chip`s, on `model`. Tasks run as described in the module docs.
pub fn run(
    w: &Workload,
    net: &Network,
    chip: &ChipSpec,
    model: &mut dyn NetworkModel,
) -> Result<WorkloadResult, WorkloadError> {
    let chips = net.endpoints();
    let terr = |t: &Task, why: String| WorkloadError::Task {
        task: t.name.clone(),
        why,
    };
    let runs: u128 = w.tasks.iter().map(|t| u128::from(t.repeat)).sum();
    let limit = crate::machine::memory_limit();
    if runs * RUN_BYTES > u128::from(limit) {
        return Err(WorkloadError::Memory {
            runs,
            estimate: runs * RUN_BYTES,
            limit,
        });
    }
    podsim_engine::watch::begin(
        "task runs finished",
        u64::try_from(runs).unwrap_or(u64::MAX),
    );
    // Check every task against the machine before anything runs.
    let (mut collective_transfers, mut collective_held) = (0u128, 0u128);
    // Every transfer the run sends (tasks times their repeats) and their bytes, for the
    // up-front time estimate.
    let (mut sent_transfers, mut sent_bytes) = (0u128, 0u128);
    for (i, t) in w.tasks.iter().enumerate() {
        if t.repeat == 0 {
            return Err(terr(t, "`repeat` must be at least 1".into()));
        }
        if let Some(&a) = t.after.iter().find(|&&a| a >= i) {
            return Err(terr(
                t,
                format!("waits for task {a}, which is not earlier in the list"),
            ));
        }
        if let Group::Lines(lines, dims) = &t.group {
            let size: u64 = dims.iter().map(|&d| u64::from(d)).product();
            if let Some(l) = lines.iter().find(|l| l.len() as u64 != size) {
                return Err(terr(
                    t,
                    format!(
                        "a line has {} chips but its sizes {dims:?} make {size}",
                        l.len()
                    ),
                ));
            }
            let mut seen = std::collections::HashSet::new();
            if let Some(&c) = lines.iter().flatten().find(|&&c| !seen.insert(c)) {
                return Err(terr(t, format!("chip {c} is in two lines")));
            }
        }
        let listed: Option<Vec<u64>> = match &t.group {
            Group::List(l) => Some(l.clone()),
            Group::Lines(lines, _) => Some(lines.concat()),
            _ => None,
        };
        if let Some(l) = listed {
            if l.is_empty() {
                return Err(terr(t, "the group lists no chip".into()));
            }
            if let Some(&c) = l.iter().find(|&&c| c >= chips) {
                return Err(terr(
                    t,
                    format!("chip {c} does not exist (the machine has {chips})"),
                ));
            }
        }
        match &t.work {
            Work::Compute {
                efficiency, unit, ..
            } => {
                if !(*efficiency > 0.0 && *efficiency <= 1.0) {
                    return Err(terr(t, format!("efficiency {efficiency} is not in (0, 1]")));
                }
                if *unit == Unit::Vector && chip.vector.is_none() {
                    return Err(terr(
                        t,
                        format!("the {} chip preset gives no vector-unit rate", chip.name),
                    ));
                }
                chips_of(&t.group, chips).map_err(|e| terr(t, e))?;
            }
            Work::Gemm { m, n, k, format } => {
                chips_of(&t.group, chips).map_err(|e| terr(t, e))?;
                chip.arrays
                    .gemm_time(*m, *n, *k, format)
                    .map_err(|e| terr(t, e))?;
            }
            Work::Memory { .. } => {
                chips_of(&t.group, chips).map_err(|e| terr(t, e))?;
            }
            Work::Send { to, bytes, .. } => {
                let from = chips_of(&t.group, chips).map_err(|e| terr(t, e))?;
                let n = from.len() as u128 * u128::from(t.repeat);
                sent_transfers = sent_transfers.saturating_add(n);
                sent_bytes = sent_bytes.saturating_add(n * u128::from(bytes.0));
                if from.len() != to.len() {
                    return Err(terr(
                        t,
                        format!("{} senders but {} receivers in `to`", from.len(), to.len()),
                    ));
                }
                if let Some(&c) = to.iter().find(|&&c| c >= chips) {
                    return Err(terr(
                        t,
                        format!("chip {c} does not exist (the machine has {chips})"),
                    ));
                }
            }
            Work::Collective {
                kind,
                algorithm,
                bytes,
            } => {
                for (ranks, dims) in
                    collective_groups(net, &t.group, chips).map_err(|e| terr(t, e))?
                {
                    let request = Request {
                        kind: *kind,
                        algorithm: *algorithm,
                        bytes: if *kind == Kind::Barrier { 0 } else { bytes.0 },
                        ranks: ranks.len(),
                        dims,
                        chunk: 0,
                    };
                    let all = podsim_collective::transfers(&request);
                    // A ring keeps about two steps in flight; the others may send everything.
                    let held = if podsim_collective::RingSteps::new(&request).is_some() {
                        all.min(podsim_collective::STEPS_HELD * ranks.len() as u128)
                    } else {
                        all
                    };
                    collective_transfers = collective_transfers.saturating_add(all);
                    // Each transfer carries about a rank's share (a ring's chunk, an
                    // all-to-all's piece): a lower estimate for trees, which send whole buffers.
                    let each = u128::from(request.bytes) / (ranks.len().max(1) as u128);
                    sent_transfers = sent_transfers.saturating_add(all * u128::from(t.repeat));
                    sent_bytes = sent_bytes.saturating_add(all * each * u128::from(t.repeat));
                    collective_held = collective_held.saturating_add(held);
                }
            }
            Work::Machine(m) => {
                let on = chips_of(&t.group, chips).map_err(|e| terr(t, e))?;
                m.check(net, &on).map_err(|e| terr(t, e))?;
            }
        }
    }
    // The collectives' plans (every transfer of every collective task's plan, shared or not)
    // and the model's state for the transfers in flight, as `podsim collective` estimates
    // them. Checked on a 512-chip all-reduce of 1 MB (523,264 transfers): 126 MB peak,
    // estimate 105 MB beside the process's own 10 MB.
    let kind = match model.name() {
        "analytic" => podsim_collective::ModelKind::Analytic,
        "packet" => podsim_collective::ModelKind::Packet,
        _ => podsim_collective::ModelKind::Flow,
    };
    let estimate = podsim_collective::memory_estimate(net, kind, collective_held).saturating_add(
        (collective_transfers - collective_held)
            * u128::from(podsim_collective::PLAN_BYTES_PER_TRANSFER),
    );
    if collective_transfers > 0 && estimate > u128::from(limit) {
        return Err(WorkloadError::CollectiveMemory {
            transfers: collective_transfers,
            model: model.name(),
            estimate,
            limit,
        });
    }
    // The packet level refuses its sends past its flit limit when it gets there (minutes or
    // hours in); refused here before anything runs.
    let flits = sent_bytes.div_ceil(u128::from(crate::machine::PACKET_FLIT_BYTES));
    if model.name() == "packet" && flits > u128::from(podsim_noc::PACKET_FLIT_LIMIT) {
        return Err(WorkloadError::Net(
            podsim_net::NetError::TooMuchWork {
                flits,
                limit: podsim_noc::PACKET_FLIT_LIMIT,
            }
            .to_string(),
        ));
    }
    // What machine tasks hold on their chips for the whole workload (DOJO: a node is in at
    // most four hardware barrier trees), counted task by task in the workload's order.
    let mut claims: HashMap<(&'static str, u64), usize> = HashMap::new();
    for t in &w.tasks {
        let Work::Machine(m) = &t.work else {
            continue;
        };
        let Some(claim) = m.claim() else {
            continue;
        };
        for c in chips_of(&t.group, chips).unwrap_or_default() {
            let n = claims.entry((claim.name, c)).or_default();
            *n += 1;
            if *n > claim.most {
                return Err(terr(t, m.claim_refused(c)));
            }
        }
    }
    // Time, once every check has passed: the packet level by its flit-hops, the flow model by
    // its transfers (about 10^6 a second where they keep in step, measured: a 64 MiB
    // all-reduce on 4096 chips, 3.4 x 10^7 transfers in 1.7 s; fewer where they drift apart),
    // the analytic model faster.
    match model.name() {
        "packet" => crate::machine::announce_packet_run(net, flits),
        "flow" => podsim_engine::watch::estimate(
            &format!(
                "about {:.1e} transfers on the flow model",
                sent_transfers as f64
            ),
            sent_transfers as f64 / 1e6,
        ),
        _ => {}
    }
    let mut ex = Exec {
        w,
        net,
        chip,
        chips,
        runs: Vec::new(),
        first_run: Vec::new(),
        task_dependents: vec![Vec::new(); w.tasks.len()],
        queue: EventQueue::new(),
        res_queue: FastMap::default(),
        res_busy: FastMap::default(),
        plans: HashMap::new(),
        flights: FastMap::default(),
        busy: vec![0u64; chips as usize],
        intervals: Vec::new(),
        done_runs: 0,
        now: SimTime::ZERO,
        activity: crate::energy::Activity {
            chips,
            ..Default::default()
        },
    };
    for (i, t) in w.tasks.iter().enumerate() {
        ex.first_run.push(ex.runs.len());
        for rep in 0..t.repeat {
            ex.runs.push(Run {
                task: i,
                rep,
                deps_left: if rep == 0 { t.after.len() as u32 } else { 1 },
                released: None,
                jobs_left: 0,
                start: None,
                end: SimTime::ZERO,
                pred: None,
                blocked: None,
                colls: Vec::new(),
            });
        }
        for &a in &t.after {
            ex.task_dependents[a].push(i);
        }
    }
    let ready: Vec<usize> = (0..ex.runs.len())
        .filter(|&r| ex.runs[r].deps_left == 0)
        .collect();
    for r in ready {
        ex.release(r, None, model)?;
    }
    ex.event_loop(model)?;
    if ex.done_runs < ex.runs.len() {
        return Err(WorkloadError::Stuck(ex.runs.len() - ex.done_runs));
    }
    let mut r = ex.result();
    r.link_loads = model.carried();
    r.activity.link_bytes = r.link_loads.iter().map(|l| l.wire_bytes).sum();
    Ok(r)
}

struct Exec<'a> {
    w: &'a Workload,
    net: &'a Network,
    chip: &'a ChipSpec,
    chips: u64,
    runs: Vec<Run>,
    first_run: Vec<usize>,
    task_dependents: Vec<Vec<usize>>,
    /// Compute and memory completions: (chip, resource).
    queue: EventQueue<(u64, Resource)>,
    /// Jobs waiting per (chip, resource): (run, duration).
    // Looked up once or more per job and per transfer, never iterated: FxHash's mixing
    // (`podsim_net::FastMap`) where SipHash was most of a pod-scale layer's time.
    res_queue: FastMap<(u64, Resource), VecDeque<(usize, SimDuration)>>,
    /// The run holding each busy (chip, resource), and since when.
    res_busy: FastMap<(u64, Resource), (usize, SimTime)>,
    plans: HashMap<PlanKey, Rc<PlanInfo>>,
    flights: FastMap<TransferId, Flight>,
    /// Compute picoseconds per chip.
    busy: Vec<u64>,
    intervals: Vec<Interval>,
    done_runs: usize,
    now: SimTime,
    /// What the chips did (FLOPs, memory bytes), for the energy model.
    activity: crate::energy::Activity,
}

impl Exec<'_> {
    fn duration(&self, task: usize, amount: f64, rate: f64) -> Result<SimDuration, WorkloadError> {
        let ps = (amount * 1e12 / rate).ceil();
        if !(ps.is_finite() && ps < u64::MAX as f64) {
            return Err(WorkloadError::TimeOverflow(self.w.tasks[task].name.clone()));
        }
        Ok(SimDuration::from_ps(ps as u64))
    }

    /// Run `r` may start now: hand out its jobs.
    fn release(
        &mut self,
        r: usize,
        by: Option<usize>,
        model: &mut dyn NetworkModel,
    ) -> Result<(), WorkloadError> {
        let now = self.now;
        let task = self.runs[r].task;
        let t = &self.w.tasks[task];
        self.runs[r].released = Some(now);
        self.runs[r].pred = by;
        match &t.work {
            Work::Compute {
                flops,
                efficiency,
                unit,
            } => {
                let (res, peak) = match unit {
                    Unit::Matrix => (Resource::Matrix, self.chip.matrix.0),
                    Unit::Vector => (Resource::Vector, self.chip.vector.map_or(0, |v| v.0)),
                };
                let d = self.duration(task, flops.0 as f64, peak as f64 * efficiency)?;
                let chips = chips_of(&t.group, self.chips).unwrap_or_default();
                if *unit == Unit::Matrix {
                    self.activity.matrix_flops += flops.0 as f64 * chips.len() as f64;
                    self.activity.matrix_busy_s += d.as_secs_f64() * chips.len() as f64;
                }
                self.runs[r].jobs_left = chips.len() as u64;
                for c in chips {
                    self.enqueue(c, res, r, d);
                }
            }
            Work::Gemm { m, n, k, format } => {
                let d = self
                    .chip
                    .arrays
                    .gemm_time(*m, *n, *k, format)
                    .map_err(|why| WorkloadError::Task {
                        task: t.name.clone(),
                        why,
                    })?;
                let chips = chips_of(&t.group, self.chips).unwrap_or_default();
                self.activity.matrix_flops +=
                    2.0 * *m as f64 * *n as f64 * *k as f64 * chips.len() as f64;
                self.activity.matrix_busy_s += d.as_secs_f64() * chips.len() as f64;
                self.runs[r].jobs_left = chips.len() as u64;
                for c in chips {
                    self.enqueue(c, Resource::Matrix, r, d);
                }
            }
            Work::Memory { bytes, working_set } => {
                let (rate, onchip) = match (working_set, self.chip.cmem) {
                    (Some(ws), Some(c)) if ws.0 <= c.bytes => (c.bandwidth, true),
                    _ => (self.chip.memory, false),
                };
                let d = self.duration(task, bytes.0 as f64, rate.bytes_per_s() as f64)?;
                let chips = chips_of(&t.group, self.chips).unwrap_or_default();
                let moved = bytes.0 as f64 * chips.len() as f64;
                if onchip {
                    self.activity.onchip_bytes += moved;
                } else {
                    self.activity.hbm_bytes += moved;
                }
                self.runs[r].jobs_left = chips.len() as u64;
                for c in chips {
                    self.enqueue(c, Resource::Memory, r, d);
                }
            }
            Work::Machine(m) => {
                let chips = chips_of(&t.group, self.chips).unwrap_or_default();
                let jobs = m
                    .jobs(self.net, &chips)
                    .map_err(|why| WorkloadError::Task {
                        task: t.name.clone(),
                        why,
                    })?;
                // A run with transfers starts when it is handed out, as a send does; one with
                // resource jobs alone when the first of them starts.
                if jobs.iter().any(|j| matches!(j, Job::Send { .. })) {
                    self.runs[r].start = Some(now);
                }
                self.runs[r].jobs_left = jobs.len() as u64;
                for j in jobs {
                    match j {
                        Job::Send { from, to, bytes } => {
                            self.send(model, from, to, bytes, Flight::Send { run: r })?;
                        }
                        Job::Hold {
                            chip,
                            resource,
                            time,
                        } => self.enqueue(chip, resource, r, time),
                    }
                }
            }
            Work::Send { to, bytes } => {
                let from = chips_of(&t.group, self.chips).unwrap_or_default();
                self.runs[r].start = Some(now);
                self.runs[r].jobs_left = from.len() as u64;
                for (&s, &d) in from.iter().zip(to) {
                    self.send(model, s, d, bytes.0, Flight::Send { run: r })?;
                }
            }
            Work::Collective {
                kind,
                algorithm,
                bytes,
            } => {
                let groups = collective_groups(self.net, &t.group, self.chips).unwrap_or_default();
                self.runs[r].start = Some(now);
                let bytes = if *kind == Kind::Barrier { 0 } else { bytes.0 };
                let mut sends = Vec::new();
                for (ranks, dims) in groups {
                    let key = (*kind, *algorithm, bytes, dims.clone(), ranks.len());
                    let info = match self.plans.get(&key) {
                        Some(i) => Rc::clone(i),
                        None => {
                            let plan = podsim_collective::plan(&Request {
                                kind: *kind,
                                algorithm: *algorithm,
                                bytes,
                                ranks: ranks.len(),
                                dims,
                                chunk: 0,
                            })
                            .map_err(|e| WorkloadError::Task {
                                task: t.name.clone(),
                                why: e.to_string(),
                            })?;
                            let mut dependents = vec![Vec::new(); plan.ops.len()];
                            for (i, o) in plan.ops.iter().enumerate() {
                                for &d in &o.deps {
                                    dependents[d].push(i as u32);
                                }
                            }
                            let next_in_order = plan.next_in_order();
                            let i = Rc::new(PlanInfo {
                                plan,
                                dependents,
                                next_in_order,
                            });
                            self.plans.insert(key, Rc::clone(&i));
                            i
                        }
                    };
                    let waiting: Vec<u32> = info.plan.waiting().map(|w| w as u32).collect();
                    let ci = self.runs[r].colls.len();
                    self.runs[r].jobs_left += info.plan.ops.len() as u64;
                    for (i, &wt) in waiting.iter().enumerate() {
                        if wt == 0 {
                            sends.push((ci, i as u32));
                        }
                    }
                    self.runs[r].colls.push(Coll {
                        info,
                        ranks,
                        waiting,
                    });
                }
                for (ci, op) in sends {
                    self.send_op(model, r, ci, op)?;
                }
            }
        }
        if self.runs[r].jobs_left == 0 {
            self.finish(r, model)?;
        }
        Ok(())
    }

    fn send(
        &mut self,
        model: &mut dyn NetworkModel,
        src: u64,
        dst: u64,
        bytes: u64,
        f: Flight,
    ) -> Result<(), WorkloadError> {
        let id = model
            .send(self.now, NodeId(src), NodeId(dst), Bytes(bytes), 0)
            .map_err(|e| WorkloadError::Net(e.to_string()))?;
        self.flights.insert(id, f);
        Ok(())
    }

    fn send_op(
        &mut self,
        model: &mut dyn NetworkModel,
        r: usize,
        ci: usize,
        op: u32,
    ) -> Result<(), WorkloadError> {
        // An op leaving may release its sender's next op (program order), which may leave at
        // once and release the one after it.
        let mut op = Some(op);
        while let Some(i) = op.take() {
            let c = &self.runs[r].colls[ci];
            let o = &c.info.plan.ops[i as usize];
            let (s, d, b) = (c.ranks[o.src], c.ranks[o.dst], o.bytes);
            let next = c.info.next_in_order[i as usize];
            self.send(
                model,
                s,
                d,
                b,
                Flight::Op {
                    run: r,
                    coll: ci,
                    op: i,
                },
            )?;
            if let Some(j) = next {
                let w = &mut self.runs[r].colls[ci].waiting[j];
                *w -= 1;
                if *w == 0 {
                    op = Some(j as u32);
                }
            }
        }
        Ok(())
    }

    fn enqueue(&mut self, chip: u64, res: Resource, r: usize, d: SimDuration) {
        let key = (chip, res);
        if self.res_busy.contains_key(&key) {
            self.res_queue.entry(key).or_default().push_back((r, d));
        } else {
            self.start_job(chip, res, r, d);
        }
    }

    fn start_job(&mut self, chip: u64, res: Resource, r: usize, d: SimDuration) {
        let now = self.now;
        let run = &mut self.runs[r];
        run.start = Some(run.start.map_or(now, |s| s.min(now)));
        self.res_busy.insert((chip, res), (r, now));
        self.queue.push(now + d, res.index() as u8, (chip, res));
        if matches!(res, Resource::Matrix | Resource::Vector) {
            self.busy[chip as usize] += d.as_ps();
        }
        if self.intervals.len() < INTERVAL_LIMIT {
            self.intervals.push(Interval {
                task: run.task,
                run: run.rep,
                chip,
                resource: res,
                start: now,
                end: now + d,
            });
        }
    }

    /// One job of run `r` is done.
    fn job_done(&mut self, r: usize, model: &mut dyn NetworkModel) -> Result<(), WorkloadError> {
        self.runs[r].jobs_left -= 1;
        if self.runs[r].jobs_left == 0 {
            self.finish(r, model)?;
        }
        Ok(())
    }

    fn finish(&mut self, r: usize, model: &mut dyn NetworkModel) -> Result<(), WorkloadError> {
        let now = self.now;
        self.runs[r].end = now;
        if self.runs[r].start.is_none() {
            self.runs[r].start = Some(now);
        }
        if let Some((at, holder)) = self.runs[r].blocked
            && at > self.runs[r].released.unwrap_or(SimTime::ZERO)
        {
            self.runs[r].pred = Some(holder);
        }
        self.runs[r].colls = Vec::new();
        self.done_runs += 1;
        podsim_engine::watch::done(self.done_runs as u64);
        podsim_engine::watch::simulated_ps(now.as_ps());
        let task = self.runs[r].task;
        let mut next = Vec::new();
        if self.runs[r].rep + 1 < self.w.tasks[task].repeat {
            next.push(r + 1);
        } else {
            for &dt in &self.task_dependents[task] {
                next.push(self.first_run[dt]);
            }
        }
        for n in next {
            self.runs[n].deps_left -= 1;
            if self.runs[n].deps_left == 0 {
                self.release(n, Some(r), model)?;
            }
        }
        Ok(())
    }

    fn event_loop(&mut self, model: &mut dyn NetworkModel) -> Result<(), WorkloadError> {
        loop {
            let t_q = self.queue.peek_time();
            let t_n = model.next_completion();
            // Resource completions first at equal times: they free units for work that the
            // same instant's arrivals release.
            let resource_first = match (t_q, t_n) {
                (None, None) => {
                    if let Some(why) = model.failure() {
                        return Err(WorkloadError::Net(why));
                    }
                    return Ok(());
                }
                (Some(q), Some(n)) => q <= n,
                (Some(_), None) => true,
                (None, Some(_)) => false,
            };
            match t_n {
                _ if resource_first => {
                    let Some((t, (chip, res))) = self.queue.pop() else {
                        return Ok(());
                    };
                    self.now = t;
                    let Some((r, _)) = self.res_busy.remove(&(chip, res)) else {
                        continue;
                    };
                    if let Some((nr, d)) = self
                        .res_queue
                        .get_mut(&(chip, res))
                        .and_then(VecDeque::pop_front)
                    {
                        let released = self.runs[nr].released.unwrap_or(SimTime::ZERO);
                        if t > released && self.runs[nr].blocked.is_none_or(|(at, _)| t >= at) {
                            self.runs[nr].blocked = Some((t, r));
                        }
                        self.start_job(chip, res, nr, d);
                    }
                    self.job_done(r, model)?;
                }
                None => return Ok(()),
                Some(n) => {
                    self.now = self.now.max(n);
                    for c in model.advance(n) {
                        let Some(f) = self.flights.remove(&c.id) else {
                            continue;
                        };
                        if self.intervals.len() < INTERVAL_LIMIT {
                            let run = match f {
                                Flight::Op { run, .. } | Flight::Send { run } => run,
                            };
                            self.intervals.push(Interval {
                                task: self.runs[run].task,
                                run: self.runs[run].rep,
                                chip: c.src.0,
                                resource: Resource::Network,
                                start: c.start,
                                end: c.end,
                            });
                        }
                        match f {
                            Flight::Send { run } => self.job_done(run, model)?,
                            Flight::Op { run, coll, op } => {
                                let info = Rc::clone(&self.runs[run].colls[coll].info);
                                for &d in &info.dependents[op as usize] {
                                    let w = &mut self.runs[run].colls[coll].waiting[d as usize];
                                    *w -= 1;
                                    if *w == 0 {
                                        self.send_op(model, run, coll, d)?;
                                    }
                                }
                                self.job_done(run, model)?;
                            }
                        }
                    }
                }
            }
        }
    }

    fn result(self) -> WorkloadResult {
        let end = self
            .runs
            .iter()
            .map(|r| r.end)
            .max()
            .unwrap_or(SimTime::ZERO);
        let secs = |t: SimTime| t.as_ps() as f64 / 1e12;
        // Intervals of communication runs.
        let mut comm = Vec::new();
        for r in &self.runs {
            if self.w.tasks[r.task].work.communicates() {
                comm.push((r.start.unwrap_or(r.end), r.end));
            }
        }
        let comm = union(comm);
        let comm_len: u64 = comm.iter().map(|&(a, b)| (b - a).as_ps()).sum();
        // Critical path: back from the run that ended last; its communication runs are the
        // exposed communication.
        let mut path = Vec::new();
        let mut on_path = Vec::new();
        let mut at = (0..self.runs.len()).max_by_key(|&r| (self.runs[r].end, r));
        while let Some(r) = at {
            let run = &self.runs[r];
            let name = &self.w.tasks[run.task].name;
            if path.last() != Some(name) {
                path.push(name.clone());
            }
            if self.w.tasks[run.task].work.communicates() {
                on_path.push((run.start.unwrap_or(run.end), run.end));
            }
            at = run.pred;
        }
        let exposed: u64 = union(on_path).iter().map(|&(a, b)| (b - a).as_ps()).sum();
        path.reverse();
        let tasks = self
            .w
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let runs = &self.runs[self.first_run[i]..self.first_run[i] + t.repeat as usize];
                TaskTiming {
                    name: t.name.clone(),
                    start_s: secs(
                        runs.iter()
                            .filter_map(|r| r.start)
                            .min()
                            .unwrap_or(SimTime::ZERO),
                    ),
                    end_s: secs(runs.iter().map(|r| r.end).max().unwrap_or(SimTime::ZERO)),
                }
            })
            .collect();
        WorkloadResult {
            time_s: secs(end),
            compute_busy_s: self.busy.iter().copied().max().unwrap_or(0) as f64 / 1e12,
            communication_time_s: comm_len as f64 / 1e12,
            exposed_communication_s: exposed as f64 / 1e12,
            critical_path: path,
            tasks,
            intervals: self.intervals,
            link_loads: Vec::new(),
            activity: crate::energy::Activity {
                seconds: secs(end),
                ..self.activity
            },
        }
    }
}

/// The union of intervals, as sorted disjoint intervals.
fn union(mut v: Vec<(SimTime, SimTime)>) -> Vec<(SimTime, SimTime)> {
    v.sort();
    let mut out: Vec<(SimTime, SimTime)> = Vec::new();
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// A validated workload file.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSpec {
    /// The file it came from.
    pub file: String,
    /// Its name (default: the file name).
    pub name: String,
    /// Free text.
    pub description: String,
    /// The machine's network.
    pub system: crate::spec::SystemSpec,
    /// The network model (overridable on the command line).
    pub model: podsim_collective::ModelKind,
    /// The chip on every endpoint.
    pub chip: ChipSpec,
    /// The tasks.
    pub workload: Workload,
}

impl WorkloadSpec {
    /// Run on `machine` (the machine file `file`, given as `given`) instead of the file's
    /// [machine]: its network, and its chip on every endpoint, which must be a chip preset.
    pub fn on_machine(
        &mut self,
        machine: crate::spec::SystemSpec,
        given: &str,
        file: &str,
    ) -> Result<(), String> {
        self.chip = match &machine.topology {
            crate::TopoSpec::Machine(m) => {
                ChipSpec::of_machine(&m.chip).map_err(|e| format!("{file}: {e}"))?
            }
            _ => {
                return Err(format!(
                    "`{given}` is not a machine file (docs/machine-file.md); the workload file's [machine] names shorthands"
                ));
            }
        };
        self.system = machine;
        Ok(())
    }

    /// Turn the chip's CMEM `on` or `off`: off drops it, on needs a chip that has it.
    pub fn set_cmem(&mut self, setting: &str) -> Result<(), String> {
        match setting {
            "off" => self.chip.cmem = None,
            "on" if self.chip.cmem.is_some() => {}
            "on" => {
                return Err(format!(
                    "on needs a chip with CMEM (tpuv4), and {} has none{}",
                    self.chip.name, " or the file turned it off"
                ));
            }
            other => return Err(format!("`{other}` is not on or off")),
        }
        Ok(())
    }
}
