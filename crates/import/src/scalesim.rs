//! SCALE-Sim (v2/v3): its configuration (INI: array shape, dataflow, SRAM sizes, bandwidth
//! mode) as podsim's GEMM array and memory, naming every key podsim does not honour, and its
//! topology CSV (convolution layers, or GEMM layers `Layer, M, N, K`) as GEMM shapes.
//!
//! The configuration is read by the small reader below rather than an INI crate: SCALE-Sim's
//! errors cite the line of each key, which rust-ini (the INI crate that fits) does not keep.

use std::path::{Path, PathBuf};

use podsim_compute::{Convention, Dataflow, GemmReport, GemmSpec, MemorySpec};
use podsim_units::table::render;
use serde_json::json;

use crate::{ImportError, Result};

/// One `key: value` (or `key = value`) of an INI file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IniEntry {
    /// The `[section]` it is in (empty before the first).
    pub section: String,
    /// The key, as written.
    pub key: String,
    /// The value, trimmed and unquoted.
    pub value: String,
    /// Its line, from 1.
    pub line: usize,
}

/// A SCALE-Sim configuration's keys in the file's order: `[section]` headers, `key: value` or
/// `key = value` lines, `#` and `;` comment lines.
pub fn ini(file: &str, text: &str) -> Result<Vec<IniEntry>> {
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
            return Err(ImportError::new(
                file,
                format!("`{line}`: expected `key: value` or `key = value`"),
            )
            .line(i + 1));
        };
        out.push(IniEntry {
            section: section.clone(),
            key: k.trim().to_string(),
            value: v.trim().trim_matches('"').to_string(),
            line: i + 1,
        });
    }
    Ok(out)
}

/// A SCALE-Sim configuration as podsim reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalesimConfig {
    /// The file, as the user named it.
    pub file: String,
    /// `run_name` (empty if not given).
    pub run_name: String,
    /// `ArrayHeight`.
    pub rows: u64,
    /// `ArrayWidth`.
    pub cols: u64,
    /// `Dataflow`.
    pub dataflow: Dataflow,
    /// The SRAM sizes (`IfmapSramSzkB`, `FilterSramSzkB`, `OfmapSramSzkB`; kB of one-byte
    /// words, 64 if not given) and, with `InterfaceBandwidth: USER`, `Bandwidth` in bytes per
    /// cycle.
    pub memory: MemorySpec,
    /// `TopologyCsvLoc`, as written.
    pub topology_csv: Option<String>,
    /// Every key podsim does not honour, as `[section] key = value (why)`.
    pub not_honoured: Vec<String>,
}

/// Every key podsim reads.
const HONOURED: [&str; 9] = [
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

impl ScalesimConfig {
    /// Read a SCALE-Sim configuration file's text (keys are matched without regard to case,
    /// as SCALE-Sim's configparser does).
    pub fn parse(file: &str, text: &str) -> Result<Self> {
        let keys = ini(file, text)?;
        let get = |k: &str| keys.iter().find(|e| e.key.eq_ignore_ascii_case(k));
        let num = |k: &str| -> Result<Option<u64>> {
            match get(k) {
                None => Ok(None),
                Some(e) => e.value.parse::<u64>().map(Some).map_err(|_| {
                    ImportError::new(file, format!("`{}` is not a whole number", e.value))
                        .line(e.line)
                        .key(k)
                }),
            }
        };
        let need = |k: &str| -> Result<u64> {
            num(k)?
                .filter(|&v| v > 0)
                .ok_or_else(|| ImportError::new(file, "missing; expected a positive number").key(k))
        };
        let (rows, cols) = (need("ArrayHeight")?, need("ArrayWidth")?);
        let df_text = get("Dataflow")
            .map(|e| e.value.to_lowercase())
            .unwrap_or_default();
        let dataflow = Dataflow::parse(&df_text).ok_or_else(|| {
            ImportError::new(file, format!("`{df_text}`: expected os, ws or is")).key("Dataflow")
        })?;
        // SCALE-Sim's SRAM sizes are in kB of one-byte words.
        let kb = |k: &str| -> Result<u64> { Ok(num(k)?.unwrap_or(64) << 10) };
        let (sram_a, sram_b, sram_d) = (
            kb("IfmapSramSzkB")?,
            kb("FilterSramSzkB")?,
            kb("OfmapSramSzkB")?,
        );
        let mode = get("InterfaceBandwidth")
            .map(|e| e.value.to_uppercase())
            .unwrap_or_else(|| "CALC".into());
        let dram_bytes_per_cycle = match mode.as_str() {
            "CALC" => None,
            "USER" => Some(need("Bandwidth")? as f64),
            other => {
                return Err(
                    ImportError::new(file, format!("`{other}`: expected CALC or USER"))
                        .key("InterfaceBandwidth"),
                );
            }
        };
        // Why the other keys do not change podsim's figures.
        let sparse = get("SparsitySupport").is_some_and(|e| !e.value.eq_ignore_ascii_case("false"));
        let mut not_honoured: Vec<String> = Vec::new();
        for IniEntry {
            section,
            key: k,
            value: v,
            ..
        } in &keys
        {
            if HONOURED.iter().any(|h| h.eq_ignore_ascii_case(k)) {
                continue;
            }
            let why = match k.to_ascii_lowercase().as_str() {
                "bandwidth" if mode == "USER" => continue,
                "bandwidth" => "used only with InterfaceBandwidth: USER",
                "ifmapoffset" | "filteroffset" | "ofmapoffset" => {
                    "addresses: no effect on the figures"
                }
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
        Ok(ScalesimConfig {
            file: file.to_string(),
            run_name: get("run_name").map(|e| e.value.clone()).unwrap_or_default(),
            rows,
            cols,
            dataflow,
            memory: MemorySpec {
                sram_a,
                sram_b,
                sram_d,
                dram_bytes_per_cycle,
                ..MemorySpec::DEFAULT
            },
            topology_csv: get("TopologyCsvLoc").map(|e| e.value.clone()),
            not_honoured,
        })
    }

    /// The topology CSV: `given`, else `TopologyCsvLoc` relative to the configuration at
    /// `config`.
    pub fn topology_path(&self, config: &Path, given: Option<&Path>) -> Result<PathBuf> {
        if let Some(p) = given {
            return Ok(p.to_path_buf());
        }
        let loc = self.topology_csv.as_ref().ok_or_else(|| {
            ImportError::new(
                &self.file,
                "no topology: give the topology CSV after the configuration, or set TopologyCsvLoc",
            )
        })?;
        Ok(config.parent().unwrap_or(Path::new(".")).join(loc))
    }

    /// `layer` on this array, in SCALE-Sim's cycle convention.
    pub fn gemm(&self, layer: &Layer) -> GemmSpec {
        GemmSpec {
            rows: self.rows,
            cols: self.cols,
            dataflow: self.dataflow,
            m: layer.m,
            n: layer.n,
            k: layer.k,
            convention: Convention::ScaleSim,
            memory: self.memory,
        }
    }
}

/// One layer of a SCALE-Sim topology as a GEMM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// The layer's name.
    pub name: String,
    /// Rows of the output (a convolution's output pixels).
    pub m: u64,
    /// Columns of the output (a convolution's filters).
    pub n: u64,
    /// The reduction (a convolution's filter height x width x channels).
    pub k: u64,
}

/// A SCALE-Sim topology CSV: GEMM layers (`Layer, M, N, K`) or convolution layers (`Layer
/// name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter,
/// Strides`). A convolution layer (IFMAP H x W, filter Fh x Fw, C channels, F filters,
/// stride S) is M = ((H - Fh) / S + 1) x ((W - Fw) / S + 1), N = F, K = Fh x Fw x C, as
/// SCALE-Sim maps it.
pub fn topology(file: &str, text: &str) -> Result<Vec<Layer>> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Err(ImportError::new(
            file,
            "empty; expected a header and layers",
        ));
    };
    let cols: Vec<String> = header
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty())
        .collect();
    let gemm_mode = cols.len() == 4 && cols[1] == "m" && cols[2] == "n" && cols[3] == "k";
    if !gemm_mode && cols.len() < 8 {
        return Err(ImportError::new(
            file,
            format!(
                "header `{}`: expected `Layer, M, N, K` or the 8 columns of a convolution layer (Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides)",
                header.trim()
            ),
        ));
    }
    let mut out = Vec::new();
    for (i, line) in lines {
        let f: Vec<&str> = line
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        let want = if gemm_mode { 4 } else { 8 };
        let bad = |why: &str| ImportError::new(file, why).line(i + 1);
        if f.len() < want {
            return Err(bad(&format!("{} fields; expected {want}", f.len())));
        }
        let v: Vec<u64> = f[1..want]
            .iter()
            .map(|x| x.parse::<u64>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| bad("expected whole numbers after the layer's name"))?;
        let name = f[0].to_string();
        if gemm_mode {
            out.push(Layer {
                name,
                m: v[0],
                n: v[1],
                k: v[2],
            });
            continue;
        }
        let (h, w, fh, fw, c, nf, s) = (v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
        if s == 0 || fh == 0 || fw == 0 || fh > h || fw > w {
            return Err(bad(
                "expected a stride of at least 1 and a filter no larger than the IFMAP",
            ));
        }
        let m = ((h - fh) / s + 1).checked_mul((w - fw) / s + 1);
        let k = fh.checked_mul(fw).and_then(|x| x.checked_mul(c));
        let (Some(m), Some(k)) = (m, k) else {
            return Err(bad(
                "the layer's output pixels or filter size pass 2^64; expected a layer of a network",
            ));
        };
        out.push(Layer { name, m, n: nf, k });
    }
    if out.is_empty() {
        return Err(ImportError::new(
            file,
            format!(
                "a header and no layers; expected at least one layer after `{}`",
                header.trim()
            ),
        ));
    }
    Ok(out)
}

/// The layers of a SCALE-Sim topology as podsim ran them: each layer with its GEMM's report.
pub type LayerRuns<'a> = [(&'a Layer, GemmReport)];

impl ScalesimConfig {
    /// The run of `results` (each layer of the topology with the GEMM podsim ran for it) as
    /// `podsim import scalesim --json` prints it.
    pub fn run_json(&self, results: &LayerRuns<'_>) -> serde_json::Value {
        let total: u64 = results.iter().map(|r| r.1.cycles).sum();
        json!({
            "run_name": self.run_name,
            "array": format!("{}x{}", self.rows, self.cols),
            "dataflow": self.dataflow.to_string(),
            "layers": results.iter().map(|(l, r)| json!({
                "layer": l.name, "m": l.m, "n": l.n, "k": l.k, "cycles": r.cycles,
                "compute_cycles": r.compute_cycles, "stall_cycles": r.stall_cycles,
                "utilization": r.utilization, "mapping_efficiency": r.mapping_efficiency,
            })).collect::<Vec<_>>(),
            "total_cycles": total,
            "not_honoured": self.not_honoured,
        })
    }

    /// The run of `results` as `podsim import scalesim` prints it: a table of the layers, a
    /// line with the total and a line per key podsim does not honour.
    pub fn run_text(&self, results: &LayerRuns<'_>) -> String {
        let total: u64 = results.iter().map(|r| r.1.cycles).sum();
        let (rows, cols, dataflow) = (self.rows, self.cols, self.dataflow);
        let mut rows_out = vec![(
            "layer".to_string(),
            ["M", "N", "K", "cycles", "utilization", "mapping"]
                .map(String::from)
                .to_vec(),
        )];
        for (l, r) in results {
            rows_out.push((
                l.name.clone(),
                vec![
                    l.m.to_string(),
                    l.n.to_string(),
                    l.k.to_string(),
                    r.cycles.to_string(),
                    format!("{:.2}%", r.utilization * 100.0),
                    format!("{:.2}%", r.mapping_efficiency * 100.0),
                ],
            ));
        }
        let mut out = render(&rows_out);
        out.push_str(&format!(
            "{}: {rows}x{cols} {dataflow}, SCALE-Sim's cycle convention, {} bandwidth: {total} cycles in all\n",
            if self.run_name.is_empty() {
                self.file.as_str()
            } else {
                self.run_name.as_str()
            },
            if self.memory.dram_bytes_per_cycle.is_some() {
                "USER"
            } else {
                "CALC (no stalls)"
            }
        ));
        for n in &self.not_honoured {
            out.push_str(&format!("not honoured: {n}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_convolution_layer_is_the_gemm_scalesim_maps_it_to() {
        let layers = topology(
            "t.csv",
            "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\nConv1, 34, 34, 3, 3, 3, 16, 1,\n",
        )
        .unwrap();
        assert_eq!(
            layers,
            [Layer {
                name: "Conv1".into(),
                m: 32 * 32,
                n: 16,
                k: 27
            }]
        );
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        let e = ScalesimConfig::parse("s.cfg", "[a]\nArrayHeight: 8\nArrayWidth: x\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.cfg, line 3: `ArrayWidth`: `x` is not a whole number"
        );
        let e = ScalesimConfig::parse("s.cfg", "ArrayWidth: 8\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.cfg: `ArrayHeight`: missing; expected a positive number"
        );
        let e = ini("s.cfg", "[a]\nnonsense\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.cfg, line 2: `nonsense`: expected `key: value` or `key = value`"
        );
    }
}
