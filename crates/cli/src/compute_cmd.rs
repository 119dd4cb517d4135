//! `podsim gemm`, `podsim systolic`, `podsim numerics`, `podsim roofline` and `podsim
//! availability`: arguments, then a call into `podsim-compute`, `podsim-numerics` or
//! `podsim-tpu`, whose results print as JSON or text.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_compute::systolic::SystolicRequest;
use podsim_compute::{GemmOutput, GemmRequest, roofline::RooflineOutput};
use podsim_numerics::encoded::NumericsOutput;
use podsim_tpu::availability::Availability;
use podsim_tpu::outputs::AvailabilityOutput;

use crate::args::{listed, print};
use crate::{Failure, read};

/// The arguments of `podsim gemm`.
#[derive(Args)]
pub struct GemmArgs {
    /// Array rows x columns, e.g. 32x32 or 128x128 [required unless --system].
    #[arg(long, value_name = "RxC", required_unless_present = "system")]
    array: Option<String>,
    /// A machine file whose chip is one matrix unit (`matrix_unit` and `clock`, as
    /// examples/machines/ece327-systolic.toml): its array, and unless the flags say otherwise
    /// its scratchpads (the chip's memory split over A, B and D) and its DRAM bytes per cycle
    /// (the chip's memory bandwidth over its clock). Not with --array.
    #[arg(long, value_name = "FILE", conflicts_with = "array")]
    system: Option<PathBuf>,
    /// os (output-stationary), ws (weight-stationary) or is (input-stationary).
    #[arg(long, value_name = "DATAFLOW", value_parser = listed(["os", "ws", "is"]))]
    dataflow: String,
    /// Rows of A and D.
    #[arg(long)]
    m: u64,
    /// Columns of B and D.
    #[arg(long)]
    n: u64,
    /// The reduction dimension (columns of A, rows of B).
    #[arg(long)]
    k: u64,
    /// rtl (exact against podsim's register-level arrays) or scalesim (SCALE-Sim v3's "Total
    /// Cycles").
    #[arg(
        long,
        value_name = "NAME",
        default_value = "rtl",
        value_parser = listed(["rtl", "scalesim"]),
    )]
    convention: String,
    /// Bytes per element of A and B (1: int8).
    #[arg(long, value_name = "BYTES", default_value_t = 1)]
    input_bytes: u64,
    /// Bytes per element of D (4: int32 or FP32).
    #[arg(long, value_name = "BYTES", default_value_t = 4)]
    output_bytes: u64,
    /// Scratchpad per operand (A, B and D each; double-buffered), a size of at least two edges
    /// of the array's elements [default: 64 KiB, or a third of a --system chip's memory].
    #[arg(long, value_name = "SIZE")]
    sram: Option<String>,
    /// DRAM bytes per cycle; stalls are counted when traffic outruns compute [default:
    /// unlimited, or a --system chip's memory bandwidth over its clock].
    #[arg(long, value_name = "BYTES")]
    dram_bytes_per_cycle: Option<f64>,
    /// Print one JSON object (keys: cycles, folds, macs, utilization, mapping_efficiency,
    /// sram_reads, sram_writes, dram_bytes, and more).
    #[arg(long)]
    json: bool,
}

/// Run `podsim gemm`.
pub fn gemm_cmd(a: &GemmArgs) -> Result<ExitCode, Failure> {
    let (array, sram, dram) = match &a.system {
        None => (
            a.array.clone().unwrap_or_default(),
            a.sram.clone().unwrap_or_else(|| "64 KiB".into()),
            a.dram_bytes_per_cycle,
        ),
        Some(path) => {
            let (array, sram, dram) = one_unit(path)?;
            (
                array,
                a.sram.clone().unwrap_or(sram),
                a.dram_bytes_per_cycle.or(Some(dram)),
            )
        }
    };
    let out = GemmRequest {
        array: &array,
        dataflow: &a.dataflow,
        m: a.m,
        n: a.n,
        k: a.k,
        convention: &a.convention,
        input_bytes: a.input_bytes,
        output_bytes: a.output_bytes,
        sram: &sram,
        dram_bytes_per_cycle: dram,
    }
    .run()?;
    print(a.json, &out, GemmOutput::text)
}

/// The array (`RxC`), the scratchpad per operand (a third of the chip's memory) and the DRAM
/// bytes per cycle (memory bandwidth over clock) of the machine file at `path`, whose chip must
/// be one matrix unit.
fn one_unit(path: &std::path::Path) -> Result<(String, String, f64), Failure> {
    let file = path.display().to_string();
    let m = podsim_config::parse_machine(&file, &read(path)?, None)?;
    let why = match m.chip.matrix_unit {
        Some(u) if u.count == 1 => {
            return Ok((
                format!("{}x{}", u.rows, u.cols),
                format!("{} B", m.chip.memory.0 / 3),
                m.chip.memory_bandwidth.bytes_per_s() as f64 / u.clock.as_hz() as f64,
            ));
        }
        Some(u) => format!(
            "chip `{}` has {} matrix units; `podsim gemm` times one array (a whole chip's GEMMs run in `podsim workload`)",
            m.chip.name, u.count
        ),
        None => format!(
            "chip `{}` states no matrix_unit and clock, which `podsim gemm` needs",
            m.chip.name
        ),
    };
    Err(Failure::usage(format!("{file}: `chip.matrix_unit`: {why}")))
}

/// The arguments of `podsim systolic`.
#[derive(Args)]
pub struct SystolicArgs {
    /// Array size S (S x S PEs, as the lecture's `mxu` with SIZE = S).
    #[arg(long, value_name = "S")]
    size: usize,
    /// The reduction length K streamed through the array.
    #[arg(long, value_name = "K")]
    k: usize,
    /// A as CSV: S rows of K comma-separated int8 values.
    #[arg(long, value_name = "FILE")]
    a: PathBuf,
    /// B as CSV: K rows of S comma-separated int8 values.
    #[arg(long, value_name = "FILE")]
    b: PathBuf,
    /// Print d cycle by cycle (cycle 0 = first cycle after reset).
    #[arg(long)]
    trace: bool,
    /// Print one JSON object (keys: d, settle_cycle, completion_cycle; with --trace, trace).
    #[arg(long)]
    json: bool,
}

/// The `rows` x `cols` int8 matrix in the CSV file at `path`.
fn read_matrix(path: &std::path::Path, rows: usize, cols: usize) -> Result<Vec<i64>, Failure> {
    let text = read(path)?;
    podsim_config::parse_int8_matrix(&path.display().to_string(), &text, rows, cols)
        .map_err(|e| Failure::usage(e.to_string()))
}

/// Run `podsim systolic`.
pub fn systolic_cmd(a: &SystolicArgs) -> Result<ExitCode, Failure> {
    let req = SystolicRequest {
        size: a.size,
        k: a.k,
        trace: a.trace,
    };
    req.check(crate::memory_limit())?;
    let am = read_matrix(&a.a, a.size, a.k)?;
    let bm = read_matrix(&a.b, a.k, a.size)?;
    let out = req
        .run(&am, &bm)
        .map_err(|e| Failure::usage(format!("<command line>: {e}")))?;
    print(a.json, &out, |o| o.text())
}

/// The arguments of `podsim numerics`.
#[derive(Args)]
pub struct NumericsArgs {
    /// The format: fp32, bf16, fp16, e4m3, e5m2, cfp8:e4:bias=B, cfp8:e5:bias=B or
    /// cfp16:bias=B (B from 0 to 63).
    #[arg(
        long,
        value_name = "FMT",
        value_parser = listed([
            "fp32", "bf16", "fp16", "e4m3", "e5m2", "cfp8:e4:bias=7", "cfp8:e5:bias=15",
            "cfp16:bias=31",
        ]),
    )]
    format: String,
    /// nearest (ties to even) or stochastic (needs --seed).
    #[arg(
        long,
        value_name = "MODE",
        default_value = "nearest",
        value_parser = listed(["nearest", "stochastic"]),
    )]
    rounding: String,
    /// Seed of the stochastic rounding's generator (xoshiro256++).
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Clamp values beyond the largest finite magnitude (infinities included) to it, instead
    /// of infinity or NaN.
    #[arg(long)]
    saturate: bool,
    /// The values: decimal numbers (rounded to float32 first, as `ml_dtypes` converts from
    /// float32), `inf`, `-inf` or `nan`.
    #[arg(value_name = "VALUE", required = true, allow_negative_numbers = true)]
    values: Vec<String>,
    /// Print JSON: {"values": [{"input", "bits", "decoded"}, ...]}.
    #[arg(long)]
    json: bool,
}

/// Run `podsim numerics`.
pub fn numerics_cmd(a: &NumericsArgs) -> Result<ExitCode, Failure> {
    let out =
        podsim_numerics::encoded::encode(&a.format, &a.rounding, a.seed, a.saturate, &a.values)?;
    print(a.json, &out, NumericsOutput::text)
}

/// The arguments of `podsim roofline`.
#[derive(Args)]
pub struct RooflineArgs {
    /// The chip preset: tpuv4, tpuv3, a100, dojo-node or d1 (peaks and bandwidths with their
    /// sources in crates/compute/src/chips.rs).
    #[arg(
        long,
        value_name = "NAME",
        value_parser = listed(["tpuv4", "tpuv3", "a100", "dojo-node", "d1"]),
    )]
    chip: String,
    /// An operational intensity, FLOPs per byte of memory traffic: also print the attainable
    /// FLOP/s there.
    #[arg(long, value_name = "FLOP_PER_BYTE", allow_hyphen_values = true)]
    intensity: Option<String>,
    /// Draw the rooflines of TPU v4, TPU v3 and A100 (tpu-v4-isca2023.txt Fig. 16), and the
    /// chip's if it is another, as a log-log SVG.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Print one JSON object (keys: chip, peak_flops, memory_bytes_per_s, ridge_flop_per_byte,
    /// and with --intensity: intensity_flop_per_byte, attainable_flops, bound).
    #[arg(long)]
    json: bool,
}

/// Run `podsim roofline`.
pub fn roofline_cmd(a: &RooflineArgs) -> Result<ExitCode, Failure> {
    let out = podsim_compute::roofline::roofline(&a.chip, a.intensity.as_deref())?;
    if let Some(path) = &a.plot {
        let roofs: Vec<podsim_report::Roof> = (out.roofs().into_iter())
            .map(|(name, peak, bandwidth)| podsim_report::Roof {
                name: name.to_string(),
                peak,
                bandwidth,
            })
            .collect();
        let at = out.at.map(|x| x.intensity_flop_per_byte);
        podsim_report::roofline_svg(path, &roofs, at)
            .map_err(|e| Failure::runtime(e.to_string()))?;
    }
    print(a.json, &out, RooflineOutput::text)?;
    plot_written(a.json, a.plot.as_ref())
}

/// The arguments of `podsim availability`.
#[derive(Args)]
pub struct AvailabilityArgs {
    /// Chips per slice: a multiple of 64 with OCS (whole 4x4x4 blocks), a divisor of 4096 with
    /// --static.
    #[arg(long, value_name = "N")]
    slice_chips: u64,
    /// Probability that a CPU host (4 chips) is up, e.g. 0.995.
    #[arg(long, value_name = "A")]
    host_availability: f64,
    /// Static wiring instead of optical circuit switches: a slice needs a fixed region whose
    /// hosts are all up.
    #[arg(long = "static")]
    static_wiring: bool,
    /// Monte Carlo trials (pods drawn), 1 to 10,000,000.
    #[arg(long, value_name = "T", default_value_t = 10_000)]
    trials: u64,
    /// Seed of the host-failure stream.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Also draw goodput against slice size for 99.0%, 99.5% and 99.9% host availability, with
    /// and without OCS (Fig. 4), as an SVG.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Print one JSON object (keys: goodput, slices, p_schedulable, and exact_goodput from the
    /// closed form).
    #[arg(long)]
    json: bool,
}

/// Run `podsim availability`.
pub fn availability_cmd(a: &AvailabilityArgs) -> Result<ExitCode, Failure> {
    let q = Availability {
        slice_chips: a.slice_chips,
        host_availability: a.host_availability,
        static_wiring: a.static_wiring,
    };
    let out = podsim_tpu::outputs::availability(q, a.trials, a.seed)?;
    if let Some(path) = &a.plot {
        podsim_tpu::outputs::goodput_svg(path).map_err(|e| Failure::runtime(e.to_string()))?;
    }
    print(a.json, &out, AvailabilityOutput::text)?;
    plot_written(a.json, a.plot.as_ref())
}

/// After the text (not the JSON): where the plot went.
fn plot_written(json: bool, plot: Option<&PathBuf>) -> Result<ExitCode, Failure> {
    if let (false, Some(p)) = (json, plot) {
        outln!("plot written to {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}
