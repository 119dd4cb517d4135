//! `podsim report`: one self-contained HTML file from a study's results. Scenario files are
//! run here (the built-in default scenario when no result is given) and give their tables, a
//! bus-bandwidth chart per collective, a link heatmap per system (flow model, rings, grids and
//! tori) and their trace; podsim's JSON output becomes tables, a sweep's CSV its context, its
//! table and its curve, an SVG a figure, a Chrome trace a button that opens it in Perfetto.
//! Every plot is inline SVG, every trace inline JSON: the file needs nothing beside it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use podsim_system::Scenario;
use podsim_system::scenario::RunResult;
use serde_json::Value;

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

/// HTML-escape text.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The report being written: its body and the traces and plots it holds.
struct Report {
    body: String,
    traces: usize,
    plots: usize,
    scratch: PathBuf,
}

impl Report {
    /// Draw a plot into a scratch file with `draw` and inline it as a figure.
    fn figure(
        &mut self,
        caption: &str,
        draw: impl FnOnce(&Path) -> Result<(), String>,
    ) -> Result<(), Failure> {
        let path = self.scratch.join(format!("plot-{}.svg", self.plots));
        draw(&path).map_err(|e| Failure::runtime(format!("{}: {e}", path.display())))?;
        let svg = std::fs::read_to_string(&path)
            .map_err(|e| Failure::runtime(format!("{}: cannot read: {e}", path.display())))?;
        std::fs::remove_file(&path).ok();
        self.inline_svg(caption, &svg);
        Ok(())
    }

    fn inline_svg(&mut self, caption: &str, svg: &str) {
        let start = svg.find("<svg").unwrap_or(0);
        let _ = writeln!(
            self.body,
            "<figure>{}<figcaption>{}</figcaption></figure>",
            &svg[start..],
            esc(caption)
        );
        self.plots += 1;
    }

    /// A table from rows of cells, the first row the header.
    fn table(&mut self, rows: &[Vec<String>]) {
        self.body.push_str("<div class=\"scroll\"><table>\n");
        for (i, r) in rows.iter().enumerate() {
            let tag = if i == 0 { "th" } else { "td" };
            self.body.push_str("<tr>");
            for c in r {
                let _ = write!(self.body, "<{tag}>{}</{tag}>", esc(c));
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</table></div>\n");
    }

    /// A trace, inline, with a button that opens it in the Perfetto UI.
    fn trace(&mut self, title: &str, trace: &Value) {
        let id = format!("trace-{}", self.traces);
        self.traces += 1;
        let events = trace["traceEvents"].as_array().map_or(0, Vec::len);
        // `</` cannot end the script element inside JSON once escaped as `<\/`.
        let text = trace.to_string().replace("</", "<\\/");
        let _ = write!(
            self.body,
            "<p class=\"trace\"><button type=\"button\" onclick=\"openTrace('{id}', '{t}')\">\
             Open the trace in Perfetto</button> {events} events; or \
             <a href=\"#\" onclick=\"saveTrace('{id}', '{t}'); return false;\">save it</a> and \
             drop it on <a href=\"https://ui.perfetto.dev\">ui.perfetto.dev</a>.</p>\n\
             <script type=\"application/json\" id=\"{id}\">{text}</script>\n",
            t = esc(&title.replace(['\'', '\\'], "")),
        );
    }
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
    let mut r = Report {
        body: String::new(),
        traces: 0,
        plots: 0,
        scratch: scratch.clone(),
    };
    let result = build(a, &mut r);
    std::fs::remove_dir_all(&scratch).ok();
    let title = result?;
    let mut context = vec![
        vec!["podsim".to_string(), env!("CARGO_PKG_VERSION").to_string()],
        vec!["command".to_string(), crate::sweep_file::command_line()],
    ];
    context.push(vec![
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
    ]);
    let mut head = Report {
        body: String::new(),
        traces: 0,
        plots: 0,
        scratch: PathBuf::new(),
    };
    head.table(&context);
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{t}</title>\n<style>{STYLE}</style>\n</head>\n<body data-plots=\"{n}\">\n\
         <h1>{t}</h1>\n<section class=\"context\">\n<h2>Context</h2>\n{ctx}</section>\n{body}\
         <script>{SCRIPT}</script>\n</body>\n</html>\n",
        t = esc(&title),
        n = r.plots,
        ctx = head.body,
        body = r.body,
    );
    std::fs::write(&a.out, html)
        .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", a.out.display())))?;
    outln!(
        "{}: {} plots, {} traces",
        a.out.display(),
        r.plots,
        r.traces
    );
    Ok(ExitCode::SUCCESS)
}

/// Fill the report's body from the results; the title.
fn build(a: &ReportArgs, r: &mut Report) -> Result<String, Failure> {
    let mut title = a.title.clone();
    if a.results.is_empty() {
        let s = crate::default_scenario()?;
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
            "json" => json_section(r, &name, &read(path)?)?,
            "csv" => csv_section(r, &name, &read(path)?)?,
            "svg" => {
                let svg = read(path)?;
                if !svg.trim_start().starts_with("<svg") && !svg.trim_start().starts_with("<?xml") {
                    return Err(Failure::usage(format!(
                        "{name}: expected an SVG image (it should start with <svg or <?xml)"
                    )));
                }
                // Someone else's SVG goes in as an image, never inline: a browser runs no
                // script and fetches nothing an image holds, whatever the file carries.
                let _ = writeln!(
                    r.body,
                    "<section>\n<h2>{0}</h2>\n<figure><img alt=\"{0}\" src=\"data:image/svg+xml;base64,{1}\"><figcaption>{0}</figcaption></figure>\n</section>",
                    esc(&name),
                    base64(svg.as_bytes())
                );
                r.plots += 1;
            }
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
fn scenario_section(r: &mut Report, s: &Scenario, trace_limit: usize) -> Result<(), Failure> {
    let _ = writeln!(r.body, "<section>\n<h2>{}</h2>", esc(&s.name));
    if !s.description.is_empty() {
        let _ = writeln!(r.body, "<p>{}</p>", esc(s.description.trim()));
    }
    let mut t = podsim_report::Trace::new(trace_limit);
    let mut traced = 0u64;
    // Command runs are checked before anything runs, then run here with their output kept.
    let mut commands = std::collections::HashMap::new();
    for (i, run) in s.runs.iter().enumerate() {
        if let podsim_system::RunSpec::Command { args } = run {
            commands.insert(i, (args, crate::scenario_command(s, i, args, false)?.0));
        }
    }
    for (i, run) in s.runs.iter().enumerate() {
        if let Some((args, command)) = commands.remove(&i) {
            let text = crate::exec_command(s, command, true)?.unwrap_or_default();
            let _ = writeln!(
                r.body,
                "<h3>$ podsim {}</h3>\n<pre>{}</pre>",
                esc(&args.join(" ")),
                esc(&text)
            );
            continue;
        }
        let result =
            podsim_system::scenario::run_one(s, run, crate::memory_limit(), Some(trace_limit))
                .map_err(crate::scenario_failure)?;
        crate::add_result_trace(&mut t, s, &result, &mut traced);
        let text = crate::result_text(s, &result);
        let (heading, table) = text.split_once('\n').unwrap_or(("", &text));
        if !heading.is_empty() {
            let _ = writeln!(r.body, "<h3>{}</h3>", esc(heading));
        }
        let _ = writeln!(r.body, "<pre>{}</pre>", esc(table));
        if let RunResult::Collective { setup, results, .. } = &result {
            let bars: Vec<(String, f64)> = results
                .iter()
                .map(|(i, m, _)| {
                    (
                        s.systems[*i].name.clone(),
                        m.bus_bandwidth_bytes_per_s / 1e9,
                    )
                })
                .collect();
            let ymax = bars.iter().map(|b| b.1).fold(0.0, f64::max) * 1.15;
            let title = format!(
                "{} ({}), {} per rank: bus bandwidth",
                setup.kind,
                setup.algorithm.name(),
                podsim_units::Bytes(setup.bytes)
            );
            r.figure(&title, |p| {
                podsim_report::bars_svg(
                    p,
                    &title,
                    "system",
                    "bus bandwidth (GB/s)",
                    &bars,
                    None,
                    ymax.max(1e-9),
                )
                .map_err(|e| e.to_string())
            })?;
            for (i, m, _) in results {
                if m.link_loads.is_empty() {
                    continue;
                }
                let net = s.systems[*i]
                    .build()
                    .map_err(|e| Failure::usage(format!("{}: {e}", s.file)))?;
                let Ok(layout) = crate::heatmap::Layout::of(&net) else {
                    continue;
                };
                let title = format!(
                    "{} ({}) on {}: link utilisation over {:.4e} s",
                    setup.kind,
                    setup.algorithm.name(),
                    s.systems[*i].name,
                    m.time_s
                );
                r.figure(&title, |p| {
                    crate::heatmap::draw(p, &title, &layout, &m.link_loads, m.time_s)
                })?;
            }
        }
    }
    let (kept, _) = t.counts();
    if kept > 0 {
        t.about("command", serde_json::json!("report"));
        t.about("scenario", serde_json::json!(s.file));
        r.trace(&s.name, &t.to_json());
    }
    r.body.push_str("</section>\n");
    Ok(())
}

/// A cell of a JSON table: strings as they are, everything else as JSON.
fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        v => v.to_string(),
    }
}

/// podsim's JSON output (an object or an array of objects) as a table, or a Chrome trace.
fn json_section(r: &mut Report, name: &str, text: &str) -> Result<(), Failure> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        Failure::usage(format!(
            "{name}: line {}: {e}; expected podsim's JSON output or a Chrome trace",
            e.line()
        ))
    })?;
    let _ = writeln!(r.body, "<section>\n<h2>{}</h2>", esc(name));
    if v.get("traceEvents").is_some_and(Value::is_array) {
        r.trace(name, &v);
    } else if let Some(o) = v.as_object() {
        let mut rows = vec![vec!["key".to_string(), "value".to_string()]];
        rows.extend(o.iter().map(|(k, v)| vec![k.clone(), cell(v)]));
        r.table(&rows);
    } else if let Some(items) = v.as_array().filter(|a| a.iter().all(Value::is_object)) {
        // Columns: every key, in the order first seen.
        let mut keys: Vec<String> = Vec::new();
        for o in items.iter().filter_map(Value::as_object) {
            for k in o.keys() {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
        }
        let mut rows = vec![keys.clone()];
        rows.extend(
            items
                .iter()
                .map(|o| keys.iter().map(|k| cell(&o[k.as_str()])).collect()),
        );
        r.table(&rows);
    } else {
        return Err(Failure::usage(format!(
            "{name}: expected a JSON object, an array of objects (podsim's --json output) or \
             a Chrome trace (traceEvents)"
        )));
    }
    r.body.push_str("</section>\n");
    Ok(())
}

/// A sweep's CSV: its `# key: value` context, its table, and its curve (bus bandwidth
/// against size for a collective sweep, latency against load for a noc sweep).
fn csv_section(r: &mut Report, name: &str, text: &str) -> Result<(), Failure> {
    if !text.starts_with("# podsim: ") {
        return Err(Failure::usage(format!(
            "{name}: not a CSV podsim wrote (it does not open with `# podsim: `); expected a sweep's CSV (collective or noc --sweep, validate or train --search --csv)"
        )));
    }
    let mut context = vec![vec!["key".to_string(), "value".to_string()]];
    let mut rows: Vec<Vec<String>> = Vec::new();
    for line in text.lines() {
        if let Some(c) = line.strip_prefix('#') {
            let (k, v) = c.split_once(':').unwrap_or((c, ""));
            context.push(vec![k.trim().to_string(), v.trim().to_string()]);
        } else if !line.trim().is_empty() {
            rows.push(line.split(',').map(str::to_string).collect());
        }
    }
    let Some(header) = rows.first().cloned() else {
        return Err(Failure::usage(format!(
            "{name}: no header row; expected a sweep's CSV (collective or noc --sweep)"
        )));
    };
    let _ = writeln!(r.body, "<section>\n<h2>{}</h2>", esc(name));
    if context.len() > 1 {
        r.table(&context);
    }
    r.table(&rows);
    let col = |k: &str| header.iter().position(|h| h == k);
    let ok = |f: &Vec<String>| f.last().is_none_or(String::is_empty);
    if header.len() == 8 && col("bus_bandwidth_bytes_per_s") == Some(3) {
        let points = crate::collective_cmd::busbw_points(&rows[1..]);
        if !points.is_empty() {
            let title = format!("{name}: bus bandwidth against size");
            r.figure(&title, |p| {
                podsim_report::busbw_svg(p, &title, &points).map_err(|e| e.to_string())
            })?;
        }
    } else if header.first().map(String::as_str) == Some("offered_flits_per_node_cycle") {
        let curve: Vec<podsim_noc::NocResult> = rows[1..]
            .iter()
            .filter(|f| ok(f))
            .filter_map(|f| podsim_report::noc_result_from_csv(f))
            .collect();
        if !curve.is_empty() {
            let title = format!("{name}: latency against offered load");
            r.figure(&title, |p| {
                podsim_report::noc_curve_svg(p, &title, &curve).map_err(|e| e.to_string())
            })?;
        }
    }
    r.body.push_str("</section>\n");
    Ok(())
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;\
padding:0 1em;color:#222}h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em}\
h3{font-size:1.05em}pre{background:#f6f6f6;padding:.8em;overflow-x:auto}\
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ddd;padding:.25em .6em;\
text-align:left}th{background:#f0f0f0}.scroll{overflow-x:auto}\
figure{margin:1em 0}figure svg{max-width:100%;height:auto}figcaption{color:#555;font-size:.9em}\
button{font-size:1em;padding:.3em .8em}";

/// Marks on the body how many of its plots drew with a size (for the headless check), and
/// opens or saves an inline trace.
const SCRIPT: &str = r#"
window.addEventListener('load', function () {
  var figs = document.querySelectorAll('figure > svg, figure > img');
  var drawn = 0;
  figs.forEach(function (s) {
    var r = s.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) { drawn += 1; }
  });
  document.body.setAttribute('data-plots-drawn', String(drawn));
});
function traceBytes(id) {
  return new TextEncoder().encode(document.getElementById(id).textContent);
}
function openTrace(id, title) {
  var origin = 'https://ui.perfetto.dev';
  var win = window.open(origin + '/#!/');
  if (!win) { alert('Allow pop-ups for this page to open the trace in Perfetto.'); return; }
  var buffer = traceBytes(id).buffer;
  var timer = setInterval(function () { win.postMessage('PING', origin); }, 50);
  function onMessage(e) {
    if (e.data !== 'PONG') { return; }
    clearInterval(timer);
    window.removeEventListener('message', onMessage);
    win.postMessage({perfetto: {buffer: buffer, title: title, fileName: title + '.json'}}, origin);
  }
  window.addEventListener('message', onMessage);
}
function saveTrace(id, title) {
  var url = URL.createObjectURL(new Blob([traceBytes(id)], {type: 'application/json'}));
  var a = document.createElement('a');
  a.href = url;
  a.download = title + '.json';
  a.click();
  URL.revokeObjectURL(url);
}
"#;

/// `bytes` in base64 (RFC 4648, with padding), for a data URL.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// RFC 4648 section 10's test vectors.
    #[test]
    fn base64_of_the_rfc_vectors() {
        for (text, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::base64(text.as_bytes()), want);
        }
    }
}
