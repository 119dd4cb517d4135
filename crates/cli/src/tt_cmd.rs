//! `podsim dram` and `podsim matmul`: the Tenstorrent DRAM bandwidth study
//! (tenstorrent-dram-bandwidth.txt) at the packet level.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_report::render;
use podsim_tenstorrent::dram::Layout;
use podsim_tenstorrent::matmul::{self as tt_matmul, Dtype, In0, Matmul};
use podsim_tenstorrent::placement::{Placement, Relocation};
use podsim_tenstorrent::study::{self as tt_study, Study, Vcs};
use podsim_topology::{Noc, TtChip};
use podsim_units::{SimDuration, SimTime};
use serde_json::json;

use crate::Failure;
use crate::args::{flag_err, size};

/// The arguments of `podsim dram`.
#[derive(Args)]
pub struct DramArgs {
    /// wormhole (12 banks, 1 GHz NoC) or grayskull (8 banks, 1.2 GHz).
    #[arg(long, value_name = "CHIP", default_value = "wormhole")]
    chip: String,
    /// Transfers per second of every GDDR6 bank, e.g. "12 GT/s", "14 GT/s", "7400 MT/s"
    /// [default: 12 GT/s on Wormhole (288 GB/s over 12 banks), 7.4 GT/s on Grayskull
    /// (118.4 GB/s over 8)].
    #[arg(long, value_name = "RATE", allow_hyphen_values = true)]
    data_rate: Option<String>,
    /// Where the readers go, one per bank: top-rows, columns (the leftmost and rightmost
    /// worker columns), next-to-bank (one hop downstream of the bank on the NoC in use) or auto
    /// (runs the three and keeps the fastest; the output names it).
    #[arg(long, value_name = "WHERE", default_value = "next-to-bank")]
    placement: String,
    /// How next-to-bank readers displaced by harvested rows move: document (shift along,
    /// then to a row with no reader, no overlapping route) or logical (the full grid's
    /// placement in logical rows, as harvest-unaware software would). Only with
    /// --harvested-rows and next-to-bank.
    #[arg(long, value_name = "RULE")]
    relocation: Option<String>,
    /// Harvested worker rows, NoC y coordinates, e.g. 5 (N150: one) or 2,8 (N300: two)
    /// [default: none].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    harvested_rows: Vec<u32>,
    /// Request virtual channels: per-reader (each reader of a row on its own VC, served
    /// round-robin) or shared (one VC, first come first served).
    #[arg(long, value_name = "VCS", default_value = "per-reader")]
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
    #[arg(long, value_name = "LAYOUT", default_value = "sharded")]
    layout: String,
    /// The NoC requests and data take: 0 (east, then south) or 1 (north, then west).
    #[arg(long, value_name = "N", default_value_t = 0)]
    noc: u8,
    /// Write a Chrome trace-event JSON file (ui.perfetto.dev): a process per reader, each
    /// block from its requests to its last byte.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// The most events the trace keeps.
    #[arg(long, value_name = "N", default_value_t = crate::workload_cmd::DEFAULT_TRACE_LIMIT)]
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
}

/// The arguments of `podsim matmul`.
#[derive(Args)]
pub struct MatmulArgs {
    /// wormhole (the document's matmul runs on its 12 banks).
    #[arg(long, value_name = "CHIP", default_value = "wormhole")]
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
    #[arg(long, value_name = "TILE", default_value = "32x32")]
    tile: String,
    /// in1's format: bf16, bfp8 (1088 B per 1024 elements) or bfp4 (576 B).
    #[arg(long, value_name = "DTYPE", default_value = "bfp8")]
    dtype: String,
    /// How in0 reaches the compute cores: multicast or unicast (one core after another).
    #[arg(long, value_name = "HOW", default_value = "multicast")]
    in0: String,
    /// single or double buffering of in0 and in1.
    #[arg(long, value_name = "B", default_value = "double")]
    buffering: String,
    /// Transfers per second of every bank [default: 12 GT/s].
    #[arg(long, value_name = "RATE", allow_hyphen_values = true)]
    data_rate: Option<String>,
    /// Print JSON (keys: time_s, dram_bandwidth_bytes_per_s, utilization, compute_time_s,
    /// imbalance, and more).
    #[arg(long)]
    json: bool,
}

fn pick<T: Copy>(flag: &str, s: &str, all: &[(&str, T)]) -> Result<T, Failure> {
    all.iter()
        .find(|(n, _)| *n == s)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
            flag_err(flag, format!("`{s}`: expected {}", names.join(", ")))
        })
}

fn chip(s: &str) -> Result<TtChip, Failure> {
    pick(
        "--chip",
        s,
        &[
            ("wormhole", TtChip::Wormhole),
            ("grayskull", TtChip::Grayskull),
        ],
    )
}

/// "12 GT/s", "14GT/s", "7400 MT/s" in transfers per second.
fn data_rate(s: &str) -> Result<f64, Failure> {
    let t = s.trim();
    let (num, scale) = if let Some(v) = t.strip_suffix("GT/s") {
        (v, 1e9)
    } else if let Some(v) = t.strip_suffix("MT/s") {
        (v, 1e6)
    } else {
        return Err(flag_err(
            "--data-rate",
            format!("`{s}`: expected a rate such as \"12 GT/s\" or \"7400 MT/s\""),
        ));
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * scale <= 1e11 => Ok(v * scale),
        _ => Err(flag_err(
            "--data-rate",
            format!("`{s}`: expected a positive rate up to 100 GT/s"),
        )),
    }
}

/// `podsim dram`.
pub fn dram_cmd(a: &DramArgs) -> Result<ExitCode, Failure> {
    let chip = chip(&a.chip)?;
    let rate = match &a.data_rate {
        Some(s) => data_rate(s)?,
        None => tt_study::default_data_rate(chip),
    };
    let placement = pick("--placement", &a.placement, &Placement::ALL)?;
    let relocation = match &a.relocation {
        None => Relocation::Document,
        Some(_)
            if a.harvested_rows.is_empty()
                || !matches!(placement, Placement::NextToBank | Placement::Auto) =>
        {
            return Err(flag_err(
                "--relocation",
                "only moves next-to-bank readers off harvested rows: give --harvested-rows and --placement next-to-bank",
            ));
        }
        Some(s) => pick("--relocation", s, &Relocation::ALL)?,
    };
    let vcs = pick("--vcs", &a.vcs, &Vcs::ALL)?;
    let layout = pick(
        "--layout",
        &a.layout,
        &[
            ("sharded", Layout::Sharded),
            ("interleaved", Layout::Interleaved),
        ],
    )?;
    let noc = match a.noc {
        0 => Noc::Noc0,
        1 => Noc::Noc1,
        n => return Err(flag_err("--noc", format!("{n}: expected 0 or 1"))),
    };
    if a.outstanding == 0 || a.outstanding > 64 {
        return Err(flag_err(
            "--outstanding",
            format!("{}: expected 1 to 64 blocks", a.outstanding),
        ));
    }
    let block = size("--block", &a.block)?;
    let bytes = size("--bytes", &a.bytes)?;
    if block == 0 || block > 256 << 20 {
        return Err(flag_err("--block", "expected 1 byte to 256 MiB"));
    }
    let page = size("--page", &a.page)?;
    if page == 0 || page > podsim_tenstorrent::dram::MAX_BURST_BYTES {
        return Err(flag_err(
            "--page",
            format!("{page} bytes: expected 1 byte to 8 KiB (one NoC packet)"),
        ));
    }
    if page > block {
        return Err(flag_err(
            "--page",
            format!("{page} bytes: larger than a block ({block} bytes); a page is part of a block"),
        ));
    }
    if bytes < block || bytes > 256 << 20 || bytes / block > 1 << 20 {
        return Err(flag_err(
            "--bytes",
            format!(
                "{bytes} bytes in blocks of {block}: expected at least one block, at most 256 MiB and 1,048,576 blocks"
            ),
        ));
    }
    let requests = block.div_ceil(page).saturating_mul(bytes / block);
    if requests > 1 << 18 {
        return Err(flag_err(
            "--page",
            format!(
                "{requests} read requests a reader ({bytes} bytes in blocks of {block} in pages of {page}): expected at most 262,144; use larger pages or fewer bytes"
            ),
        ));
    }
    let study = Study {
        chip,
        harvested_rows: a.harvested_rows.clone(),
        data_rate: rate,
        placement,
        relocation,
        vcs,
        outstanding: a.outstanding,
        block_bytes: block,
        page_bytes: page,
        bytes_per_reader: bytes,
        layout,
        noc,
        efficiency: tt_study::CALIBRATED_EFFICIENCY,
    };
    study.grid().map_err(|e| flag_err("--harvested-rows", e))?;
    let r = tt_study::run(&study).map_err(Failure::runtime)?;
    let clock = if chip == TtChip::Wormhole { 1e9 } else { 1.2e9 };
    crate::progress::simulated(r.run.cycles as f64 / clock);
    if let Some(path) = &a.trace {
        let mut t = podsim_report::Trace::new(a.trace_limit);
        t.about("command", json!("dram"));
        t.about("chip", json!(a.chip));
        let ps = |c: u64| (c as f64 * 1e12 / clock).round() as u64;
        for (i, &(x, y)) in r.readers.iter().enumerate() {
            t.process(i as u64, format!("reader of bank {i} at ({x},{y})"));
            t.thread(i as u64, 0, "blocks");
        }
        for &(reader, block, start, end) in &r.run.blocks {
            t.complete(
                reader as u64,
                0,
                &format!("block {block}"),
                SimTime::from_ps(ps(start)),
                SimDuration::from_ps(ps(end.saturating_sub(start))),
                serde_json::Value::Null,
            );
        }
        std::fs::write(path, t.to_json().to_string())
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", path.display())))?;
    }
    if let Some(path) = &a.plot {
        let bars: Vec<(String, f64)> = r
            .run
            .per_reader_bytes_per_s
            .iter()
            .enumerate()
            .map(|(i, &v)| (format!("D{i}"), v / 1e9))
            .collect();
        let bank = r.spec_bytes_per_s / r.readers.len().max(1) as f64 / 1e9;
        podsim_report::bars_svg(
            path,
            &format!(
                "{} {}, {}: {:.1} GB/s ({:.1}% of spec)",
                a.chip,
                a.placement,
                a.layout,
                r.run.bandwidth_bytes_per_s / 1e9,
                r.utilization * 100.0
            ),
            "the reader of DRAM bank",
            "bandwidth the reader gets (GB/s)",
            &bars,
            Some(("a bank's spec rate", bank)),
            bank * 1.2,
        )
        .map_err(|e| Failure::runtime(e.to_string()))?;
    }
    if let Some(path) = &a.heatmap {
        let g = study.grid().map_err(Failure::runtime)?;
        let links: Vec<podsim_report::HeatLink> = r
            .run
            .links
            .iter()
            .map(|&(from, to, flits)| (from, to, flits as f64 / r.run.cycles.max(1) as f64))
            .collect();
        let label = |x: u32, y: u32| -> String {
            if let Some(b) = r.readers.iter().position(|&t| t == (x, y)) {
                return format!("r{b}");
            }
            if let Some(b) = (0..g.dram_banks()).find(|&b| g.bank_tile(b) == Some((x, y))) {
                return format!("D{b}");
            }
            match g.kind(x, y) {
                Some(podsim_topology::TileKind::Harvested) => "H".into(),
                _ => String::new(),
            }
        };
        podsim_report::heatmap_svg(
            path,
            &format!(
                "{} {}, NoC {}: link utilisation over {} cycles",
                a.chip, a.placement, a.noc, r.run.cycles
            ),
            g.width(),
            g.cube().dims()[1],
            &links,
            &|x, y| podsim_report::HeatTile::Plain(label(x, y)),
        )
        .map_err(|e| Failure::runtime(e.to_string()))?;
    }
    if a.json {
        outln!(
            "{}",
            podsim_report::to_json(&tt_study::DramOutput::new(&study, &r))
        );
        return Ok(ExitCode::SUCCESS);
    }
    let gbs = |v: f64| format!("{:.1} GB/s", v / 1e9);
    let mut rows = vec![(
        "bank".to_string(),
        vec![
            "reader".to_string(),
            "bank rate".into(),
            "reader rate".into(),
        ],
    )];
    for (i, t) in r.readers.iter().enumerate() {
        rows.push((
            i.to_string(),
            vec![
                format!("({},{})", t.0, t.1),
                gbs(r.run.per_bank_bytes_per_s[i]),
                gbs(r.run.per_reader_bytes_per_s[i]),
            ],
        ));
    }
    out!("{}", render(&rows));
    outln!(
        "{}: {} of the spec {} ({:.1}%), {} read in {} NoC cycles; busiest link {:.1}% busy",
        a.chip,
        gbs(r.run.bandwidth_bytes_per_s),
        gbs(r.spec_bytes_per_s),
        r.utilization * 100.0,
        r.run.bytes,
        r.run.cycles,
        r.run.max_link_utilization * 100.0
    );
    if placement == Placement::Auto {
        outln!(
            "placement chosen: {} (the fastest of top-rows, columns and next-to-bank)",
            r.placement.name()
        );
    }
    if r.overlaps.is_empty() {
        outln!("no two data routes share a link");
    } else {
        for &(a, b, (f, t)) in &r.overlaps {
            outln!(
                "banks {a} and {b}: data routes share ({},{})->({},{})",
                f.0,
                f.1,
                t.0,
                t.1
            );
        }
    }
    outln!(
        "banks at {:.4} of their raw rate (calibrated once to the u-benchmark's 267 GB/s at 12 GT/s)",
        tt_study::CALIBRATED_EFFICIENCY
    );
    Ok(ExitCode::SUCCESS)
}

/// `podsim matmul`.
pub fn matmul_cmd(a: &MatmulArgs) -> Result<ExitCode, Failure> {
    if chip(&a.chip)? != TtChip::Wormhole {
        return Err(flag_err(
            "--chip",
            "the DRAM-bound matmul is modelled on Wormhole's 12 banks only",
        ));
    }
    let tile_width = pick(
        "--tile",
        &a.tile,
        &[("32x32", 32u64), ("32x16", 16), ("32x8", 8)],
    )?;
    let dtype = pick("--dtype", &a.dtype, &Dtype::ALL)?;
    let in0 = pick(
        "--in0",
        &a.in0,
        &[("multicast", In0::Multicast), ("unicast", In0::Unicast)],
    )?;
    let buffers = pick(
        "--buffering",
        &a.buffering,
        &[("single", 1u64), ("double", 2)],
    )?;
    let rate = match &a.data_rate {
        Some(s) => data_rate(s)?,
        None => tt_study::default_data_rate(TtChip::Wormhole),
    };
    for (flag, v) in [("--m", a.m), ("--k", a.k), ("--n", a.n)] {
        if v == 0 || v > 1 << 20 {
            return Err(flag_err(flag, format!("{v}: expected 1 to 1,048,576")));
        }
    }
    if !a.k.is_multiple_of(32) {
        return Err(flag_err(
            "--k",
            format!("{}: expected a multiple of 32 (the tile height)", a.k),
        ));
    }
    if a.m > 1024 {
        return Err(flag_err(
            "--m",
            format!(
                "{}: the DRAM-bound matmul takes a small in0, at most 1024 rows",
                a.m
            ),
        ));
    }
    if a.k * a.n > 1 << 31 {
        return Err(flag_err(
            "--n",
            "in1 of more than 2^31 elements does not fit a Wormhole's 12 GB",
        ));
    }
    let mm = Matmul {
        tile_width,
        dtype,
        in0,
        buffers,
        ..Matmul::new(a.m, a.k, a.n, rate)
    };
    let r = tt_matmul::run(&mm).map_err(Failure::runtime)?;
    crate::progress::simulated(r.time_s);
    if a.json {
        outln!(
            "{}",
            json!({
                "chip": a.chip,
                "m": a.m, "k": a.k, "n": a.n,
                "tile": a.tile,
                "dtype": a.dtype,
                "in0": a.in0,
                "buffering": a.buffering,
                "data_rate_transfers_per_s": rate,
                "time_s": r.time_s,
                "dram_bandwidth_bytes_per_s": r.dram_bandwidth_bytes_per_s,
                "utilization": r.utilization,
                "compute_time_s": r.compute_time_s,
                "imbalance": r.imbalance,
                "tiles_per_bank": r.tiles_per_bank,
                "block_rows": r.block_rows,
                "in1_bytes": r.in1_bytes,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows = vec![
        (
            "time".to_string(),
            vec![format!("{:.2} us", r.time_s * 1e6)],
        ),
        (
            "DRAM bandwidth".into(),
            vec![format!(
                "{:.1} GB/s ({:.1}% of spec)",
                r.dram_bandwidth_bytes_per_s / 1e9,
                r.utilization * 100.0
            )],
        ),
        (
            "compute (busiest core)".into(),
            vec![format!("{:.2} us", r.compute_time_s * 1e6)],
        ),
        (
            "imbalance".into(),
            vec![format!(
                "{:.3} (tiles per bank {:?})",
                r.imbalance, r.tiles_per_bank
            )],
        ),
        (
            "in1 read".into(),
            vec![format!(
                "{} bytes, blocks of {} rows",
                r.in1_bytes, r.block_rows
            )],
        ),
    ];
    out!("{}", render(&rows));
    outln!(
        "{}x{} x {}x{} on a Wormhole: in1 ({}) sharded over 12 banks in 32x{} tiles, in0 {}, {} buffering",
        a.m,
        a.k,
        a.k,
        a.n,
        a.dtype,
        tile_width,
        a.in0,
        a.buffering
    );
    Ok(ExitCode::SUCCESS)
}
