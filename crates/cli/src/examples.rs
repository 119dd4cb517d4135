//! The EXAMPLES section of the main commands' `--help` (clap's `after_help`): each `$ podsim`
//! line is a command that runs as shown on a fresh clone, from the repository's root
//! (`crates/cli/tests/help_examples.rs` runs every one).

/// `podsim run`.
pub(crate) const RUN: &str = "\
Examples:
  # The built-in scenario: TPU v4 slices, regular vs twisted torus, all-to-all (Fig. 6)
  $ podsim run
  # A scenario file, as JSON
  $ podsim run examples/tpu-v4-twisted.toml --json
  # A workload file, with a Chrome trace of its tasks (open it in ui.perfetto.dev)
  $ podsim run examples/workload-data-parallel.toml --trace trace.json";

/// `podsim collective`.
pub(crate) const COLLECTIVE: &str = "\
Examples:
  # A ring all-reduce of 64 MiB per rank on a 4x4x8 torus, on the flow model
  $ podsim collective all-reduce --topology torus:4x4x8 --bytes \"64 MiB\"
  # All-to-all on a twisted TPU v4 slice, contention-free closed form
  $ podsim collective all-to-all --topology tpuv4:slice=4x4x8:twisted --bytes \"16 MiB\" --model analytic
  # Two DGX A100 nodes from a machine file, one ring per rail
  $ podsim collective all-reduce --topology examples/machines/dgx-a100.toml --nodes 2 --bytes \"256 MiB\"
  # Bus bandwidth against size: a table, sweep.csv and a plot
  $ podsim collective all-reduce --topology torus:4x4 --sweep \"1 MiB,16 MiB,256 MiB\" --csv sweep.csv --plot busbw.svg";

/// `podsim noc`.
pub(crate) const NOC: &str = "\
Examples:
  # Uniform traffic on an 8x8 mesh at 0.3 flits per node per cycle
  $ podsim noc --topology mesh:8x8 --rate 0.3
  # Transpose traffic on a 4x4 torus with 2 VCs, each link's load listed
  $ podsim noc --topology torus:4x4 --traffic transpose --vcs 2 --rate 0.2 --links
  # A latency-throughput curve up to saturation (noc-sweep.csv and noc-sweep.svg)
  $ podsim noc --topology mesh:4x4 --sweep 0.1:0.9:0.1
  # BookSim 2's router, stage by stage, from a router configuration file
  $ podsim noc --topology mesh:8x8 --rate 0.1 --config examples/booksim/podsim-router.toml --router booksim";

/// `podsim gemm`.
pub(crate) const GEMM: &str = "\
Examples:
  # 256x512x1024 on a 32x32 output-stationary array, podsim's RTL-exact cycles
  $ podsim gemm --array 32x32 --dataflow os --m 256 --n 512 --k 1024
  # The same product weight-stationary in SCALE-Sim's cycle convention, as JSON
  $ podsim gemm --array 32x32 --dataflow ws --m 256 --n 512 --k 1024 --convention scalesim --json
  # On the matrix unit of a machine file (its array, scratchpads and DRAM)
  $ podsim gemm --system examples/machines/ece327-systolic.toml --dataflow os --m 8 --n 8 --k 8";

/// `podsim workload`.
pub(crate) const WORKLOAD: &str = "\
Examples:
  # A data-parallel training step on its machine, on the flow model
  $ podsim workload examples/workload-data-parallel.toml
  # The same on the contention-free closed form, with a Chrome trace
  $ podsim workload examples/workload-data-parallel.toml --model analytic --trace trace.json
  # A pipeline-parallel step with the links' load drawn as a heatmap
  $ podsim workload examples/workload-pipeline.toml --heatmap links.svg";

/// `podsim train`.
pub(crate) const TRAIN: &str = "\
Examples:
  # GPT-3 175B on a 512-chip slice with Table 3's partition spec (quoted: zsh reads brackets)
  $ podsim train --model gpt3-175b --system tpuv4:slice=8x8x8 --parallel \"[8,1,8,8]\"
  # The same with 2D weight partitioning and without rematerialisation, closed-form collectives
  $ podsim train --model gpt3-175b --system tpuv4:slice=8x8x8 --parallel \"[8,1,8,8]\" --partition 1d/2d --remat none --model-fidelity analytic
  # The best slice and partitioning for GPT-3 1.3B on 64 chips
  $ podsim train --model gpt3-1.3b --search --chips 64";

/// `podsim validate`.
pub(crate) const VALIDATE: &str = "\
Examples:
  # Every published figure, paper vs podsim, with the summary by class
  $ podsim validate
  # The cases of a directory (edit one and run again), each value kept in validate.csv
  $ podsim validate --dir validation --csv validate.csv";

/// `podsim dram`.
pub(crate) const DRAM: &str = "\
Examples:
  # The document's u-benchmark on a Wormhole: readers next to the banks, 12 GT/s
  $ podsim dram
  # Readers on the top rows of a Grayskull, with each bank's bandwidth drawn
  $ podsim dram --chip grayskull --placement top-rows --plot banks.svg
  # An N300 with two harvested rows, interleaved pages, as JSON
  $ podsim dram --harvested-rows 2,8 --layout interleaved --json";

/// `podsim tofu`.
pub(crate) const TOFU: &str = "\
Examples:
  # Table III's put latency on TofuD, broken down (Fig. 7)
  $ podsim tofu put --generation tofud
  # A get on Tofu2 with cache injection off
  $ podsim tofu rdma --op get --generation tofu2 --setting cache-injection-off
  # The Tofu barrier of Table VI, 1 to 48 points per node
  $ podsim tofu barrier --points 1,4,8,16,48
  # Encode a routing header, then decode one
  $ podsim tofu frame --encode len=63,dx=1,dy=2,dz=3,vc=1
  $ podsim tofu frame --decode 8800406020820000";

/// `podsim dojo`.
pub(crate) const DOJO: &str = "\
Examples:
  # A matmul kernel through the node's funnel pipeline (Table 1)
  $ podsim dojo node --kernel examples/dojo/matmul.toml
  # Barrier trees of fan-in 2, 4 and 8 on a die
  $ podsim dojo barrier --fan-in 2,4,8
  # A 64 KiB push across a tile, packet by packet
  $ podsim dojo transfer push --from 0,0 --to 5,5 --bytes 64KiB --topology dojo:tile
  # A strided DMA from a DIP's HBM into a node's SRAM
  $ podsim dojo dma --to 1,1 --shape 64,32 --stride 4,1024
  # Far streams through the Z-plane with and without shortcuts
  $ podsim dojo shortcuts --global-fraction 0.25
  # A host writing 16 GiB into its five DIPs
  $ podsim dojo host --bytes 16GiB";
