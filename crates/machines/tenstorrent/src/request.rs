//! The DRAM study and the DRAM-bound matmul as a user asks for them (`podsim dram`, `podsim
//! matmul`): chips, placements and layouts by name, sizes and rates as text, checked into a
//! [`Study`] or a [`Matmul`] (each refusal naming its flag); the matmul's result as JSON
//! (serde) and text; a study's drawings (a Chrome trace, the banks' bandwidth, the NoC's
//! links).

use crate::TtError;
use std::path::Path;

use podsim_topology::{Noc, TileKind, TtChip};
use podsim_units::{Bytes, SimDuration, SimTime};

use crate::dram::{Layout, MAX_BURST_BYTES};
use crate::matmul::{self as tt_matmul, Dtype, In0, Matmul, MatmulOutput};
use crate::placement::{Placement, Relocation};
use crate::study::{self as tt_study, DramOutput, Study, StudyRun, Vcs};

pub use podsim_units::RequestError;

fn input(flag: &'static str, why: impl std::fmt::Display) -> RequestError {
    RequestError::input(flag, why)
}

/// The value named `s` in `all`, or an error listing the names.
fn pick<T: Copy>(flag: &'static str, s: &str, all: &[(&str, T)]) -> Result<T, RequestError> {
    all.iter()
        .find(|(n, _)| *n == s)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
            input(flag, format!("`{s}`: expected {}", names.join(", ")))
        })
}

fn chip(s: &str) -> Result<TtChip, RequestError> {
    pick(
        "--chip",
        s,
        &[
            ("wormhole", TtChip::Wormhole),
            ("grayskull", TtChip::Grayskull),
        ],
    )
}

/// "12 GT/s", "14GT/s", "7400 MT/s" in transfers per second; the chip's default if `None`.
fn data_rate(s: Option<&str>, chip: TtChip) -> Result<f64, RequestError> {
    let Some(s) = s else {
        return Ok(tt_study::default_data_rate(chip));
    };
    let t = s.trim();
    let (num, scale) = if let Some(v) = t.strip_suffix("GT/s") {
        (v, 1e9)
    } else if let Some(v) = t.strip_suffix("MT/s") {
        (v, 1e6)
    } else {
        return Err(input(
            "--data-rate",
            format!("`{s}`: expected a rate such as \"12 GT/s\" or \"7400 MT/s\""),
        ));
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * scale <= 1e11 => Ok(v * scale),
        _ => Err(input(
            "--data-rate",
            format!("`{s}`: expected a positive rate up to 100 GT/s"),
        )),
    }
}

/// A size such as `64 MiB` in bytes.
fn size(flag: &'static str, s: &str) -> Result<u64, RequestError> {
    s.parse::<Bytes>()
        .map(|b| b.0)
        .map_err(|e| input(flag, format!("{e}; expected a size such as \"64 MiB\"")))
}

/// A DRAM study as `podsim dram` asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DramRequest<'a> {
    /// `wormhole` or `grayskull`.
    pub chip: &'a str,
    /// Transfers per second of every bank, e.g. `12 GT/s` (the chip's default if `None`).
    pub data_rate: Option<&'a str>,
    /// `top-rows`, `columns`, `next-to-bank` or `auto`.
    pub placement: &'a str,
    /// `document` or `logical`: only with harvested rows and next-to-bank readers.
    pub relocation: Option<&'a str>,
    /// Harvested worker rows.
    pub harvested_rows: &'a [u32],
    /// `per-reader` or `shared`.
    pub vcs: &'a str,
    /// Blocks in flight per reader.
    pub outstanding: u64,
    /// Bytes per block, a size.
    pub block: &'a str,
    /// Bytes per read request, a size.
    pub page: &'a str,
    /// Bytes each reader reads, a size.
    pub bytes: &'a str,
    /// `sharded` or `interleaved`.
    pub layout: &'a str,
    /// The NoC: 0 or 1.
    pub noc: u8,
}

impl DramRequest<'_> {
    /// The study, at the calibrated efficiency, or the flag whose value cannot be used.
    pub fn study(&self) -> Result<Study, RequestError> {
        let chip = chip(self.chip)?;
        let rate = data_rate(self.data_rate, chip)?;
        let placement = pick("--placement", self.placement, &Placement::ALL)?;
        let relocation = match self.relocation {
            None => Relocation::Document,
            Some(_)
                if self.harvested_rows.is_empty()
                    || !matches!(placement, Placement::NextToBank | Placement::Auto) =>
            {
                return Err(input(
                    "--relocation",
                    "only moves next-to-bank readers off harvested rows: give --harvested-rows and --placement next-to-bank",
                ));
            }
            Some(s) => pick("--relocation", s, &Relocation::ALL)?,
        };
        let vcs = pick("--vcs", self.vcs, &Vcs::ALL)?;
        let layout = pick(
            "--layout",
            self.layout,
            &[
                ("sharded", Layout::Sharded),
                ("interleaved", Layout::Interleaved),
            ],
        )?;
        let noc = match self.noc {
            0 => Noc::Noc0,
            1 => Noc::Noc1,
            n => return Err(input("--noc", format!("{n}: expected 0 or 1"))),
        };
        if self.outstanding == 0 || self.outstanding > 64 {
            return Err(input(
                "--outstanding",
                format!("{}: expected 1 to 64 blocks", self.outstanding),
            ));
        }
        let (block, page, bytes) = self.sizes()?;
        let study = Study {
            chip,
            harvested_rows: self.harvested_rows.to_vec(),
            data_rate: rate,
            placement,
            relocation,
            vcs,
            outstanding: self.outstanding,
            block_bytes: block,
            page_bytes: page,
            bytes_per_reader: bytes,
            layout,
            noc,
            efficiency: tt_study::CALIBRATED_EFFICIENCY,
        };
        study.grid().map_err(|e| input("--harvested-rows", e))?;
        Ok(study)
    }

    /// Bytes per block, per page and per reader, checked against each other.
    fn sizes(&self) -> Result<(u64, u64, u64), RequestError> {
        let block = size("--block", self.block)?;
        let bytes = size("--bytes", self.bytes)?;
        if block == 0 || block > 256 << 20 {
            return Err(input("--block", "expected 1 byte to 256 MiB"));
        }
        let page = size("--page", self.page)?;
        if page == 0 || page > MAX_BURST_BYTES {
            return Err(input(
                "--page",
                format!("{page} bytes: expected 1 byte to 8 KiB (one NoC packet)"),
            ));
        }
        if page > block {
            return Err(input(
                "--page",
                format!(
                    "{page} bytes: larger than a block ({block} bytes); a page is part of a block"
                ),
            ));
        }
        if bytes < block || bytes > 256 << 20 || bytes / block > 1 << 20 {
            return Err(input(
                "--bytes",
                format!(
                    "{bytes} bytes in blocks of {block}: expected at least one block, at most 256 MiB and 1,048,576 blocks"
                ),
            ));
        }
        let requests = block.div_ceil(page).saturating_mul(bytes / block);
        if requests > 1 << 18 {
            return Err(input(
                "--page",
                format!(
                    "{requests} read requests a reader ({bytes} bytes in blocks of {block} in pages of {page}): expected at most 262,144; use larger pages or fewer bytes"
                ),
            ));
        }
        Ok((block, page, bytes))
    }
}

/// The NoC's clock, Hz: 1 GHz on Wormhole, 1.2 GHz on Grayskull.
pub fn noc_clock_hz(chip: TtChip) -> f64 {
    if chip == TtChip::Wormhole { 1e9 } else { 1.2e9 }
}

/// Write a Chrome trace-event JSON file of `r` at `path`, at most `limit` events: a process per
/// reader, each block from its requests to its last byte.
pub fn write_trace(path: &Path, limit: usize, s: &Study, r: &StudyRun) -> Result<(), TtError> {
    let clock = noc_clock_hz(s.chip);
    let mut t = podsim_report::Trace::new(limit);
    t.about("command", serde_json::json!("dram"));
    t.about("chip", serde_json::json!(DramOutput::new(s, r).chip));
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
    std::fs::write(path, t.to_json().to_string()).map_err(|source| TtError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// Draw the bandwidth each bank's reader got as bars against a bank's spec rate (SVG).
pub fn bandwidth_svg(path: &Path, out: &DramOutput<'_>) -> Result<(), TtError> {
    let bars: Vec<(String, f64)> = (out.per_reader_bytes_per_s.iter().enumerate())
        .map(|(i, &v)| (format!("D{i}"), v / 1e9))
        .collect();
    let bank = out.spec_bytes_per_s / out.reader_coordinates.len().max(1) as f64 / 1e9;
    podsim_report::bars_svg(
        path,
        &format!(
            "{} {}, {}: {:.1} GB/s ({:.1}% of spec)",
            out.chip,
            out.placement,
            out.layout,
            out.bandwidth_bytes_per_s / 1e9,
            out.utilization * 100.0
        ),
        "the reader of DRAM bank",
        "bandwidth the reader gets (GB/s)",
        &bars,
        Some(("a bank's spec rate", bank)),
        bank * 1.2,
    )?;
    Ok(())
}

/// Draw the grid's NoC links coloured by how busy each was over the run (SVG): banks D0..,
/// readers r0.., harvested tiles H.
pub fn heatmap_svg(path: &Path, s: &Study, r: &StudyRun) -> Result<(), TtError> {
    let g = s.grid()?;
    let links: Vec<podsim_report::HeatLink> = (r.run.links.iter())
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
            Some(TileKind::Harvested) => "H".into(),
            _ => String::new(),
        }
    };
    let out = DramOutput::new(s, r);
    podsim_report::heatmap_svg(
        path,
        &format!(
            "{} {}, NoC {}: link utilisation over {} cycles",
            out.chip, out.placement, out.noc, r.run.cycles
        ),
        g.width(),
        g.cube().dims()[1],
        &links,
        &|x, y| podsim_report::HeatTile::Plain(label(x, y)),
    )?;
    Ok(())
}

/// A DRAM-bound matmul as `podsim matmul` asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatmulRequest<'a> {
    /// `wormhole` (the only chip modelled).
    pub chip: &'a str,
    /// Rows of in0.
    pub m: u64,
    /// in0's columns and in1's rows.
    pub k: u64,
    /// in1's columns.
    pub n: u64,
    /// in1's tile: `32x32`, `32x16` or `32x8`.
    pub tile: &'a str,
    /// in1's format: `bf16`, `bfp8` or `bfp4`.
    pub dtype: &'a str,
    /// `multicast` or `unicast`.
    pub in0: &'a str,
    /// `single` or `double`.
    pub buffering: &'a str,
    /// Transfers per second of every bank (12 GT/s if `None`).
    pub data_rate: Option<&'a str>,
}

impl MatmulRequest<'_> {
    /// The matmul, or the flag whose value cannot be used.
    pub fn matmul(&self) -> Result<Matmul, RequestError> {
        if chip(self.chip)? != TtChip::Wormhole {
            return Err(input(
                "--chip",
                "the DRAM-bound matmul is modelled on Wormhole's 12 banks only",
            ));
        }
        let tile_width = pick(
            "--tile",
            self.tile,
            &[("32x32", 32u64), ("32x16", 16), ("32x8", 8)],
        )?;
        let dtype = pick("--dtype", self.dtype, &Dtype::ALL)?;
        let in0 = pick(
            "--in0",
            self.in0,
            &[("multicast", In0::Multicast), ("unicast", In0::Unicast)],
        )?;
        let buffers = pick(
            "--buffering",
            self.buffering,
            &[("single", 1u64), ("double", 2)],
        )?;
        let rate = data_rate(self.data_rate, TtChip::Wormhole)?;
        let (m, k, n) = (self.m, self.k, self.n);
        for (flag, v) in [("--m", m), ("--k", k), ("--n", n)] {
            if v == 0 || v > 1 << 20 {
                return Err(input(flag, format!("{v}: expected 1 to 1,048,576")));
            }
        }
        if !k.is_multiple_of(32) {
            return Err(input(
                "--k",
                format!("{k}: expected a multiple of 32 (the tile height)"),
            ));
        }
        if m > 1024 {
            return Err(input(
                "--m",
                format!("{m}: the DRAM-bound matmul takes a small in0, at most 1024 rows"),
            ));
        }
        if k * n > 1 << 31 {
            return Err(input(
                "--n",
                "in1 of more than 2^31 elements does not fit a Wormhole's 12 GB",
            ));
        }
        Ok(Matmul {
            tile_width,
            dtype,
            in0,
            buffers,
            ..Matmul::new(m, k, n, rate)
        })
    }

    /// Check the request and run the matmul.
    pub fn run(&self) -> Result<MatmulOutput, RequestError> {
        let mm = self.matmul()?;
        let r = tt_matmul::run(&mm).map_err(|e| RequestError::Run(e.to_string()))?;
        Ok(MatmulOutput::new(&mm, r))
    }
}
