//! `podsim train`: a transformer's training step on a TPU v4 slice, or the search of Table 3.
//! The steps, the search and their text are `podsim-train`'s; here are the flags.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_collective::ModelKind;
use podsim_net::Packetization;
use podsim_report::{Trace, to_json};
use podsim_system::workload::ChipSpec;
use podsim_train::{
    Config, Machine, Mapping, Parallel, Partition, Remat, Sharding, StepOutput, TrainError,
    Transformer,
};
use serde_json::json;

use crate::args::{flag_err, listed, none_given};
use crate::{Failure, read};

mod search;

/// Built-in model names, for help and errors.
const MODELS: &str = "gpt3-175b, gpt3-13b, gpt3-1.3b, llm-table3, palm-540b, glam-64b-64e";

/// The arguments of `podsim train`.
#[derive(Args)]
#[command(
    override_usage = "podsim train --model <NAME|FILE> --system <SPEC> --parallel <SPEC> [OPTIONS]\n       podsim train --model <NAME|FILE> --search --chips <N> [OPTIONS]"
)]
pub struct TrainArgs {
    /// A built-in model (gpt3-175b, gpt3-13b, gpt3-1.3b, llm-table3: the unpublished LLM of
    /// Table 3 as assumed in validation/tpu-v4-table3.toml, palm-540b: PaLM 540B, trained on
    /// two 3072-chip pods; --batch 1024 for one pod's half of its 2048, glam-64b-64e: GLaM
    /// 64B/64E, Du et al. 2022, ICML, Table 4: a mixture of experts of 64 experts, top-2, in
    /// every other layer, trained on 1024 TPU v4 chips) or a TOML model file with the keys
    /// name, layers, d_model, heads, kv_heads, head_dim, d_ff, ffn_matrices (2, or 3 for gated),
    /// vocabulary, sequence, format (bf16) and batch, and for a mixture of experts experts
    /// (per MoE layer; 0 or absent: dense), experts_per_token (top-k), expert_capacity_factor
    /// (each expert's capacity over its even share of the routed tokens), expert_every (every
    /// N-th layer's feed-forward is an MoE layer; default 1) and expert_ffn_matrices (default:
    /// ffn_matrices) (see examples/models/). MFU counts the weights a token uses (its
    /// experts_per_token experts, not every expert, nor the capacity's padding).
    #[arg(long, value_name = "NAME|FILE")]
    model: String,
    /// The slice: tpuv4:slice=AxBxC[:twisted], or any mesh or torus shorthand of 1 to 3
    /// dimensions, of TPU v4 chips; tpuv3:AxB, a 2-D slice of TPU v3 chips (a torus where a
    /// side is 32, Table 4); or a machine file whose chip is a preset or states its
    /// matrix units (examples/machines/dgx-a100.toml, dgx-h100.toml; docs/machine-file.md)
    /// (not with --search).
    #[arg(long, value_name = "SPEC", required_unless_present = "search")]
    system: Option<String>,
    /// How many nodes the machine file's machine has [default: the file's `nodes`].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    nodes: Option<u32>,
    /// Table 3's partition spec: pipeline=P,data=D,model1=M1,model2=M2 or [P,D,M1,M2]; the
    /// product is the slice's chips. model2 splits heads and the feed-forward width (tensor
    /// parallelism), model1 splits the batch (and the weights along d_model with 2D weights).
    /// An MoE model takes an expert axis, expert=E (or [P,D,M1,M2,E]), carved out of the data
    /// axis as GShard and GLaM do: E divides data and the experts, each chip holds experts/E
    /// of each MoE layer's experts, the data axis's first E replicas (where the mapping lays
    /// data) exchange tokens in each MoE layer (a dispatch all-to-all before the experts and a
    /// combine after, forward, again when recomputed, and backward; tokens x d_model x
    /// experts_per_token x capacity factor x 2 bytes a chip), and the experts' gradients are
    /// summed over the data/E replicas only [default: 1, every chip holds every expert and
    /// no tokens move]. Quote the bracket form in a shell ("[8,1,8,8]": zsh reads brackets as
    /// a pattern).
    #[arg(long, value_name = "SPEC", required_unless_present = "search")]
    parallel: Option<String>,
    /// Activation/weight partitioning, 1d or 2d each (Table 3's option) [default: 1d/1d].
    #[arg(long, value_name = "A/W", value_parser = listed(["1d/1d", "1d/2d", "2d/1d", "2d/2d"]))]
    partition: Option<String>,
    /// The order in which the axes fill the slice's chips, fastest first (chip ids count x,
    /// then y, then z), e.g. model2,model1,data,pipeline [default: the fastest of the 24
    /// orders in closed form, as the validation cases take it; the output says so].
    #[arg(long, value_name = "AXES")]
    mapping: Option<String>,
    /// Global batch, sequences [default: the model's own; the file's `batch` key].
    #[arg(long, value_name = "SEQS")]
    batch: Option<u64>,
    /// Microbatches per step [default: the fastest count that fits in HBM, closed form].
    #[arg(long, value_name = "N")]
    microbatches: Option<u64>,
    /// Rematerialisation: full (keep each layer's input, recompute the rest), selective (keep
    /// all but the attention scores; recompute QK^T, softmax and the weighted sum of values:
    /// Korthikanti et al. 2022) or none.
    #[arg(
        long,
        value_name = "MODE",
        default_value = "full",
        value_parser = listed(["full", "selective", "none"]),
    )]
    remat: String,
    /// Megatron-LM's sequence parallelism over model2 (needs model2 > 1 and 1d activations):
    /// layer norms and residuals on 1/model2 of the sequence, each all-reduce over model2 an
    /// all-gather before the block and a reduce-scatter after it; the kept activations
    /// between blocks and the pipeline sends split over model2.
    #[arg(long)]
    sequence_parallel: bool,
    /// Chunks of layers per pipeline stage, Megatron-LM's interleaved 1F1B schedule: the bubble
    /// shrinks V times, the pipeline sends grow V times. V > 1 needs pipeline > 1, layers a
    /// multiple of pipeline x V and microbatches a multiple of pipeline.
    #[arg(long, value_name = "V", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    virtual_stages: u64,
    /// How far the weights' state is sharded over the data axis (ZeRO stages): none (bf16
    /// weights and gradients on every replica; the fp32 master weights and Adam moments are
    /// always split over every replica of a weight, and the gradient sum is an all-reduce),
    /// optimizer (ZeRO-1: that optimizer split, the all-reduce as reduce-scatter + all-gather
    /// of the updated weights, the same bytes: the same step as none), gradients (ZeRO-2: also
    /// the gradient accumulators; each layer's gradient reduce-scattered over data after its
    /// backward pass, every microbatch, overlapped; the updated weights all-gathered after the
    /// optimizer, overlapped with the next forward pass) or weights (ZeRO-3 / FSDP: also the
    /// bf16 weights; each layer's all-gathered over data before its forward and its backward
    /// pass, every microbatch, prefetched beside the previous layer, its gradient
    /// reduce-scattered after; memory keeps the 1/data shard and two gathered layers).
    /// gradients and weights need data > 1. With --search: the most the search may shard;
    /// each configuration takes the least that fits.
    #[arg(
        long,
        value_name = "STAGE",
        default_value = "none",
        value_parser = listed(["none", "optimizer", "gradients", "weights"]),
    )]
    shard: String,
    /// CMEM (TPU v4's 128 MiB on-chip memory): on, a layer's weight shard that fits in half of
    /// it is read at CMEM bandwidth (4.8 TB/s, an assumption) instead of HBM; off, as Fig. 13's
    /// "CMEM off" [default: on; a chip without CMEM has none to turn on or off].
    #[arg(long, value_name = "ON|OFF", value_parser = listed(["on", "off"]))]
    cmem: Option<String>,
    /// How collectives are timed: analytic (closed form, contention-free rings; an all-to-all
    /// as its most loaded link under minimal routing of the untwisted torus, every dimension
    /// at once, plus the longest route's latency) or flow (the layer runs as a workload on the
    /// slice's flow model, every group at once: an MoE layer's all-to-alls over the
    /// dimensions the expert axis lies on, where a twisted torus shows its gain).
    #[arg(
        long,
        value_name = "FIDELITY",
        default_value = "flow",
        value_parser = listed(["analytic", "flow"]),
    )]
    model_fidelity: String,
    /// Write a Chrome trace-event JSON file of one layer's forward and backward pass for one
    /// microbatch on every chip (open it in ui.perfetto.dev); with --energy, a counter track of
    /// the slice's power by component over that layer.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Search slice shapes (4x4x4 blocks, x <= y <= z, twisted where twistable), partition
    /// specs, 1D/2D options, rematerialisation, sequence parallelism, virtual stages (1, 2, 4),
    /// microbatches and mappings for --chips chips (and for an MoE model every expert axis that
    /// divides data and the experts): every configuration in closed form, the best on the
    /// flow model.
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
    /// bubble_time_s, expert_all_to_all_s (0 for a dense model), and more. A search: results (best first, each with system, parallel,
    /// partition, throughput_seqs_per_s, and more), configurations_evaluated,
    /// configurations_per_s.
    #[arg(long)]
    json: bool,
    /// Add the step's energy: joules over the slice with their breakdown (compute, memory,
    /// network, idle), mean power per chip and model FLOP/s per watt (JSON: energy_j,
    /// average_power_w, energy_breakdown_j, perf_per_watt). Each chip draws Table 4's idle power
    /// for the whole step, plus its matrix units' power while they stream (fitted to Table 4's
    /// mean power) and energy per HBM and CMEM byte and per byte per link
    /// (crates/energy/src/lib.rs names each source); TPU v4 and v3 chips only (not with
    /// --search)
    #[arg(long)]
    energy: bool,
    /// Draw the step's energy by component (compute, memory, network, idle), joules per chip
    /// stacked in one bar, to this SVG file (with --energy)
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
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

/// The system `--system` names (its name), its network and the machine a step runs on: a TPU
/// v4 slice or mesh/torus shorthand of `tpuv4` chips, a TPU v3 slice, or a machine file (`--nodes` nodes) of its own chip,
/// a preset or one the file describes by its matrix units, which time the step's GEMMs.
fn machine(
    system: &str,
    nodes: Option<u32>,
    tpu: ChipSpec,
) -> Result<(String, podsim_topology::Network, Machine), Failure> {
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
        return Ok((spec.name, net, m));
    }
    if nodes.is_some() {
        return Err(flag_err(
            "--nodes",
            format!("`{system}` is a slice; --nodes sets the node count of a machine file"),
        ));
    }
    if system.starts_with("tpuv3:") {
        let (net, _) =
            podsim_tpu::dlrm::system(system).map_err(|e| flag_err("--system", e.to_string()))?;
        let chip = ChipSpec::preset("tpuv3").expect("tpuv3 is a chip preset");
        let m = Machine::of(&net, chip).map_err(|e| flag_err("--system", e))?;
        return Ok((system.to_string(), net, m));
    }
    let spec = podsim_config::system_from_cli(system, None, None, None)?;
    let net = spec
        .build()
        .map_err(|e| flag_err("--system", e.to_string()))?;
    let m = Machine::of(&net, tpu).map_err(|e| flag_err("--system", e))?;
    Ok((spec.name, net, m))
}

/// A training error as the command reports it: the configuration's is a usage error.
pub(super) fn failure(e: TrainError) -> Failure {
    if e.is_input() {
        Failure::usage(e.to_string())
    } else {
        Failure::runtime(e.to_string())
    }
}

/// Run `podsim train`.
pub fn train_cmd(a: &TrainArgs) -> Result<ExitCode, Failure> {
    let t = model_of(&a.model)?;
    let remat = Remat::parse(&a.remat).ok_or_else(|| {
        flag_err(
            "--remat",
            format!("`{}` is not full, selective or none", a.remat),
        )
    })?;
    let shard = Sharding::parse(&a.shard).ok_or_else(|| {
        flag_err(
            "--shard",
            format!("`{}` is not none, optimizer, gradients or weights", a.shard),
        )
    })?;
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
        return search::search(a, &t, &chip, batch, shard);
    }
    none_given(
        &[
            (a.chips.is_some(), "--chips"),
            (a.top != 5, "--top"),
            (a.flow_survivors != 16, "--flow-survivors"),
            (a.csv.is_some(), "--csv"),
            (a.no_resume, "--no-resume"),
        ],
        "only --search takes it",
    )?;
    let system = a
        .system
        .as_deref()
        .ok_or_else(|| flag_err("--system", "give the slice (e.g. tpuv4:slice=8x8x8)"))?;
    let parallel = a
        .parallel
        .as_deref()
        .ok_or_else(|| flag_err("--parallel", "give the partition spec (e.g. [8,1,8,8])"))?;
    let (parallel, expert) =
        Parallel::parse_with_expert(parallel).map_err(|e| flag_err("--parallel", e))?;
    if let (Some(e), None) = (expert, &t.moe) {
        // Even expert=1: a setting with no effect.
        return Err(failure(TrainError::ExpertOnDense {
            expert: e,
            model: t.name.clone(),
        }));
    }
    let expert = expert.unwrap_or(1);
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
    if a.plot.is_some() && !a.energy {
        return Err(flag_err(
            "--plot",
            "draws the step's energy by component; add --energy",
        ));
    }
    let (name, net, mut m) = machine(system, a.nodes, chip)?;
    let power = if a.energy {
        Some(crate::args::chip_power(Some(&m.chip.name))?)
    } else {
        None
    };
    m.set_cmem(a.cmem.as_deref())
        .map_err(|e| flag_err("--cmem", e))?;
    let c = Config {
        parallel,
        partition,
        mapping,
        batch,
        microbatches: a.microbatches.unwrap_or(1),
        remat,
        shard,
        sequence_parallel: a.sequence_parallel,
        virtual_stages: a.virtual_stages,
        expert,
    };
    let pick = podsim_train::Choose {
        mapping: a.mapping.is_none(),
        microbatches: a.microbatches.is_none(),
    };
    let r = podsim_train::run_step(&t, &m, &net, &c, pick, fidelity).map_err(failure)?;
    if let Some(path) = &a.trace {
        let mut model = podsim_system::new_model(&net, fidelity, Packetization::NONE, false)
            .map_err(|e| Failure::runtime(e.to_string()))?;
        let (w, run) = podsim_train::layer_run(&t, &m, &net, &r.config, model.as_mut())
            .map_err(|e| Failure::runtime(e.to_string()))?;
        let mut tr = Trace::new(crate::args::DEFAULT_TRACE_LIMIT);
        tr.about("model", json!(t.name));
        tr.about("system", json!(name));
        tr.about("parallel", json!(r.config.parallel.to_string()));
        tr.about(
            "what",
            json!("one layer, forward and backward, one microbatch"),
        );
        podsim_report::add_workload(&mut tr, &w, &run, net.endpoints(), 0, "");
        if let Some(p) = &power {
            let line = podsim_system::energy::power_timeline(&w, &run, &m.chip, p);
            podsim_report::add_power(&mut tr, &line);
        }
        std::fs::write(path, tr.to_json().to_string())
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", path.display())))?;
    }
    let mut out = StepOutput::new(&t, &name, net.endpoints(), &m, &r, pick.mapping);
    if let Some(p) = &power {
        out = out.with_energy(&t, &r, p).map_err(Failure::runtime)?;
    }
    if let (Some(path), Some(e)) = (&a.plot, &out.energy) {
        podsim_report::energy_svg(path, &format!("{} on {name}", t.name), net.endpoints(), e)
            .map_err(|e| Failure::runtime(e.to_string()))?;
    }
    if a.json {
        outln!("{}", to_json(&out));
        return Ok(ExitCode::SUCCESS);
    }
    out!("{}", out.text());
    if let Some(p) = &a.trace {
        outln!("trace written to {}", p.display());
    }
    if let Some(p) = &a.plot {
        outln!("plot written to {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}
