//! `podsim`: the command-line front end. Only glue: parse arguments, call the library crates,
//! print. Every error is one line on stderr and a non-zero exit.

/// `print!` that ends the program quietly (exit 0) when stdout is closed, as `head` expects.
macro_rules! out {
    ($($t:tt)*) => { $crate::write_stdout(format_args!($($t)*)) };
}
/// `println!` that ends the program quietly (exit 0) when stdout is closed.
macro_rules! outln {
    () => { $crate::write_stdout(format_args!("\n")) };
    ($($t:tt)*) => { $crate::write_stdout(format_args!("{}\n", format_args!($($t)*))) };
}

mod apps_cmd;
mod args;
mod collective_cmd;
mod compute_cmd;
mod dojo_cmd;
mod examples;
mod import_cmd;
mod noc_cmd;
mod report_cmd;
mod run_cmd;
mod tofu_cmd;
mod train_cmd;
mod tt_cmd;
mod validate_cmd;
mod workload_cmd;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use podsim_config::ConfigError;
use podsim_system::SystemSpec;
use podsim_topology::Network;

#[derive(Parser)]
#[command(
    name = "podsim",
    version,
    about = "Simulate machine-learning supercomputers, from the processing element to the pod",
    long_about = None
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The most memory a simulation may hold, e.g. "4 GiB": a run whose estimate is larger is
    /// refused up front, naming the estimate, instead of exhausting the machine [size;
    /// default: the least of the memory available when podsim starts (MemAvailable in
    /// /proc/meminfo), three quarters of its address-space limit (ulimit -v) and its cgroup's
    /// memory limit].
    #[arg(long, global = true, value_name = "SIZE")]
    memory_limit: Option<String>,
    /// The most wall-clock time the command may take, e.g. "30 s", "10 min", "2 h": at the
    /// limit the run stops and says how far it got (simulated time, work done, where finished
    /// sweep points are kept), exiting with status 124 as timeout(1) does [default: none]. A
    /// run estimated to take longer than 10 s says so on stderr before it starts.
    #[arg(long, global = true, value_name = "TIME")]
    time_limit: Option<String>,
    /// No progress on stderr (it shows only on a terminal, for runs longer than a second).
    #[arg(long, global = true)]
    quiet: bool,
}

/// Stop the process `after` the given wall time, saying how far the run got
/// ([`podsim_engine::watch`]) and that nothing more is printed; exit 124 as timeout(1) does.
/// Finished sweep points are already in their CSV (each row is written as its point ends),
/// so running the sweep again resumes after them.
fn stop_after(after: std::time::Duration, label: String) {
    std::thread::spawn(move || {
        std::thread::sleep(after);
        let got = podsim_engine::watch::summary();
        let got = if got.is_empty() {
            "no progress recorded".to_string()
        } else {
            got
        };
        eprintln!(
            "\nstopped: --time-limit {label} reached; the run is incomplete and prints no result ({got})"
        );
        std::process::exit(124);
    });
}

/// The memory limit of this run, in bytes (set once in `main`).
static MEMORY_LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// The most memory a simulation of this run may hold, in bytes: `--memory-limit`, else the
/// memory available when podsim started, else no limit.
pub(crate) fn memory_limit() -> u64 {
    MEMORY_LIMIT.get().copied().unwrap_or(u64::MAX)
}

#[derive(Subcommand)]
enum Command {
    /// Print the metrics of a topology: nodes, links, degree, diameter, average distance,
    /// bisection and the ideal uniform all-to-all bound.
    ///
    /// Bisection bandwidth counts both directions of every cut link (as the Tofu paper does:
    /// the K computer's 4,608 cut links x 5 GB/s x 2 = 46.1 TB/s).
    #[command(after_long_help = podsim_config::SHORTHAND_HELP)]
    Topo {
        /// A shorthand or preset (listed below with `--help`: `mesh:8x8`, `torus:4x4x8`,
        /// `tpuv4:slice=4x4x8:twisted`, `tofu:fugaku`, `dojo:die`, `hybrid:64`, ...) or a TOML file with the keys of a scenario's
        /// [[system]] (topology, link_bandwidth, link_latency, link_kind, interfaces, blocks).
        spec: String,
        /// Bandwidth of every link in each direction, e.g. "50 GB/s", "12.8 GiB/s", "56.1 Gb/s"
        /// [unit required; default: 50 GB/s, the TPU v4 ICI link of tpu-v4-isca2023.txt Table 4].
        /// Not with a file, which states its own.
        #[arg(long, value_name = "BW", allow_hyphen_values = true)]
        link_bandwidth: Option<String>,
        /// Latency of every link, e.g. "100 ns", "0.49 us" [unit required; default: 0 ns;
        /// the metrics do not depend on it]. Not with a file.
        #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
        link_latency: Option<String>,
        /// Network interfaces per node, each injecting at one link's bandwidth
        /// [count; default: one per port of the best-connected node]. Not with a file.
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        interfaces: Option<String>,
        /// Print one JSON object (keys: nodes, links, degree_max, diameter, average_distance,
        /// bisection_links, bisection_bandwidth_bytes_per_s, bisection_method, and more).
        #[arg(long)]
        json: bool,
    },
    /// Run a scenario file and print its report; with no file, the built-in default scenario:
    /// TPU v4 4x4x8 and 4x8x8 slices, regular vs twisted torus, all-to-all on the flow model,
    /// side by side with the gain (the paper's Figure 6 experiment).
    #[command(after_help = examples::RUN)]
    Run {
        /// The scenario file (TOML: [[system]]s and [[run]]s with what = "metrics",
        /// "collective" or "workload" with file = a workload file), or a workload file (one
        /// with a [machine] table, run as `podsim workload FILE`); see examples/ [default: the
        /// built-in scenario].
        scenario: Option<PathBuf>,
        /// Print JSON (one object per system) instead of a table.
        #[arg(long)]
        json: bool,
        /// Write a Chrome trace-event JSON file (open it in ui.perfetto.dev): for a scenario,
        /// every transfer of every collective run (a process per rank of each system and run);
        /// for a workload file, as `podsim workload --trace`.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// The most events the trace keeps; the file says how many were cut.
        #[arg(long, value_name = "N", default_value_t = args::DEFAULT_TRACE_LIMIT)]
        trace_limit: usize,
        /// Add each collective's and workload's energy on every system, as `collective --energy`
        /// and `workload --energy` give it (JSON: energy_j, average_power_w,
        /// energy_breakdown_j, perf_per_watt in each system's object); every such run must be
        /// on the flow model and on chips with power figures (TPU v4 and v3); metrics and
        /// command runs take none (a command run takes `--energy` in its own args)
        #[arg(long)]
        energy: bool,
    },
    /// Run a collective on a topology and report its time, algorithm and bus bandwidth
    /// (nccl-tests conventions) and the physical lower bound; the result is checked.
    #[command(after_help = examples::COLLECTIVE)]
    Collective(collective_cmd::CollectiveArgs),
    /// Communication microbenchmarks: put latency and throughput between neighbours, injection
    /// rate with all of a node's interfaces busy, all-to-all throughput per endpoint.
    Microbench(collective_cmd::MicroArgs),
    /// Tile a GEMM onto a systolic array: cycles, folds, utilisation, mapping efficiency,
    /// SRAM and DRAM traffic, in podsim's RTL-exact convention or SCALE-Sim's.
    #[command(after_help = examples::GEMM)]
    Gemm(compute_cmd::GemmArgs),
    /// A chip's roofline: peak FLOP/s, memory bandwidth, the ridge point and the attainable
    /// FLOP/s at an operational intensity; --plot draws TPU v4, TPU v3 and A100 (Fig. 16).
    Roofline(compute_cmd::RooflineArgs),
    /// TPU v4 pod goodput when CPU hosts fail, with optical circuit switches or static wiring
    /// (Fig. 4): closed form and Monte Carlo.
    Availability(compute_cmd::AvailabilityArgs),
    /// Run the lecture's output-stationary systolic array register for register on int8
    /// matrices: the result and the cycle each output settles.
    Systolic(compute_cmd::SystolicArgs),
    /// Packet level: cycle-level routers with virtual channels and credits under synthetic
    /// traffic; latency, throughput, hops and saturation at one load, or a latency-throughput
    /// curve with --sweep. A network of 512 routers or more runs on several threads (one part
    /// of the routers per thread, up to 32; RAYON_NUM_THREADS sets how many); podsim's router
    /// with one pipeline stage and round-robin arbitration runs on a faster engine (in parts
    /// too where every channel takes the same cycles). The output is the same on any thread
    /// count.
    #[command(after_help = examples::NOC)]
    Noc(noc_cmd::NocArgs),
    /// Run a workload on a machine: a DAG of compute, memory, collective and send tasks on its
    /// chips, communication contending on the links at the chosen fidelity; prints each task's
    /// span, the compute and communication time, what overlap did not hide, and the critical
    /// path.
    #[command(after_help = examples::WORKLOAD)]
    Workload(workload_cmd::WorkloadArgs),
    /// A transformer's training step on a TPU v4 slice (Table 3's partition spec [pipeline,
    /// data, model1, model2] with 1D/2D activation/weight partitioning, mapped onto the torus):
    /// throughput, MFU, memory per chip, and where the time goes; or --search for the best
    /// slice and partitioning.
    #[command(after_help = examples::TRAIN)]
    Train(train_cmd::TrainArgs),
    /// A DLRM training step (Fig. 8's model) on a TPU v4 or v3 slice: embedding lookups on the
    /// SparseCores or in host memory, their all-to-all on the flow model, the dense layers.
    Dlrm(apps_cmd::DlrmArgs),
    /// The TPU v4 paper's eight production applications (CNN0, CNN1, RNN0, RNN1, BERT0, BERT1,
    /// DLRM0, DLRM1, as public models of each kind) trained on a TPU v4 and a TPU v3 slice of
    /// the same chips: step times, v4 over v3 (Fig. 12), CMEM on over off (Fig. 13) and the
    /// geometric means.
    Apps(apps_cmd::AppsArgs),
    /// Pack jobs of Table 2's slice mix onto a TPU v4 pod whose hosts fail (OCS: any free,
    /// healthy blocks form a slice): utilisation, waiting time, and the mix's shares.
    Schedule(apps_cmd::ScheduleArgs),
    /// The Tofu family's node and link: `put` and `rdma` break down Table III's latencies
    /// (Fig. 7); `barrier` wires and times the Tofu barrier (Table VI, Fig. 8); `slicing` runs
    /// dynamic packet slicing on a link with errors and lane faults; `frame` encodes and
    /// decodes TofuD's routing header (Figs. 4-6); `node` places processes on a node's CQs and
    /// BCHs (Table II).
    #[command(after_help = examples::TOFU)]
    Tofu(tofu_cmd::TofuArgs),
    /// The DOJO node and its mechanisms (dojo-microarchitecture.txt): `node` runs a kernel
    /// through the node's funnel pipeline (Table 1); `barrier` builds and times hardware
    /// barrier trees; `transfer` moves a push, pull, block or broadcast packet by packet;
    /// `shortcuts` sends far streams through the Z-plane; `dma` runs an interface processor's
    /// DMA descriptor; `host` writes from a host into its DIPs' HBM.
    #[command(after_help = examples::DOJO)]
    Dojo(dojo_cmd::DojoArgs),
    /// Tenstorrent DRAM bandwidth at the packet level (tenstorrent-dram-bandwidth.txt): one
    /// reader kernel per bank with transaction-ID barriers, placed on the top rows, the
    /// columns or next to the banks (relocated around harvested rows), per-reader or shared
    /// VCs, sharded or interleaved tensors, NoC 0 or 1; bandwidth, utilisation, per bank,
    /// overlapping routes, busiest link.
    #[command(after_help = examples::DRAM)]
    Dram(tt_cmd::DramArgs),
    /// The DRAM-bound 1-D sharded matmul on a Wormhole: in1 width-sharded over the 12 banks and
    /// read next to them at the packet level, in0 multicast or unicast, single or double
    /// buffering, 32x32/16/8 tiles; time, DRAM bandwidth, utilisation, compute, imbalance.
    Matmul(tt_cmd::MatmulArgs),
    /// Convert values to a number format (BF16, FP16, FP8, DOJO CFP8/CFP16) and show the bits.
    Numerics(compute_cmd::NumericsArgs),
    /// Run another tool's input files on podsim's models: `scalesim CFG [TOPOLOGY]` (SCALE-Sim
    /// layers as GEMMs in its cycle convention), `booksim CFG` (a BookSim 2 router and the noc
    /// command), `astra-sim NETWORK [SYSTEM]` (an ASTRA-sim network as a system file and its
    /// collective) and `chakra TRACE.et...` (Chakra traces as a workload); each names every key
    /// podsim does not honour.
    Import(import_cmd::ImportArgs),
    /// Write one self-contained HTML report (context, tables, plots, link heatmaps, traces
    /// that open in Perfetto) from scenario files (run here), podsim's JSON output, sweep CSVs,
    /// SVG plots and traces; with no results, from the built-in default scenario
    Report(report_cmd::ReportArgs),
    /// Print a shell completion script for podsim: bash, zsh, fish, elvish or powershell
    /// (e.g. `podsim completions bash > ~/.local/share/bash-completion/completions/podsim`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print podsim's man page (roff; `podsim man | man -l -`), or with --out write podsim.1 and
    /// one page per command and subcommand (podsim-dram.1, podsim-dojo-node.1, ...) into a
    /// directory.
    Man {
        /// Write the pages into this directory (created if missing) instead of printing the
        /// top-level page.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Reproduce every published figure in validation/ and print paper vs podsim with each
    /// case's class (structural: a count or closed form of the configuration; calibrated: a
    /// parameter was fitted to this figure or the value is typed in; prediction: computed from
    /// lower-level mechanisms with nothing fitted to it), ending with a summary by class; exits
    /// non-zero if any case, of any class, differs by more than its tolerance.
    #[command(after_help = examples::VALIDATE)]
    Validate {
        /// Read the cases from this directory instead of the set built into the binary
        /// [default: the built-in copy of validation/].
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Write each case's podsim value to this CSV as it is done (context lines first:
        /// podsim's version, the command, a fingerprint of the case files); run again with the
        /// same cases, the values already there are kept, not computed again.
        #[arg(long, value_name = "FILE")]
        csv: Option<PathBuf>,
        /// Start the CSV over instead of keeping the cases already in it.
        #[arg(long)]
        no_resume: bool,
        /// Print one JSON object: `cases` (each with figure, source, class, calibrated_by where
        /// calibrated, quantity, unit, published, podsim, tolerance, tolerance_reason, result:
        /// pass, fail or not_reproduced, and reason where not reproduced) and `summary`
        /// (prediction_pass, prediction_fail, calibrated, calibrated_fail, structural,
        /// structural_fail, not_reproduced).
        #[arg(long)]
        json: bool,
    },
}

/// An error for the user: printed on one line, with exit code 2 for a usage error (bad flags,
/// files or names: the user can fix the input) and 1 for a runtime failure (the model could not
/// finish, an output could not be written).
pub(crate) struct Failure {
    msg: String,
    usage: bool,
}

impl Failure {
    /// What went wrong, as printed after `error: `.
    pub(crate) fn msg(&self) -> &str {
        &self.msg
    }
    /// Bad input: exit code 2.
    pub(crate) fn usage(msg: impl Into<String>) -> Self {
        Failure {
            msg: msg.into(),
            usage: true,
        }
    }
    /// The run failed: exit code 1.
    pub(crate) fn runtime(msg: impl Into<String>) -> Self {
        Failure {
            msg: msg.into(),
            usage: false,
        }
    }
}

impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Self {
        Failure::usage(e.to_string())
    }
}

impl From<podsim_report::HtmlError> for Failure {
    /// A report's input that is not one it takes is a usage error; a plot it could not draw a
    /// runtime one.
    fn from(e: podsim_report::HtmlError) -> Self {
        match e {
            podsim_report::HtmlError::Input { .. } => Failure::usage(e.to_string()),
            podsim_report::HtmlError::Plot { .. } => Failure::runtime(e.to_string()),
        }
    }
}

impl From<podsim_report::sweep_file::SweepFileError> for Failure {
    /// A file the sweep may not keep or overwrite is a usage error; one it cannot write a
    /// runtime one.
    fn from(e: podsim_report::sweep_file::SweepFileError) -> Self {
        match e {
            podsim_report::sweep_file::SweepFileError::Refused(_) => Failure::usage(e.to_string()),
            podsim_report::sweep_file::SweepFileError::Write { .. } => {
                Failure::runtime(e.to_string())
            }
        }
    }
}

fn main() -> ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    let args = podsim_config::negative_values_last(std::env::args_os().collect());
    // As `Cli::try_parse_from`, keeping the subcommand's name as typed for the spinner.
    let parsed = Cli::command().try_get_matches_from(args).and_then(|m| {
        let name = m.subcommand_name().unwrap_or("").to_string();
        Ok((Cli::from_arg_matches(&m)?, name))
    });
    let (cli, name) = match parsed {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                e.exit();
            }
            eprintln!("{}", podsim_config::one_line(&e.render().to_string()));
            return ExitCode::from(2);
        }
    };
    // Under mpirun (with the `mpi` feature) MPI stays up until main returns.
    let _mpi = podsim_ranks::init();
    let limit = match cli.memory_limit.as_deref() {
        Some(s) => match s.parse::<podsim_units::Bytes>() {
            Ok(b) if b.0 > 0 => b.0,
            Ok(_) => {
                eprintln!("error: <command line>: `--memory-limit`: expected more than 0 B");
                return ExitCode::from(2);
            }
            Err(e) => {
                eprintln!(
                    "error: <command line>: `--memory-limit`: {e}; expected a size such as \"4 GiB\""
                );
                return ExitCode::from(2);
            }
        },
        None => podsim_system::machine::default_memory_limit(),
    };
    let _ = MEMORY_LIMIT.set(limit);
    if let Some(t) = cli.time_limit.as_deref() {
        match podsim_engine::watch::parse_wall_time(t) {
            Ok(d) => stop_after(d, t.trim().to_string()),
            Err(why) => {
                eprintln!("error: <command line>: `--time-limit`: `{t}`: {why}");
                return ExitCode::from(2);
            }
        }
    }
    // Every network model is built under the same limit (podsim_system::machine).
    podsim_system::machine::set_memory_limit(limit);
    podsim_report::progress::set_quiet(cli.quiet);
    podsim_engine::watch::set_announcer(podsim_engine::watch::announce_on_stderr);
    // A spinner for every command but those that count their own steps.
    let spinner = match &cli.command {
        Command::Validate { .. } | Command::Completions { .. } | Command::Man { .. } => None,
        _ => Some(podsim_report::progress::Progress::start(
            &format!("podsim {name}"),
            None,
        )),
    };
    let result = dispatch(cli.command);
    if let Some(p) = spinner {
        p.finish();
    }
    match result {
        Ok(code) => code,
        Err(Failure { msg, usage }) => {
            eprintln!("error: {}", msg.replace('\n', " "));
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

/// Run one command (what `main` runs after the global flags, and what a scenario's command
/// run runs).
fn dispatch(command: Command) -> Result<ExitCode, Failure> {
    match command {
        Command::Topo {
            spec,
            link_bandwidth,
            link_latency,
            interfaces,
            json,
        } => topo(
            &spec,
            link_bandwidth.as_deref(),
            link_latency.as_deref(),
            interfaces.as_deref(),
            json,
        ),
        Command::Run {
            scenario,
            json,
            trace,
            trace_limit,
            energy,
        } => run_cmd::run(
            scenario.as_deref(),
            json,
            trace.as_deref(),
            trace_limit,
            energy,
        ),
        Command::Validate {
            dir,
            csv,
            no_resume,
            json,
        } => validate_cmd::validate(dir.as_deref(), csv.as_deref(), no_resume, json),
        Command::Collective(a) => collective_cmd::collective(&a),
        Command::Microbench(a) => collective_cmd::microbench(&a),
        Command::Gemm(a) => compute_cmd::gemm_cmd(&a),
        Command::Roofline(a) => compute_cmd::roofline_cmd(&a),
        Command::Availability(a) => compute_cmd::availability_cmd(&a),
        Command::Systolic(a) => compute_cmd::systolic_cmd(&a),
        Command::Numerics(a) => compute_cmd::numerics_cmd(&a),
        Command::Noc(a) => noc_cmd::noc_cmd(&a),
        Command::Workload(a) => workload_cmd::workload_cmd(&a),
        Command::Train(a) => train_cmd::train_cmd(&a),
        Command::Dlrm(a) => apps_cmd::dlrm_cmd(&a),
        Command::Apps(a) => apps_cmd::apps_cmd(&a),
        Command::Schedule(a) => apps_cmd::schedule_cmd(&a),
        Command::Tofu(a) => tofu_cmd::tofu_cmd(&a),
        Command::Dojo(a) => dojo_cmd::dojo_cmd(&a),
        Command::Dram(a) => tt_cmd::dram_cmd(&a),
        Command::Completions { shell } => completions(shell),
        Command::Import(a) => import_cmd::import_cmd(&a),
        Command::Report(a) => report_cmd::report_cmd(&a),
        Command::Man { out } => man(out.as_deref()),
        Command::Matmul(a) => tt_cmd::matmul_cmd(&a),
    }
}

thread_local! {
    /// When set, what the commands print goes here instead of stdout (a scenario's command
    /// run inside `podsim run --json` or `podsim report`).
    static CAPTURE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Write to stdout. A reader that has gone away (`podsim run | head -1`) ends the program with
/// success and no message, as other command-line tools do; any other write error is a failure.
pub(crate) fn write_stdout(args: std::fmt::Arguments) {
    use std::io::Write;
    let captured = CAPTURE.with(|c| match c.borrow_mut().as_mut() {
        Some(buf) => {
            let _ = std::fmt::Write::write_fmt(buf, args);
            true
        }
        None => false,
    });
    if captured {
        return;
    }
    let written = podsim_report::progress::suspend(|| {
        let mut out = std::io::stdout().lock();
        out.write_fmt(args).and_then(|()| out.flush())
    });
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(1);
    }
}

/// Print one JSON object, or an array when a list of settings gave several.
pub(crate) fn one_or_many(mut objs: Vec<serde_json::Value>) {
    if objs.len() == 1 {
        outln!("{}", objs.remove(0));
    } else {
        outln!("{}", serde_json::Value::Array(objs));
    }
}

/// Read a text input file (at most [`podsim_config::MAX_INPUT_BYTES`]).
pub(crate) fn read(path: &Path) -> Result<String, Failure> {
    podsim_config::read_input(path).map_err(|e| Failure::usage(e.to_string()))
}

pub(crate) fn build(spec: &SystemSpec, file: &str) -> Result<Network, Failure> {
    spec.build()
        .map_err(|e| Failure::usage(format!("{file}: `{}`: {}", e.key, e.why)))
}

/// The system a `--topology` (or `topo`'s SPEC) names ([`podsim_config::system_arg`]), with
/// the file its errors cite; a shorthand's note goes to stderr.
pub(crate) fn system_spec(
    flag: &str,
    spec: &str,
    link_bandwidth: Option<&str>,
    link_latency: Option<&str>,
    interfaces: Option<&str>,
    nodes: Option<u32>,
) -> Result<(SystemSpec, String), Failure> {
    let got =
        podsim_config::system_arg(flag, spec, link_bandwidth, link_latency, interfaces, nodes)
            .map_err(|e| Failure::usage(e.to_string()))?;
    if let Some(note) = got.note {
        eprintln!("note: {note}");
    }
    Ok((got.spec, got.file))
}

fn topo(
    spec: &str,
    link_bandwidth: Option<&str>,
    link_latency: Option<&str>,
    interfaces: Option<&str>,
    json: bool,
) -> Result<ExitCode, Failure> {
    let (system, file) = system_spec("SPEC", spec, link_bandwidth, link_latency, interfaces, None)?;
    let net = build(&system, &file)?;
    let m = net.metrics();
    if json {
        outln!("{}", podsim_report::metrics_json(&net, &m));
    } else {
        out!(
            "{}",
            podsim_report::metrics_table(std::slice::from_ref(&system.name), &[(net, m)])
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A scenario's failure as the CLI reports it: a system that cannot be built is a usage error,
/// a run that could not finish a runtime one.
pub(crate) fn scenario_failure(e: podsim_system::scenario::ScenarioError) -> Failure {
    match e {
        podsim_system::scenario::ScenarioError::Build { .. } => Failure::usage(e.to_string()),
        _ => Failure::runtime(e.to_string()),
    }
}

/// `podsim completions SHELL`.
fn completions(shell: clap_complete::Shell) -> Result<ExitCode, Failure> {
    use clap::CommandFactory;
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "podsim", &mut buf);
    out!("{}", String::from_utf8_lossy(&buf));
    Ok(ExitCode::SUCCESS)
}

/// `podsim man [--out DIR]`.
fn man(out: Option<&Path>) -> Result<ExitCode, Failure> {
    use clap::CommandFactory;
    let render = |c: &clap::Command| {
        podsim_report::man::page(c)
            .map_err(|e| Failure::runtime(format!("cannot render the man page: {e}")))
    };
    let Some(dir) = out else {
        out!(
            "{}",
            String::from_utf8_lossy(&render(&podsim_report::man::command(Cli::command()))?)
        );
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::runtime(format!("{}: cannot create: {e}", dir.display())))?;
    let mut pages = Vec::new();
    podsim_report::man::pages(Cli::command(), "podsim", &mut pages);
    for (name, cmd) in &pages {
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, render(cmd)?)
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", path.display())))?;
    }
    outln!("{} man pages written to {}", pages.len(), dir.display());
    Ok(ExitCode::SUCCESS)
}
