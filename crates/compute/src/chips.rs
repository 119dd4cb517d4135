//! Chip compute presets and rooflines.
//!
//! - TPU v4 (tpu-v4-isca2023.txt, section 2 and Table 4): 2 TensorCores x 4 MXUs of 128x128
//!   at 1050 MHz; HBM2 1200 GB/s. Peak = 8 x 16,384 MACs x 2 FLOPs x 1.05 GHz = 275.3 TFLOPS
//!   (bf16 or int8; the paper: 275).
//! - TPU v3 (tpu-v4-isca2023.txt, Table 4): 2 TensorCores x 2 MXUs of 128x128 at 940 MHz;
//!   HBM2 900 GB/s. Peak = 4 x 16,384 x 2 x 0.94 GHz = 123.2 TFLOPS bf16 (the paper: 123).
//! - Both TPUs' system features are Table 4's: HBM 32 GiB; CMEM 128 MiB on v4 only; ICI 6 links
//!   at 50 GB/s (3-D torus) on v4, 4 at 70 GB/s (2-D) on v3; 4 / 8 chips per CPU host; 4 / 2
//!   SparseCores.
//! - A100 (the roofline of Fig. 16; tpu-v4-isca2023.txt section 7.6 gives 312 TFLOP/s and the
//!   1410 MHz boost clock; NVIDIA's A100 data sheet gives 108 SMs of 4 tensor cores, each 256
//!   bf16 FMAs per cycle, 2,039 GB/s of HBM2e on the 80 GB part and 19.5 TFLOP/s FP32 = 108 x
//!   128 FLOPs per cycle at 1410 MHz): 108 x 4 x 256 x 2 x 1.41 GHz = 311.9 TFLOPS.
//! - DOJO node and D1 die (dojo-microarchitecture.txt): 4 matmul units of 8x8 per node, 2 GHz,
//!   354 nodes per D1: 354 x 256 MACs x 2 x 2 GHz = 362.5 TFLOPS BF16/CFP8 (paper: 362). FP32
//!   runs on the 64-byte SIMD unit: 16 lanes x FMA (2 FLOPs) = 32 FLOPs per cycle per node
//!   (an assumption: the paper gives only the total), 354 x 32 x 2 GHz = 22.7 TFLOPS (paper:
//!   22). Memory for the roofline: each node's SRAM loads 384 GB/s, from its ports
//!   ([`crate::dojo_node::sram_load_bytes_per_s`]; 354 nodes: 135.9 TB/s).

/// The system features of a TPU generation (tpu-v4-isca2023.txt Table 4). Serialized, its
/// fields are keys of `podsim roofline --json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TpuFeatures {
    /// HBM capacity, bytes (32 GiB on both).
    pub hbm_bytes: u64,
    /// CMEM capacity, bytes (128 MiB on TPU v4; none on v3).
    pub cmem_bytes: u64,
    /// ICI links per chip.
    pub ici_links: u32,
    /// ICI link bandwidth, bytes/s each way.
    pub ici_link_bytes_per_s: u64,
    /// Dimensions of the torus the links build.
    pub torus_dims: u32,
    /// Chips per CPU host.
    pub chips_per_host: u32,
    /// SparseCores per chip.
    pub sparsecores: u32,
}

/// A chip's compute resources.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chip {
    /// Preset name.
    pub name: &'static str,
    /// Cores (TensorCores, DOJO nodes).
    pub cores: u64,
    /// Matrix units per core.
    pub units_per_core: u64,
    /// Rows x columns of MACs per matrix unit.
    pub unit: (u64, u64),
    /// How the matrix units share one product.
    pub tiling: Tiling,
    /// How a matrix unit gets its next weight tile ([`crate::gemm::WeightLoad`]).
    pub weight_load: crate::gemm::WeightLoad,
    /// Clock, Hz.
    pub clock_hz: u64,
    /// FP32 FLOPs per cycle per core outside the matrix units (0 when unknown).
    pub fp32_flops_per_core_cycle: u64,
    /// Memory bandwidth feeding the cores, bytes/s.
    pub memory_bytes_per_s: u64,
    /// What that memory is.
    pub memory: &'static str,
    /// The matrix units' input formats.
    pub matrix_formats: &'static str,
    /// Table 4's system features, for the TPUs.
    pub tpu: Option<TpuFeatures>,
}

/// How a chip's matrix units share one product (`podsim_system::workload::Arrays::gemm_time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tiling {
    /// The units split the product's columns, each streaming every row of the left operand:
    /// a TPU TensorCore's MXUs, fed the same rows by one vector unit (and DOJO's, which the
    /// node's one pipeline feeds).
    Columns,
    /// Each unit takes a tile of rows and columns, the grid of tiles that finishes first: a
    /// GPU's streaming multiprocessors, each computing its own tiles of the output.
    Grid,
}

impl Tiling {
    /// The name a machine file gives (`columns`, `grid`).
    pub fn name(self) -> &'static str {
        match self {
            Tiling::Columns => "columns",
            Tiling::Grid => "grid",
        }
    }
}

/// The presets.
pub const CHIPS: [Chip; 5] = [
    Chip {
        name: "tpuv4",
        cores: 2,
        units_per_core: 4,
        unit: (128, 128),
        tiling: Tiling::Columns,
        // The MXUs double-buffer their weight tile: TPU v1's matrix unit "holds one 64 KiB
        // tile of weights plus one for double-buffering (to hide the 256 cycles it takes to
        // shift a tile in)" (Jouppi et al., ISCA 2017, section 2). TPU v2/v3 keep its
        // weight-stationary design ("stationary RHS", Norrie and Patil, Hot Chips 2020, "Google's
        // Training Chips Revealed: TPUv2 and TPUv3") and TPU v4's MXUs are v3's (tpu-v4-
        // isca2023.txt section 2: "Like TPU v3, each TPU v4 contains two TensorCores"); that
        // they keep v1's second weight buffer is podsim's assumption, stated here.
        weight_load: crate::gemm::WeightLoad::DoubleBuffered,
        clock_hz: 1_050_000_000,
        fp32_flops_per_core_cycle: 0,
        memory_bytes_per_s: 1_200_000_000_000,
        memory: "HBM2",
        matrix_formats: "bf16, int8",
        tpu: Some(TpuFeatures {
            hbm_bytes: 32 << 30,
            cmem_bytes: 128 << 20,
            ici_links: 6,
            ici_link_bytes_per_s: 50_000_000_000,
            torus_dims: 3,
            chips_per_host: 4,
            sparsecores: 4,
        }),
    },
    Chip {
        name: "tpuv3",
        cores: 2,
        units_per_core: 2,
        unit: (128, 128),
        tiling: Tiling::Columns,
        // The MXUs double-buffer their weight tile: TPU v1's matrix unit "holds one 64 KiB
        // tile of weights plus one for double-buffering (to hide the 256 cycles it takes to
        // shift a tile in)" (Jouppi et al., ISCA 2017, section 2). TPU v2/v3 keep its
        // weight-stationary design ("stationary RHS", Norrie and Patil, Hot Chips 2020, "Google's
        // Training Chips Revealed: TPUv2 and TPUv3") and TPU v4's MXUs are v3's (tpu-v4-
        // isca2023.txt section 2: "Like TPU v3, each TPU v4 contains two TensorCores"); that
        // they keep v1's second weight buffer is podsim's assumption, stated here.
        weight_load: crate::gemm::WeightLoad::DoubleBuffered,
        clock_hz: 940_000_000,
        fp32_flops_per_core_cycle: 0,
        memory_bytes_per_s: 900_000_000_000,
        memory: "HBM2",
        matrix_formats: "bf16",
        tpu: Some(TpuFeatures {
            hbm_bytes: 32 << 30,
            cmem_bytes: 0,
            ici_links: 4,
            ici_link_bytes_per_s: 70_000_000_000,
            torus_dims: 2,
            chips_per_host: 8,
            sparsecores: 2,
        }),
    },
    Chip {
        name: "a100",
        cores: 108,
        units_per_core: 4,
        unit: (16, 16),
        tiling: Tiling::Grid,
        // Not modelled for the tensor cores: each fold loads its tile, as the tiling model's
        // serial default.
        weight_load: crate::gemm::WeightLoad::Serial,
        clock_hz: 1_410_000_000,
        fp32_flops_per_core_cycle: 128,
        memory_bytes_per_s: 2_039_000_000_000,
        memory: "HBM2e",
        matrix_formats: "bf16, fp16, int8",
        tpu: None,
    },
    Chip {
        name: "dojo-node",
        cores: 1,
        units_per_core: crate::dojo_node::MATMUL_UNITS,
        unit: (crate::dojo_node::MATMUL_DIM, crate::dojo_node::MATMUL_DIM),
        tiling: Tiling::Columns,
        // The paper does not say: each fold loads its tile (the serial default).
        weight_load: crate::gemm::WeightLoad::Serial,
        clock_hz: crate::dojo_node::CLOCK_HZ,
        fp32_flops_per_core_cycle: crate::dojo_node::SIMD_FP32_FLOPS_PER_CYCLE,
        memory_bytes_per_s: crate::dojo_node::sram_load_bytes_per_s(),
        memory: "node SRAM loads",
        matrix_formats: "bf16, cfp8",
        tpu: None,
    },
    Chip {
        name: "d1",
        cores: 354,
        units_per_core: crate::dojo_node::MATMUL_UNITS,
        unit: (crate::dojo_node::MATMUL_DIM, crate::dojo_node::MATMUL_DIM),
        tiling: Tiling::Columns,
        // The paper does not say: each fold loads its tile (the serial default).
        weight_load: crate::gemm::WeightLoad::Serial,
        clock_hz: crate::dojo_node::CLOCK_HZ,
        fp32_flops_per_core_cycle: crate::dojo_node::SIMD_FP32_FLOPS_PER_CYCLE,
        memory_bytes_per_s: 354 * crate::dojo_node::sram_load_bytes_per_s(),
        memory: "node SRAM loads, all nodes",
        matrix_formats: "bf16, cfp8",
        tpu: None,
    },
];

impl Chip {
    /// The preset called `name`.
    pub fn preset(name: &str) -> Option<Chip> {
        CHIPS.iter().copied().find(|c| c.name == name)
    }

    /// MACs per cycle in all matrix units.
    pub fn macs_per_cycle(&self) -> u64 {
        self.cores * self.units_per_core * self.unit.0 * self.unit.1
    }

    /// Peak matrix FLOP/s (2 FLOPs per MAC).
    pub fn peak_matrix_flops(&self) -> f64 {
        2.0 * self.macs_per_cycle() as f64 * self.clock_hz as f64
    }

    /// Peak FP32 FLOP/s outside the matrix units (0 when unknown).
    pub fn peak_fp32_flops(&self) -> f64 {
        (self.cores * self.fp32_flops_per_core_cycle) as f64 * self.clock_hz as f64
    }

    /// Attainable FLOP/s at `intensity` FLOPs per byte of memory traffic:
    /// min(peak, intensity x bandwidth).
    pub fn roofline(&self, intensity: f64) -> f64 {
        self.peak_matrix_flops()
            .min(intensity * self.memory_bytes_per_s as f64)
    }

    /// The intensity where the roofline bends: peak / bandwidth, FLOPs per byte.
    pub fn ridge_point(&self) -> f64 {
        self.peak_matrix_flops() / self.memory_bytes_per_s as f64
    }
}
