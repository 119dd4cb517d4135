//! `podsim run`: a scenario's runs one after another (each command run through podsim's own
//! command line, each other run on the library's models), printed as tables or JSON, with an
//! optional trace; and the pieces `podsim report` shares with it.

use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use podsim_config::parse_scenario;
use podsim_system::Scenario;

use crate::{
    Cli, Command, Failure, args, dispatch, memory_limit, read, scenario_failure, workload_cmd,
};

/// The built-in default scenario (also `examples/tpu-v4-twisted-all-to-all.toml`).
const DEFAULT_SCENARIO: (&str, &str) = (
    "examples/tpu-v4-twisted-all-to-all.toml",
    include_str!("../../../examples/tpu-v4-twisted-all-to-all.toml"),
);

/// A scenario's command run, checked before anything runs: its arguments parse as podsim's
/// command line (with `--json` added when `json` and the command takes it; the flag says
/// whether it did), it is not a command that runs scenarios or prints help files, and it sets
/// no global flag (those belong to the `podsim run` around it).
pub(crate) fn scenario_command(
    scenario: &Scenario,
    index: usize,
    args: &[String],
    json: bool,
) -> Result<(Command, bool), Failure> {
    let key = format!("{}: `run[{index}].args`", scenario.file);
    let parse = |extra: Option<&str>| {
        Cli::try_parse_from(
            std::iter::once("podsim")
                .chain(args.iter().map(String::as_str))
                .chain(extra),
        )
    };
    let (cli, with_json) = match (json, parse(Some("--json"))) {
        (true, Ok(c)) if !args.iter().any(|a| a == "--json") => (c, true),
        _ => (
            parse(None).map_err(|e| {
                // clap's message without its usage lines, on one line.
                let text = e.to_string();
                let why: Vec<&str> = text
                    .lines()
                    .take_while(|l| !l.starts_with("Usage:"))
                    .map(|l| l.trim().trim_start_matches("error: "))
                    .filter(|l| !l.is_empty())
                    .collect();
                Failure::usage(format!("{key}: {}", why.join(" ")))
            })?,
            false,
        ),
    };
    if cli.memory_limit.is_some() || cli.time_limit.is_some() || cli.quiet {
        return Err(Failure::usage(format!(
            "{key}: --memory-limit, --time-limit and --quiet apply to the whole `podsim run`; give them there"
        )));
    }
    if matches!(
        cli.command,
        Command::Run { .. }
            | Command::Report(_)
            | Command::Completions { .. }
            | Command::Man { .. }
    ) {
        return Err(Failure::usage(format!(
            "{key}: `{}` cannot run inside a scenario (a scenario runs commands that simulate)",
            // The command's name: the first word that is not a flag (global flags are refused above).
            args.iter()
                .find(|a| !a.starts_with('-'))
                .map_or("", String::as_str)
        )));
    }
    Ok((cli.command, with_json))
}

/// Run a scenario's checked command from the scenario file's directory; with `capture`, what
/// it prints is returned instead of printed.
pub(crate) fn exec_command(
    scenario: &Scenario,
    command: Command,
    capture: bool,
) -> Result<Option<String>, Failure> {
    let dir = Path::new(&scenario.file)
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && d.is_dir());
    let back = std::env::current_dir().ok();
    if let Some(d) = dir {
        std::env::set_current_dir(d)
            .map_err(|e| Failure::runtime(format!("{}: cannot enter: {e}", d.display())))?;
    }
    if capture {
        crate::CAPTURE.with(|c| *c.borrow_mut() = Some(String::new()));
    }
    let result = dispatch(command);
    let out = if capture {
        crate::CAPTURE.with(|c| c.borrow_mut().take())
    } else {
        None
    };
    if let (Some(_), Some(b)) = (dir, back) {
        std::env::set_current_dir(&b)
            .map_err(|e| Failure::runtime(format!("{}: cannot return: {e}", b.display())))?;
    }
    result?;
    Ok(out)
}

/// `podsim run [SCENARIO]`.
pub(crate) fn run(
    file: Option<&Path>,
    json: bool,
    trace: Option<&Path>,
    trace_limit: usize,
    energy: bool,
) -> Result<ExitCode, Failure> {
    args::trace_limit_needs_trace(trace.is_some(), trace_limit)?;
    let mut t = podsim_report::Trace::new(trace_limit);
    // Each traced run's ranks get their own block of process ids.
    let mut traced_runs = 0u64;
    let scenario: Scenario = match file {
        Some(p) => {
            let text = read(p)?;
            // A workload file (it has a [machine] table) runs as `podsim workload` would.
            if text
                .parse::<toml::Table>()
                .is_ok_and(|t| t.contains_key("machine"))
            {
                return workload_cmd::run_file(p, json, trace, trace_limit, energy);
            }
            let dir = p.parent().map(Path::to_path_buf).unwrap_or_default();
            podsim_config::parse_scenario_with(&p.display().to_string(), &text, &|m| {
                podsim_config::machine_file_near(&dir, m)
            })?
        }
        None => default_scenario()?,
    };
    // Command runs are checked before anything runs.
    let mut commands = std::collections::HashMap::new();
    for (i, r) in scenario.runs.iter().enumerate() {
        if let podsim_system::RunSpec::Command { args } = r {
            commands.insert(i, scenario_command(&scenario, i, args, json)?);
        }
    }
    // With --energy, the runs it applies to, checked before anything runs.
    let mut with_energy = vec![false; scenario.runs.len()];
    if energy {
        for (i, slot) in with_energy.iter_mut().enumerate() {
            *slot = podsim_report::energy_applies(&scenario, i)
                .map_err(|e| args::flag_err("--energy", e))?;
        }
        if !with_energy.contains(&true) {
            return Err(args::flag_err(
                "--energy",
                format!(
                    "{}: no collective or workload run to give an energy to (metrics and command runs take none; a command run takes --energy in its own args)",
                    scenario.file
                ),
            ));
        }
    }
    let mut out = Vec::new();
    if !json {
        outln!("{}", scenario.name);
        if !scenario.description.is_empty() {
            outln!("{}", scenario.description.trim());
        }
    }
    for (i, r) in scenario.runs.iter().enumerate() {
        if let Some((command, with_json)) = commands.remove(&i) {
            let line = match r {
                podsim_system::RunSpec::Command { args } => format!("podsim {}", args.join(" ")),
                _ => String::new(),
            };
            if json {
                let text = exec_command(&scenario, command, true)?.unwrap_or_default();
                out.push(match serde_json::from_str::<serde_json::Value>(&text) {
                    Ok(v) if with_json => serde_json::json!({"command": line, "result": v}),
                    _ => serde_json::json!({"command": line, "output": text}),
                });
            } else {
                outln!();
                outln!("$ {line}");
                exec_command(&scenario, command, false)?;
            }
            continue;
        }
        let result = podsim_system::scenario::run_one(
            &scenario,
            r,
            memory_limit(),
            trace.is_some().then_some(trace_limit),
        )
        .map_err(scenario_failure)?;
        if trace.is_some() {
            podsim_report::add_result_trace(&mut t, &scenario, &result, &mut traced_runs);
        }
        let energies = if with_energy[i] {
            podsim_report::result_energy(&scenario, &result)
                .map_err(|e| args::flag_err("--energy", e))?
        } else {
            Vec::new()
        };
        if json {
            let mut objects = podsim_report::result_json(&scenario, &result);
            for (v, (_, e)) in objects.iter_mut().zip(&energies) {
                *v = podsim_report::to_json_with(v, Some(e));
            }
            out.extend(objects);
        } else {
            outln!();
            out!("{}", podsim_report::result_text(&scenario, &result));
            for (system, e) in &energies {
                outln!("energy on {system}:");
                out!("{}", podsim_units::table::render(&e.rows()));
            }
        }
    }
    if let Some(path) = trace {
        t.about("command", serde_json::json!("run"));
        t.about("scenario", serde_json::json!(scenario.file));
        std::fs::write(path, t.to_json().to_string())
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", path.display())))?;
    }
    if json {
        outln!("{}", serde_json::Value::Array(out));
    }
    Ok(ExitCode::SUCCESS)
}

/// The built-in default scenario.
pub(crate) fn default_scenario() -> Result<Scenario, Failure> {
    Ok(parse_scenario(DEFAULT_SCENARIO.0, DEFAULT_SCENARIO.1)?)
}
