//! `podsim train`: a transformer's training step on a TPU v4 slice, or the search of Table 3.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_collective::ModelKind;
use podsim_net::Packetization;
use podsim_report::{Trace, render};
use podsim_system::flow_model;
use podsim_system::workload::ChipSpec;
use podsim_train as train;
use podsim_train::{Config, Machine, Mapping, Parallel, Partition, Remat, StepReport, Transformer};
use serde_json::json;

use crate::args::flag_err;
use crate::{Failure, read};

/// Built-in model names, for help and errors.
const MODELS: &str = "gpt3-175b, gpt3-13b, gpt3-1.3b, llm-table3";

/// The arguments of `podsim train`.
#[derive(Args)]
#[command(
    override_usage = "podsim train --model <NAME|FILE> --system <SPEC> --parallel <SPEC> [OPTIONS]\n       podsim train --model <NAME|FILE> --search --chips <N> [OPTIONS]"
)]
pub struct TrainArgs {
    /// A built-in model (gpt3-175b, gpt3-13b, gpt3-1.3b, llm-table3: the unpublished LLM of
    /// Table 3 as assumed in validation/tpu-v4-table3.toml) or a TOML model file with the keys
    /// name, layers, d_model, heads, kv_heads, d_ff, ffn_matrices (2, or 3 for gated),
    /// vocabulary, sequence, format (bf16) and batch (see examples/models/).
    #[arg(long, value_name = "NAME|FILE")]
    model: String,
    /// The slice: tpuv4:slice=AxBxC[:twisted], or any mesh or torus shorthand of 1 to 3
    /// dimensions, of TPU v4 chips; or a machine file of a chip preset (a100:
    /// examples/machines/dgx-a100.toml, docs/machine-file.md) (not with --search).
    #[arg(long, value_name = "SPEC", required_unless_present = "search")]
    system: Option<String>,
    /// How many nodes the machine file's machine has [default: the file's `nodes`].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    nodes: Option<u32>,
    /// Table 3's partition spec: pipeline=P,data=D,model1=M1,model2=M2 or [P,D,M1,M2]; the
    /// product is the slice's chips. model2 splits heads and the feed-forward width (tensor
    /// parallelism), model1 splits the batch (and the weights along d_model with 2D weights).
    /// Quote the bracket form in a shell ("[8,1,8,8]": zsh reads brackets as a pattern).
    #[arg(long, value_name = "SPEC", required_unless_present = "search")]
    parallel: Option<String>,
    /// Activation/weight partitioning, 1d or 2d each (Table 3's option) [default: 1d/1d].
    #[arg(long, value_name = "A/W")]
    partition: Option<String>,
    /// The order in which the axes fill the slice's chips, fastest first (chip ids count x,
    /// then y, then z), e.g. model2,model1,data,pipeline [default: that order].
    #[arg(long, value_name = "AXES")]
    mapping: Option<String>,
    /// Global batch, sequences [default: the model's own; the file's `batch` key].
    #[arg(long, value_name = "SEQS")]
    batch: Option<u64>,
    /// Microbatches per step [default: the fastest count that fits in HBM, closed form].
    #[arg(long, value_name = "N")]
    microbatches: Option<u64>,
    /// Rematerialisation: full (keep each layer's input, recompute the rest) or none.
    #[arg(long, value_name = "MODE", default_value = "full")]
    remat: String,
    /// CMEM (TPU v4's 128 MiB on-chip memory): on, a layer's weight shard that fits in half of
    /// it is read at CMEM bandwidth (4.8 TB/s, an assumption) instead of HBM; off, as Fig. 13's
    /// "CMEM off" [default: on; a chip without CMEM has none to turn on or off].
    #[arg(long, value_name = "ON|OFF")]
    cmem: Option<String>,
    /// How collectives are timed: analytic (closed form, contention-free rings) or flow (the
    /// layer runs as a workload on the slice's flow model, every group at once).
    #[arg(long, value_name = "FIDELITY", default_value = "flow")]
    model_fidelity: String,
    /// Write a Chrome trace-event JSON file of one layer's forward and backward pass for one
    /// microbatch on every chip (open it in ui.perfetto.dev).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Search slice shapes (4x4x4 blocks, x <= y <= z, twisted where twistable), partition
    /// specs, 1D/2D options, rematerialisation, microbatches and mappings for --chips chips:
    /// every configuration in closed form, the best on the flow model.
    #[arg(long)]
    search: bool,
    /// Chips to search over (a multiple of 64; with --search).
    #[arg(long, value_name = "N")]
    chips: Option<u64>,
    /// How many configurations the search prints (with --search).
    #[arg(long, value_name = "K", default_value_t = 5)]
    top: usize,
    /// The most survivors of the closed-form pass the search times on the flow model (0: rank
    /// by the closed form alone; with --search).
    #[arg(long, value_name = "N", default_value_t = 16)]
    flow_survivors: usize,
    /// Keep the search's flow-model measurements in this CSV as each is done (context lines
    /// first: podsim's version, the command, the model, chips, batch); run again with the same
    /// settings, the measurements there are reused, not run again (with --search).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Start the search's CSV over instead of reusing it (with --search and --csv).
    #[arg(long)]
    no_resume: bool,
    /// Print one JSON object. A step: step_time_s, throughput_seqs_per_s, mfu, hfu,
    /// memory_bytes_per_chip, fits_in_memory, compute_time_s, exposed_communication_s,
    /// bubble_time_s, and more. A search: results (best first, each with system, parallel,
    /// partition, throughput_seqs_per_s, and more), configurations_evaluated,
    /// configurations_per_s.
    #[arg(long)]
    json: bool,
}

fn model_of(spec: &str) -> Result<Transformer, Failure> {
    if let Some(t) = Transformer::builtin(spec) {
        return Ok(t);
    }
    let path = std::path::Path::new(spec);
    if spec.ends_with(".toml") || path.exists() {
        return Ok(podsim_config::parse_model(spec, &read(path)?)?);
    }
    let names: Vec<&str> = MODELS.split(", ").collect();
    Err(flag_err(
        "--model",
        format!(
            "`{spec}` is neither a built-in model (the nearest is `{}`; built-in: {MODELS}) nor a file",
            podsim_units::nearest(spec, &names).unwrap_or("")
        ),
    ))
}

/// The system `--system` names, its network and the machine a step runs on: a TPU slice or
/// mesh/torus shorthand of `tpuv4` chips, or a machine file (`--nodes` nodes) of its own chip,
/// which must be a chip preset (the step times GEMMs on the preset's matrix units).
fn machine(
    system: &str,
    nodes: Option<u32>,
    tpu: ChipSpec,
) -> Result<(podsim_system::SystemSpec, podsim_topology::Network, Machine), Failure> {
    let path = std::path::Path::new(system);
    if path.is_file() {
        let (spec, file) = crate::system_spec("--system", system, None, None, None, nodes)?;
        if !matches!(spec.topology, podsim_system::TopoSpec::Machine(_)) {
            return Err(flag_err(
                "--system",
                format!(
                    "{system} is a system file; training steps run on a TPU slice shorthand or a machine file (docs/machine-file.md)"
                ),
            ));
        }
        let net = crate::build(&spec, &file)?;
        let m = Machine::for_system(&spec, &net)
            .map_err(|e| flag_err("--system", format!("{file}: {e}")))?;
        return Ok((spec, net, m));
    }
    if nodes.is_some() {
        return Err(flag_err(
            "--nodes",
            format!("`{system}` is a slice; --nodes sets the node count of a machine file"),
        ));
    }
    let spec = podsim_config::system_from_cli(system, None, None, None)?;
    let net = spec
        .build()
        .map_err(|e| flag_err("--system", e.to_string()))?;
    let m = Machine::of(&net, tpu).map_err(|e| flag_err("--system", e))?;
    Ok((spec, net, m))
}

/// Run `podsim train`.
pub fn train_cmd(a: &TrainArgs) -> Result<ExitCode, Failure> {
    let t = model_of(&a.model)?;
    let remat = Remat::parse(&a.remat)
        .ok_or_else(|| flag_err("--remat", format!("`{}` is not full or none", a.remat)))?;
    let fidelity = match a.model_fidelity.as_str() {
        "analytic" => ModelKind::Analytic,
        "flow" => ModelKind::Flow,
        other => {
            return Err(flag_err(
                "--model-fidelity",
                format!("`{other}` is not analytic or flow"),
            ));
        }
    };
    let batch = match (a.batch, t.batch) {
        (Some(0), _) => return Err(flag_err("--batch", "must be at least 1 sequence")),
        (Some(b), _) | (None, Some(b)) => b,
        (None, None) => {
            return Err(flag_err(
                "--batch",
                format!("the model {} states no batch; give --batch", t.name),
            ));
        }
    };
    let chip = ChipSpec::preset("tpuv4").expect("tpuv4 is a chip preset");
    if a.search {
        return search(a, &t, &chip, batch);
    }
    for (given, flag) in [
        (a.chips.is_some(), "--chips"),
        (a.top != 5, "--top"),
        (a.flow_survivors != 16, "--flow-survivors"),
        (a.csv.is_some(), "--csv"),
        (a.no_resume, "--no-resume"),
    ] {
        if given {
            return Err(flag_err(flag, "only --search takes it"));
        }
    }
    let system = a
        .system
        .as_deref()
        .ok_or_else(|| flag_err("--system", "give the slice (e.g. tpuv4:slice=8x8x8)"))?;
    let parallel = a
        .parallel
        .as_deref()
        .ok_or_else(|| flag_err("--parallel", "give the partition spec (e.g. [8,1,8,8])"))?;
    let parallel = Parallel::parse(parallel).map_err(|e| flag_err("--parallel", e))?;
    let partition = match &a.partition {
        None => Partition::ALL[0],
        Some(s) => Partition::parse(s).ok_or_else(|| {
            flag_err(
                "--partition",
                format!("`{s}` is not ACTIVATION/WEIGHT with 1d or 2d each (e.g. 1d/2d)"),
            )
        })?,
    };
    let mapping = match &a.mapping {
        None => Mapping::DEFAULT,
        Some(s) => Mapping::parse(s).map_err(|e| flag_err("--mapping", e))?,
    };
    let (spec, net, mut m) = machine(system, a.nodes, chip)?;
    m.cmem_on = match (a.cmem.as_deref(), m.chip.cmem.is_some()) {
        (None | Some("on"), true) => true,
        (Some("off"), true) => false,
        (Some("on" | "off"), false) => {
            return Err(flag_err(
                "--cmem",
                format!(
                    "the {} chip has no CMEM, so the setting has no effect; drop the flag",
                    m.chip.name
                ),
            ));
        }
        (None, false) => false,
        (Some(other), _) => {
            return Err(flag_err("--cmem", format!("`{other}` is not on or off")));
        }
    };
    let cmem = match (m.chip.cmem.is_some(), m.cmem_on) {
        (false, _) => "none",
        (true, true) => "on",
        (true, false) => "off",
    };
    let mut c = Config {
        parallel,
        partition,
        mapping,
        batch,
        microbatches: a.microbatches.unwrap_or(1),
        remat,
    };
    if a.microbatches.is_none() {
        c = train::best_microbatches(&t, &m, &c).map_err(|e| Failure::usage(e.to_string()))?;
    }
    let r = match fidelity {
        ModelKind::Flow => {
            let mut mk = || flow_model(&net);
            train::measured(&t, &m, &net, &c, &mut mk)
        }
        _ => train::analytic(&t, &m, &c),
    }
    .map_err(|e| match e {
        train::TrainError::Config(s) => Failure::usage(s),
        other => Failure::runtime(other.to_string()),
    })?;
    if let Some(path) = &a.trace {
        let mut model = podsim_system::new_model(&net, fidelity, Packetization::NONE, false)
            .map_err(|e| Failure::runtime(e.to_string()))?;
        let (w, run) = train::layer_run(&t, &m, &net, &c, model.as_mut())
            .map_err(|e| Failure::runtime(e.to_string()))?;
        let mut tr = Trace::new(crate::workload_cmd::DEFAULT_TRACE_LIMIT);
        tr.about("model", json!(t.name));
        tr.about("system", json!(spec.name));
        tr.about("parallel", json!(c.parallel.to_string()));
        tr.about(
            "what",
            json!("one layer, forward and backward, one microbatch"),
        );
        crate::workload_cmd::add_workload(&mut tr, &w, &run, net.endpoints(), 0, "");
        std::fs::write(path, tr.to_json().to_string())
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", path.display())))?;
    }
    if a.json {
        let mut j = step_json(&r);
        j["model"] = json!(t.name);
        j["system"] = json!(spec.name);
        j["chips"] = json!(net.endpoints());
        j["parameters"] = json!(t.params());
        j["cmem"] = json!(cmem);
        outln!("{j}");
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{} ({:.1} B parameters) on {} ({} chips of {}), collectives: {}, CMEM {}",
        t.name,
        t.params() / 1e9,
        spec.name,
        net.endpoints(),
        m.chip.name,
        r.fidelity,
        cmem
    );
    out!("{}", render(&step_rows(&r, m.hbm_bytes)));
    if let Some(p) = &a.trace {
        outln!("trace written to {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn step_json(r: &StepReport) -> serde_json::Value {
    let c = &r.config;
    json!({
        "parallel": c.parallel.to_string(),
        "partition": c.partition.to_string(),
        "mapping": c.mapping.to_string(),
        "batch": c.batch,
        "microbatches": c.microbatches,
        "microbatch_seqs": r.microbatch_seqs,
        "remat": c.remat.name(),
        "fidelity": r.fidelity,
        "step_time_s": r.step_time_s,
        "throughput_seqs_per_s": r.throughput_seqs_per_s,
        "mfu": r.mfu,
        "hfu": r.hfu,
        "memory_bytes_per_chip": r.memory.total(),
        "memory": {
            "weights_bytes": r.memory.weights,
            "gradients_bytes": r.memory.gradients,
            "optimizer_bytes": r.memory.optimizer,
            "activations_bytes": r.memory.activations,
            "workspace_bytes": r.memory.workspace,
        },
        "fits_in_memory": r.fits_in_memory,
        "compute_time_s": r.compute_time_s,
        "exposed_communication_s": r.exposed_communication_s,
        "bubble_time_s": r.bubble_time_s,
        "optimizer_time_s": r.optimizer_time_s,
        "gradient_sync_s": r.gradient_sync_s,
        "stage_forward_s": r.stage_times_s.0,
        "stage_backward_s": r.stage_times_s.1,
        "bound": r.bound(),
    })
}

fn gib(b: f64) -> String {
    format!("{:.2} GiB", b / (1u64 << 30) as f64)
}

fn step_rows(r: &StepReport, hbm: u64) -> Vec<(String, Vec<String>)> {
    let c = &r.config;
    let s = |x: f64| format!("{x:.3} s");
    let m = &r.memory;
    vec![
        (
            "partition".into(),
            vec![format!(
                "{} {}, mapping {}",
                c.parallel, c.partition, c.mapping
            )],
        ),
        (
            "batch".into(),
            vec![format!(
                "{} sequences, {} microbatches of {} per data/model1 shard, remat {}",
                c.batch,
                c.microbatches,
                r.microbatch_seqs,
                c.remat.name()
            )],
        ),
        ("step time".into(), vec![s(r.step_time_s)]),
        (
            "throughput".into(),
            vec![format!("{:.2} seqs/s", r.throughput_seqs_per_s)],
        ),
        (
            "MFU / HFU".into(),
            vec![format!("{:.1}% / {:.1}%", r.mfu * 100.0, r.hfu * 100.0)],
        ),
        (
            "compute".into(),
            vec![format!(
                "{} (optimizer {})",
                s(r.compute_time_s),
                s(r.optimizer_time_s)
            )],
        ),
        (
            "exposed communication".into(),
            vec![format!(
                "{} (gradient sum {} before overlap)",
                s(r.exposed_communication_s),
                s(r.gradient_sync_s)
            )],
        ),
        ("pipeline bubble".into(), vec![s(r.bubble_time_s)]),
        ("bound by".into(), vec![r.bound().into()]),
        (
            "memory per chip".into(),
            vec![format!(
                "{} of {} ({}): weights {}, gradients {}, optimizer {}, activations {}, workspace {}",
                gib(m.total()),
                gib(hbm as f64),
                if r.fits_in_memory {
                    "fits"
                } else {
                    "DOES NOT FIT"
                },
                gib(m.weights),
                gib(m.gradients),
                gib(m.optimizer),
                gib(m.activations),
                gib(m.workspace)
            )],
        ),
    ]
}

fn search(
    a: &TrainArgs,
    t: &Transformer,
    chip: &ChipSpec,
    batch: u64,
) -> Result<ExitCode, Failure> {
    for (given, flag) in [
        (a.system.is_some(), "--system"),
        (a.parallel.is_some(), "--parallel"),
        (a.partition.is_some(), "--partition"),
        (a.mapping.is_some(), "--mapping"),
        (a.microbatches.is_some(), "--microbatches"),
        (a.trace.is_some(), "--trace"),
        (a.remat != "full", "--remat"),
        (a.model_fidelity != "flow", "--model-fidelity"),
        (a.cmem.is_some(), "--cmem"),
    ] {
        if given {
            return Err(flag_err(
                flag,
                "the search chooses it; drop the flag or drop --search",
            ));
        }
    }
    let chips = a
        .chips
        .ok_or_else(|| flag_err("--chips", "the search needs the slice's chips (e.g. 512)"))?;
    if chips == 0 || chips > 4096 {
        return Err(flag_err(
            "--chips",
            format!("{chips} is not between 64 and the pod's 4096"),
        ));
    }
    if a.top == 0 {
        return Err(flag_err("--top", "must be at least 1"));
    }
    if a.no_resume && a.csv.is_none() {
        return Err(flag_err(
            "--no-resume",
            "only a --csv is resumed; add --csv or drop the flag",
        ));
    }
    let mut memo: Box<dyn train::FlowMemo> = match &a.csv {
        Some(path) => {
            let mut context = crate::sweep_file::base_context();
            context.extend([
                ("model", t.name.clone()),
                ("chips", chips.to_string()),
                ("batch", batch.to_string()),
                ("chip", chip.name.clone()),
            ]);
            podsim_engine::watch::note(format!(
                "measured configurations are kept in {}; run the search again to resume",
                path.display()
            ));
            let (file, kept) = crate::sweep_file::SweepFile::open(
                path,
                &context,
                "configuration,forward_s,backward_s",
                !a.no_resume,
            )?;
            Box::new(CsvMemo { file, kept })
        }
        None => Box::new(train::NoMemo),
    };
    let start = std::time::Instant::now();
    let mut mk = flow_model;
    let r = train::search_with(
        t,
        chip,
        chips,
        batch,
        a.top,
        a.flow_survivors,
        &mut mk,
        memo.as_mut(),
    )
    .map_err(|e| match e {
        train::TrainError::Config(s) => Failure::usage(s),
        other => Failure::runtime(other.to_string()),
    })?;
    let rate = r.configurations_evaluated as f64 / r.closed_form_s.max(1e-9);
    if a.json {
        let results: Vec<_> = r
            .results
            .iter()
            .map(|(s, x)| {
                let mut j = step_json(x);
                j["system"] = json!(s.shorthand());
                j
            })
            .collect();
        outln!(
            "{}",
            json!({
                "model": t.name,
                "chips": chips,
                "batch": batch,
                "results": results,
                "configurations_evaluated": r.configurations_evaluated,
                "configurations_per_s": rate,
                "pruned_by_bound": r.pruned,
                "over_memory": r.over_memory,
                "flow_evaluated": r.flow_evaluated,
                "wall_time_s": start.elapsed().as_secs_f64(),
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{} on {chips} TPU v4 chips, batch {batch}: {} configurations in closed form, {} skipped by the compute-only bound, {} over HBM; {} survivors on the flow model",
        t.name,
        r.configurations_evaluated,
        r.pruned,
        r.over_memory,
        r.flow_evaluated
    );
    // The rate is the machine's, not the model's: on stderr, so that stdout is the same on
    // every run.
    eprintln!("note: {rate:.0} configurations a second in closed form on this machine");
    let mut rows = vec![(
        "#".to_string(),
        vec![
            "slice".into(),
            "[P,D,M1,M2]".into(),
            "act/weight".into(),
            "mapping".into(),
            "microbatches".into(),
            "remat".into(),
            "seqs/s".into(),
            "MFU".into(),
            "why (compute / exposed comm / bubble, s)".into(),
        ],
    )];
    for (i, (s, x)) in r.results.iter().enumerate() {
        let c = &x.config;
        rows.push((
            format!("{}", i + 1),
            vec![
                s.shorthand(),
                c.parallel.to_string(),
                c.partition.to_string(),
                c.mapping.to_string(),
                c.microbatches.to_string(),
                c.remat.name().into(),
                format!("{:.2}", x.throughput_seqs_per_s),
                format!("{:.1}%", x.mfu * 100.0),
                format!(
                    "{:.2} / {:.2} / {:.2}: {}",
                    x.compute_time_s,
                    x.exposed_communication_s,
                    x.bubble_time_s,
                    x.bound()
                ),
            ],
        ));
    }
    out!("{}", render(&rows));
    Ok(ExitCode::SUCCESS)
}

/// The arguments of `podsim dlrm`.
#[derive(Args)]
pub struct DlrmArgs {
    /// The slice: tpuv4:slice=AxBxC[:twisted] or tpuv3:AxB (a 2-D slice of TPU v3 chips, 4
    /// links at 70 GB/s, a mesh along sides shorter than 32).
    #[arg(long, value_name = "SPEC")]
    system: String,
    /// Where the embedding tables live: sparsecore (sharded over the chips' HBM, served by the
    /// SparseCores) or host (CPU host memory, 4 TPU v4 or 8 TPU v3 chips per host).
    #[arg(long, value_name = "WHERE", default_value = "sparsecore")]
    embeddings: String,
    /// Print one JSON object (keys: step_time_s, embedding_time_s, all_to_all_time_s,
    /// dense_time_s, and more).
    #[arg(long)]
    json: bool,
}

/// Run `podsim dlrm`.
pub fn dlrm_cmd(a: &DlrmArgs) -> Result<ExitCode, Failure> {
    use podsim_tpu::dlrm;
    let placement = dlrm::Placement::parse(&a.embeddings).ok_or_else(|| {
        flag_err(
            "--embeddings",
            format!("`{}` is not sparsecore or host", a.embeddings),
        )
    })?;
    let (net, generation) = dlrm::system(&a.system).map_err(|e| flag_err("--system", e))?;
    let model = dlrm::Dlrm::fig8();
    let r = dlrm::step(&model, &net, generation, placement).map_err(Failure::runtime)?;
    if a.json {
        outln!(
            "{}",
            json!({
                "model": model.name,
                "system": a.system,
                "chip": generation.chip.name,
                "chips": r.chips,
                "embeddings": a.embeddings,
                "step_time_s": r.step_time_s,
                "embedding_time_s": r.embedding_time_s,
                "all_to_all_time_s": r.all_to_all_time_s,
                "lookup_time_s": r.lookup_time_s,
                "dense_time_s": r.dense_time_s,
                "throughput_examples_per_s": r.throughput_examples_per_s,
                "bisection_bandwidth_bytes_per_s": r.bisection_bytes_per_s,
                "bound": if r.embedding_time_s >= r.dense_time_s { "embeddings" } else { "dense" },
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let ms = |s: f64| format!("{:.3} ms", s * 1e3);
    outln!(
        "{} on {} ({} chips of {}), embeddings on {}",
        model.name,
        a.system,
        r.chips,
        generation.chip.name,
        a.embeddings
    );
    let rows = vec![
        (
            "model".to_string(),
            vec![format!(
                "{:.0}M dense weights, {} features into {} tables of width {}, valency {}, {} examples per chip",
                model.dense_params / 1e6,
                model.features,
                model.tables,
                model.dim,
                model.valency,
                model.batch_per_chip
            )],
        ),
        ("step time".into(), vec![ms(r.step_time_s)]),
        (
            "  embeddings".into(),
            vec![format!(
                "{} (lookups and updates {}, all-to-all {})",
                ms(r.embedding_time_s),
                ms(r.lookup_time_s),
                ms(r.all_to_all_time_s)
            )],
        ),
        ("  dense".into(), vec![ms(r.dense_time_s)]),
        (
            "throughput".into(),
            vec![format!("{:.0} examples/s", r.throughput_examples_per_s)],
        ),
        (
            "bisection".into(),
            vec![format!("{:.1} TB/s", r.bisection_bytes_per_s / 1e12)],
        ),
    ];
    out!("{}", render(&rows));
    Ok(ExitCode::SUCCESS)
}

/// The arguments of `podsim schedule`.
#[derive(Args)]
pub struct ScheduleArgs {
    /// The slice mix: table2 (Table 2 of tpu-v4-isca2023.txt, each listed slice in proportion
    /// to its share).
    #[arg(long, value_name = "MIX")]
    mix: String,
    /// Simulated hours (at most 100,000).
    #[arg(long, value_name = "H")]
    hours: f64,
    /// Fraction of time each CPU host is up (mean repair 2 h, an assumption).
    #[arg(long, value_name = "A", default_value_t = 0.995)]
    host_availability: f64,
    /// Offered load: arriving chip-hours over the pod's chip-hours (jobs of mean 4 h, an
    /// assumption).
    #[arg(long, value_name = "L", default_value_t = 0.8)]
    load: f64,
    /// Seed of the arrival, size, length and host-failure streams.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Print one JSON object (keys: utilization, usable_fraction, mean_wait_hours and
    /// mean_wait_large_hours (null when no such job started), arrived, started, completed, interrupted, waiting_at_end, shares).
    #[arg(long)]
    json: bool,
}

/// Run `podsim schedule`.
pub fn schedule_cmd(a: &ScheduleArgs) -> Result<ExitCode, Failure> {
    use podsim_tpu::schedule::{Mix, Schedule, run};
    let mix = Mix::named(&a.mix)
        .ok_or_else(|| flag_err("--mix", format!("`{}` is not a mix (mixes: table2)", a.mix)))?;
    let s = Schedule {
        hours: a.hours,
        host_availability: a.host_availability,
        load: a.load,
        seed: a.seed,
    };
    let r = run(&mix, &s).map_err(|e| Failure::usage(format!("<command line>: {e}")))?;
    let sh = mix.shares();
    if a.json {
        outln!(
            "{}",
            json!({
                "mix": mix.name,
                "hours": a.hours,
                "host_availability": a.host_availability,
                "load": a.load,
                "seed": a.seed,
                "utilization": r.utilization,
                "usable_fraction": r.usable_fraction,
                "mean_wait_hours": r.mean_wait_hours,
                "mean_wait_large_hours": r.mean_wait_large_hours,
                "arrived": r.arrived,
                "started": r.started,
                "completed": r.completed,
                "interrupted": r.interrupted,
                "waiting_at_end": r.waiting_at_end,
                "shares": {
                    "below_block": sh.below_block,
                    "twistable": sh.twistable,
                    "twisted": sh.twisted,
                    "twisted_of_block_or_more": sh.twisted_of_block_or_more,
                },
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "slice mix {} on a TPU v4 pod (64 blocks of 4x4x4, OCS), {} hours, host availability {}, offered load {}, seed {}",
        mix.name,
        a.hours,
        a.host_availability,
        a.load,
        a.seed
    );
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let rows = vec![
        (
            "shares (section 2.9)".to_string(),
            vec![format!(
                "{} below a 4^3 block, {} twistable, {} twisted, {} of block-or-larger slices twisted",
                pct(sh.below_block),
                pct(sh.twistable),
                pct(sh.twisted),
                pct(sh.twisted_of_block_or_more)
            )],
        ),
        ("utilization".into(), vec![pct(r.utilization)]),
        (
            "usable blocks".into(),
            vec![format!("{} of block-hours", pct(r.usable_fraction))],
        ),
        (
            "mean wait".into(),
            vec![match (r.mean_wait_hours, r.mean_wait_large_hours) {
                (Some(all), Some(large)) => {
                    format!("{all:.3} h ({large:.3} h for slices of a block or more)")
                }
                (Some(all), None) => {
                    format!("{all:.3} h (no slice of a block or more started)")
                }
                (None, _) => format!(
                    "- (no job started; {} waiting at the end)",
                    r.waiting_at_end
                ),
            }],
        ),
        (
            "jobs".into(),
            vec![format!(
                "{} arrived, {} started, {} completed, {} stopped by host failures, {} waiting at the end",
                r.arrived, r.started, r.completed, r.interrupted, r.waiting_at_end
            )],
        ),
    ];
    out!("{}", render(&rows));
    Ok(ExitCode::SUCCESS)
}

/// The search's flow-model layer times in a sweep CSV: one row per configuration measured,
/// appended as it is done, reused when the search runs again.
struct CsvMemo {
    file: crate::sweep_file::SweepFile,
    kept: std::collections::HashMap<String, Vec<String>>,
}

impl train::FlowMemo for CsvMemo {
    fn get(&mut self, key: &str) -> Option<(f64, f64)> {
        let f = self.kept.get(key)?;
        Some((f.get(1)?.parse().ok()?, f.get(2)?.parse().ok()?))
    }
    fn put(&mut self, key: &str, (fwd, bwd): (f64, f64)) -> Result<(), String> {
        self.file
            .append(&format!("{key},{fwd},{bwd}"))
            .map_err(|e| e.msg().to_string())
    }
}
