//! `podsim gemm`, `podsim systolic` and `podsim numerics`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use podsim_compute::{
    Convention, Dataflow, GemmSpec, MemorySpec, Widths, gemm, lecture::os_completion_cycle, run_os,
};
use podsim_numerics::{FORMAT_NAMES, Format, Rounding};
use podsim_units::Bytes;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::json;

use crate::args::flag_err;
use crate::{Failure, read};
use podsim_report::render;

/// The arguments of `podsim gemm`.
#[derive(Args)]
pub struct GemmArgs {
    /// Array rows x columns, e.g. 32x32 or 128x128.
    #[arg(long, value_name = "RxC")]
    array: String,
    /// os (output-stationary), ws (weight-stationary) or is (input-stationary).
    #[arg(long, value_name = "DATAFLOW")]
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
    #[arg(long, value_name = "NAME", default_value = "rtl")]
    convention: String,
    /// Bytes per element of A and B (1: int8).
    #[arg(long, value_name = "BYTES", default_value_t = 1)]
    input_bytes: u64,
    /// Bytes per element of D (4: int32 or FP32).
    #[arg(long, value_name = "BYTES", default_value_t = 4)]
    output_bytes: u64,
    /// Scratchpad per operand (A, B and D each; double-buffered), a size of at least two edges
    /// of the array's elements.
    #[arg(long, value_name = "SIZE", default_value = "64 KiB")]
    sram: String,
    /// DRAM bytes per cycle; stalls are counted when traffic outruns compute [default:
    /// unlimited].
    #[arg(long, value_name = "BYTES")]
    dram_bytes_per_cycle: Option<f64>,
    /// Print one JSON object (keys: cycles, folds, macs, utilization, mapping_efficiency,
    /// sram_reads, sram_writes, dram_bytes, and more).
    #[arg(long)]
    json: bool,
}

/// Run `podsim gemm`.
pub fn gemm_cmd(a: &GemmArgs) -> Result<ExitCode, Failure> {
    let (rows, cols) = parse_array(&a.array)?;
    let dataflow = Dataflow::parse(&a.dataflow).ok_or_else(|| {
        flag_err(
            "--dataflow",
            format!("`{}`: expected os, ws or is", a.dataflow),
        )
    })?;
    let convention = Convention::parse(&a.convention).ok_or_else(|| {
        flag_err(
            "--convention",
            format!("`{}`: expected rtl or scalesim", a.convention),
        )
    })?;
    let sram = a
        .sram
        .parse::<Bytes>()
        .map_err(|e| flag_err("--sram", format!("{e}; expected a size such as \"64 KiB\"")))?
        .0;
    for (flag, v) in [
        ("--input-bytes", a.input_bytes),
        ("--output-bytes", a.output_bytes),
    ] {
        if v > 16 {
            return Err(flag_err(
                flag,
                format!("{v} bytes an element: expected 1 to 16 (int8 to fp128)"),
            ));
        }
    }
    // The array takes a row of A and a column of B (or a row of partial sums) every cycle from
    // double-buffered scratchpads: one edge of the array, twice, is the least that works.
    let edge = 2 * rows.max(cols) * a.input_bytes.max(a.output_bytes);
    if sram < edge {
        return Err(flag_err(
            "--sram",
            format!(
                "{} cannot feed a {rows}x{cols} array: each scratchpad needs at least {} \
                 (one double-buffered edge of the array)",
                Bytes(sram),
                Bytes(edge)
            ),
        ));
    }
    if let Some(bw) = a.dram_bytes_per_cycle
        && !(bw > 0.0 && bw.is_finite())
    {
        return Err(flag_err(
            "--dram-bytes-per-cycle",
            "expected a positive number of bytes per cycle",
        ));
    }
    if a.input_bytes == 0 || a.output_bytes == 0 {
        return Err(flag_err(
            "--input-bytes/--output-bytes",
            "an element has at least one byte",
        ));
    }
    let spec = GemmSpec {
        rows,
        cols,
        dataflow,
        m: a.m,
        n: a.n,
        k: a.k,
        convention,
        memory: MemorySpec {
            input_bytes: a.input_bytes,
            output_bytes: a.output_bytes,
            sram_a: sram,
            sram_b: sram,
            sram_d: sram,
            dram_bytes_per_cycle: a.dram_bytes_per_cycle,
        },
    };
    let r = gemm(&spec).map_err(|e| {
        // Without the DRAM limit the counts fit: it is the stalls that overflow.
        let stalls = a.dram_bytes_per_cycle.is_some()
            && gemm(&GemmSpec {
                memory: podsim_compute::gemm::MemorySpec {
                    dram_bytes_per_cycle: None,
                    ..spec.memory
                },
                ..spec
            })
            .is_ok();
        if stalls {
            flag_err(
                "--dram-bytes-per-cycle",
                format!("the DRAM stalls at this rate exceed 64 bits of cycles ({e})"),
            )
        } else {
            flag_err("--m/--n/--k/--array", e)
        }
    })?;
    if a.json {
        outln!(
            "{}",
            podsim_report::to_json(&podsim_compute::GemmOutput::new(&spec, r))
        );
    } else {
        let row = |k: &str, v: String| (k.to_string(), vec![v]);
        let rows = vec![
            row(
                "gemm",
                format!(
                    "{}x{}x{} on {rows}x{cols}, {dataflow}, {} cycles",
                    a.m, a.n, a.k, a.convention
                ),
            ),
            row("cycles", r.cycles.to_string()),
            row("  compute", r.compute_cycles.to_string()),
            row("  stalls", r.stall_cycles.to_string()),
            row(
                "folds",
                format!("{} ({} x {})", r.folds, r.row_folds, r.col_folds),
            ),
            row("MACs", r.macs.to_string()),
            row("utilization", format!("{:.2}%", r.utilization * 100.0)),
            row(
                "mapping efficiency",
                format!("{:.2}%", r.mapping_efficiency * 100.0),
            ),
            row(
                "SRAM reads (A, B)",
                format!("{} ({}, {})", r.sram_reads, r.sram_reads_a, r.sram_reads_b),
            ),
            row("SRAM writes", r.sram_writes.to_string()),
            row("DRAM traffic", Bytes(r.dram_bytes).to_string()),
        ];
        out!("{}", render(&rows));
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_array(s: &str) -> Result<(u64, u64), Failure> {
    let bad = || {
        flag_err(
            "--array",
            format!("`{s}`: expected ROWSxCOLS with both at least 1, such as 32x32"),
        )
    };
    let (r, c) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (r, c) = (
        r.trim().parse::<u64>().map_err(|_| bad())?,
        c.trim().parse::<u64>().map_err(|_| bad())?,
    );
    if r == 0 || c == 0 {
        return Err(bad());
    }
    Ok((r, c))
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

fn read_matrix(path: &Path, rows: usize, cols: usize) -> Result<Vec<i64>, Failure> {
    let text = read(path)?;
    let file = path.display();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() != rows {
        return Err(Failure::usage(format!(
            "{file}: expected {rows} rows of {cols} values, found {} rows",
            lines.len()
        )));
    }
    let mut out = Vec::with_capacity(rows * cols);
    for (i, line) in lines.iter().enumerate() {
        let vals: Vec<&str> = line.split(',').map(str::trim).collect();
        if vals.len() != cols {
            return Err(Failure::usage(format!(
                "{file}:{}: expected {cols} comma-separated values, found {}",
                i + 1,
                vals.len()
            )));
        }
        for (j, v) in vals.iter().enumerate() {
            let x: i64 = v.parse().map_err(|_| {
                Failure::usage(format!(
                    "{file}:{}: value {} `{v}` is not a whole number",
                    i + 1,
                    j + 1
                ))
            })?;
            if !(-128..=127).contains(&x) {
                return Err(Failure::usage(format!(
                    "{file}:{}: value {} is {x}, outside int8 (-128 to 127)",
                    i + 1,
                    j + 1
                )));
            }
            out.push(x);
        }
    }
    Ok(out)
}

/// Run `podsim systolic`.
pub fn systolic_cmd(a: &SystolicArgs) -> Result<ExitCode, Failure> {
    if a.size == 0 || a.k == 0 {
        return Err(flag_err("--size/--k", "both must be at least 1"));
    }
    let (s, k) = (a.size, a.k);
    let need = podsim_compute::lecture::os_run_bytes(s, s, k, a.trace);
    let limit = crate::memory_limit();
    if need > limit {
        return Err(Failure::runtime(format!(
            "<command line>: a {s}x{s} array with K = {k}{} needs about {}, more than the memory limit of {} (--memory-limit)",
            if a.trace { " traced" } else { "" },
            Bytes(need),
            Bytes(limit)
        )));
    }
    let am = read_matrix(&a.a, s, k)?;
    let bm = read_matrix(&a.b, k, s)?;
    let run = run_os((s, s), k, Widths::INT8_INT32, &am, &bm, a.trace)
        .map_err(|e| Failure::usage(format!("<command line>: {e}")))?;
    let grid = |v: &[i64]| -> Vec<Vec<i64>> { v.chunks(s).map(<[i64]>::to_vec).collect() };
    let completion = run.settle.iter().copied().max().unwrap_or(0);
    if a.json {
        let settle: Vec<Vec<u64>> = run.settle.chunks(s).map(<[u64]>::to_vec).collect();
        let mut v = json!({
            "size": s, "k": k, "d": grid(&run.d), "settle_cycle": settle,
            "completion_cycle": completion,
            "structural_completion_cycle": os_completion_cycle(s, s, k),
        });
        if a.trace {
            v["trace"] = json!(run.trace.iter().map(|d| grid(d)).collect::<Vec<_>>());
        }
        outln!("{v}");
        return Ok(ExitCode::SUCCESS);
    }
    if a.trace {
        for (t, d) in run.trace.iter().enumerate() {
            outln!("cycle {t}:");
            for row in d.chunks(s) {
                let cells: Vec<String> = row.iter().map(|x| format!("{x:>8}")).collect();
                outln!("  {}", cells.join(" "));
            }
        }
        outln!();
    }
    outln!("d (final):");
    for row in run.d.chunks(s) {
        let cells: Vec<String> = row.iter().map(|x| format!("{x:>8}")).collect();
        outln!("  {}", cells.join(" "));
    }
    outln!("settle cycle (first cycle holding the final value):");
    for row in run.settle.chunks(s) {
        let cells: Vec<String> = row.iter().map(|x| format!("{x:>8}")).collect();
        outln!("  {}", cells.join(" "));
    }
    outln!(
        "all outputs final from cycle {completion} (closed form for non-zero last products: \
         2(S-1) + K + 1 = {})",
        os_completion_cycle(s, s, k)
    );
    Ok(ExitCode::SUCCESS)
}

/// The arguments of `podsim numerics`.
#[derive(Args)]
pub struct NumericsArgs {
    /// The format: fp32, bf16, fp16, e4m3, e5m2, cfp8:e4:bias=B, cfp8:e5:bias=B or
    /// cfp16:bias=B (B from 0 to 63).
    #[arg(long, value_name = "FMT")]
    format: String,
    /// nearest (ties to even) or stochastic (needs --seed).
    #[arg(long, value_name = "MODE", default_value = "nearest")]
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

fn number_json(x: f64) -> serde_json::Value {
    if x.is_nan() {
        json!("nan")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        json!(x)
    }
}

/// Run `podsim numerics`.
pub fn numerics_cmd(a: &NumericsArgs) -> Result<ExitCode, Failure> {
    let f = Format::parse(&a.format).map_err(|e| flag_err("--format", e))?;
    let mut rng = match (a.rounding.as_str(), a.seed) {
        ("nearest", None) => None,
        ("nearest", Some(_)) => {
            return Err(flag_err(
                "--seed",
                "only stochastic rounding draws random numbers",
            ));
        }
        ("stochastic", Some(s)) => Some(Xoshiro256PlusPlus::seed_from_u64(s)),
        ("stochastic", None) => {
            return Err(flag_err("--seed", "stochastic rounding needs a seed"));
        }
        (other, _) => {
            return Err(flag_err(
                "--rounding",
                format!("`{other}`: expected nearest or stochastic"),
            ));
        }
    };
    let digits = (f.bits() as usize).div_ceil(4);
    let mut out = Vec::new();
    for v in &a.values {
        let x: f32 = v.trim().parse().map_err(|_| {
            flag_err(
                "VALUE",
                format!("`{v}` is not a number (decimal, inf, -inf or nan)"),
            )
        })?;
        let rounding = match rng.as_mut() {
            Some(r) => Rounding::Stochastic(r),
            None => Rounding::NearestEven,
        };
        let code = f
            .encode_f32(x, rounding, a.saturate)
            .map_err(|e| flag_err("VALUE", format!("{v}: {e}")))?;
        out.push((v.clone(), f64::from(x), code, f.decode(code)));
    }
    if a.json {
        let values: Vec<_> = out
            .iter()
            .map(|(_, x, code, dec)| {
                json!({"input": number_json(*x), "bits": format!("0x{code:0digits$x}"),
                       "decoded": number_json(*dec)})
            })
            .collect();
        outln!("{}", json!({"format": f.to_string(), "values": values}));
    } else {
        outln!("{f} ({FORMAT_NAMES})");
        for (text, x, code, dec) in &out {
            outln!("{text:>16} (float32 {x}) -> 0x{code:0digits$x} = {dec}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The arguments of `podsim roofline`.
#[derive(Args)]
pub struct RooflineArgs {
    /// The chip preset: tpuv4, tpuv3, a100, dojo-node or d1 (peaks and bandwidths with their
    /// sources in crates/compute/src/chips.rs).
    #[arg(long, value_name = "NAME")]
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
    use podsim_compute::chips::{CHIPS, Chip};
    let names: Vec<&str> = CHIPS.iter().map(|c| c.name).collect();
    let chip = Chip::preset(&a.chip).ok_or_else(|| {
        flag_err(
            "--chip",
            format!(
                "`{}` is not a chip preset; the nearest is `{}` (presets: {})",
                a.chip,
                podsim_units::nearest(&a.chip, &names).unwrap_or(""),
                names.join(", ")
            ),
        )
    })?;
    let intensity = match &a.intensity {
        None => None,
        Some(s) => match s.trim().parse::<f64>() {
            Ok(x) if x > 0.0 && x.is_finite() => Some(x),
            _ => {
                return Err(flag_err(
                    "--intensity",
                    format!("`{s}` is not a positive number of FLOPs per byte, e.g. 100"),
                ));
            }
        },
    };
    let peak = chip.peak_matrix_flops();
    let bw = chip.memory_bytes_per_s as f64;
    let ridge = chip.ridge_point();
    let at = intensity.map(|x| {
        (
            x,
            chip.roofline(x),
            if x < ridge { "memory" } else { "compute" },
        )
    });
    if let Some(path) = &a.plot {
        let mut roofs: Vec<podsim_report::Roof> = ["tpuv4", "tpuv3", "a100"]
            .iter()
            .filter_map(|n| Chip::preset(n))
            .map(|c| podsim_report::Roof {
                name: c.name.to_string(),
                peak: c.peak_matrix_flops(),
                bandwidth: c.memory_bytes_per_s as f64,
            })
            .collect();
        if !roofs.iter().any(|r| r.name == chip.name) {
            roofs.push(podsim_report::Roof {
                name: chip.name.to_string(),
                peak,
                bandwidth: bw,
            });
        }
        podsim_report::roofline_svg(path, &roofs, intensity)
            .map_err(|e| Failure::runtime(e.to_string()))?;
    }
    if a.json {
        let mut v = json!({
            "chip": chip.name,
            "peak_flops": peak,
            "memory_bytes_per_s": chip.memory_bytes_per_s,
            "ridge_flop_per_byte": ridge,
        });
        if let Some((x, f, bound)) = at {
            v["intensity_flop_per_byte"] = json!(x);
            v["attainable_flops"] = json!(f);
            v["bound"] = json!(bound);
        }
        if let Some(t) = chip.tpu {
            v["hbm_bytes"] = json!(t.hbm_bytes);
            v["cmem_bytes"] = json!(t.cmem_bytes);
            v["ici_links"] = json!(t.ici_links);
            v["ici_link_bytes_per_s"] = json!(t.ici_link_bytes_per_s);
            v["torus_dims"] = json!(t.torus_dims);
            v["chips_per_host"] = json!(t.chips_per_host);
            v["sparsecores"] = json!(t.sparsecores);
        }
        outln!("{v}");
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![
        ("chip".to_string(), vec![chip.name.to_string()]),
        ("peak".into(), vec![format!("{:.1} TFLOP/s", peak / 1e12)]),
        (
            "memory".into(),
            vec![format!("{:.0} GB/s ({})", bw / 1e9, chip.memory)],
        ),
        ("ridge point".into(), vec![format!("{ridge:.1} FLOP/B")]),
    ];
    if let Some((x, f, bound)) = at {
        rows.push((
            format!("at {x} FLOP/B"),
            vec![format!("{:.1} TFLOP/s ({bound}-bound)", f / 1e12)],
        ));
    }
    if let Some(t) = chip.tpu {
        rows.push((
            "Table 4".into(),
            vec![format!(
                "HBM {} GiB, CMEM {} MiB, ICI {} links x {} GB/s ({}-D torus), {} chips per host, {} SparseCores",
                t.hbm_bytes >> 30,
                t.cmem_bytes >> 20,
                t.ici_links,
                t.ici_link_bytes_per_s / 1_000_000_000,
                t.torus_dims,
                t.chips_per_host,
                t.sparsecores
            )],
        ));
    }
    out!("{}", render(&rows));
    if let Some(p) = &a.plot {
        outln!("plot written to {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
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

/// The most Monte Carlo trials `podsim availability` runs: 10^7 pods of 1,024 hosts is about
/// 20 s; more would only narrow an error the closed form does not have.
const MAX_TRIALS: u64 = 10_000_000;

/// Run `podsim availability`.
pub fn availability_cmd(a: &AvailabilityArgs) -> Result<ExitCode, Failure> {
    use podsim_tpu::availability::Availability;
    let q = Availability {
        slice_chips: a.slice_chips,
        host_availability: a.host_availability,
        static_wiring: a.static_wiring,
    };
    let bad = |e: podsim_tpu::availability::AvailabilityError| {
        let flag = match e {
            podsim_tpu::availability::AvailabilityError::Probability(_) => "--host-availability",
            podsim_tpu::availability::AvailabilityError::Size { .. } => "--slice-chips",
        };
        flag_err(flag, e)
    };
    if a.trials == 0 || a.trials > MAX_TRIALS {
        return Err(flag_err(
            "--trials",
            format!(
                "{}: expected 1 to {MAX_TRIALS} trials (each draws 1,024 hosts; the closed form is exact)",
                a.trials
            ),
        ));
    }
    let exact = q.exact().map_err(bad)?;
    let m = q.monte_carlo(a.trials, a.seed).map_err(bad)?;
    if let Some(path) = &a.plot {
        let mut series = Vec::new();
        for static_wiring in [false, true] {
            for avail in [0.99, 0.995, 0.999] {
                let sizes: &[u64] = if static_wiring {
                    &[64, 128, 256, 512, 1024, 2048, 4096]
                } else {
                    &[64, 128, 256, 512, 1024, 2048, 3072, 4096]
                };
                let points = sizes
                    .iter()
                    .filter_map(|&n| {
                        let g = Availability {
                            slice_chips: n,
                            host_availability: avail,
                            static_wiring,
                        }
                        .exact()
                        .ok()?;
                        Some((n as f64, 100.0 * g.goodput))
                    })
                    .collect();
                series.push(podsim_report::Series {
                    name: format!(
                        "{:.1}% hosts up, {}",
                        avail * 100.0,
                        if static_wiring { "static" } else { "OCS" }
                    ),
                    points,
                    second: static_wiring,
                });
            }
        }
        podsim_report::lines_svg(
            path,
            "TPU v4 pod goodput vs slice size (Fig. 4)",
            "chips per slice",
            "goodput (% of the pod's chips)",
            &series,
            100.0,
        )
        .map_err(|e| Failure::runtime(e.to_string()))?;
    }
    if a.json {
        outln!(
            "{}",
            json!({
                "slice_chips": a.slice_chips,
                "host_availability": a.host_availability,
                "static": a.static_wiring,
                "trials": a.trials,
                "seed": a.seed,
                "goodput": m.goodput,
                "slices": m.slices,
                "p_schedulable": m.p_schedulable,
                "exact_goodput": exact.goodput,
                "exact_slices": exact.slices,
                "exact_p_schedulable": exact.p_schedulable,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows = vec![
        (
            "pod".to_string(),
            vec![format!(
                "4096 chips, {} hosts each up with probability {}, {}",
                1024,
                a.host_availability,
                if a.static_wiring {
                    "static wiring"
                } else {
                    "OCS"
                }
            )],
        ),
        ("slice".into(), vec![format!("{} chips", a.slice_chips)]),
        (
            "goodput".into(),
            vec![format!(
                "{:.2}% (Monte Carlo, {} trials, seed {}); exact {:.2}%",
                100.0 * m.goodput,
                a.trials,
                a.seed,
                100.0 * exact.goodput
            )],
        ),
        (
            "slices running".into(),
            vec![format!("{:.3} (exact {:.3})", m.slices, exact.slices)],
        ),
        (
            "p(schedulable)".into(),
            vec![format!(
                "{:.4} (exact {:.4})",
                m.p_schedulable, exact.p_schedulable
            )],
        ),
    ];
    out!("{}", render(&rows));
    if let Some(p) = &a.plot {
        outln!("plot written to {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}
