//! One self-contained HTML page of a study's results (`podsim report`): sections of tables,
//! preformatted text, inline SVG figures and inline Chrome traces that open in Perfetto, from
//! podsim's JSON output, sweep CSVs, SVG plots and traces. Every plot is inline SVG, every
//! trace inline JSON: the page needs nothing beside it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Why a part of a report could not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HtmlError {
    /// An input is not one the report takes (the user's to fix).
    #[error("{name}: {why}")]
    Input {
        /// The input file.
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// A plot could not be drawn or read back.
    #[error("{path}: {why}")]
    Plot {
        /// The plot's scratch file.
        path: String,
        /// Why.
        why: String,
    },
}

/// HTML-escape text.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The report being written: its body and the traces and plots it holds.
#[derive(Debug, Clone, Default)]
pub struct HtmlReport {
    body: String,
    traces: usize,
    plots: usize,
    scratch: PathBuf,
}

impl HtmlReport {
    /// An empty report whose plots are drawn into files under `scratch` (then inlined).
    pub fn new(scratch: PathBuf) -> HtmlReport {
        HtmlReport {
            scratch,
            ..HtmlReport::default()
        }
    }

    /// The plots the report holds.
    pub fn plots(&self) -> usize {
        self.plots
    }

    /// The traces the report holds.
    pub fn traces(&self) -> usize {
        self.traces
    }

    /// Open a section with its title.
    pub fn open_section(&mut self, title: &str) {
        let _ = writeln!(self.body, "<section>\n<h2>{}</h2>", esc(title));
    }

    /// A paragraph.
    pub fn paragraph(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", esc(text));
    }

    /// Close the open section.
    pub fn close_section(&mut self) {
        self.body.push_str("</section>\n");
    }

    /// A heading inside a section.
    pub fn heading(&mut self, text: &str) {
        let _ = writeln!(self.body, "<h3>{}</h3>", esc(text));
    }

    /// Preformatted text.
    pub fn pre(&mut self, text: &str) {
        let _ = writeln!(self.body, "<pre>{}</pre>", esc(text));
    }

    /// Draw a plot into a scratch file with `draw` and inline it as a figure.
    pub fn figure(
        &mut self,
        caption: &str,
        draw: impl FnOnce(&Path) -> Result<(), String>,
    ) -> Result<(), HtmlError> {
        let path = self.scratch.join(format!("plot-{}.svg", self.plots));
        let fail = |why: String| HtmlError::Plot {
            path: path.display().to_string(),
            why,
        };
        draw(&path).map_err(fail)?;
        let svg = std::fs::read_to_string(&path).map_err(|e| fail(format!("cannot read: {e}")))?;
        std::fs::remove_file(&path).ok();
        self.inline_svg(caption, &svg);
        Ok(())
    }

    /// A bar chart of one value per label (bars from zero to 15% above the highest), as a
    /// figure.
    pub fn bars_figure(
        &mut self,
        title: &str,
        x_label: &str,
        y_label: &str,
        bars: &[(String, f64)],
    ) -> Result<(), HtmlError> {
        let ymax = bars.iter().map(|b| b.1).fold(0.0, f64::max) * 1.15;
        self.figure(title, |p| {
            crate::bars_svg(p, title, x_label, y_label, bars, None, ymax.max(1e-9))
                .map_err(|e| e.to_string())
        })
    }

    /// A collective run's figures: its bus bandwidth on each system (name, network,
    /// measurement), and a link heatmap of each system given with a network the heatmap can
    /// lay out.
    pub fn collective_figures(
        &mut self,
        setup: &podsim_collective::Setup,
        systems: &[(
            &str,
            Option<&podsim_topology::Network>,
            &podsim_collective::Measurement,
        )],
    ) -> Result<(), HtmlError> {
        let bars: Vec<(String, f64)> = systems
            .iter()
            .map(|(name, _, m)| (name.to_string(), m.bus_bandwidth_bytes_per_s / 1e9))
            .collect();
        let title = format!(
            "{} ({}), {} per rank: bus bandwidth",
            setup.kind,
            setup.algorithm.name(),
            podsim_units::Bytes(setup.bytes)
        );
        self.bars_figure(&title, "system", "bus bandwidth (GB/s)", &bars)?;
        for (name, net, m) in systems {
            let Some(Ok(layout)) = net.map(crate::link_heatmap::Layout::of) else {
                continue;
            };
            let title = format!(
                "{} ({}) on {name}: link utilisation over {:.4e} s",
                setup.kind,
                setup.algorithm.name(),
                m.time_s
            );
            self.figure(&title, |p| {
                crate::link_heatmap::draw(p, &title, &layout, &m.link_loads, m.time_s)
                    .map_err(|e| e.to_string())
            })?;
        }
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
    pub fn table(&mut self, rows: &[Vec<String>]) {
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
    pub fn trace(&mut self, title: &str, trace: &Value) {
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

    /// Someone else's SVG file `name` as a section: an image, never inline, so a browser runs
    /// no script and fetches nothing the file holds.
    pub fn svg_section(&mut self, name: &str, svg: &str) -> Result<(), HtmlError> {
        if !svg.trim_start().starts_with("<svg") && !svg.trim_start().starts_with("<?xml") {
            return Err(HtmlError::Input {
                name: name.to_string(),
                why: "expected an SVG image (it should start with <svg or <?xml)".into(),
            });
        }
        let _ = writeln!(
            self.body,
            "<section>\n<h2>{0}</h2>\n<figure><img alt=\"{0}\" src=\"data:image/svg+xml;base64,{1}\"><figcaption>{0}</figcaption></figure>\n</section>",
            esc(name),
            base64(svg.as_bytes())
        );
        self.plots += 1;
        Ok(())
    }

    /// podsim's JSON output `name` (an object or an array of objects) as a table, or a Chrome
    /// trace.
    pub fn json_section(&mut self, name: &str, text: &str) -> Result<(), HtmlError> {
        let input = |why: String| HtmlError::Input {
            name: name.to_string(),
            why,
        };
        let v: Value = serde_json::from_str(text).map_err(|e| {
            input(format!(
                "line {}: {e}; expected podsim's JSON output or a Chrome trace",
                e.line()
            ))
        })?;
        self.open_section(name);
        if v.get("traceEvents").is_some_and(Value::is_array) {
            self.trace(name, &v);
        } else if let Some(o) = v.as_object() {
            let mut rows = vec![vec!["key".to_string(), "value".to_string()]];
            rows.extend(o.iter().map(|(k, v)| vec![k.clone(), cell(v)]));
            self.table(&rows);
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
            self.table(&rows);
        } else {
            return Err(input(
                "expected a JSON object, an array of objects (podsim's --json output) or \
                 a Chrome trace (traceEvents)"
                    .into(),
            ));
        }
        self.close_section();
        Ok(())
    }

    /// A sweep's CSV `name`: its `# key: value` context, its table, and its curve (bus
    /// bandwidth against size for a collective sweep, latency against load for a noc sweep).
    pub fn csv_section(&mut self, name: &str, text: &str) -> Result<(), HtmlError> {
        let input = |why: &str| HtmlError::Input {
            name: name.to_string(),
            why: why.to_string(),
        };
        if !text.starts_with("# podsim: ") {
            return Err(input(
                "not a CSV podsim wrote (it does not open with `# podsim: `); expected a sweep's CSV (collective or noc --sweep, validate or train --search --csv)",
            ));
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
            return Err(input(
                "no header row; expected a sweep's CSV (collective or noc --sweep)",
            ));
        };
        self.open_section(name);
        if context.len() > 1 {
            self.table(&context);
        }
        self.table(&rows);
        let col = |k: &str| header.iter().position(|h| h == k);
        let ok = |f: &Vec<String>| f.last().is_none_or(String::is_empty);
        if header.len() == 8 && col("bus_bandwidth_bytes_per_s") == Some(3) {
            let points = crate::busbw_points(&rows[1..]);
            if !points.is_empty() {
                let title = format!("{name}: bus bandwidth against size");
                self.figure(&title, |p| {
                    crate::busbw_svg(p, &title, &points).map_err(|e| e.to_string())
                })?;
            }
        } else if header.first().map(String::as_str) == Some("offered_flits_per_node_cycle") {
            let curve: Vec<podsim_noc::NocResult> = rows[1..]
                .iter()
                .filter(|f| ok(f))
                .filter_map(|f| crate::noc_result_from_csv(f))
                .collect();
            if !curve.is_empty() {
                let title = format!("{name}: latency against offered load");
                self.figure(&title, |p| {
                    crate::noc_curve_svg(p, &title, &curve).map_err(|e| e.to_string())
                })?;
            }
        }
        self.close_section();
        Ok(())
    }

    /// The whole page: `title`, a context table (`context`'s rows, each a key and its value),
    /// then the report's sections.
    pub fn page(&self, title: &str, context: &[Vec<String>]) -> String {
        let mut head = HtmlReport::default();
        head.table(context);
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{t}</title>\n<style>{STYLE}</style>\n</head>\n<body data-plots=\"{n}\">\n\
             <h1>{t}</h1>\n<section class=\"context\">\n<h2>Context</h2>\n{ctx}</section>\n{body}\
             <script>{SCRIPT}</script>\n</body>\n</html>\n",
            t = esc(title),
            n = self.plots,
            ctx = head.body,
            body = self.body,
        )
    }
}

/// A cell of a JSON table: strings as they are, everything else as JSON.
fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        v => v.to_string(),
    }
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
