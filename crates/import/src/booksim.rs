//! BookSim 2: a configuration (`key = value;`, `//` comments) of a k-ary n-mesh or torus with
//! dimension-order routing and the input-queued router, as podsim's router configuration and
//! the `podsim noc` run of the same network and traffic, naming every key podsim does not
//! honour. Two targets ([`RouterMode`]): the BookSim router mode (the default), which takes
//! BookSim's delays, credit delay, allocators, iterations and sampling as they are, so the
//! run reproduces BookSim's latencies; or podsim's own router, faster, in which the router
//! delays add up to its pipeline stages (routing + VC allocation + switch allocation + switch
//! traversal delays, at least 1) and the allocators are round-robin.

use podsim_noc::{Allocator, Arbitration, RouterConfig, RouterMode};

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
    /// The cycles of the `podsim noc` run: BookSim's `max_samples x sample_period` in the
    /// BookSim mode (`None`: podsim's default window).
    pub cycles: Option<u64>,
    /// The router as TOML (what `podsim noc --config` reads).
    pub router_toml: String,
    /// Every key podsim does not honour, as `key = value (why)`.
    pub not_honoured: Vec<String>,
}

impl BooksimImport {
    /// Read a BookSim configuration file's text, for the router `mode`.
    pub fn parse(file: &str, text: &str, mode: RouterMode) -> Result<Self> {
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
        // Past u32, a value saturates (and the router's validation refuses it) rather than
        // wraps into range.
        let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        let delays = [
            ("routing_delay", 1),
            ("vc_alloc_delay", 1),
            ("sw_alloc_delay", 1),
            ("st_prepare_delay", 0),
            ("st_final_delay", 1),
        ];
        let mut delay = [0u64; 5];
        for (i, (d, def)) in delays.iter().enumerate() {
            delay[i] = num(d, *def)?;
            honoured.push(d);
        }
        let mut cfg = RouterConfig {
            vcs: small(num("num_vcs", 16)?),
            buffer_flits: small(num("vc_buf_size", 8)?),
            packet_flits: small(num("packet_size", 1)?),
            ..RouterConfig::default()
        };
        honoured.extend(["num_vcs", "vc_buf_size", "packet_size"]);
        // BookSim's default credit delay is 0 (booksim_config.cpp).
        let credit = num("credit_delay", 0)?;
        honoured.push("credit_delay");
        let allocators = (text("vc_allocator", "islip"), text("sw_allocator", "islip"));
        let iters = num("alloc_iters", 1)?;
        let mut cycles = None;
        if mode == RouterMode::Booksim {
            cfg.router = RouterMode::Booksim;
            [
                cfg.routing_delay,
                cfg.vc_alloc_delay,
                cfg.sw_alloc_delay,
                cfg.st_prepare_delay,
                cfg.st_final_delay,
            ] = delay.map(small);
            cfg.credit_delay = small(credit);
            cfg.alloc_iters = small(iters);
            let allocator = |v: &str| match v {
                "islip" => Some(Allocator::Islip),
                "separable_input_first" => Some(Allocator::SeparableInputFirst),
                "separable_output_first" => Some(Allocator::SeparableOutputFirst),
                _ => None,
            };
            match (allocator(&allocators.0), allocator(&allocators.1)) {
                (Some(a), Some(b)) if a == b => cfg.allocator = a,
                _ => note(
                    "vc_allocator",
                    &format!("{} (sw_allocator = {})", allocators.0, allocators.1),
                    "the BookSim mode runs islip, separable_input_first or separable_output_first, the same for both",
                ),
            }
            cfg.input_speedup = small(num("input_speedup", 1)?);
            cfg.output_speedup = small(num("output_speedup", 1)?);
            honoured.extend(["input_speedup", "output_speedup"]);
            if num("use_noc_latency", 1)? == 0 {
                cfg.channel_latency = Some(1);
            }
            honoured.push("use_noc_latency");
            // The mode's sampling: 3 warm-up periods, at most 10 in all, periods of a tenth
            // of the run.
            let period = num("sample_period", 1000)?;
            if num("warmup_periods", 3)? == 3 && num("max_samples", 10)? == 10 {
                cycles = Some(period.saturating_mul(10));
                honoured.extend(["sample_period", "warmup_periods", "max_samples"]);
            }
        } else {
            // podsim's router: the delays fold into its pipeline.
            let stages = delay.iter().fold(0u64, |a, &d| a.saturating_add(d));
            cfg.pipeline_stages = small(stages.max(1));
            if credit != 1 {
                note(
                    "credit_delay",
                    &credit.to_string(),
                    "podsim returns a credit over its link, in the link's latency (1 cycle)",
                );
            }
            for (key, v) in [
                ("vc_allocator", &allocators.0),
                ("sw_allocator", &allocators.1),
            ] {
                if v != "separable_input_first" {
                    note(key, v, "podsim's allocators are separable_input_first");
                }
            }
            if iters != 1 {
                note(
                    "alloc_iters",
                    &iters.to_string(),
                    "podsim's allocators are alloc_iters = 1",
                );
            }
        }
        honoured.extend(["vc_allocator", "sw_allocator", "alloc_iters"]);
        let speedups: &[_] = if mode == RouterMode::Booksim {
            &[]
        } else {
            &[("input_speedup", "1"), ("output_speedup", "1")]
        };
        for &(key, want) in [
            ("arb_type", "round_robin"),
            ("wait_for_tail_credit", "0"),
            ("internal_speedup", "1.0"),
            ("output_buffer_size", "-1"),
        ]
        .iter()
        .chain(speedups)
        {
            let v = text(key, want);
            if v != want && !(key == "internal_speedup" && v == "1") {
                note(key, &v, &format!("podsim's routers run {key} = {want}"));
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
                "sample_period" | "warmup_periods" | "max_samples"
                    if mode == RouterMode::Booksim =>
                {
                    "the BookSim mode samples 10 periods of a tenth of --cycles at most, after 3 of warm-up"
                }
                "sample_period" | "warmup_periods" | "max_samples" => {
                    "podsim measures one window of --cycles after its own warm-up"
                }
                _ => "not modelled",
            };
            note(&e.key, &e.value, why);
        }
        let write_err = |e: String| {
            ImportError::new(file, format!("cannot write the router configuration: {e}")).internal()
        };
        let mut table = toml::Table::try_from(&cfg).map_err(|e| write_err(e.to_string()))?;
        if mode == RouterMode::Booksim {
            // The keys of podsim's router, which the BookSim mode does not read.
            for k in [
                "pipeline_stages",
                "link_cycles",
                "arbitration",
                "cover_round_trip",
            ] {
                table.remove(k);
            }
        }
        let router_toml = toml::to_string(&table).map_err(|e| write_err(e.to_string()))?;
        Ok(BooksimImport {
            file: file.to_string(),
            topology,
            traffic,
            rate,
            seed,
            router: cfg,
            cycles,
            router_toml,
            not_honoured,
        })
    }

    /// The `podsim noc` command that runs this network and traffic with the router
    /// configuration at `config` (a path).
    pub fn command(&self, config: &str) -> String {
        let cycles = self
            .cycles
            .map_or(String::new(), |c| format!(" --cycles {c}"));
        format!(
            "podsim noc --config {config} --topology {} --routing dor --traffic {} --rate {} --seed {}{cycles}",
            self.topology, self.traffic, self.rate, self.seed
        )
    }

    /// The router configuration file: a comment naming its source, then the router's TOML.
    pub fn router_file(&self) -> String {
        format!(
            "# podsim's {} router for {} (podsim import booksim)\n{}",
            self.router.router.name(),
            self.file,
            self.router_toml
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
            "topology = mesh; k = 8; n = 2; // an 8x8 mesh\npacket_size = 4; injection_rate = 0.05;\nsim_type = latency;\nsample_period = 1000;\nvc_allocator = separable_input_first; sw_allocator = separable_input_first; credit_delay = 1;\n",
            RouterMode::Podsim,
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
        assert!(
            b.router_file()
                .starts_with("# podsim's podsim router for m.cfg")
        );
    }

    /// The BookSim mode takes every delay, the allocators, their iterations and the sampling
    /// as written (BookSim's defaults where a key is absent: booksim_config.cpp gives
    /// credit_delay 0, islip allocators, sample_period 1000, so 10 x 1000 cycles).
    #[test]
    fn the_booksim_mode_keeps_delays_allocators_and_sampling() {
        let b = BooksimImport::parse(
            "m.cfg",
            "topology = torus; k = 4; n = 3; num_vcs = 4; routing_delay = 0; credit_delay = 2;\nvc_allocator = separable_input_first; sw_allocator = separable_input_first; alloc_iters = 2;\nsample_period = 500; injection_rate = 0.2; injection_rate_uses_flits = 1;\n",
            RouterMode::Booksim,
        )
        .unwrap();
        let r = &b.router;
        assert_eq!(r.router, RouterMode::Booksim);
        assert_eq!(
            (r.routing_delay, r.vc_alloc_delay, r.sw_alloc_delay),
            (0, 1, 1)
        );
        assert_eq!((r.st_prepare_delay, r.st_final_delay), (0, 1));
        assert_eq!((r.credit_delay, r.alloc_iters), (2, 2));
        assert_eq!(r.allocator, Allocator::SeparableInputFirst);
        assert_eq!(r.channel_latency, None);
        assert_eq!(b.cycles, Some(5000));
        assert!(b.not_honoured.is_empty(), "{:?}", b.not_honoured);
        assert!(b.command("R.toml").ends_with("--seed 1 --cycles 5000"));
        assert!(!b.router_toml.contains("pipeline_stages"));
        // Allocators the mode does not run, or that differ, are listed.
        let b = BooksimImport::parse("m.cfg", "vc_allocator = wavefront;", RouterMode::Booksim)
            .unwrap();
        assert_eq!(b.not_honoured.len(), 1, "{:?}", b.not_honoured);
        assert_eq!(b.router.allocator, Allocator::Islip);
        // Separable output-first and the speedups are taken too, and written to the router
        // file; the podsim router lists the speedups as not run.
        let text = "vc_allocator = separable_output_first; sw_allocator = separable_output_first;\ninput_speedup = 2; output_speedup = 3;\n";
        let b = BooksimImport::parse("m.cfg", text, RouterMode::Booksim).unwrap();
        assert!(b.not_honoured.is_empty(), "{:?}", b.not_honoured);
        assert_eq!(b.router.allocator, Allocator::SeparableOutputFirst);
        assert_eq!((b.router.input_speedup, b.router.output_speedup), (2, 3));
        assert!(
            b.router_toml.contains("output_speedup = 3"),
            "{}",
            b.router_toml
        );
        let b = BooksimImport::parse("m.cfg", text, RouterMode::Podsim).unwrap();
        assert_eq!(b.not_honoured.len(), 5, "{:?}", b.not_honoured);
        assert!(b.not_honoured[3].starts_with("input_speedup = 2"));
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        // 2^32 + 2 VCs is not 2 VCs.
        let e = BooksimImport::parse("b.cfg", "num_vcs = 4294967298;", RouterMode::Booksim)
            .unwrap_err();
        assert!(e.to_string().starts_with("b.cfg: "), "{e}");
        let e =
            BooksimImport::parse("b.cfg", "k = 4;\nn = two;\n", RouterMode::Booksim).unwrap_err();
        assert_eq!(
            e.to_string(),
            "b.cfg, line 2: `n`: `two` is not a whole number"
        );
        let e = BooksimImport::parse("b.cfg", "topology = fly;", RouterMode::Booksim).unwrap_err();
        assert_eq!(
            e.to_string(),
            "b.cfg: `topology`: `fly`: podsim imports BookSim's mesh and torus (k-ary n-cubes)"
        );
    }
}
