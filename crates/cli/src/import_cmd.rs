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

mod astra;
mod chakra;

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
    /// A BookSim 2 configuration (k-ary n-mesh or torus, dimension-order routing, the
    /// input-queued router): prints podsim's router configuration for it (or writes it with
    /// --out) and the `podsim noc` command that runs the same network and traffic, and lists
    /// every key podsim does not honour. Router delays add up to podsim's pipeline stages
    /// (routing + VC allocation + switch allocation + switch traversal delays, at least 1).
    Booksim(BooksimArgs),
    /// An ASTRA-sim network configuration (the analytical backend's YAML, or the older JSON
    /// with topologies-per-dim) and optionally its system configuration: prints the podsim
    /// system file (or writes it with --out; what --topology FILE reads), the `podsim
    /// collective` command that runs the system's collective on it, and that run's result,
    /// and lists every key podsim does not honour. Ring dimensions become torus dimensions,
    /// FullyConnected of 2 or 3 NPUs a mesh dimension of 2 or a ring of 3; a Switch, a larger
    /// FullyConnected or more than two link specs have no exact podsim equivalent and are
    /// refused. ASTRA-sim's GB/s is 2^30 B/s (podsim's GiB/s).
    AstraSim(astra::AstraArgs),
    /// Chakra execution traces (protobuf, one file per rank, e.g. from PyTorch through
    /// Chakra's converter): prints the podsim workload (or writes it with --out; what `podsim
    /// workload` reads) and runs it on the machine. COMP_NODE becomes compute (its
    /// duration_micros as FLOPs at the chip's peak, else num_ops; host ops on the vector
    /// unit), MEM_LOAD/STORE_NODE memory (tensor_size), COMM_COLL_NODE a collective on all
    /// ranks (matched by order on each rank), COMM_SEND/RECV_NODE a send (matched by source,
    /// destination and tag); data_deps and ctrl_deps become `after`. Attributes podsim does
    /// not honour are listed; a node with no podsim equivalent is an error.
    Chakra(chakra::ChakraArgs),
}

#[derive(Args)]
struct BooksimArgs {
    /// The BookSim configuration file.
    config: PathBuf,
    /// Write podsim's router configuration (TOML) here instead of printing it.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print one JSON object (keys: topology, routing, traffic, rate, seed, router, command,
    /// not_honoured).
    #[arg(long)]
    json: bool,
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
        ImportCommand::Booksim(b) => booksim(b),
        ImportCommand::AstraSim(x) => astra::astra(x),
        ImportCommand::Chakra(c) => chakra::chakra(c),
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
    if out.is_empty() {
        return Err(Failure::usage(format!(
            "{file}: a header and no layers; expected at least one layer after `{}`",
            header.trim()
        )));
    }
    Ok(out)
}

/// A BookSim configuration's `key = value;` pairs (comments `//` to the end of a line), with
/// their lines.
fn booksim_keys(file: &str, text: &str) -> Result<Vec<(String, String, usize)>, Failure> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        for stmt in line.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((k, v)) = stmt.split_once('=') else {
                return Err(Failure::usage(format!(
                    "{file}, line {}: `{stmt}`: expected `key = value;`",
                    i + 1
                )));
            };
            out.push((k.trim().to_string(), v.trim().to_string(), i + 1));
        }
    }
    Ok(out)
}

fn booksim(a: &BooksimArgs) -> Result<ExitCode, Failure> {
    use podsim_noc::{Arbitration, RouterConfig};
    let file = a.config.display().to_string();
    let keys = booksim_keys(&file, &read(&a.config)?)?;
    let get = |k: &str| keys.iter().find(|e| e.0 == k);
    let num = |k: &str, default: u64| -> Result<u64, Failure> {
        match get(k) {
            None => Ok(default),
            Some((_, v, line)) => v.parse::<u64>().map_err(|_| {
                Failure::usage(format!(
                    "{file}, line {line}: `{k}`: `{v}` is not a whole number"
                ))
            }),
        }
    };
    let text = |k: &str, default: &str| get(k).map_or(default.to_string(), |e| e.1.clone());
    let mut not_honoured: Vec<String> = Vec::new();
    let mut honoured: Vec<&str> = Vec::new();
    let mut note = |k: &str, v: &str, why: &str| not_honoured.push(format!("{k} = {v} ({why})"));
    // The network.
    let kind = text("topology", "torus");
    if kind != "mesh" && kind != "torus" {
        return Err(Failure::usage(format!(
            "{file}: `topology`: `{kind}`: podsim imports BookSim's mesh and torus (k-ary n-cubes)"
        )));
    }
    let (k, n) = (num("k", 8)?, num("n", 2)?);
    if !(2..=64).contains(&k) || !(1..=4).contains(&n) {
        return Err(Failure::usage(format!(
            "{file}: `k` = {k}, `n` = {n}: expected 2 <= k <= 64 and 1 <= n <= 4"
        )));
    }
    let topology = format!("{kind}:{}", vec![k.to_string(); n as usize].join("x"));
    honoured.extend(["topology", "k", "n"]);
    let routing = text("routing_function", "dor");
    match routing.as_str() {
        "dor" | "dim_order" => {}
        other => note(
            "routing_function",
            other,
            "podsim routes dimension order (dor)",
        ),
    }
    honoured.push("routing_function");
    // The router.
    let router = text("router", "iq");
    if router != "iq" {
        note("router", &router, "podsim's router is input-queued (iq)");
    }
    honoured.push("router");
    let delays = [
        "routing_delay",
        "vc_alloc_delay",
        "sw_alloc_delay",
        "st_prepare_delay",
        "st_final_delay",
    ];
    let defaults = [1, 1, 1, 0, 1];
    let mut stages = 0;
    for (d, def) in delays.iter().zip(defaults) {
        stages += num(d, def)?;
        honoured.push(d);
    }
    let mut cfg = RouterConfig {
        vcs: num("num_vcs", 16)? as u32,
        buffer_flits: num("vc_buf_size", 8)? as u32,
        packet_flits: num("packet_size", 1)? as u32,
        pipeline_stages: stages.max(1) as u32,
        ..RouterConfig::default()
    };
    honoured.extend(["num_vcs", "vc_buf_size", "packet_size"]);
    let credit = num("credit_delay", 1)?;
    if credit != 1 {
        note(
            "credit_delay",
            &credit.to_string(),
            "podsim returns a credit over its link, in the link's latency (1 cycle)",
        );
    }
    honoured.push("credit_delay");
    for (key, want) in [
        ("vc_allocator", "separable_input_first"),
        ("sw_allocator", "separable_input_first"),
        ("arb_type", "round_robin"),
        ("alloc_iters", "1"),
        ("wait_for_tail_credit", "0"),
        ("input_speedup", "1"),
        ("output_speedup", "1"),
        ("internal_speedup", "1.0"),
    ] {
        let v = text(key, want);
        if v != want && !(key == "internal_speedup" && v == "1") {
            note(key, &v, &format!("podsim's allocators are {want}"));
        }
        honoured.push(key);
    }
    cfg.arbitration = Arbitration::RoundRobin;
    cfg.validate()
        .map_err(|e| Failure::usage(format!("{file}: {e}")))?;
    // The traffic.
    let traffic = text("traffic", "uniform");
    let pattern = match traffic.as_str() {
        "uniform" | "transpose" | "bitcomp" | "bitrev" | "shuffle" | "tornado" | "neighbor" => {
            traffic.clone()
        }
        other => {
            return Err(Failure::usage(format!(
                "{file}: `traffic`: `{other}`: expected uniform, transpose, bitcomp, bitrev, shuffle, tornado or neighbor"
            )));
        }
    };
    let rate_text = text("injection_rate", "0.1");
    let mut rate: f64 = rate_text.parse().map_err(|_| {
        Failure::usage(format!(
            "{file}: `injection_rate`: `{rate_text}` is not a number"
        ))
    })?;
    if num("injection_rate_uses_flits", 0)? == 0 {
        // BookSim's rate in packets per node per cycle; podsim's in flits.
        rate *= f64::from(cfg.packet_flits);
    }
    // A node injects at most one flit a cycle (its one injection channel): the noc command
    // this prints would refuse more.
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(Failure::usage(format!(
            "{file}: `injection_rate`: `{rate_text}` is {rate} flits per node per cycle; expected above 0 and at most 1 (one injection channel a node)"
        )));
    }
    let seed = num("seed", 1)?;
    honoured.extend([
        "traffic",
        "injection_rate",
        "injection_rate_uses_flits",
        "seed",
    ]);
    for (key, v, _) in &keys {
        if honoured.contains(&key.as_str()) {
            continue;
        }
        let why = match key.as_str() {
            "sim_type" if v == "latency" => continue,
            "sample_period" | "warmup_periods" | "max_samples" => {
                "podsim measures one window of --cycles after its own warm-up"
            }
            _ => "not modelled",
        };
        note(key, v, why);
    }
    let toml_text = toml::to_string(&cfg)
        .map_err(|e| Failure::runtime(format!("cannot write the router configuration: {e}")))?;
    let config_ref = a
        .out
        .as_ref()
        .map_or("ROUTER.toml".to_string(), |p| p.display().to_string());
    let command = format!(
        "podsim noc --config {config_ref} --topology {topology} --routing dor --traffic {pattern} --rate {rate} --seed {seed}"
    );
    if let Some(p) = &a.out {
        std::fs::write(
            p,
            format!("# podsim's router for {file} (podsim import booksim)\n{toml_text}"),
        )
        .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", p.display())))?;
    }
    if a.json {
        outln!(
            "{}",
            json!({
                "topology": topology, "routing": "dor", "traffic": pattern, "rate": rate,
                "seed": seed, "router": toml::from_str::<serde_json::Value>(&toml_text).unwrap_or_default(),
                "command": command, "not_honoured": not_honoured,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    if a.out.is_none() {
        out!("{toml_text}");
    }
    outln!("# run it: {command}");
    for n in &not_honoured {
        outln!("# not honoured: {n}");
    }
    Ok(ExitCode::SUCCESS)
}
