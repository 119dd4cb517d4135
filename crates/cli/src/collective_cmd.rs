//! `podsim collective`: run one collective (or a sweep of sizes) on a topology.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_collective::{Algorithm, CollectiveOutput, Kind, Measurement, ModelKind};
use podsim_net::Packetization;
use serde_json::json;

use crate::args::{flag_err, listed, size};
use crate::{Failure, build};
use podsim_report::render;

/// The network options shared by `collective` and `microbench`.
#[derive(Args)]
pub struct NetArgs {
    /// analytic (alpha-beta, contention-free), flow (max-min fair, congestion-aware) or packet
    /// (cycle-level routers with virtual channels and credits; slow on large networks).
    #[arg(
        long,
        value_name = "MODEL",
        default_value = "flow",
        value_parser = listed(["analytic", "flow", "packet"]),
    )]
    model: String,
    /// Link bandwidth each way for meshes, tori, rings and fat trees [default: 50 GB/s].
    #[arg(long, value_name = "BW", allow_hyphen_values = true)]
    link_bandwidth: Option<String>,
    /// Per-hop link latency: for meshes, tori, rings and fat trees [default: 0 ns], and
    /// overriding a Tofu preset's (0.1 us on Tofu and TofuD, 0.3 us on Tofu2); the output
    /// says which applies.
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    link_latency: Option<String>,
    /// The machine's endpoint setting, which sets the overhead every transfer pays outside
    /// the network: a row of tofu-interconnect-d.txt Table III. TofuD: near-cmg (default),
    /// far-cmg; Tofu2: cache-injection-on (default), cache-injection-off; Tofu:
    /// direct-descriptor (default), descriptor-on-memory. Other machines have none.
    #[arg(long, value_name = "SETTING")]
    endpoint: Option<String>,
    /// Maximum payload per packet [size; default: no packetization].
    #[arg(long, value_name = "SIZE")]
    packet_payload: Option<String>,
    /// Header and trailer bytes per packet, frame gaps included [size; default: 0].
    #[arg(long, value_name = "SIZE")]
    packet_header: Option<String>,
    /// How many nodes a machine file's machine has (--system FILE) [default: the file's
    /// `nodes`].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    nodes: Option<u32>,
}

impl NetArgs {
    /// The network of `topology` with these options, the model named, and the models to
    /// build it with (the endpoint setting) with the timing they apply.
    fn resolve(&self, topology: &str) -> Result<Resolved, Failure> {
        let (_, _, model) = podsim_collective::parse_names("barrier", None, &self.model)
            .map_err(|e| flag_err("--model", e))?;
        let (spec, file) = crate::system_spec(
            "--topology",
            topology,
            self.link_bandwidth.as_deref(),
            self.link_latency.as_deref(),
            None,
            self.nodes,
        )?;
        let net = build(&spec, &file)?;
        let (models, timing) = podsim_system::Models::for_net(&net, self.endpoint.as_deref())
            .map_err(|e| flag_err("--endpoint", e))?;
        let latency_source = if self.link_latency.is_some() {
            "--link-latency"
        } else {
            timing.latency_source(&net)
        };
        Ok(Resolved {
            chip: spec.chip_name().map(str::to_string),
            net,
            model,
            models,
            timing,
            latency_source,
        })
    }

    /// The packet overheads these options name.
    fn packets(&self) -> Result<Packetization, Failure> {
        if self.packet_payload.is_none() && self.packet_header.is_none() {
            return Ok(Packetization::NONE);
        }
        let payload = self
            .packet_payload
            .as_deref()
            .map(|s| size("--packet-payload", s))
            .transpose()?
            .unwrap_or(u64::MAX);
        if payload == 0 {
            return Err(flag_err(
                "--packet-payload",
                "a packet needs at least one byte of payload",
            ));
        }
        let header = self
            .packet_header
            .as_deref()
            .map(|s| size("--packet-header", s))
            .transpose()?
            .unwrap_or(0);
        Ok(Packetization { payload, header })
    }
}

/// A network resolved from the command line.
pub struct Resolved {
    net: podsim_topology::Network,
    model: ModelKind,
    models: podsim_system::Models,
    timing: podsim_system::Timing,
    /// Where the link latency came from: `preset`, `machine file`, `--link-latency` or `default`.
    latency_source: &'static str,
    /// The chip on every endpoint, where the system names one (for `--energy`).
    chip: Option<String>,
}

impl Resolved {
    /// The timing as a collective's output keys.
    fn output(&self) -> podsim_collective::LinkTiming {
        self.timing.output(self.latency_source)
    }

    /// The timing as table rows.
    fn rows(&self) -> Vec<(String, Vec<String>)> {
        self.timing.rows(self.latency_source)
    }
}

/// The arguments of `podsim collective`.
#[derive(Args)]
pub struct CollectiveArgs {
    /// all-reduce, reduce-scatter, all-gather, broadcast, reduce, all-to-all or barrier.
    #[arg(value_parser = listed(podsim_collective::Kind::ALL.map(|k| k.name())))]
    kind: String,
    /// The topology, as for `podsim topo` (e.g. torus:4x4x8, tpuv4:slice=4x4x8:twisted; every
    /// shorthand and preset: `podsim topo --help`), a system TOML file (the keys of a
    /// scenario's [[system]]), or a machine file (chip, nodes, link classes and tiers:
    /// examples/machines/dgx-a100.toml; keys in docs/machine-file.md). --system is the same flag.
    #[arg(long, visible_alias = "system", value_name = "SPEC")]
    topology: String,
    /// Each rank's buffer, as in nccl-tests (all-to-all sends bytes/n to each other rank), e.g.
    /// "64 MiB" [size; required unless --sweep].
    #[arg(long, value_name = "SIZE")]
    bytes: Option<String>,
    /// The algorithm [default: the kind's first: ring for all-reduce, reduce-scatter and
    /// all-gather; tree for broadcast and reduce; direct for all-to-all; dissemination for
    /// barrier; on a machine file of several nodes, multi-ring for all-reduce]. Others:
    /// bidirectional-ring, dimension, halving-doubling, double-binary-tree, multi-ring (one
    /// ring per chip of a node, each crossing the nodes on its own rail, as NCCL's channels),
    /// all-dimensions (a share per dimension and direction of a mesh or torus, every link at
    /// once, as TPU v4) (all-reduce); ring (broadcast, pipelined chain); dimension (all-to-all).
    #[arg(
        long,
        value_name = "NAME",
        value_parser = listed([
            "ring", "bidirectional-ring", "dimension", "halving-doubling", "double-binary-tree",
            "multi-ring", "all-dimensions", "tree", "direct", "dissemination",
        ]),
    )]
    algorithm: Option<String>,
    #[command(flatten)]
    net: NetArgs,
    /// Pipeline piece (chain broadcast) or DMA size (all-to-all; in the flow model a pair's
    /// DMAs share one path and behave as one flow) [size; default: none].
    #[arg(long, value_name = "SIZE")]
    chunk: Option<String>,
    /// Sizes to sweep, comma-separated (e.g. "1 MiB,16 MiB,256 MiB"): prints a table and
    /// writes CSV. Sizes run side by side on every core when their simulations fit in the
    /// memory limit together, else one at a time; the output is the same either way.
    #[arg(long, value_name = "SIZES")]
    sweep: Option<String>,
    /// Where the sweep's CSV goes [default: collective-sweep.csv]. It starts with the run's
    /// context (`# key: value` lines) and gains a row as each size finishes; run again with
    /// the same settings, the sizes already there are kept, not run again.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Start the sweep's CSV over instead of keeping the sizes already in it.
    #[arg(long)]
    no_resume: bool,
    /// Draw the sweep's bus bandwidth against size here (SVG, log-log as nccl-tests plots it,
    /// with the physical bound's bus bandwidth dashed).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// Write a Chrome trace-event JSON file (open it in ui.perfetto.dev): a process per rank,
    /// an event per transfer it sent (from its send to its last byte's arrival). One size only.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// The most events the trace keeps; the file says how many were cut.
    #[arg(long, value_name = "N", default_value_t = crate::args::DEFAULT_TRACE_LIMIT)]
    trace_limit: usize,
    /// Draw the topology's links coloured by how busy each was over the collective (SVG;
    /// bytes carried over bandwidth x time): rings, 2-D grids, 3-D tori as z slices with each
    /// chip's square coloured by its busiest link to another slice. Flow model, one size.
    #[arg(long, value_name = "FILE.svg")]
    heatmap: Option<PathBuf>,
    /// Print one JSON object (keys: time_s, algorithm_bandwidth_bytes_per_s,
    /// bus_bandwidth_bytes_per_s, bytes_on_wire, max_link_utilization, lower_bound_time_s,
    /// verified, link_latency_s, link_latency_source, endpoint, endpoint_overhead_s); with
    /// --sweep, an array of them, one per size (the CSV is still written).
    #[arg(long)]
    json: bool,
    /// Add the collective's energy (one size): every chip's idle power for the run and the
    /// energy per byte per link the flow model carried (JSON: energy_j, average_power_w,
    /// energy_breakdown_j, perf_per_watt as algorithm bandwidth per watt, bytes per joule);
    /// on systems of chips with power figures (TPU v4 and v3 slices, A100 machine files), flow
    /// model; a mean power above the chip's stated limit (the A100's 400 W) is refused
    #[arg(long)]
    energy: bool,
}

use podsim_report::busbw_points;

/// A flag's value as a sweep file's context records it.
fn given(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "default".into())
}

/// One collective's settings, resolved and checked from the command line: what every size
/// runs with.
struct Job<'a> {
    a: &'a CollectiveArgs,
    c: podsim_collective::CollectiveJob<'a>,
}

impl<'a> Job<'a> {
    /// The collective the arguments name on `r`, or the error of a setting that would have no
    /// effect.
    fn new(a: &'a CollectiveArgs, r: &'a Resolved) -> Result<Job<'a>, Failure> {
        let (kind, alg, _) =
            podsim_collective::parse_names(&a.kind, a.algorithm.as_deref(), &a.net.model)
                .map_err(|e| flag_err("KIND/--algorithm/--model", e))?;
        let alg = podsim_collective::CollectiveJob::default_algorithm(
            &r.net,
            kind,
            alg,
            a.algorithm.is_some(),
        );
        let chunk = a
            .chunk
            .as_deref()
            .map(|s| size("--chunk", s))
            .transpose()?
            .unwrap_or(0);
        check_sizes(a, kind, alg)?;
        let c = podsim_collective::CollectiveJob {
            net: &r.net,
            topology: &a.topology,
            kind,
            algorithm: alg,
            model: r.model,
            packets: a.net.packets()?,
            chunk,
            timing: r.output(),
            memory_limit: crate::memory_limit(),
        };
        Ok(Job { a, c })
    }

    /// The ring broadcast pipelines at most 64 pieces a rank: a smaller --chunk is refused.
    fn fits_pieces(&self, bytes: u64) -> Result<(), Failure> {
        self.c
            .check_pieces(bytes)
            .map_err(|e| flag_err("--chunk", e.to_string()))
    }

    /// Run one size with `models`.
    fn measure(&self, bytes: u64, models: &podsim_system::Models) -> Result<Measurement, Failure> {
        self.c.measure(bytes, models).map_err(|e| {
            Failure::runtime(format!(
                "<command line>: {} on {}: {e}",
                self.c.kind, self.a.topology
            ))
        })
    }

    /// What --json prints of a run: the measurement with the timing it ran with.
    fn output(&self, m: &Measurement) -> serde_json::Value {
        podsim_report::to_json(&self.c.output(m))
    }
}

/// The checks of the flags that need one run (a trace, a heatmap) before anything runs.
fn check_one_run(a: &CollectiveArgs, r: &Resolved) -> Result<(), Failure> {
    crate::args::trace_limit_needs_trace(a.trace.is_some(), a.trace_limit)?;
    if a.trace.is_some() && a.sweep.is_some() {
        return Err(flag_err(
            "--trace",
            "a trace records one run; give --bytes instead of --sweep",
        ));
    }
    if a.heatmap.is_some() && a.sweep.is_some() {
        return Err(flag_err(
            "--heatmap",
            "a heatmap draws one run; give --bytes instead of --sweep",
        ));
    }
    if a.energy && a.sweep.is_some() {
        return Err(flag_err(
            "--energy",
            "the energy is of one run; give --bytes instead of --sweep",
        ));
    }
    if a.energy {
        crate::args::needs_flow("--energy", "the energy of the links comes from", r.model)?;
        crate::args::chip_power(r.chip.as_deref())?;
    }
    if a.heatmap.is_some() {
        crate::args::needs_flow("--heatmap", "the heatmap draws", r.model)?;
    }
    Ok(())
}

/// Settings that would have no effect are errors, not silently dropped: a chunk the algorithm
/// does not cut by, a barrier's size, and the flags of a sweep without one.
fn check_sizes(a: &CollectiveArgs, kind: Kind, alg: Algorithm) -> Result<(), Failure> {
    let chunked = matches!(
        (kind, alg),
        (Kind::Broadcast, Algorithm::Ring) | (Kind::AllToAll, Algorithm::Direct)
    );
    if a.chunk.is_some() && !chunked {
        return Err(flag_err(
            "--chunk",
            format!(
                "{kind} ({}) does not cut its transfers into pieces; --chunk applies to the ring \
                 broadcast (pipeline piece) and the direct all-to-all (DMA size); drop the flag",
                alg.name()
            ),
        ));
    }
    if kind == Kind::Barrier && (a.bytes.is_some() || a.sweep.is_some()) {
        return Err(flag_err(
            if a.bytes.is_some() {
                "--bytes"
            } else {
                "--sweep"
            },
            "a barrier moves no payload, so sizes have no effect; drop the flag",
        ));
    }
    if a.sweep.is_some() && a.bytes.is_some() {
        return Err(flag_err(
            "--bytes",
            "--sweep gives the sizes; give either --bytes or --sweep",
        ));
    }
    crate::args::no_resume_needs_sweep(a.sweep.is_some(), a.no_resume)?;
    if a.sweep.is_none() && a.plot.is_some() {
        return Err(flag_err(
            "--plot",
            "draws a sweep's sizes; add --sweep or drop the flag",
        ));
    }
    if a.sweep.is_none() && a.csv.is_some() {
        return Err(flag_err(
            "--csv",
            "only a --sweep writes CSV; add --sweep or drop the flag",
        ));
    }
    Ok(())
}

/// Run `podsim collective`.
pub fn collective(a: &CollectiveArgs) -> Result<ExitCode, Failure> {
    let mut r = a.net.resolve(&a.topology)?;
    check_one_run(a, &r)?;
    let log = podsim_net::RecordingHandle::default();
    if a.trace.is_some() {
        log.borrow_mut().limit = a.trace_limit;
        r.models.record = Some(log.clone());
    }
    let r = r;
    let layout = match &a.heatmap {
        Some(_) => Some(
            podsim_report::link_heatmap::Layout::of(&r.net)
                .map_err(|e| flag_err("--heatmap", e))?,
        ),
        None => None,
    };
    let job = Job::new(a, &r)?;
    match &a.sweep {
        Some(list) => sweep(&job, &r, list),
        None => one_size(&job, &r, &log, layout.as_ref()),
    }
}

/// A sweep's sizes from `--sweep`, each once and each within the pieces a chunk allows.
fn sweep_sizes(job: &Job, list: &str) -> Result<Vec<u64>, Failure> {
    let sizes: Vec<u64> = list
        .split(',')
        .map(|s| size("--sweep", s.trim()))
        .collect::<Result<_, _>>()?;
    job.c.check_sweep(&sizes).map_err(|e| match e {
        podsim_collective::SweepSizeError::Twice { .. } => flag_err("--sweep", e.to_string()),
        podsim_collective::SweepSizeError::Pieces(p) => flag_err("--chunk", p.to_string()),
    })?;
    Ok(sizes)
}

/// What a sweep's CSV records of its settings: a file of other settings is not resumed.
fn sweep_context(job: &Job, r: &Resolved) -> Vec<(&'static str, String)> {
    let a = job.a;
    let mut context = podsim_report::sweep_file::base_context();
    context.extend([
        ("kind", job.c.kind.to_string()),
        ("algorithm", job.c.algorithm.name().to_string()),
        ("model", job.c.model.name().to_string()),
        ("topology", a.topology.clone()),
        ("link_latency", r.timing.link_latency.to_string()),
        ("endpoint", given(&a.net.endpoint)),
        ("link_bandwidth", given(&a.net.link_bandwidth)),
        ("packet_payload", given(&a.net.packet_payload)),
        ("packet_header", given(&a.net.packet_header)),
        ("chunk", given(&a.chunk)),
    ]);
    context
}

/// One size of a sweep as a rank ran it: its CSV fields and its JSON.
type SweepPoint = (Vec<String>, serde_json::Value);

/// Run one size of a sweep with its own models (a sweep records no trace): its CSV fields and
/// JSON, or a failure recorded with its reason (the sweep goes on).
fn sweep_point(job: &Job, endpoint: &Option<String>, b: u64) -> SweepPoint {
    let models = podsim_system::Models {
        endpoint: endpoint.clone(),
        record: None,
    };
    match job.measure(b, &models) {
        Ok(m) => (podsim_collective::sweep_fields(b, &m), job.output(&m)),
        Err(e) => {
            let failed = podsim_collective::SweepFailure::new(b, e.msg());
            (failed.fields(), podsim_report::to_json(&failed))
        }
    }
}

/// Run `podsim collective --sweep`: the sizes the CSV does not hold yet, a batch at a time,
/// then the table (or JSON) of every size.
fn sweep(job: &Job, r: &Resolved, list: &str) -> Result<ExitCode, Failure> {
    let a = job.a;
    let csv_path = a
        .csv
        .clone()
        .unwrap_or_else(|| PathBuf::from("collective-sweep.csv"));
    let sizes = sweep_sizes(job, list)?;
    let context = sweep_context(job, r);
    // Rank 0 (the only process, without MPI) keeps the file; the sizes it does not hold
    // yet run a batch at a time, one per rank, and land in the file in size order.
    let mut opened = podsim_report::sweep_file::open_on_rank0(
        &csv_path,
        &context,
        podsim_collective::SWEEP_HEADER,
        !a.no_resume,
        "sizes",
    )?;
    let todo: Vec<u64> = podsim_ranks::share(opened.as_ref().map(|(_, kept)| {
        sizes
            .iter()
            .copied()
            .filter(|b| !kept.contains_key(&b.to_string()))
            .collect::<Vec<u64>>()
    }))?;
    let endpoint = r.models.endpoint.clone();
    podsim_report::progress::count(todo.len() as u64);
    let mut fresh: HashMap<u64, SweepPoint> = HashMap::new();
    let ranks = podsim_ranks::place().1;
    let batch = job
        .c
        .batch(&todo, rayon::current_num_threads().max(1), ranks);
    for chunk in todo.chunks(batch) {
        let got = podsim_report::sweep_file::run_batch(chunk.len(), |i| {
            let point = sweep_point(job, &endpoint, chunk[i]);
            podsim_report::progress::tick();
            point
        })?;
        if let (Some(got), Some((file, _))) = (got, opened.as_mut()) {
            for (&b, (fields, v)) in chunk.iter().zip(got) {
                file.append(&fields.join(","))?;
                fresh.insert(b, (fields, v));
            }
        }
    }
    let Some((_, kept)) = opened else {
        // Another rank: rank 0 prints.
        return Ok(ExitCode::SUCCESS);
    };
    print_sweep(job, &sizes, &kept, &fresh, &csv_path)
}

/// Print a sweep's sizes, kept from the file or run now, in the order given (the table or
/// JSON), and draw its plot; an error naming the sizes that failed.
fn print_sweep(
    job: &Job,
    sizes: &[u64],
    kept: &HashMap<String, Vec<String>>,
    fresh: &HashMap<u64, SweepPoint>,
    csv_path: &std::path::Path,
) -> Result<ExitCode, Failure> {
    let a = job.a;
    let mut all = Vec::new();
    let mut table: Vec<Vec<String>> = Vec::new();
    for &b in sizes {
        let fields: &Vec<String> = match (kept.get(&b.to_string()), fresh.get(&b)) {
            (Some(f), _) => {
                all.push(podsim_report::to_json(
                    &podsim_collective::Resumed::from_fields(f),
                ));
                f
            }
            (None, Some((f, v))) => {
                all.push(v.clone());
                f
            }
            (None, None) => {
                return Err(Failure::runtime(format!(
                    "{}: size {b} neither kept nor run",
                    csv_path.display()
                )));
            }
        };
        table.push(fields.clone());
    }
    let (rows, failures) = podsim_collective::sweep_rows(sizes, &table);
    if let Some(path) = &a.plot {
        let title = job.c.plot_title();
        podsim_report::busbw_svg(path, &title, &busbw_points(&table))
            .map_err(|e| Failure::runtime(e.to_string()))?;
    }
    if a.json {
        outln!("{}", serde_json::Value::Array(all));
    } else if failures.is_empty() {
        outln!("{}", job.c.described());
        out!("{}", render(&rows));
        outln!("CSV written to {}", csv_path.display());
    } else {
        out!("{}", render(&rows));
        for f in &failures {
            outln!("{f}");
        }
    }
    if !failures.is_empty() {
        return Err(Failure::runtime(format!(
            "{} of the sweep's sizes failed (recorded in {}; run again to retry them)",
            failures.len(),
            csv_path.display()
        )));
    }
    Ok(ExitCode::SUCCESS)
}

/// Run `podsim collective --bytes`: one size, with its heatmap and trace.
fn one_size(
    job: &Job,
    r: &Resolved,
    log: &podsim_net::RecordingHandle,
    layout: Option<&podsim_report::link_heatmap::Layout>,
) -> Result<ExitCode, Failure> {
    let (a, kind, alg, model) = (job.a, job.c.kind, job.c.algorithm, job.c.model);
    let bytes = match &a.bytes {
        Some(s) => size("--bytes", s)?,
        None if kind == Kind::Barrier => 0,
        None => {
            return Err(flag_err(
                "--bytes",
                "missing: give each rank's buffer size, e.g. --bytes \"64 MiB\" (or --sweep)",
            ));
        }
    };
    job.fits_pieces(bytes)?;
    let m = job.measure(bytes, &r.models)?;
    podsim_report::progress::simulated(m.time_s);
    if let (Some(path), Some(layout)) = (&a.heatmap, layout) {
        podsim_report::link_heatmap::draw(
            path,
            &job.c.heatmap_title(bytes, m.time_s),
            layout,
            &m.link_loads,
            m.time_s,
        )
        .map_err(|e| Failure::runtime(format!("{}: {e}", path.display())))?;
    }
    if let Some(path) = &a.trace {
        let t = podsim_report::transfers_trace(
            &log.borrow(),
            &[
                ("command", json!("collective")),
                ("kind", json!(kind.name())),
                ("algorithm", json!(alg.name())),
                ("model", json!(model.name())),
                ("topology", json!(a.topology)),
                ("bytes", json!(bytes)),
                ("time_s", json!(m.time_s)),
            ],
            a.trace_limit,
        );
        std::fs::write(path, t.to_json().to_string())
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", path.display())))?;
    }
    let energy = match a.energy {
        true => Some(
            podsim_system::energy::collective(
                &crate::args::chip_power(r.chip.as_deref())?,
                r.net.endpoints(),
                bytes,
                &m,
            )
            .map_err(Failure::runtime)?,
        ),
        false => None,
    };
    if a.json {
        let v = podsim_report::to_json_with(&job.c.output(&m), energy.as_ref());
        outln!("{v}");
    } else {
        let out = CollectiveOutput::new(kind, alg, model, &a.topology, &m);
        let mut rows = out.rows(r.rows());
        if let Some(e) = &energy {
            rows.extend(e.rows());
        }
        out!("{}", render(&rows));
    }
    Ok(ExitCode::SUCCESS)
}

/// The arguments of `podsim microbench`.
#[derive(Args)]
pub struct MicroArgs {
    /// put-latency (one-way put between neighbours), put-throughput (one large put),
    /// injection (puts to as many neighbours as the node has interfaces, at once) or
    /// all-to-all (throughput per endpoint).
    #[arg(value_parser = listed(podsim_collective::Micro::ALL.map(|m| m.name())))]
    name: String,
    /// The topology, as for `podsim topo`: a shorthand or preset (every one: `podsim topo
    /// --help`), a system TOML file (the keys of a scenario's [[system]]) or a machine file
    /// (docs/machine-file.md). --system is the same flag.
    #[arg(long, visible_alias = "system", value_name = "SPEC")]
    topology: String,
    /// Bytes per put (per endpoint for all-to-all) [size; default: 8 B for put-latency,
    /// 64 MiB for put-throughput and injection, 16 MiB for all-to-all].
    #[arg(long, value_name = "SIZE")]
    bytes: Option<String>,
    #[command(flatten)]
    net: NetArgs,
    /// Print JSON (keys: benchmark, topology, model, bytes, time_s, throughput_bytes_per_s,
    /// streams, link_latency_s, link_latency_source, endpoint, endpoint_overhead_s).
    #[arg(long)]
    json: bool,
}

/// Run `podsim microbench`.
pub fn microbench(a: &MicroArgs) -> Result<ExitCode, Failure> {
    let micro = podsim_collective::Micro::from_name(&a.name).map_err(|e| flag_err("NAME", e))?;
    let res = a.net.resolve(&a.topology)?;
    let (net, model) = (&res.net, res.model);
    let bytes = match &a.bytes {
        Some(s) => size("--bytes", s)?,
        None => micro.default_bytes(),
    };
    let packets = a.net.packets()?;
    let r = podsim_system::microbench(
        net,
        micro,
        bytes,
        model,
        packets,
        crate::memory_limit(),
        &res.models,
    )
    .map_err(|e| {
        Failure::runtime(format!(
            "<command line>: {} on {}: {e}",
            micro.name(),
            a.topology
        ))
    })?;
    let out =
        podsim_collective::MicroOutput::new(micro, &a.topology, model, bytes, &r, res.output());
    if a.json {
        outln!("{}", podsim_report::to_json(&out));
    } else {
        out!("{}", render(&out.rows(res.rows())));
    }
    Ok(ExitCode::SUCCESS)
}
