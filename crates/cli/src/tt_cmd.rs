//! `podsim dram` and `podsim matmul`: the Tenstorrent DRAM bandwidth study
//! (tenstorrent-dram-bandwidth.txt) at the packet level, through
//! `podsim_tenstorrent::request`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_system::energy::EnergyOutput;
use podsim_tenstorrent::TtError;
use podsim_tenstorrent::energy as tt_energy;
use podsim_tenstorrent::matmul::MatmulOutput;
use podsim_tenstorrent::request::{self as tt, DramRequest, MatmulRequest};
use podsim_tenstorrent::study::{self as tt_study, DramOutput};

use crate::Failure;
use crate::args::{flag_err, listed, print};

/// The arguments of `podsim dram`.
#[derive(Args)]
pub struct DramArgs {
    /// wormhole (12 banks, 1 GHz NoC) or grayskull (8 banks, 1.2 GHz).
    #[arg(
        long,
        value_name = "CHIP",
        default_value = "wormhole",
        value_parser = listed(["wormhole", "grayskull"]),
    )]
    chip: String,
    /// Transfers per second of every GDDR6 bank, e.g. "12 GT/s", "14 GT/s", "7400 MT/s"
    /// [default: 12 GT/s on Wormhole (288 GB/s over 12 banks), 7.4 GT/s on Grayskull
    /// (118.4 GB/s over 8)].
    #[arg(long, value_name = "RATE", allow_hyphen_values = true)]
    data_rate: Option<String>,
    /// Where the readers go, one per bank: top-rows, columns (the leftmost and rightmost
    /// worker columns), next-to-bank (one hop downstream of the bank on the NoC in use) or auto
    /// (runs the three and keeps the fastest; the output names it).
    #[arg(
        long,
        value_name = "WHERE",
        default_value = "next-to-bank",
        value_parser = listed(["top-rows", "columns", "next-to-bank", "auto"]),
    )]
    placement: String,
    /// How next-to-bank readers displaced by harvested rows move: document (shift along,
    /// then to a row with no reader, no overlapping route) or logical (the full grid's
    /// placement in logical rows, as harvest-unaware software would). Only with
    /// --harvested-rows and next-to-bank.
    #[arg(long, value_name = "RULE", value_parser = listed(["document", "logical"]))]
    relocation: Option<String>,
    /// Harvested worker rows, NoC y coordinates, e.g. 5 (N150: one) or 2,8 (N300: two)
    /// [default: none].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    harvested_rows: Vec<u32>,
    /// Request virtual channels: per-reader (each reader of a row on its own VC, served
    /// round-robin) or shared (one VC, first come first served).
    #[arg(
        long,
        value_name = "VCS",
        default_value = "per-reader",
        value_parser = listed(["per-reader", "shared"]),
    )]
    vcs: String,
    /// Blocks in flight per reader, each with its transaction ID (1: a barrier on every
    /// block; 2: the document's scheme).
    #[arg(long, value_name = "N", default_value_t = 2)]
    outstanding: u64,
    /// Bytes per block (the default: 128 BFP8 tiles, as tt-metal's test_dram_read reads
    /// K = 8192, N = 12 x 128 in 8 blocks: the document's u-benchmark).
    #[arg(long, value_name = "SIZE", default_value = "139264 B")]
    block: String,
    /// Bytes per read request (a page, 1 B to 8 KiB: one NoC packet of data; the default is 4
    /// BFP8 tiles, as test_dram_read pages its blocks).
    #[arg(long, value_name = "SIZE", default_value = "4352 B")]
    page: String,
    /// Bytes each reader reads, whole blocks (the default: 8 blocks of 139264 B).
    #[arg(long, value_name = "SIZE", default_value = "1114112 B")]
    bytes: String,
    /// sharded (each reader's shard in its own bank) or interleaved (pages round-robin over
    /// every bank).
    #[arg(
        long,
        value_name = "LAYOUT",
        default_value = "sharded",
        value_parser = listed(["sharded", "interleaved"]),
    )]
    layout: String,
    /// The NoC requests and data take: 0 (east, then south) or 1 (north, then west).
    #[arg(long, value_name = "N", default_value_t = 0)]
    noc: u8,
    /// Write a Chrome trace-event JSON file (ui.perfetto.dev): a process per reader, each
    /// block from its requests to its last byte.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// The most events the trace keeps.
    #[arg(long, value_name = "N", default_value_t = crate::args::DEFAULT_TRACE_LIMIT)]
    trace_limit: usize,
    /// Draw the grid's NoC links coloured by how busy each was over the run (SVG): banks
    /// D0.., readers r0.., harvested tiles H.
    #[arg(long, value_name = "FILE.svg")]
    heatmap: Option<PathBuf>,
    /// Draw the bandwidth each bank's reader gets as bars against a bank's spec rate (SVG).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Print JSON (keys: bandwidth_bytes_per_s, utilization, per_bank_bytes_per_s,
    /// overlapping_routes, max_link_utilization, reader_coordinates, and more).
    #[arg(long)]
    json: bool,
    /// Add the run's energy: joules with their breakdown (compute, memory, network, idle),
    /// mean power and bandwidth per watt, bytes per joule (JSON: energy_j, average_power_w,
    /// energy_breakdown_j, perf_per_watt). The chip draws its idle power (Wormhole 19 W,
    /// tt-smi; Grayskull: an assumption) for the run's NoC cycles, plus 7.5 pJ/bit for every
    /// byte read from DRAM (Micron's GDDR6 figure; Grayskull's LPDDR4 at the same, an
    /// assumption) and 0.5 pJ/bit per byte per NoC link the packets crossed (an assumption);
    /// no compute. crates/energy/src/tenstorrent.rs names
    /// each source; a mean power above the board's TBP (n150 160 W, e150 200 W) is refused
    #[arg(long)]
    energy: bool,
}

/// The arguments of `podsim matmul`.
#[derive(Args)]
pub struct MatmulArgs {
    /// wormhole (the document's matmul runs on its 12 banks).
    #[arg(
        long,
        value_name = "CHIP",
        default_value = "wormhole",
        value_parser = listed(["wormhole"]),
    )]
    chip: String,
    /// Rows of in0 (padded to 32; decode: the batch).
    #[arg(long, value_name = "M")]
    m: u64,
    /// in0's columns and in1's rows (a multiple of 32).
    #[arg(long, value_name = "K")]
    k: u64,
    /// in1's columns, width-sharded over the banks.
    #[arg(long, value_name = "N")]
    n: u64,
    /// in1's tile: 32x32, 32x16 or 32x8 (narrower tiles pad less and balance the banks).
    #[arg(
        long,
        value_name = "TILE",
        default_value = "32x32",
        value_parser = listed(["32x32", "32x16", "32x8"]),
    )]
    tile: String,
    /// in1's format: bf16, bfp8 (1088 B per 1024 elements) or bfp4 (576 B).
    #[arg(
        long,
        value_name = "DTYPE",
        default_value = "bfp8",
        value_parser = listed(["bf16", "bfp8", "bfp4"]),
    )]
    dtype: String,
    /// How in0 reaches the compute cores: multicast or unicast (one core after another).
    #[arg(
        long,
        value_name = "HOW",
        default_value = "multicast",
        value_parser = listed(["multicast", "unicast"]),
    )]
    in0: String,
    /// single or double buffering of in0 and in1.
    #[arg(
        long,
        value_name = "B",
        default_value = "double",
        value_parser = listed(["single", "double"]),
    )]
    buffering: String,
    /// Transfers per second of every bank [default: 12 GT/s].
    #[arg(long, value_name = "RATE", allow_hyphen_values = true)]
    data_rate: Option<String>,
    /// Print JSON (keys: time_s, dram_bandwidth_bytes_per_s, utilization, compute_time_s,
    /// imbalance, and more).
    #[arg(long)]
    json: bool,
    /// Add the matmul's energy: joules with their breakdown (compute, memory, network,
    /// idle), mean power and useful FLOP/s (2 M K N over the time) per watt (JSON: energy_j,
    /// average_power_w, energy_breakdown_j, perf_per_watt). The Wormhole draws its idle 19 W
    /// (tt-smi) for the whole matmul; each compute core, while it computes, 1/72 of the
    /// Tensix FPUs' power (122.6 W, calibrated so that all 72 cores streaming with the DRAM
    /// at its 288 GB/s spec draw the n150's 160 W TBP); 7.5 pJ/bit per in1 byte read (Micron's
    /// GDDR6 figure) and 0.5 pJ/bit per byte per NoC link crossed by in1, in0 and the output
    /// (an assumption). crates/energy/src/tenstorrent.rs names each source
    #[arg(long)]
    energy: bool,
}

/// `podsim dram`.
pub fn dram_cmd(a: &DramArgs) -> Result<ExitCode, Failure> {
    let study = DramRequest {
        chip: &a.chip,
        data_rate: a.data_rate.as_deref(),
        placement: &a.placement,
        relocation: a.relocation.as_deref(),
        harvested_rows: &a.harvested_rows,
        vcs: &a.vcs,
        outstanding: a.outstanding,
        block: &a.block,
        page: &a.page,
        bytes: &a.bytes,
        layout: &a.layout,
        noc: a.noc,
    }
    .study()?;
    let r = tt_study::run(&study).map_err(Failure::runtime)?;
    podsim_report::progress::simulated(r.run.cycles as f64 / tt::noc_clock_hz(study.chip));
    let out = DramOutput::new(&study, &r);
    if let Some(path) = &a.trace {
        tt::write_trace(path, a.trace_limit, &study, &r).map_err(Failure::runtime)?;
    }
    if let Some(path) = &a.plot {
        tt::bandwidth_svg(path, &out).map_err(Failure::runtime)?;
    }
    if let Some(path) = &a.heatmap {
        tt::heatmap_svg(path, &study, &r).map_err(Failure::runtime)?;
    }
    let energy = match a.energy {
        true => Some(tt_energy::dram_energy(&study, &r).map_err(energy_failure)?),
        false => None,
    };
    print_with_energy(a.json, &out, DramOutput::text, energy.as_ref())
}

/// Why `--energy` cannot be given: no figures for the chip is the flag's error; a figure that
/// would break an invariant is the run's.
fn energy_failure(e: TtError) -> Failure {
    match e {
        TtError::NoPowerFigures(_) => flag_err("--energy", e),
        e => Failure::runtime(e),
    }
}

/// Print `out` as [`print`] does, with `energy`'s keys added to its JSON object and its rows
/// after its text.
fn print_with_energy<T: serde::Serialize>(
    json: bool,
    out: &T,
    text: impl Fn(&T) -> String,
    energy: Option<&EnergyOutput>,
) -> Result<ExitCode, Failure> {
    let Some(e) = energy else {
        return print(json, out, text);
    };
    if json {
        outln!("{}", podsim_report::to_json_with(out, Some(e)));
    } else {
        out!("{}{}", text(out), podsim_report::render(&e.rows()));
    }
    Ok(ExitCode::SUCCESS)
}

/// `podsim matmul`.
pub fn matmul_cmd(a: &MatmulArgs) -> Result<ExitCode, Failure> {
    let out = MatmulRequest {
        chip: &a.chip,
        m: a.m,
        k: a.k,
        n: a.n,
        tile: &a.tile,
        dtype: &a.dtype,
        in0: &a.in0,
        buffering: &a.buffering,
        data_rate: a.data_rate.as_deref(),
    }
    .run()?;
    podsim_report::progress::simulated(out.time_s);
    let energy = match a.energy {
        true => Some(tt_energy::matmul_energy(&out).map_err(energy_failure)?),
        false => None,
    };
    print_with_energy(a.json, &out, MatmulOutput::text, energy.as_ref())
}
