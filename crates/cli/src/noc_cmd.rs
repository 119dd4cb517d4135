//! `podsim noc`: synthetic traffic on the packet-level model, one load or a latency-throughput
//! curve.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_noc::{NocRouting, RouterConfig, RunSpec};
use serde_json::Value;

use crate::args::{flag_err, listed};
use crate::{Failure, build, read};

/// The arguments of `podsim noc`.
#[derive(Args)]
pub struct NocArgs {
    /// The network: a shorthand (`mesh:8x8`, `torus:8x8`, `torus:4x4x4`, `grayskull`,
    /// `fattree:4`, `tofu:...`), a system TOML file or a machine file (docs/machine-file.md;
    /// its switches are routers, its chips the endpoints). --system is the same flag.
    #[arg(long, visible_alias = "system", value_name = "SPEC")]
    topology: String,
    /// How many nodes a machine file's machine has [default: the file's `nodes`].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    nodes: Option<u32>,
    /// dor (dimension order with dateline classes), minimal (twisted tori too), noc0 / noc1
    /// (Tenstorrent grids) or table (the network's route tables; fat trees, DOJO)
    /// [default: dor on cubes, noc0 on Tenstorrent grids, table otherwise].
    #[arg(
        long,
        value_name = "NAME",
        value_parser = listed(podsim_noc::NocRouting::ALL.map(|(n, _)| n)),
    )]
    routing: Option<String>,
    /// uniform, transpose, bitcomp, bitrev, shuffle, tornado, neighbor,
    /// hotspot[:N,N...][@FRACTION] (default node 0 at 0.1) or all-to-all.
    #[arg(
        long,
        value_name = "PATTERN",
        default_value = "uniform",
        value_parser = listed([
            "uniform", "transpose", "bitcomp", "bitrev", "shuffle", "tornado", "neighbor",
            "hotspot", "all-to-all",
        ]),
    )]
    traffic: String,
    /// Offered load, flits per node per cycle (required unless --sweep).
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    rate: Option<f64>,
    /// Flits per packet [default: 1, or the --config file's].
    #[arg(long, value_name = "P")]
    packet_flits: Option<u32>,
    /// Virtual channels per port [default: 4].
    #[arg(long, value_name = "V")]
    vcs: Option<u32>,
    /// Buffer depth per virtual channel in flits [default: 8].
    #[arg(long, value_name = "B")]
    buffer_flits: Option<u32>,
    /// Router pipeline stages [default: 1].
    #[arg(long, value_name = "S")]
    pipeline_stages: Option<u32>,
    /// Latency of every link in cycles [default: 1].
    #[arg(long, value_name = "L")]
    link_cycles: Option<u32>,
    /// Allocator arbitration: round-robin or fcfs (oldest first) [default: round-robin].
    #[arg(long, value_name = "ARB", value_parser = listed(["round-robin", "fcfs"]))]
    arbitration: Option<String>,
    /// Router model: podsim (podsim's own input-queued router: --pipeline-stages,
    /// --link-cycles, --arbitration) or booksim (BookSim 2's iq router stage by stage: route
    /// computation, VC allocation, switch allocation and crossbar with BookSim's delays, iSLIP
    /// allocators, channels of 1 cycle on a mesh and 2 on a torus; BookSim's Bernoulli
    /// injection and measurement: sample periods of --cycles/10, 3 of warm-up, then until 3
    /// periods agree within 5%, saturated when the average latency passes 500 cycles; k-ary
    /// n-cubes with dor routing). Its delays are keys of the --config file: routing_delay,
    /// vc_alloc_delay, sw_alloc_delay, st_prepare_delay, st_final_delay, credit_delay,
    /// channel_latency, allocator (islip, separable-input-first, separable-output-first),
    /// alloc_iters, input_speedup, output_speedup [default: podsim, or the --config file's].
    #[arg(
        long,
        value_name = "MODE",
        value_parser = listed(podsim_noc::RouterMode::ALL.map(|(n, _)| n)),
    )]
    router: Option<String>,
    /// Router configuration file (TOML keys of the router model; see
    /// examples/booksim/podsim-router.toml); flags given here override it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Measured cycles (after warm-up; a drain follows). With --router booksim: BookSim's
    /// max_samples x sample_period, sample periods of N/10 cycles (the default gives BookSim's
    /// 1000). At most 10^10 router-cycles (routers x N; about ten minutes on one core with the
    /// drain).
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    cycles: u64,
    /// Seed of the traffic's random stream.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Run the seeds S..S+N-1 (S from --seed) of the --rate load, or of each --sweep load up
    /// to the first where a seed saturates, and print the mean, sample standard deviation
    /// (n - 1) and min-max over the seeds of average latency and accepted throughput (the
    /// seeds on all cores; the same output on any count). No CSV, plot, links or trace.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..),
        conflicts_with_all = ["csv", "svg", "no_resume", "links", "trace", "heatmap"])]
    seeds: Option<u32>,
    /// Sweep loads FROM:TO:STEP (e.g. 0.05:0.95:0.05), stopping after the first saturated
    /// point; writes the curve to --csv and --svg.
    #[arg(long, value_name = "FROM:TO:STEP")]
    sweep: Option<String>,
    /// Where the sweep's CSV goes [default: noc-sweep.csv]. It starts with the run's context
    /// (`# key: value` lines) and gains each load's row as it finishes; run again with the
    /// same settings, the loads already there are kept, not run again.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Start the sweep's CSV over instead of keeping the loads already in it.
    #[arg(long)]
    no_resume: bool,
    /// Where the sweep's plot goes [default: noc-sweep.svg].
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Draw the network's links coloured by utilisation over the measured window (SVG; 2-D
    /// meshes and tori and Tenstorrent grids; with --router booksim, BookSim's window, from
    /// the reset after warm-up to the drain). One load only.
    #[arg(long, value_name = "FILE.svg")]
    heatmap: Option<PathBuf>,
    /// Also report every link's flits, utilisation and cycles blocked on credits (all of
    /// them in JSON, the ten busiest in the table), over the measured window: utilisation is
    /// flits per cycle of it, blocked cycles those in which a flit waiting for the link had
    /// no credit. With --router booksim the window is BookSim's (from the reset after
    /// warm-up to the drain, that of the accepted rate) and a blocked cycle is one in which
    /// switch allocation held a flit for the link for want of a credit (with
    /// sw_alloc_delay > 1, the cycles the stalled allocation holds it).
    #[arg(long)]
    links: bool,
    /// Write a Chrome trace-event JSON file (open it in ui.perfetto.dev): a process per
    /// source router, each packet as its time in the source queue and its time in the network
    /// (warm-up, window and drain), and a counter per link with its utilisation over the window.
    /// One load only.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// The most events the trace keeps; the file says how many were cut.
    #[arg(long, value_name = "N", default_value_t = crate::args::DEFAULT_TRACE_LIMIT)]
    trace_limit: usize,
    /// Print JSON (keys: offered_flits_per_node_cycle, accepted_flits_per_node_cycle,
    /// average_latency_cycles, p99_latency_cycles, average_hops, saturated, simulated_cycles,
    /// flit_hops, and more); an array of them for --sweep.
    #[arg(long)]
    json: bool,
}

/// The router configuration: file, then flags.
fn router_config(a: &NocArgs) -> Result<RouterConfig, Failure> {
    let (mut cfg, file) = match &a.config {
        Some(p) => {
            let file = p.display().to_string();
            let cfg: RouterConfig = podsim_config::parse_toml(&file, &read(p)?)?;
            (cfg, file)
        }
        None => (RouterConfig::default(), "<command line>".to_string()),
    };
    cfg.memory_limit = crate::memory_limit();
    cfg.apply(&podsim_noc::RouterOverrides {
        packet_flits: a.packet_flits,
        vcs: a.vcs,
        buffer_flits: a.buffer_flits,
        pipeline_stages: a.pipeline_stages,
        link_cycles: a.link_cycles,
        router: a.router.as_deref(),
        arbitration: a.arbitration.as_deref(),
    })
    .map_err(|e| flag_err(&format!("--{}", e.key.replace('_', "-")), e.why))?;
    cfg.validate().map_err(|e| {
        let by_flag = a.config.is_none()
            || matches!(e.key.as_str(), "vcs" | "buffer_flits" | "packet_flits")
                && flag_given(a, &e.key);
        if by_flag {
            flag_err(&format!("--{}", e.key.replace('_', "-")), &e.why)
        } else {
            Failure::usage(format!("{file}: `{}`: {}", e.key, e.why))
        }
    })?;
    Ok(cfg)
}

fn flag_given(a: &NocArgs, key: &str) -> bool {
    match key {
        "vcs" => a.vcs.is_some(),
        "buffer_flits" => a.buffer_flits.is_some(),
        "packet_flits" => a.packet_flits.is_some(),
        _ => false,
    }
}

/// A packet-level run's network and settings, resolved and checked from the command line.
struct NocJob<'a> {
    a: &'a NocArgs,
    net: podsim_topology::Network,
    routing: NocRouting,
    cfg: RouterConfig,
    /// The run at `--rate` (0 for a sweep, whose loads replace it).
    base: RunSpec,
    /// Whether BookSim's router runs.
    booksim: bool,
    /// The heading of the output: traffic, network, routing and routers.
    title: String,
}

impl<'a> NocJob<'a> {
    /// The network, routing, router configuration and traffic the arguments name.
    fn new(a: &'a NocArgs) -> Result<NocJob<'a>, Failure> {
        let (spec, file) =
            crate::system_spec("--topology", &a.topology, None, None, None, a.nodes)?;
        let net = build(&spec, &file)?;
        let (routing, pattern) =
            podsim_noc::resolve_run(&net, a.routing.as_deref(), &a.traffic, a.cycles)
                .map_err(|e| flag_err(&format!("--{}", e.key), e.why))?;
        let cfg = router_config(a)?;
        let base = RunSpec {
            seed: a.seed,
            cycles: a.cycles,
            ..RunSpec::new(pattern, a.rate.unwrap_or(0.0))
        };
        let booksim = cfg.router == podsim_noc::RouterMode::Booksim;
        let title = podsim_report::noc_title(&a.traffic, &net, routing, &cfg);
        Ok(NocJob {
            a,
            net,
            routing,
            cfg,
            base,
            booksim,
            title,
        })
    }
}

/// A run's error: a setting refused names its flag (the topology's when no flag sets it).
fn noc_err(e: podsim_noc::NocError) -> Failure {
    match e {
        podsim_noc::NocError::Config(c) => {
            let flag = match c.key.as_str() {
                "rate" => "--rate",
                "cycles" => "--cycles",
                "routing" => "--routing",
                "vcs" => "--vcs",
                "seeds" => "--seeds",
                _ => "--topology",
            };
            flag_err(flag, c.why)
        }
        other => Failure::runtime(other.to_string()),
    }
}

/// Run `podsim noc`.
pub fn noc_cmd(a: &NocArgs) -> Result<ExitCode, Failure> {
    let job = NocJob::new(a)?;
    crate::args::no_resume_needs_sweep(a.sweep.is_some(), a.no_resume)?;
    if a.sweep.is_none() && (a.csv.is_some() || a.svg.is_some()) {
        return Err(flag_err(
            if a.csv.is_some() { "--csv" } else { "--svg" },
            "only a --sweep writes a curve; add --sweep or drop the flag",
        ));
    }
    crate::args::trace_limit_needs_trace(a.trace.is_some(), a.trace_limit)?;
    if let Some(n) = a.seeds {
        return seeds(&job, n);
    }
    match &a.sweep {
        Some(s) => sweep(&job, s),
        None => one_load(&job),
    }
}

/// Run `podsim noc --seeds N`: each load's seeds, their mean and spread.
fn seeds(job: &NocJob, n: u32) -> Result<ExitCode, Failure> {
    let a = job.a;
    let rates = match (&a.sweep, a.rate) {
        (Some(s), None) => podsim_noc::parse_rates(s).map_err(|e| flag_err("--sweep", e.why))?,
        (None, Some(r)) => vec![r],
        _ => {
            return Err(flag_err(
                "--seeds",
                "give one of --rate and --sweep with it",
            ));
        }
    };
    let (net, cfg) = (&job.net, &job.cfg);
    let loads = podsim_noc::sweep_seeds(net, job.routing, cfg, &job.base, &rates, n);
    let loads = loads.map_err(noc_err)?;
    match (a.json, a.sweep.is_some()) {
        (true, true) => outln!("{}", podsim_report::to_json(&loads)),
        (true, false) => outln!("{}", podsim_report::to_json(&loads[0])),
        _ => out!("{}", podsim_report::noc_seeds_text(&job.title, &loads)),
    }
    Ok(ExitCode::SUCCESS)
}

/// The loads of a sweep as they ended: each result, with its JSON if it ran now (`None`:
/// kept from the CSV), and the loads that failed.
type Curve = (Vec<(podsim_noc::NocResult, Option<Value>)>, Vec<String>);

/// Run `podsim noc --sweep`: the loads the CSV does not hold yet, a batch at a time until the
/// first saturated one, then the curve.
fn sweep(job: &NocJob, s: &str) -> Result<ExitCode, Failure> {
    let a = job.a;
    if a.trace.is_some() {
        return Err(flag_err(
            "--trace",
            "a trace records one run; give --rate instead of --sweep",
        ));
    }
    if a.rate.is_some() {
        return Err(flag_err("--rate", "give --rate or --sweep, not both"));
    }
    if a.heatmap.is_some() {
        return Err(flag_err(
            "--heatmap",
            "a heatmap draws one load; give --rate instead of --sweep",
        ));
    }
    let csv_path = a
        .csv
        .clone()
        .unwrap_or_else(|| PathBuf::from("noc-sweep.csv"));
    let rates = podsim_noc::parse_rates(s).map_err(|e| flag_err("--sweep", e.why))?;
    let mut context = podsim_report::sweep_file::base_context();
    context.extend([
        ("topology", a.topology.clone()),
        ("routing", job.routing.name().to_string()),
        ("traffic", a.traffic.clone()),
        ("cycles", a.cycles.to_string()),
        ("seed", a.seed.to_string()),
        (
            "router",
            serde_json::to_string(&job.cfg).unwrap_or_else(|_| format!("{:?}", job.cfg)),
        ),
    ]);
    let header = format!("{},error", podsim_report::NOC_CSV_HEADER);
    // Rank 0 (the only process, without MPI) keeps the file and tells the other ranks
    // which loads it holds already.
    let mut opened = podsim_report::sweep_file::open_on_rank0(
        &csv_path,
        &context,
        &header,
        !a.no_resume,
        "loads",
    )?;
    let curve = sweep_loads(job, &rates, &mut opened)?;
    if opened.is_none() {
        // Another rank: rank 0 writes the curve and prints.
        return Ok(ExitCode::SUCCESS);
    }
    print_curve(job, &curve, &csv_path)
}

/// Run a sweep's loads not in the file, a batch at a time on every core of every rank; each
/// lands in the file, in load order, as its batch ends; the sweep stops at the first
/// saturated load (a kept one included, as it did the first time).
fn sweep_loads(
    job: &NocJob,
    rates: &[f64],
    opened: &mut podsim_report::sweep_file::Opened,
) -> Result<Curve, Failure> {
    let (rank, ranks) = podsim_ranks::place();
    let (rates, kept_rates): (Vec<f64>, std::collections::HashSet<String>) =
        podsim_ranks::share(opened.as_ref().map(|(_, kept)| {
            let rates = match rates.iter().position(|r| {
                kept.get(&r.to_string())
                    .is_some_and(|f| f.get(10).map(String::as_str) == Some("true"))
            }) {
                Some(i) => rates[..=i].to_vec(),
                None => rates.to_vec(),
            };
            (rates, kept.keys().cloned().collect())
        }))?;
    let batch = rayon::current_num_threads().max(1) * ranks;
    // Points to run: the loads not kept (the sweep may stop earlier, at saturation).
    podsim_report::progress::count(
        rates
            .iter()
            .filter(|r| !kept_rates.contains(&r.to_string()))
            .count() as u64,
    );
    let mut curve: Vec<(podsim_noc::NocResult, Option<Value>)> = Vec::new();
    let mut failures = Vec::new();
    for chunk in rates.chunks(batch) {
        let fresh = podsim_report::sweep_file::run_batch(chunk.len(), |i| {
            (!kept_rates.contains(&chunk[i].to_string())).then(|| {
                let point = sweep_point(job, chunk[i]);
                podsim_report::progress::tick();
                point
            })
        })?;
        let mut stop = false;
        if let (Some(fresh), Some((file, kept))) = (fresh, opened.as_mut()) {
            for (&rate, got) in chunk.iter().zip(fresh) {
                let r = match got {
                    None => {
                        let f = &kept[&rate.to_string()];
                        podsim_report::noc_result_from_csv(f).map(|r| (r, None))
                    }
                    Some(NocPoint::Done(row, v)) => {
                        file.append(&format!("{row},"))?;
                        let f: Vec<String> = row.split(',').map(str::to_string).collect();
                        podsim_report::noc_result_from_csv(&f).map(|r| (r, Some(v)))
                    }
                    Some(NocPoint::Refused(key, why)) => {
                        return Err(noc_err(podsim_noc::NocError::Config(
                            podsim_noc::ConfigError { key, why },
                        )));
                    }
                    Some(NocPoint::Failed(e)) => {
                        // Recorded with its reason; the sweep goes on.
                        let (row, why) = podsim_report::noc_failed_row(rate, &e);
                        file.append(&row)?;
                        failures.push(format!("{rate}: {why}"));
                        None
                    }
                };
                if let Some((r, v)) = r {
                    let saturated = r.saturated;
                    curve.push((r, v));
                    if saturated {
                        stop = true;
                        break;
                    }
                }
            }
        }
        if podsim_ranks::share((rank == 0).then_some(stop))? {
            break;
        }
    }
    Ok((curve, failures))
}

/// Run one load of a sweep: its CSV row and JSON, a refusal of the configuration or a
/// failure of the run.
fn sweep_point(job: &NocJob, rate: f64) -> NocPoint {
    match podsim_noc::run(
        &job.net,
        job.routing,
        &job.cfg,
        &RunSpec {
            rate,
            ..job.base.clone()
        },
    ) {
        Ok(r) => NocPoint::Done(
            podsim_report::noc_csv_row(&r),
            podsim_report::noc_result_json(&r, &job.net, job.a.links),
        ),
        Err(podsim_noc::NocError::Config(c)) => NocPoint::Refused(c.key, c.why),
        Err(e) => NocPoint::Failed(e.to_string()),
    }
}

/// Draw a sweep's curve and print it (the table or JSON); an error naming the loads that
/// failed.
fn print_curve(
    job: &NocJob,
    (curve, failures): &Curve,
    csv_path: &std::path::Path,
) -> Result<ExitCode, Failure> {
    let a = job.a;
    let svg_path = a
        .svg
        .clone()
        .unwrap_or_else(|| PathBuf::from("noc-sweep.svg"));
    let results: Vec<podsim_noc::NocResult> = curve.iter().map(|(r, _)| r.clone()).collect();
    podsim_report::noc_curve_svg(&svg_path, &job.title, &results)
        .map_err(|e| Failure::runtime(e.to_string()))?;
    if a.json {
        outln!(
            "{}",
            podsim_report::noc_curve_json(curve, &job.net, a.links)
        );
    } else {
        out!(
            "{}",
            podsim_report::noc_curve_text(&job.title, &results, csv_path, &svg_path, failures)
        );
    }
    if !failures.is_empty() {
        return Err(Failure::runtime(format!(
            "{} of the sweep's loads failed (recorded in {}; run again to retry them)",
            failures.len(),
            csv_path.display()
        )));
    }
    Ok(ExitCode::SUCCESS)
}

/// Run `podsim noc --rate`: one load, with its heatmap and trace.
fn one_load(job: &NocJob) -> Result<ExitCode, Failure> {
    let (a, net) = (job.a, &job.net);
    if a.rate.is_none() {
        return Err(flag_err(
            "--rate",
            "missing: give a load in flits per node per cycle, e.g. --rate 0.3 (or --sweep)",
        ));
    }
    let grid = podsim_report::noc_grid(net);
    if a.heatmap.is_some() && grid.is_none() {
        return Err(flag_err(
            "--heatmap",
            format!(
                "draws 2-D grids (mesh:WxH, torus:WxH, grayskull, wormhole); {} is not one",
                net.shorthand()
            ),
        ));
    }
    let mut log = podsim_noc::PacketLog {
        limit: a.trace_limit,
        ..Default::default()
    };
    let r = podsim_noc::run_logged(
        net,
        job.routing,
        &job.cfg,
        &job.base,
        a.trace.is_some().then_some(&mut log),
    )
    .map_err(noc_err)?;
    if let (Some(path), Some(grid)) = (&a.heatmap, grid) {
        podsim_report::noc_heatmap_svg(path, &job.title, job.base.rate, &r, grid)
            .map_err(|e| Failure::runtime(e.to_string()))?;
    }
    if let Some(path) = &a.trace {
        let t = podsim_report::noc_trace(
            &log,
            &r,
            &[
                ("command", serde_json::json!("noc")),
                ("title", serde_json::json!(job.title)),
            ],
            a.trace_limit,
        );
        std::fs::write(path, t.to_json().to_string())
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", path.display())))?;
    }
    if a.json {
        outln!("{}", podsim_report::noc_result_json(&r, net, a.links));
        return Ok(ExitCode::SUCCESS);
    }
    out!(
        "{}",
        podsim_report::noc_load_text(&job.title, &r, job.booksim, a.cycles, a.links)
    );
    Ok(ExitCode::SUCCESS)
}

/// One load of a sweep as a rank computed it: its CSV row and JSON, a refusal of the
/// configuration (key, why), or a failure of the run (a deadlock, say), recorded and passed.
#[derive(serde::Serialize, serde::Deserialize)]
enum NocPoint {
    Done(String, Value),
    Refused(String, String),
    Failed(String),
}
