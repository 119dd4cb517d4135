//! `podsim workload`: run a workload file (a DAG of compute, memory, collective and send tasks
//! on a machine) and report its time, overlap and critical path.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_collective::ModelKind;
use podsim_report::{Trace, render};
use podsim_system::workload::WorkloadResult;
use serde_json::json;

use crate::args::{flag_err, listed};
use crate::{Failure, read};

/// The arguments of `podsim workload`.
#[derive(Args)]
pub struct WorkloadArgs {
    /// The workload file (TOML): a [machine] (preset = a topology shorthand, model, chip) and
    /// [[task]]s, each with a name and one of compute = { flops, efficiency[, unit] } or
    /// compute = { gemm = [M, N, K], format } (timed on the chip's matrix units),
    /// memory = SIZE, collective = KIND (with algorithm, bytes) or send = SIZE (with to = a
    /// list of chips or a direction: east, west, north, south); on DOJO planes also dma =
    /// SIZE (from the nearest DIP's HBM; dojo:system=RxC) and barrier = "hardware" (a tree,
    /// with fan_in, default 4; at most four per node) or "software"; and group ("all",
    /// "dim:x", [0, 5, 9] or "0-15"), after = [names], repeat = N. See
    /// examples/workload-*.toml and examples/dojo/tile-step.toml.
    file: PathBuf,
    /// analytic, flow or packet [default: the file's `model`, else flow].
    #[arg(long, value_name = "MODEL", value_parser = listed(["analytic", "flow", "packet"]))]
    model: Option<String>,
    /// Run on this machine file instead of the file's [machine] (its network, and its chip on
    /// every endpoint, a chip preset or one the file describes by its matrix units:
    /// docs/machine-file.md).
    #[arg(long, value_name = "FILE")]
    system: Option<String>,
    /// How many nodes the machine file's machine has (with --system) [default: the file's
    /// `nodes`].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    nodes: Option<u32>,
    /// Write a Chrome trace-event JSON file (open it in ui.perfetto.dev): a process per chip,
    /// a thread per resource, an event per task on each chip and per transfer; with --energy,
    /// a counter track of the machine's power by component.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Turn TPU v4's CMEM off (memory tasks with a working_set then stream from HBM), as
    /// Fig. 13's "CMEM off" [default: the file's machine.cmem, else on].
    #[arg(long, value_name = "ON|OFF", value_parser = listed(["on", "off"]))]
    cmem: Option<String>,
    /// The most events the trace keeps; the file says how many were cut.
    #[arg(long, value_name = "N", default_value_t = crate::args::DEFAULT_TRACE_LIMIT)]
    trace_limit: usize,
    /// Draw the machine's links coloured by how busy each was over the whole run (SVG; bytes
    /// carried over bandwidth x the run's time): rings, 2-D grids, 3-D tori as z slices with
    /// each chip's square coloured by its busiest link to another slice. Flow model.
    #[arg(long, value_name = "FILE.svg")]
    heatmap: Option<PathBuf>,
    /// Print one JSON object (keys: time_s, compute_busy_s, communication_time_s,
    /// exposed_communication_s, critical_path, tasks with name, start_s, end_s).
    #[arg(long)]
    json: bool,
    /// Add the run's energy: joules over the machine with their breakdown (compute, memory,
    /// network, idle) and mean power per chip (JSON: energy_j, average_power_w,
    /// energy_breakdown_j). Each chip draws its idle power for the whole run, plus its matrix
    /// units' power while they stream and energy per HBM and CMEM byte and per byte per link
    /// the flow model carried (crates/energy/src/lib.rs names each source); TPU v4 and v3
    /// chips, flow model
    #[arg(long)]
    energy: bool,
}

/// Run the workload file `file` with its own model, as `podsim run FILE` does.
pub fn run_file(
    file: &std::path::Path,
    json: bool,
    trace: Option<&std::path::Path>,
    trace_limit: usize,
    energy: bool,
) -> Result<ExitCode, Failure> {
    workload_cmd(&WorkloadArgs {
        file: file.to_path_buf(),
        model: None,
        system: None,
        nodes: None,
        trace: trace.map(std::path::Path::to_path_buf),
        cmem: None,
        trace_limit,
        heatmap: None,
        json,
        energy,
    })
}

/// Run `podsim workload`.
pub fn workload_cmd(a: &WorkloadArgs) -> Result<ExitCode, Failure> {
    crate::args::trace_limit_needs_trace(a.trace.is_some(), a.trace_limit)?;
    let file = a.file.display().to_string();
    let mut spec = podsim_config::parse_workload(&file, &read(&a.file)?)?;
    if let Some(system) = &a.system {
        let (machine, mfile) = crate::system_spec("--system", system, None, None, None, a.nodes)?;
        spec.on_machine(machine, system, &mfile)
            .map_err(|e| flag_err("--system", e))?;
    } else if a.nodes.is_some() {
        return Err(flag_err(
            "--nodes",
            "sets the node count of a --system machine file; add --system or drop the flag",
        ));
    }
    if let Some(setting) = &a.cmem {
        spec.set_cmem(setting).map_err(|e| flag_err("--cmem", e))?;
    }
    let model = match &a.model {
        None => spec.model,
        Some(m) => {
            podsim_collective::parse_names("barrier", None, m)
                .map_err(|e| flag_err("--model", e))?
                .2
        }
    };
    if a.heatmap.is_some() {
        crate::args::needs_flow("--heatmap", "the heatmap draws", model)?;
    }
    if a.heatmap.is_some() {
        // Refused before the run, not after it.
        let net = spec
            .system
            .build()
            .map_err(|e| Failure::usage(format!("{file}: `{}`: {}", e.key, e.why)))?;
        podsim_report::link_heatmap::Layout::of(&net).map_err(|e| flag_err("--heatmap", e))?;
    }
    let power = if a.energy {
        crate::args::needs_flow("--energy", "the energy of the links comes from", model)?;
        Some(crate::args::chip_power(Some(&spec.chip.name))?)
    } else {
        None
    };
    let (net, r) =
        podsim_system::scenario::run_workload(&spec, model).map_err(crate::scenario_failure)?;
    podsim_report::progress::simulated(r.time_s);
    if let Some(path) = &a.heatmap {
        let layout =
            podsim_report::link_heatmap::Layout::of(&net).map_err(|e| flag_err("--heatmap", e))?;
        podsim_report::link_heatmap::draw(
            path,
            &format!(
                "{} on {}: link utilisation over {:.4e} s",
                spec.name, spec.system.name, r.time_s
            ),
            &layout,
            &r.link_loads,
            r.time_s,
        )
        .map_err(|e| Failure::runtime(format!("{}: {e}", path.display())))?;
    }
    if let Some(path) = &a.trace {
        let mut t = trace(&spec, &r, net.endpoints(), model, a.trace_limit);
        if let Some(p) = &power {
            let line = podsim_system::energy::power_timeline(&spec.workload, &r, &spec.chip, p);
            podsim_report::add_power(&mut t, &line);
        }
        std::fs::write(path, t.to_json().to_string())
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", path.display())))?;
    }
    let mut out = podsim_system::workload::WorkloadOutput::new(&spec, &r, model, net.endpoints());
    if let Some(p) = &power {
        out = out.with_energy(&r, p).map_err(Failure::runtime)?;
    }
    if a.json {
        outln!("{}", podsim_report::to_json(&out));
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{}", out.heading());
    out!("{}", render(&out.task_rows()));
    outln!();
    out!("{}", render(&r.summary_rows()));
    if let Some(e) = &out.energy {
        outln!();
        out!("{}", render(&e.rows()));
    }
    if let Some(p) = &a.trace {
        outln!("trace written to {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The run as a trace: a process per chip, a thread per resource.
fn trace(
    spec: &podsim_system::workload::WorkloadSpec,
    r: &WorkloadResult,
    chips: u64,
    model: ModelKind,
    limit: usize,
) -> Trace {
    let mut t = Trace::new(limit);
    t.about("workload", json!(spec.name));
    t.about("machine", json!(spec.system.name));
    t.about("model", json!(model.name()));
    t.about("time_s", json!(r.time_s));
    podsim_report::add_workload(&mut t, &spec.workload, r, chips, 0, "");
    t
}
