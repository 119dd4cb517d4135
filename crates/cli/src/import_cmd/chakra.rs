//! `podsim import chakra`: Chakra execution traces (one file per rank, decoded by
//! `podsim_import::chakra`) as a podsim workload, printed or written, and run on a machine.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_import::chakra::{self, ChakraRun, RankTrace, Workload};
use podsim_system::TopoSpec;
use podsim_system::workload::ChipSpec;

use crate::Failure;
use crate::args::{flag_err, listed};

/// The arguments of `podsim import chakra`.
#[derive(Args)]
pub struct ChakraArgs {
    /// The trace's files, one per rank (Chakra's `NAME.RANK.et`; ranks come from the number
    /// before `.et` when every file has one, else from the order given).
    #[arg(required = true, value_name = "TRACE.et")]
    traces: Vec<PathBuf>,
    /// The machine, a topology shorthand or preset (`podsim topo --help`) [default: ring:N,
    /// a ring of the trace's ranks (at least 2) with 50 GB/s links, TPU v4 chips].
    #[arg(long, value_name = "PRESET", conflicts_with = "topology")]
    machine: Option<String>,
    /// The machine as a system TOML file (what `podsim import astra-sim --out` writes).
    #[arg(long, value_name = "FILE")]
    topology: Option<PathBuf>,
    /// The chip: tpuv4, tpuv3, a100, dojo-node or d1 [default: the machine's own chip, else
    /// tpuv4].
    #[arg(
        long,
        value_name = "CHIP",
        value_parser = listed(["tpuv4", "tpuv3", "a100", "dojo-node", "d1"]),
    )]
    chip: Option<String>,
    /// analytic, flow or packet, as `podsim workload --model`.
    #[arg(
        long,
        value_name = "MODEL",
        default_value = "flow",
        value_parser = listed(["analytic", "flow", "packet"]),
    )]
    model: String,
    /// Write the workload (TOML, what `podsim workload` reads) here instead of printing it.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print one JSON object (keys: ranks, machine, workload (the TOML text), command, run
    /// (the keys of `podsim workload --json`), not_honoured).
    #[arg(long)]
    json: bool,
}

fn read_bytes(path: &std::path::Path) -> Result<Vec<u8>, Failure> {
    podsim_config::read_input_bytes(path).map_err(|e| Failure::usage(e.to_string()))
}

/// `podsim import chakra`.
pub fn chakra(a: &ChakraArgs) -> Result<ExitCode, Failure> {
    let (_, _, model) = podsim_collective::parse_names("barrier", None, &a.model)
        .map_err(|e| flag_err("--model", e))?;
    // The traces, in rank order.
    let order = chakra::rank_order(&a.traces)?;
    let mut traces: Vec<Option<RankTrace>> = (0..a.traces.len()).map(|_| None).collect();
    for (p, &r) in a.traces.iter().zip(&order) {
        let file = p.display().to_string();
        traces[r] = Some(chakra::decode(&file, &read_bytes(p)?)?);
    }
    let traces: Vec<RankTrace> = traces.into_iter().flatten().collect();
    let n_ranks = traces.len() as u64;
    // The machine.
    let (machine_table, system, machine_label) = machine(a, n_ranks)?;
    let net = crate::build(&system, &machine_label)?;
    let chips = net.endpoints();
    if n_ranks > chips {
        return Err(Failure::usage(format!(
            "{}: the trace has {n_ranks} ranks and the machine {machine_label} has {chips} chips; give a machine with at least {n_ranks}",
            traces[0].file
        )));
    }
    let chip_name = match (&a.chip, &system.topology) {
        (Some(c), _) => c.clone(),
        (None, TopoSpec::TpuV4 { .. }) => "tpuv4".into(),
        (None, TopoSpec::Dojo(_)) => "dojo-node".into(),
        (None, _) => "tpuv4".into(),
    };
    let chip = ChipSpec::preset(&chip_name).ok_or_else(|| {
        flag_err(
            "--chip",
            format!(
                "`{chip_name}` is not a chip preset (choose from: {})",
                ChipSpec::names().join(", ")
            ),
        )
    })?;
    let workload = Workload::new(&traces, &chip)?;
    let text = workload.text(&traces, &chip, machine_table, model.name(), chips)?;
    let label = a
        .out
        .as_ref()
        .map_or("WORKLOAD.toml".to_string(), |p| p.display().to_string());
    let spec = podsim_config::parse_workload(&label, &text)?;
    let (net, r) =
        podsim_system::scenario::run_workload(&spec, model).map_err(crate::scenario_failure)?;
    if let Some(p) = &a.out {
        std::fs::write(p, &text)
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", p.display())))?;
    }
    let run = ChakraRun {
        ranks: n_ranks,
        machine: &machine_label,
        workload_toml: &text,
        workload_ref: &label,
        spec: &spec,
        result: &r,
        model,
        chips: net.endpoints(),
        not_honoured: &workload.not_honoured,
    };
    if a.json {
        outln!("{}", run.json());
    } else {
        out!("{}", run.text(a.out.is_some()));
    }
    Ok(ExitCode::SUCCESS)
}

/// The [machine] table (without chip and model), the system it builds and a label.
fn machine(
    a: &ChakraArgs,
    ranks: u64,
) -> Result<(toml::Table, podsim_system::SystemSpec, String), Failure> {
    let mut t = toml::Table::new();
    if let Some(path) = &a.topology {
        let file = path.display().to_string();
        let text = crate::read(path)?;
        let spec = podsim_config::parse_system(&file, &text)?;
        let table: toml::Table =
            toml::from_str(&text).map_err(|e| Failure::usage(format!("{file}: not TOML: {e}")))?;
        t.insert("system".into(), toml::Value::Table(table));
        return Ok((t, spec, file));
    }
    let preset = a
        .machine
        .clone()
        .unwrap_or_else(|| format!("ring:{}", ranks.max(2)));
    let spec = podsim_config::system_from_cli(&preset, None, None, None).map_err(|mut e| {
        e.key = "--machine".into();
        Failure::from(e)
    })?;
    t.insert("preset".into(), toml::Value::String(preset.clone()));
    Ok((t, spec, preset))
}
