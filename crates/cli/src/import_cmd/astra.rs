//! `podsim import astra-sim`: an ASTRA-sim network configuration and optionally its system
//! configuration (read by `podsim_import::astra`) as a podsim system file, printed or
//! written, the `podsim collective` command that runs the system's collective on it, and that
//! run.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_collective::{Kind, Setup};
use podsim_import::astra::{AstraRun, Mapped, Network, SystemConfig};

use crate::args::{flag_err, listed, size};
use crate::{Failure, read};

/// The arguments of `podsim import astra-sim`.
#[derive(Args)]
pub struct AstraArgs {
    /// The network configuration: ASTRA-sim 2.0's YAML (`topology: [ Ring ]`, `npus_count`,
    /// `bandwidth` in GB/s of 2^30 B, `latency` in ns, one entry per dimension) or the older
    /// analytical JSON (`topology-name`, `dimensions-count`, `topologies-per-dim`,
    /// `units-count`, `links-count`, `link-latency`, `link-bandwidth`).
    network: PathBuf,
    /// The system configuration (JSON): its `<collective>-implementation` list picks the
    /// algorithm (ring on one dimension: ring; ring on every dimension: dimension;
    /// halvingDoubling and doubleBinaryTree on one dimension; oneRing: ring; direct or
    /// oneDirect for all-to-all: direct on one dimension, dimension on several) [default: the
    /// collective's first podsim algorithm, as `podsim collective`].
    system: Option<PathBuf>,
    /// The collective to run: all-reduce, reduce-scatter, all-gather or all-to-all.
    #[arg(
        long,
        value_name = "KIND",
        default_value = "all-reduce",
        value_parser = listed([
            "all-reduce", "reduce-scatter", "all-gather", "all-to-all",
        ]),
    )]
    collective: String,
    /// Each rank's buffer, as `podsim collective --bytes`.
    #[arg(long, value_name = "SIZE", default_value = "64 MiB")]
    size: String,
    /// analytic, flow or packet, as `podsim collective --model`.
    #[arg(
        long,
        value_name = "MODEL",
        default_value = "flow",
        value_parser = listed(["analytic", "flow", "packet"]),
    )]
    model: String,
    /// Write the podsim system file (TOML, what `--topology FILE` reads) here instead of
    /// printing it.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print one JSON object (keys: system, command, run (the keys of `podsim collective
    /// --json`), not_honoured).
    #[arg(long)]
    json: bool,
}

/// `podsim import astra-sim`.
pub fn astra(a: &AstraArgs) -> Result<ExitCode, Failure> {
    let file = a.network.display().to_string();
    let net = Network::parse(&file, &read(&a.network)?)?;
    let mapped = Mapped::new(&net)?;
    let mut not_honoured = net.not_honoured.clone();
    let (kind, default_alg, model) = podsim_collective::parse_names(&a.collective, None, &a.model)
        .map_err(|e| flag_err("--collective/--model", e))?;
    if !matches!(
        kind,
        Kind::AllReduce | Kind::ReduceScatter | Kind::AllGather | Kind::AllToAll
    ) {
        return Err(flag_err(
            "--collective",
            format!(
                "{kind}: an ASTRA-sim system configuration names implementations of all-reduce, reduce-scatter, all-gather and all-to-all only"
            ),
        ));
    }
    let bytes = size("--size", &a.size)?;
    let mut alg = default_alg;
    if let Some(sys) = &a.system {
        let sfile = sys.display().to_string();
        let s = SystemConfig::parse(&sfile, &read(sys)?, kind, &net)?;
        alg = s.algorithm;
        not_honoured.extend(s.not_honoured);
    }
    // The system file.
    let toml_text = mapped.system_file(&a.network);
    let spec = podsim_config::parse_system(&file, &toml_text)?;
    let network = crate::build(&spec, &file)?;
    let (models, _) = podsim_system::Models::for_net(&network, None)
        .map_err(|e| Failure::runtime(format!("{file}: {e}")))?;
    let setup = Setup {
        kind,
        algorithm: alg,
        bytes,
        model,
        packets: podsim_net::Packetization::NONE,
        chunk: 0,
        ecmp: true,
        memory_limit: crate::memory_limit(),
    };
    let m = podsim_system::measure_with(&network, &setup, &models)
        .map_err(|e| Failure::runtime(format!("{file}: {kind} on {}: {e}", mapped.topology)))?;
    let system_ref = a
        .out
        .as_ref()
        .map_or("SYSTEM.toml".to_string(), |p| p.display().to_string());
    if let Some(p) = &a.out {
        std::fs::write(p, &toml_text)
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", p.display())))?;
    }
    let run = AstraRun {
        system_toml: &toml_text,
        system_ref: &system_ref,
        topology: &mapped.topology,
        kind,
        algorithm: alg,
        model,
        bytes,
        measurement: &m,
        not_honoured: &not_honoured,
    };
    if a.json {
        outln!("{}", run.json());
    } else {
        out!("{}", run.text(a.out.is_some()));
    }
    Ok(ExitCode::SUCCESS)
}
