//! BookSim 2: a configuration (`key = value;`, `//` comments) of a k-ary n-mesh or torus with
//! dimension-order routing and the input-queued router, as podsim's router configuration and
//! the `podsim noc` run of the same network and traffic, naming every key podsim does not
//! honour. Router delays add up to podsim's pipeline stages (routing + VC allocation + switch
//! allocation + switch traversal delays, at least 1).

use podsim_noc::{Arbitration, RouterConfig};

use crate::{ImportError, Result};

/// One `key = value;` of a BookSim configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BooksimEntry {
    /// The key.
    pub key: String,
    /// The value, as written.
    pub value: String,
    /// Its line, from 1.
    pub line: usize,
}

/// A BookSim configuration's `key = value;` pairs in the file's order (comments `//` to the
/// end of a line; several statements may share a line).
pub fn keys(file: &str, text: &str) -> Result<Vec<BooksimEntry>> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        for stmt in line.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((k, v)) = stmt.split_once('=') else {
                return Err(
                    ImportError::new(file, format!("`{stmt}`: expected `key = value;`"))
                        .line(i + 1),
                );
            };
            out.push(BooksimEntry {
                key: k.trim().to_string(),
                value: v.trim().to_string(),
                line: i + 1,
            });
        }
    }
    Ok(out)
}

/// A BookSim configuration as podsim runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct BooksimImport {
    /// The configuration file, as the user named it.
    pub file: String,
    /// podsim's topology shorthand (`mesh:8x8`, `torus:4x4x4`).
    pub topology: String,
    /// The traffic pattern (`uniform`, `transpose`, ...).
    pub traffic: String,
    /// The injection rate in flits per node per cycle.
    pub rate: f64,
    /// The seed.
    pub seed: u64,
    /// podsim's router.
    pub router: RouterConfig,
    /// The router as TOML (what `podsim noc --config` reads).
    pub router_toml: String,
    /// Every key podsim does not honour, as `key = value (why)`.
    pub not_honoured: Vec<String>,
}

impl BooksimImport {
    /// Read a BookSim configuration file's text.
    pub fn parse(file: &str, text: &str) -> Result<Self> {
        let keys = keys(file, text)?;
        let get = |k: &str| keys.iter().find(|e| e.key == k);
        let num = |k: &str, default: u64| -> Result<u64> {
            match get(k) {
                None => Ok(default),
                Some(e) => e.value.parse::<u64>().map_err(|_| {
                    ImportError::new(file, format!("`{}` is not a whole number", e.value))
                        .line(e.line)
                        .key(k)
                }),
            }
        };
        let text = |k: &str, default: &str| get(k).map_or(default.to_string(), |e| e.value.clone());
        let mut not_honoured: Vec<String> = Vec::new();
        let mut honoured: Vec<&str> = Vec::new();
        let mut note =
            |k: &str, v: &str, why: &str| not_honoured.push(format!("{k} = {v} ({why})"));
        // The network.
        let kind = text("topology", "torus");
        if kind != "mesh" && kind != "torus" {
            return Err(ImportError::new(
                file,
                format!("`{kind}`: podsim imports BookSim's mesh and torus (k-ary n-cubes)"),
            )
            .key("topology"));
        }
        let (k, n) = (num("k", 8)?, num("n", 2)?);
        if !(2..=64).contains(&k) || !(1..=4).contains(&n) {
            return Err(ImportError::new(
                file,
                format!("`k` = {k}, `n` = {n}: expected 2 <= k <= 64 and 1 <= n <= 4"),
            ));
        }
        let topology = format!("{kind}:{}", vec![k.to_string(); n as usize].join("x"));
        honoured.extend(["topology", "k", "n"]);
        let routing = text("routing_function", "dor");
        match routing.as_str() {
            "dor" | "dim_order" => {}
            other => note(
                "routing_function",
                other,
                "podsim routes dimension order (dor)",
            ),
        }
        honoured.push("routing_function");
        // The router.
        let router = text("router", "iq");
        if router != "iq" {
            note("router", &router, "podsim's router is input-queued (iq)");
        }
        honoured.push("router");
        let delays = [
            "routing_delay",
            "vc_alloc_delay",
            "sw_alloc_delay",
            "st_prepare_delay",
            "st_final_delay",
        ];
        let defaults = [1, 1, 1, 0, 1];
        let mut stages = 0u64;
        for (d, def) in delays.iter().zip(defaults) {
            stages = stages.saturating_add(num(d, def)?);
            honoured.push(d);
        }
        // Past u32, a value saturates (and the router's validation refuses it) rather than
        // wraps into range.
        let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        let mut cfg = RouterConfig {
            vcs: small(num("num_vcs", 16)?),
            buffer_flits: small(num("vc_buf_size", 8)?),
            packet_flits: small(num("packet_size", 1)?),
            pipeline_stages: small(stages.max(1)),
            ..RouterConfig::default()
        };
        honoured.extend(["num_vcs", "vc_buf_size", "packet_size"]);
        let credit = num("credit_delay", 1)?;
        if credit != 1 {
            note(
                "credit_delay",
                &credit.to_string(),
                "podsim returns a credit over its link, in the link's latency (1 cycle)",
            );
        }
        honoured.push("credit_delay");
        for (key, want) in [
            ("vc_allocator", "separable_input_first"),
            ("sw_allocator", "separable_input_first"),
            ("arb_type", "round_robin"),
            ("alloc_iters", "1"),
            ("wait_for_tail_credit", "0"),
            ("input_speedup", "1"),
            ("output_speedup", "1"),
            ("internal_speedup", "1.0"),
        ] {
            let v = text(key, want);
            if v != want && !(key == "internal_speedup" && v == "1") {
                note(key, &v, &format!("podsim's allocators are {want}"));
            }
            honoured.push(key);
        }
        cfg.arbitration = Arbitration::RoundRobin;
        cfg.validate()
            .map_err(|e| ImportError::new(file, e.to_string()))?;
        // The traffic.
        let traffic = text("traffic", "uniform");
        match traffic.as_str() {
            "uniform" | "transpose" | "bitcomp" | "bitrev" | "shuffle" | "tornado" | "neighbor" => {
            }
            other => {
                return Err(ImportError::new(
                    file,
                    format!(
                        "`{other}`: expected uniform, transpose, bitcomp, bitrev, shuffle, tornado or neighbor"
                    ),
                )
                .key("traffic"));
            }
        }
        let rate_text = text("injection_rate", "0.1");
        let mut rate: f64 = rate_text.parse().map_err(|_| {
            ImportError::new(file, format!("`{rate_text}` is not a number")).key("injection_rate")
        })?;
        if num("injection_rate_uses_flits", 0)? == 0 {
            // BookSim's rate in packets per node per cycle; podsim's in flits.
            rate *= f64::from(cfg.packet_flits);
        }
        // A node injects at most one flit a cycle (its one injection channel): the noc command
        // this prints would refuse more.
        if !(rate > 0.0 && rate <= 1.0) {
            return Err(ImportError::new(
                file,
                format!(
                    "`{rate_text}` is {rate} flits per node per cycle; expected above 0 and at most 1 (one injection channel a node)"
                ),
            )
            .key("injection_rate"));
        }
        let seed = num("seed", 1)?;
        honoured.extend([
            "traffic",
            "injection_rate",
            "injection_rate_uses_flits",
            "seed",
        ]);
        for e in &keys {
            if honoured.contains(&e.key.as_str()) {
                continue;
            }
            let why = match e.key.as_str() {
                "sim_type" if e.value == "latency" => continue,
                "sample_period" | "warmup_periods" | "max_samples" => {
                    "podsim measures one window of --cycles after its own warm-up"
                }
                _ => "not modelled",
            };
            note(&e.key, &e.value, why);
        }
        let router_toml = toml::to_string(&cfg).map_err(|e| {
            ImportError::new(file, format!("cannot write the router configuration: {e}")).internal()
        })?;
        Ok(BooksimImport {
            file: file.to_string(),
            topology,
            traffic,
            rate,
            seed,
            router: cfg,
            router_toml,
            not_honoured,
        })
    }

    /// The `podsim noc` command that runs this network and traffic with the router
    /// configuration at `config` (a path).
    pub fn command(&self, config: &str) -> String {
        format!(
            "podsim noc --config {config} --topology {} --routing dor --traffic {} --rate {} --seed {}",
            self.topology, self.traffic, self.rate, self.seed
        )
    }

    /// The router configuration file: a comment naming its source, then the router's TOML.
    pub fn router_file(&self) -> String {
        format!(
            "# podsim's router for {} (podsim import booksim)\n{}",
            self.file, self.router_toml
        )
    }

    /// The import as `podsim import booksim --json` prints it, with the `podsim noc`
    /// `command` that runs it.
    pub fn json(&self, command: &str) -> serde_json::Value {
        serde_json::json!({
            "topology": self.topology, "routing": "dor", "traffic": self.traffic, "rate": self.rate,
            "seed": self.seed, "router": toml::from_str::<serde_json::Value>(&self.router_toml).unwrap_or_default(),
            "command": command, "not_honoured": self.not_honoured,
        })
    }

    /// The import as `podsim import booksim` prints it: the router's TOML (unless
    /// `router_written` elsewhere), the `podsim noc` `command` and a line per key podsim does
    /// not honour, as TOML comments.
    pub fn text(&self, command: &str, router_written: bool) -> String {
        let mut out = String::new();
        if !router_written {
            out.push_str(&self.router_toml);
        }
        out.push_str(&format!("# run it: {command}\n"));
        for n in &self.not_honoured {
            out.push_str(&format!("# not honoured: {n}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mesh_with_packets_of_four_flits() {
        let b = BooksimImport::parse(
            "m.cfg",
            "topology = mesh; k = 8; n = 2; // an 8x8 mesh\npacket_size = 4; injection_rate = 0.05;\nsim_type = latency;\nsample_period = 1000;\n",
        )
        .unwrap();
        assert_eq!(b.topology, "mesh:8x8");
        assert!((b.rate - 0.2).abs() < 1e-12);
        assert_eq!(b.router.pipeline_stages, 4);
        assert_eq!(b.router.packet_flits, 4);
        assert_eq!(
            b.not_honoured,
            ["sample_period = 1000 (podsim measures one window of --cycles after its own warm-up)"]
        );
        assert!(
            b.command("R.toml")
                .starts_with("podsim noc --config R.toml --topology mesh:8x8")
        );
        assert!(b.router_file().starts_with("# podsim's router for m.cfg"));
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        // 2^32 + 2 VCs is not 2 VCs.
        let e = BooksimImport::parse("b.cfg", "num_vcs = 4294967298;").unwrap_err();
        assert!(e.to_string().starts_with("b.cfg: "), "{e}");
        let e = BooksimImport::parse("b.cfg", "k = 4;\nn = two;\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "b.cfg, line 2: `n`: `two` is not a whole number"
        );
        let e = BooksimImport::parse("b.cfg", "topology = fly;").unwrap_err();
        assert_eq!(
            e.to_string(),
            "b.cfg: `topology`: `fly`: podsim imports BookSim's mesh and torus (k-ary n-cubes)"
        );
    }
}
