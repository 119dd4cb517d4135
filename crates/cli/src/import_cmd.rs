//! `podsim import`: run another tool's input files on podsim's models. Glue only: the file
//! formats and what podsim makes of them are `podsim_import`'s; this reads the files, runs
//! what it returns and prints.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use podsim_compute::gemm;
use podsim_import::booksim::BooksimImport;
use podsim_import::scalesim::{self, ScalesimConfig};
use podsim_import::{ErrorKind, ImportError};

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
    /// The router it targets: booksim (BookSim 2's router stage by stage, with the file's
    /// delays, credit delay, allocators, iterations and sampling, so the run reproduces
    /// BookSim's latencies) or podsim (podsim's own router, faster: the delays fold into its
    /// pipeline stages and its allocators are separable input-first).
    #[arg(long, value_name = "MODE", default_value = "booksim", value_parser = ["booksim", "podsim"])]
    router: String,
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

impl From<ImportError> for Failure {
    fn from(e: ImportError) -> Self {
        match e.kind {
            ErrorKind::Input => Failure::usage(e.to_string()),
            ErrorKind::Internal => Failure::runtime(e.to_string()),
        }
    }
}

fn scalesim(a: &ScalesimArgs) -> Result<ExitCode, Failure> {
    let file = a.config.display().to_string();
    let cfg = ScalesimConfig::parse(&file, &read(&a.config)?)?;
    let topo_path = cfg.topology_path(&a.config, a.topology.as_deref())?;
    let tfile = topo_path.display().to_string();
    let layers = scalesim::topology(&tfile, &read(&topo_path)?)?;
    let mut results = Vec::new();
    for l in &layers {
        let r = gemm(&cfg.gemm(l))
            .map_err(|e| Failure::usage(format!("{tfile}: layer `{}`: {e}", l.name)))?;
        results.push((l, r));
    }
    if a.json {
        outln!("{}", cfg.run_json(&results));
    } else {
        out!("{}", cfg.run_text(&results));
    }
    Ok(ExitCode::SUCCESS)
}

fn booksim(a: &BooksimArgs) -> Result<ExitCode, Failure> {
    let file = a.config.display().to_string();
    let mode = podsim_noc::RouterMode::parse(&a.router)
        .map_err(|e| crate::args::flag_err("--router", e.why))?;
    let b = BooksimImport::parse(&file, &read(&a.config)?, mode)?;
    let config_ref = a
        .out
        .as_ref()
        .map_or("ROUTER.toml".to_string(), |p| p.display().to_string());
    let command = b.command(&config_ref);
    if let Some(p) = &a.out {
        std::fs::write(p, b.router_file())
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", p.display())))?;
    }
    if a.json {
        outln!("{}", b.json(&command));
    } else {
        out!("{}", b.text(&command, a.out.is_some()));
    }
    Ok(ExitCode::SUCCESS)
}
