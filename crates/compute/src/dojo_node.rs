//! The DOJO node's pipeline as a throughput model (dojo-microarchitecture.txt, "Processing
//! Pipeline", "Node Memory", "Datapath", Table 1).
//!
//! The node is a funnel: every instruction is fetched and decoded (one 32-byte fetch window of
//! up to eight instructions per cycle, an eight-wide decode serving two threads a cycle);
//! front-end primitives (loops, counters, list-based predication) retire there. The rest go on
//! to the four-wide scalar scheduler (four threads a cycle: scalar arithmetic, branches,
//! address generation, synchronisation); matrix and 64-byte SIMD instructions go on again to
//! the two-wide vector scheduler. The SRAM serves two 64-byte loads and one 64-byte store a
//! cycle to the datapath and one load and one store a cycle to the network. Four SMT threads
//! share all of it; the list parser feeds immediates from a side port of the SRAM and costs no
//! slot.
//!
//! A kernel is a per-thread mix of instruction classes ([`Class`]) and an iteration count. In
//! steady state each stage needs (its instructions over its width) cycles and each SRAM port
//! (its accesses over its ports); the kernel takes as long as the busiest, which binds it. The
//! model ignores latencies and dependences (a throughput bound, as the paper's funnel is
//! described), and takes a thread to use a whole stage's width when the others are idle (an
//! assumption: the paper gives widths and threads per cycle, not per-thread limits, except the
//! fetch window's eight instructions).
//!
//! The matmul engine is four units "capable of 8 x 8 matrix multiplications". podsim takes a
//! matmul instruction to multiply two 8 x 8 matrices (512 MACs) on one unit, and a unit to do
//! 64 MACs a cycle, so an instruction holds its unit for eight cycles: that is what the
//! paper's 362 TFLOP/s needs (an assumption; the paper gives the units and the total), and it
//! means the two-wide vector stage can keep the four units busy with a matmul every other
//! cycle.
//!
//! The figures that follow from the parts (tested, and in `validation/dojo.toml`): SRAM loads
//! (2 + 1) x 64 B x 2 GHz = 384 GB/s and stores (1 + 1) x 64 B x 2 GHz = 256 GB/s; matrix
//! FLOPs 4 units x 64 MACs x 2 = 512 a cycle, 354 nodes x 512 x 2 GHz = 362.5 TFLOP/s.

use std::fmt;

/// The node clock, Hz (dojo-microarchitecture.txt, "D1 die": "at 2 GHz").
pub const CLOCK_HZ: u64 = 2_000_000_000;
/// Instructions fetched and decoded per cycle (the 32-byte fetch window; the eight-wide decode).
pub const DECODE_WIDTH: u64 = 8;
/// Threads the decode stage serves per cycle.
pub const DECODE_THREADS: u64 = 2;
/// Scalar instructions issued per cycle.
pub const SCALAR_WIDTH: u64 = 4;
/// Vector instructions issued per cycle.
pub const VECTOR_WIDTH: u64 = 2;
/// SMT threads.
pub const THREADS: usize = 4;
/// 64-byte loads per cycle to the datapath.
pub const LOAD_PORTS: u64 = 2;
/// 64-byte stores per cycle from the datapath.
pub const STORE_PORTS: u64 = 1;
/// 64-byte loads per cycle to the network.
pub const NET_LOAD_PORTS: u64 = 1;
/// 64-byte stores per cycle from the network.
pub const NET_STORE_PORTS: u64 = 1;
/// Bytes per SRAM access.
pub const ACCESS_BYTES: u64 = 64;
/// Matrix units per node.
pub const MATMUL_UNITS: u64 = 4;
/// The matrix unit's side: an instruction multiplies two 8 x 8 matrices.
pub const MATMUL_DIM: u64 = 8;
/// MACs a matrix unit does per cycle (an 8 x 8 array; the assumption that gives 362 TFLOP/s).
pub const MATMUL_MACS_PER_UNIT_CYCLE: u64 = 64;
/// Cycles one matmul instruction holds its unit: 8 x 8 x 8 MACs over 64 a cycle.
pub const MATMUL_UNIT_CYCLES: u64 =
    MATMUL_DIM * MATMUL_DIM * MATMUL_DIM / MATMUL_MACS_PER_UNIT_CYCLE;

/// FP32 FLOPs per cycle on the SIMD datapath: one 64-byte FP32 fused multiply-add a cycle
/// (16 lanes x 2 FLOPs). An assumption that gives the seed's "22 TFLOPS of FP32" per D1 (354 x
/// 32 x 2 GHz = 22.7 TFLOP/s): the vector stage issues two instructions a cycle, but the paper
/// names one SIMD unit and gives only the total.
pub const SIMD_FP32_FLOPS_PER_CYCLE: u64 = ACCESS_BYTES / 4 * 2;

/// The SRAM's load bandwidth, bytes/s: datapath and network ports together.
pub const fn sram_load_bytes_per_s() -> u64 {
    (LOAD_PORTS + NET_LOAD_PORTS) * ACCESS_BYTES * CLOCK_HZ
}

/// The SRAM's store bandwidth, bytes/s: datapath and network ports together.
pub const fn sram_store_bytes_per_s() -> u64 {
    (STORE_PORTS + NET_STORE_PORTS) * ACCESS_BYTES * CLOCK_HZ
}

/// Matrix FLOPs per cycle: four units of 64 MACs, a multiply and an add per MAC.
pub const fn matmul_flops_per_cycle() -> u64 {
    MATMUL_UNITS * MATMUL_MACS_PER_UNIT_CYCLE * 2
}

/// An instruction class, with the stage it retires in (Table 1's three types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Front-end: loop primitives (retire in decode).
    Loop,
    /// Front-end: counters (retire in decode).
    Counter,
    /// Front-end: list-based predication (retire in decode).
    Predicate,
    /// Scalar arithmetic.
    Scalar,
    /// Branches.
    Branch,
    /// Address generation without a memory access.
    Agen,
    /// Synchronisation (semaphores, barriers).
    Sync,
    /// A 64-byte load (address generation in the scalar stage, a load port).
    Load,
    /// A 64-byte store (address generation in the scalar stage, the store port).
    Store,
    /// Two 8 x 8 matrices multiplied on one matrix unit (vector stage; the unit for eight
    /// cycles).
    Matmul,
    /// A 64-byte SIMD operation (vector stage).
    Simd,
    /// A remote push: a 64-byte packet read out through the network load port (scalar stage
    /// issues it).
    Push,
    /// A 64-byte packet committed from the network (network store port; no instruction).
    NetCommit,
}

impl Class {
    /// Every class with its name in kernel files.
    pub const ALL: [(&'static str, Class); 13] = [
        ("loop", Class::Loop),
        ("counter", Class::Counter),
        ("predicate", Class::Predicate),
        ("scalar", Class::Scalar),
        ("branch", Class::Branch),
        ("agen", Class::Agen),
        ("sync", Class::Sync),
        ("load", Class::Load),
        ("store", Class::Store),
        ("matmul", Class::Matmul),
        ("simd", Class::Simd),
        ("push", Class::Push),
        ("net_commit", Class::NetCommit),
    ];
    /// From its name.
    pub fn parse(s: &str) -> Option<Class> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, c)| *c)
    }
    /// Its name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("?", |(n, _)| n)
    }
    /// The stage it retires in (`None`: not an instruction of this node).
    pub fn stage(self) -> Option<Stage> {
        match self {
            Class::Loop | Class::Counter | Class::Predicate => Some(Stage::Decode),
            Class::Scalar
            | Class::Branch
            | Class::Agen
            | Class::Sync
            | Class::Load
            | Class::Store
            | Class::Push => Some(Stage::Scalar),
            Class::Matmul | Class::Simd => Some(Stage::Vector),
            Class::NetCommit => None,
        }
    }
}

/// A resource of the node that a kernel can be bound by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// Fetch and the eight-wide decode.
    Decode,
    /// The four-wide scalar stage.
    Scalar,
    /// The two-wide vector stage.
    Vector,
    /// The four matrix units.
    MatmulUnits,
    /// The two datapath load ports.
    LoadPorts,
    /// The datapath store port.
    StorePort,
    /// The network load port.
    NetLoadPort,
    /// The network store port.
    NetStorePort,
}

impl Stage {
    /// Every resource, in pipeline order.
    pub const ALL: [Stage; 8] = [
        Stage::Decode,
        Stage::Scalar,
        Stage::Vector,
        Stage::MatmulUnits,
        Stage::LoadPorts,
        Stage::StorePort,
        Stage::NetLoadPort,
        Stage::NetStorePort,
    ];
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Decode => "decode",
            Stage::Scalar => "scalar",
            Stage::Vector => "vector",
            Stage::MatmulUnits => "matmul_units",
            Stage::LoadPorts => "load_ports",
            Stage::StorePort => "store_port",
            Stage::NetLoadPort => "net_load_port",
            Stage::NetStorePort => "net_store_port",
        }
    }
    /// What it serves per cycle (matrix units: unit-cycles).
    pub fn width(self) -> u64 {
        match self {
            Stage::Decode => DECODE_WIDTH,
            Stage::Scalar => SCALAR_WIDTH,
            Stage::Vector => VECTOR_WIDTH,
            Stage::MatmulUnits => MATMUL_UNITS,
            Stage::LoadPorts => LOAD_PORTS,
            Stage::StorePort => STORE_PORTS,
            Stage::NetLoadPort => NET_LOAD_PORTS,
            Stage::NetStorePort => NET_STORE_PORTS,
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One SMT thread of a kernel: a loop body's instruction mix and how many times it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// Its name.
    pub name: String,
    /// Iterations of the body.
    pub iterations: u64,
    /// (class, count per iteration).
    pub body: Vec<(Class, u64)>,
}

/// A kernel: up to four threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    /// Its name.
    pub name: String,
    /// The threads.
    pub threads: Vec<Thread>,
}

/// Why a kernel cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// No threads, or more than four.
    #[error("a DOJO node runs 1 to {THREADS} threads; the kernel has {0}")]
    Threads(usize),
    /// A thread with nothing to do.
    #[error("thread `{0}` executes no instructions")]
    Empty(String),
    /// Counts past 64 bits (iterations times a body too large to count).
    #[error("the kernel's {0} exceed 64 bits: give fewer iterations")]
    TooLarge(&'static str),
}

/// What a kernel costs.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeReport {
    /// Cycles in steady state.
    pub cycles: u64,
    /// The busiest resource.
    pub binding: Stage,
    /// Each resource's share of its capacity over the run, 0 to 1, in [`Stage::ALL`] order.
    pub utilization: Vec<(Stage, f64)>,
    /// Instructions (network commits excluded).
    pub instructions: u64,
    /// Instructions per cycle.
    pub ipc: f64,
    /// Matrix and SIMD FLOPs over the run: 1,024 per matmul (512 MACs), 32 per 64-byte SIMD
    /// operation (16 FP32 lanes, a fused multiply-add).
    pub flops: u64,
    /// Seconds at 2 GHz.
    pub time_s: f64,
}

/// Run `k` through the funnel.
pub fn run(k: &Kernel) -> Result<NodeReport, KernelError> {
    if k.threads.is_empty() || k.threads.len() > THREADS {
        return Err(KernelError::Threads(k.threads.len()));
    }
    // Counted in 128 bits (a body of 2^64 - 1 iterations cannot overflow them), then
    // refused past 64 bits rather than saturated into figures.
    let mut demand = [0u128; 8];
    let mut instructions = 0u128;
    let mut flops = 0u128;
    let idx = |s: Stage| Stage::ALL.iter().position(|&x| x == s).expect("listed");
    for t in &k.threads {
        let mut any = false;
        for &(c, n) in &t.body {
            let n = u128::from(n) * u128::from(t.iterations);
            if n == 0 {
                continue;
            }
            any = true;
            if let Some(stage) = c.stage() {
                instructions += n;
                // Every instruction is fetched and decoded; those that go further occupy
                // their stage too.
                demand[idx(Stage::Decode)] += n;
                if stage != Stage::Decode {
                    demand[idx(stage)] += n;
                }
            }
            match c {
                Class::Load => demand[idx(Stage::LoadPorts)] += n,
                Class::Store => demand[idx(Stage::StorePort)] += n,
                Class::Push => demand[idx(Stage::NetLoadPort)] += n,
                Class::NetCommit => demand[idx(Stage::NetStorePort)] += n,
                Class::Matmul => {
                    demand[idx(Stage::MatmulUnits)] += n * u128::from(MATMUL_UNIT_CYCLES);
                    flops += n * u128::from(MATMUL_DIM * MATMUL_DIM * MATMUL_DIM * 2);
                }
                Class::Simd => flops += n * 32,
                _ => {}
            }
        }
        if !any {
            return Err(KernelError::Empty(t.name.clone()));
        }
    }
    let fit = |x: u128, what: &'static str| {
        u64::try_from(x)
            .ok()
            .filter(|&v| v < u64::MAX)
            .ok_or(KernelError::TooLarge(what))
    };
    let need: Vec<u64> = Stage::ALL
        .iter()
        .zip(demand)
        .map(|(s, d)| fit(d.div_ceil(u128::from(s.width())), "cycles"))
        .collect::<Result<_, _>>()?;
    let (instructions, flops) = (fit(instructions, "instructions")?, fit(flops, "FLOPs")?);
    let cycles = need.iter().copied().max().unwrap_or(0).max(1);
    let binding = Stage::ALL[need.iter().position(|&n| n == cycles).unwrap_or(0)];
    let utilization = Stage::ALL
        .iter()
        .zip(demand)
        .map(|(s, d)| (*s, d as f64 / (s.width() as f64 * cycles as f64)))
        .collect();
    Ok(NodeReport {
        cycles,
        binding,
        utilization,
        instructions,
        ipc: instructions as f64 / cycles as f64,
        flops,
        time_s: cycles as f64 / CLOCK_HZ as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(threads: Vec<Vec<(Class, u64)>>) -> Kernel {
        Kernel {
            name: "k".into(),
            threads: threads
                .into_iter()
                .enumerate()
                .map(|(i, body)| Thread {
                    name: format!("t{i}"),
                    iterations: 1000,
                    body,
                })
                .collect(),
        }
    }

    /// The paper's figures from the ports and units: 384 and 256 GB/s, 512 FLOPs a cycle.
    #[test]
    fn sram_and_matrix_figures_follow_from_the_parts() {
        assert_eq!(sram_load_bytes_per_s(), 384_000_000_000);
        assert_eq!(sram_store_bytes_per_s(), 256_000_000_000);
        // 354 nodes x 512 x 2 GHz = 362.496 TFLOP/s (the paper: 362).
        assert_eq!(
            354 * matmul_flops_per_cycle() * CLOCK_HZ,
            362_496_000_000_000
        );
    }

    /// By hand, 1000 iterations per thread:
    /// * SIMD streaming (two threads of 2 loads, 1 SIMD op, 1 store, 1 loop): store port
    ///   2000 / 1 = 2000 cycles; loads 4000 / 2 = 2000; scalar 6000 / 4 = 1500; vector
    ///   2000 / 2 = 1000; decode 10000 / 8 = 1250. Load and store ports tie at 2000; the
    ///   first in pipeline order (the load ports) is named.
    /// * Vector-bound (one thread of 4 SIMD ops, 1 load, 1 loop): vector 4000 / 2 = 2000;
    ///   decode 6000 / 8 = 750; scalar 1000 / 4 = 250; loads 500.
    /// * Matmul-bound (2 matmuls, 1 load, 1 loop, two threads): units 4000 x 8 / 4 = 8000;
    ///   vector 4000 / 2 = 2000: 512 FLOPs a cycle exactly, the node's peak.
    /// * Decode-bound (two threads of 4 loops, 4 counters, 6 predications, 2 scalar ops):
    ///   decode 32000 / 8 = 4000; scalar 4000 / 4 = 1000.
    #[test]
    fn binding_stage_by_hand() {
        let stream = vec![
            (Class::Load, 2),
            (Class::Simd, 1),
            (Class::Store, 1),
            (Class::Loop, 1),
        ];
        let r = run(&kernel(vec![stream.clone(), stream])).unwrap();
        assert_eq!((r.cycles, r.binding), (2000, Stage::LoadPorts));
        let vec_bound = vec![(Class::Simd, 4), (Class::Load, 1), (Class::Loop, 1)];
        let r = run(&kernel(vec![vec_bound])).unwrap();
        assert_eq!((r.cycles, r.binding), (2000, Stage::Vector));
        let mm = vec![(Class::Matmul, 2), (Class::Load, 1), (Class::Loop, 1)];
        let r = run(&kernel(vec![mm.clone(), mm])).unwrap();
        assert_eq!((r.cycles, r.binding), (8000, Stage::MatmulUnits));
        assert_eq!(r.flops / r.cycles, matmul_flops_per_cycle());
        let fe = vec![
            (Class::Loop, 4),
            (Class::Counter, 4),
            (Class::Predicate, 6),
            (Class::Scalar, 2),
        ];
        let r = run(&kernel(vec![fe.clone(), fe])).unwrap();
        assert_eq!((r.cycles, r.binding), (4000, Stage::Decode));
    }

    #[test]
    fn bad_kernels_are_refused() {
        assert!(run(&kernel(vec![])).is_err());
        assert!(run(&kernel(vec![vec![(Class::Loop, 1)]; 5])).is_err());
        let e = run(&kernel(vec![vec![(Class::Loop, 0)]])).unwrap_err();
        assert!(e.to_string().contains("no instructions"));
    }
}
