//! `podsim report`: one self-contained HTML file from a study's results. Scenario files are
//! run here (the built-in default scenario when no result is given) and give their tables, a
//! bus-bandwidth chart per collective, a link heatmap per system (flow model, rings, grids and
//! tori) and their trace; podsim's JSON output becomes tables, a sweep's CSV its context, its
//! table and its curve, an SVG a figure, a Chrome trace a button that opens it in Perfetto.
//! Every plot is inline SVG, every trace inline JSON: the file needs nothing beside it.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_report::HtmlReport;
use podsim_system::Scenario;
use podsim_system::scenario::RunResult;

use crate::{Failure, read};

/// The arguments of `podsim report`.
#[derive(Args)]
pub struct ReportArgs {
    /// The results, in the order the report shows them: scenario files (.toml: run here, as
    /// `podsim run` would), podsim's JSON output (any command's --json), sweep CSVs (collective
    /// and noc --sweep: the context, the table and the curve), SVG plots (--plot, --heatmap),
    /// Chrome traces (--trace) [default: the built-in default scenario, run here].
    results: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(long, value_name = "FILE.html")]
    out: PathBuf,
    /// The report's title [default: the first scenario's name, or "podsim report"].
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// The most events each scenario's embedded trace keeps (the trace says how many were
    /// cut), so the file stays small enough for a browser.
    #[arg(long, value_name = "N", default_value_t = 20_000)]
    trace_limit: usize,
}

/// `podsim report`.
pub fn report_cmd(a: &ReportArgs) -> Result<ExitCode, Failure> {
    if a.out.extension().and_then(|e| e.to_str()) != Some("html") {
        return Err(crate::args::flag_err(
            "--out",
            format!("{}: expected a file name ending in .html", a.out.display()),
        ));
    }
    let scratch = std::env::temp_dir().join(format!("podsim-report-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| Failure::runtime(format!("{}: cannot create: {e}", scratch.display())))?;
    let mut r = HtmlReport::new(scratch.clone());
    let result = build(a, &mut r);
    std::fs::remove_dir_all(&scratch).ok();
    let title = result?;
    let context = vec![
        vec!["podsim".to_string(), env!("CARGO_PKG_VERSION").to_string()],
        vec![
            "command".to_string(),
            podsim_report::sweep_file::command_line(),
        ],
        vec![
            "results".to_string(),
            if a.results.is_empty() {
                "the built-in default scenario".to_string()
            } else {
                a.results
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        ],
    ];
    std::fs::write(&a.out, r.page(&title, &context))
        .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", a.out.display())))?;
    outln!(
        "{}: {} plots, {} traces",
        a.out.display(),
        r.plots(),
        r.traces()
    );
    Ok(ExitCode::SUCCESS)
}

/// Fill the report's body from the results; the title.
fn build(a: &ReportArgs, r: &mut HtmlReport) -> Result<String, Failure> {
    let mut title = a.title.clone();
    if a.results.is_empty() {
        let s = crate::run_cmd::default_scenario()?;
        title.get_or_insert_with(|| s.name.clone());
        scenario_section(r, &s, a.trace_limit)?;
    }
    for path in &a.results {
        let name = path.display().to_string();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        match ext {
            "toml" => {
                let text = read(path)?;
                if text
                    .parse::<toml::Table>()
                    .is_ok_and(|t| t.contains_key("machine"))
                {
                    return Err(Failure::usage(format!(
                        "{name}: a workload file; the report takes scenario files (a \
                         [[run]] with workload = \"{name}\" runs it)"
                    )));
                }
                let dir = path
                    .parent()
                    .map(std::path::Path::to_path_buf)
                    .unwrap_or_default();
                let s = podsim_config::parse_scenario_with(&name, &text, &|m| {
                    podsim_config::machine_file_near(&dir, m)
                })?;
                title.get_or_insert_with(|| s.name.clone());
                scenario_section(r, &s, a.trace_limit)?;
            }
            "json" => r.json_section(&name, &read(path)?)?,
            "csv" => r.csv_section(&name, &read(path)?)?,
            "svg" => r.svg_section(&name, &read(path)?)?,
            _ => {
                return Err(Failure::usage(format!(
                    "{name}: expected a scenario (.toml), podsim JSON output or a trace \
                     (.json), a sweep (.csv) or a plot (.svg)"
                )));
            }
        }
    }
    Ok(title.unwrap_or_else(|| "podsim report".to_string()))
}

/// A scenario, run: per run its table, and for collectives a bus-bandwidth chart and a link
/// heatmap per system; the scenario's trace.
fn scenario_section(r: &mut HtmlReport, s: &Scenario, trace_limit: usize) -> Result<(), Failure> {
    r.open_section(&s.name);
    if !s.description.is_empty() {
        r.paragraph(s.description.trim());
    }
    let mut t = podsim_report::Trace::new(trace_limit);
    let mut traced = 0u64;
    // Command runs are checked before anything runs, then run here with their output kept.
    let mut commands = std::collections::HashMap::new();
    for (i, run) in s.runs.iter().enumerate() {
        if let podsim_system::RunSpec::Command { args } = run {
            commands.insert(
                i,
                (args, crate::run_cmd::scenario_command(s, i, args, false)?.0),
            );
        }
    }
    for (i, run) in s.runs.iter().enumerate() {
        if let Some((args, command)) = commands.remove(&i) {
            let text = crate::run_cmd::exec_command(s, command, true)?.unwrap_or_default();
            r.heading(&format!("$ podsim {}", args.join(" ")));
            r.pre(&text);
            continue;
        }
        let result =
            podsim_system::scenario::run_one(s, run, crate::memory_limit(), Some(trace_limit))
                .map_err(crate::scenario_failure)?;
        podsim_report::add_result_trace(&mut t, s, &result, &mut traced);
        let text = podsim_report::result_text(s, &result);
        let (heading, table) = text.split_once('\n').unwrap_or(("", &text));
        if !heading.is_empty() {
            r.heading(heading);
        }
        r.pre(table);
        if let RunResult::Collective { setup, results, .. } = &result {
            // The networks of the systems whose links carried load, for their heatmaps.
            let mut nets = Vec::new();
            for (i, m, _) in results {
                nets.push(if m.link_loads.is_empty() {
                    None
                } else {
                    Some(
                        s.systems[*i]
                            .build()
                            .map_err(|e| Failure::usage(format!("{}: {e}", s.file)))?,
                    )
                });
            }
            let systems: Vec<_> = results
                .iter()
                .zip(&nets)
                .map(|((i, m, _), n)| (s.systems[*i].name.as_str(), n.as_ref(), m))
                .collect();
            r.collective_figures(setup, &systems)?;
        }
    }
    let (kept, _) = t.counts();
    if kept > 0 {
        t.about("command", serde_json::json!("report"));
        t.about("scenario", serde_json::json!(s.file));
        r.trace(&s.name, &t.to_json());
    }
    r.close_section();
    Ok(())
}
