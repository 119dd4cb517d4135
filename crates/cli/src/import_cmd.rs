//! `podsim import`: run another tool's input files on podsim's models. `scalesim` reads a
//! SCALE-Sim configuration (INI: array shape, dataflow, SRAM sizes, bandwidth mode) and its
//! topology CSV (convolution layers, or GEMM layers `Layer, M, N, K`) and runs every layer as
//! a GEMM in SCALE-Sim's cycle convention, naming every key podsim does not honour.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use podsim_compute::{Convention, Dataflow, GemmSpec, MemorySpec, gemm};
use podsim_report::render;
use serde_json::json;

use crate::{Failure, read};

/// The arguments of `podsim import`.
#[derive(Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    what: ImportCommand,
}

#[derive(Subcommand)]
enum ImportCommand {
    /// A SCALE-Sim (v2/v3) configuration and topology: each layer as a GEMM on the array in
    /// SCALE-Sim's "Total Cycles" convention. A convolution layer (IFMAP H x W, filter Fh x Fw,
    /// C channels, F filters, stride S) is M = ofmap pixels ((H - Fh) / S + 1) x ((W - Fw) / S +
    /// 1), K = Fh x Fw x C, N = F, as SCALE-Sim maps it. Keys podsim does not honour are listed.
    Scalesim(ScalesimArgs),
}

#[derive(Args)]
struct ScalesimArgs {
    /// The configuration file (.cfg).
    config: PathBuf,
    /// The topology CSV [default: the configuration's TopologyCsvLoc, relative to it].
    topology: Option<PathBuf>,
    /// Print one JSON object (keys: run_name, array, dataflow, layers [{layer, m, n, k, cycles,
    /// compute_cycles, stall_cycles, utilization, mapping_efficiency}], total_cycles,
    /// not_honoured).
    #[arg(long)]
    json: bool,
}

/// `podsim import`.
pub fn import_cmd(a: &ImportArgs) -> Result<ExitCode, Failure> {
    match &a.what {
        ImportCommand::Scalesim(s) => scalesim(s),
    }
}

/// A SCALE-Sim configuration's keys: (section, key, value, line).
fn ini(file: &str, text: &str) -> Result<Vec<(String, String, String, usize)>, Failure> {
    let mut section = String::new();
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = s.trim().to_string();
            continue;
        }
        let Some((k, v)) = line.split_once([':', '=']) else {
            return Err(Failure::usage(format!(
                "{file}, line {}: `{line}`: expected `key: value` or `key = value`",
                i + 1
            )));
        };
        out.push((
            section.clone(),
            k.trim().to_string(),
            v.trim().trim_matches('"').to_string(),
            i + 1,
        ));
    }
    Ok(out)
}

fn scalesim(a: &ScalesimArgs) -> Result<ExitCode, Failure> {
    let file = a.config.display().to_string();
    let keys = ini(&file, &read(&a.config)?)?;
    let get = |k: &str| keys.iter().find(|e| e.1.eq_ignore_ascii_case(k));
    let num = |k: &str| -> Result<Option<u64>, Failure> {
        match get(k) {
            None => Ok(None),
            Some((_, _, v, line)) => v.parse::<u64>().map(Some).map_err(|_| {
                Failure::usage(format!(
                    "{file}, line {line}: `{k}`: `{v}` is not a whole number"
                ))
            }),
        }
    };
    let need = |k: &str| -> Result<u64, Failure> {
        num(k)?.filter(|&v| v > 0).ok_or_else(|| {
            Failure::usage(format!(
                "{file}: `{k}`: missing; expected a positive number"
            ))
        })
    };
    let (rows, cols) = (need("ArrayHeight")?, need("ArrayWidth")?);
    let df_text = get("Dataflow")
        .map(|e| e.2.to_lowercase())
        .unwrap_or_default();
    let dataflow = Dataflow::parse(&df_text).ok_or_else(|| {
        Failure::usage(format!(
            "{file}: `Dataflow`: `{df_text}`: expected os, ws or is"
        ))
    })?;
    // SCALE-Sim's SRAM sizes are in kB of one-byte words.
    let kb = |k: &str| -> Result<u64, Failure> { Ok(num(k)?.unwrap_or(64) << 10) };
    let (sram_a, sram_b, sram_d) = (
        kb("IfmapSramSzkB")?,
        kb("FilterSramSzkB")?,
        kb("OfmapSramSzkB")?,
    );
    let mode = get("InterfaceBandwidth")
        .map(|e| e.2.to_uppercase())
        .unwrap_or_else(|| "CALC".into());
    let dram_bytes_per_cycle = match mode.as_str() {
        "CALC" => None,
        "USER" => Some(need("Bandwidth")? as f64),
        other => {
            return Err(Failure::usage(format!(
                "{file}: `InterfaceBandwidth`: `{other}`: expected CALC or USER"
            )));
        }
    };
    // Every key podsim reads, and why the others do not change its figures.
    let honoured = [
        "run_name",
        "ArrayHeight",
        "ArrayWidth",
        "Dataflow",
        "IfmapSramSzkB",
        "FilterSramSzkB",
        "OfmapSramSzkB",
        "InterfaceBandwidth",
        "TopologyCsvLoc",
    ];
    let sparse = get("SparsitySupport").is_some_and(|e| !e.2.eq_ignore_ascii_case("false"));
    let mut not_honoured: Vec<String> = Vec::new();
    for (section, k, v, _) in &keys {
        if honoured.iter().any(|h| h.eq_ignore_ascii_case(k)) {
            continue;
        }
        let why = match k.to_ascii_lowercase().as_str() {
            "bandwidth" if mode == "USER" => continue,
            "bandwidth" => "used only with InterfaceBandwidth: USER",
            "ifmapoffset" | "filteroffset" | "ofmapoffset" => "addresses: no effect on the figures",
            "sparsitysupport" if v.eq_ignore_ascii_case("false") => continue,
            "sparsitysupport" => "podsim's GEMM model is dense",
            "useramulatortrace" if v.eq_ignore_ascii_case("false") => continue,
            "useramulatortrace" => "no DRAM trace model",
            // With sparsity off SCALE-Sim reads none of the section's other keys either.
            _ if section.eq_ignore_ascii_case("sparsity") && !sparse => continue,
            _ if section.eq_ignore_ascii_case("sparsity") => "podsim's GEMM model is dense",
            _ if section.eq_ignore_ascii_case("layout") => "no SRAM bank or layout model",
            _ => "not modelled",
        };
        not_honoured.push(format!("[{section}] {k} = {v} ({why})"));
    }
    let topo_path = match &a.topology {
        Some(p) => p.clone(),
        None => {
            let loc = get("TopologyCsvLoc").ok_or_else(|| {
                Failure::usage(format!(
                    "{file}: no topology: give the topology CSV after the configuration, or set TopologyCsvLoc"
                ))
            })?;
            a.config.parent().unwrap_or(Path::new(".")).join(&loc.2)
        }
    };
    let tfile = topo_path.display().to_string();
    let layers = topology(&tfile, &read(&topo_path)?)?;
    let memory = MemorySpec {
        sram_a,
        sram_b,
        sram_d,
        dram_bytes_per_cycle,
        ..MemorySpec::DEFAULT
    };
    let mut results = Vec::new();
    for (name, m, n, k) in &layers {
        let spec = GemmSpec {
            rows,
            cols,
            dataflow,
            m: *m,
            n: *n,
            k: *k,
            convention: Convention::ScaleSim,
            memory,
        };
        let r = gemm(&spec).map_err(|e| Failure::usage(format!("{tfile}: layer `{name}`: {e}")))?;
        results.push((name.clone(), *m, *n, *k, r));
    }
    let total: u64 = results.iter().map(|r| r.4.cycles).sum();
    let run_name = get("run_name").map(|e| e.2.clone()).unwrap_or_default();
    if a.json {
        outln!(
            "{}",
            json!({
                "run_name": run_name,
                "array": format!("{rows}x{cols}"),
                "dataflow": dataflow.to_string(),
                "layers": results.iter().map(|(name, m, n, k, r)| json!({
                    "layer": name, "m": m, "n": n, "k": k, "cycles": r.cycles,
                    "compute_cycles": r.compute_cycles, "stall_cycles": r.stall_cycles,
                    "utilization": r.utilization, "mapping_efficiency": r.mapping_efficiency,
                })).collect::<Vec<_>>(),
                "total_cycles": total,
                "not_honoured": not_honoured,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows_out = vec![(
        "layer".to_string(),
        ["M", "N", "K", "cycles", "utilization", "mapping"]
            .map(String::from)
            .to_vec(),
    )];
    for (name, m, n, k, r) in &results {
        rows_out.push((
            name.clone(),
            vec![
                m.to_string(),
                n.to_string(),
                k.to_string(),
                r.cycles.to_string(),
                format!("{:.2}%", r.utilization * 100.0),
                format!("{:.2}%", r.mapping_efficiency * 100.0),
            ],
        ));
    }
    out!("{}", render(&rows_out));
    outln!(
        "{}: {rows}x{cols} {dataflow}, SCALE-Sim's cycle convention, {} bandwidth: {total} cycles in all",
        if run_name.is_empty() {
            file.as_str()
        } else {
            run_name.as_str()
        },
        if dram_bytes_per_cycle.is_some() {
            "USER"
        } else {
            "CALC (no stalls)"
        }
    );
    for n in &not_honoured {
        outln!("not honoured: {n}");
    }
    Ok(ExitCode::SUCCESS)
}

/// A SCALE-Sim topology CSV: GEMM layers (`Layer, M, N, K`) or convolution layers (`Layer
/// name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter,
/// Strides`), as (name, M, N, K).
fn topology(file: &str, text: &str) -> Result<Vec<(String, u64, u64, u64)>, Failure> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err(Failure::usage(format!(
            "{file}: empty; expected a header and layers"
        )));
    };
    let cols: Vec<String> = header
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty())
        .collect();
    let gemm_mode = cols.len() == 4 && cols[1] == "m" && cols[2] == "n" && cols[3] == "k";
    if !gemm_mode && cols.len() < 8 {
        return Err(Failure::usage(format!(
            "{file}: header `{}`: expected `Layer, M, N, K` or the 8 columns of a convolution layer (Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides)",
            header.trim()
        )));
    }
    let mut out = Vec::new();
    for (i, line) in lines {
        let f: Vec<&str> = line
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        let want = if gemm_mode { 4 } else { 8 };
        let bad = |why: &str| Failure::usage(format!("{file}, line {}: {why}", i + 1));
        if f.len() < want {
            return Err(bad(&format!("{} fields; expected {want}", f.len())));
        }
        let v: Vec<u64> = f[1..want]
            .iter()
            .map(|x| x.parse::<u64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad("expected whole numbers after the layer's name"))?;
        let name = f[0].to_string();
        if gemm_mode {
            out.push((name, v[0], v[1], v[2]));
            continue;
        }
        let (h, w, fh, fw, c, nf, s) = (v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
        if s == 0 || fh == 0 || fw == 0 || fh > h || fw > w {
            return Err(bad(
                "expected a stride of at least 1 and a filter no larger than the IFMAP",
            ));
        }
        let px = ((h - fh) / s + 1) * ((w - fw) / s + 1);
        out.push((name, px, nf, fh * fw * c));
    }
    Ok(out)
}
