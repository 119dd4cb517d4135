//! Scenario files: what the file says (serde) -> a validated [`Scenario`] -> built topologies.
//!
//! ```toml
//! name = "TPU v4: one 4x4x4 block vs a 4x4x8 slice"
//! description = "..."
//!
//! [[system]]
//! name = "4x4x4 block"
//! topology = "mesh:4x4x4"          # mesh:AxB.., torus:AxB.., ring:N, kncube:AxB..:wrap=tmt
//! link_bandwidth = "50 GB/s"       # per direction
//! link_latency = "0 ns"
//! link_kind = "electrical"         # on-chip | electrical | optical (default electrical)
//! interfaces = 6                   # network interfaces per node (default: one per port)
//! twist = [[0, 0, 4], [0, 0, 4], [0, 0, 0]]  # optional: twist[d][j], see KAryNCube::with_twist
//! [system.blocks]                  # optional: links leaving a block differ
//! shape = [4, 4, 4]
//! kind = "optical"
//! bandwidth = "50 GB/s"            # default: link_bandwidth
//! latency = "0 ns"                 # default: link_latency
//!
//! [[run]]
//! what = "metrics"                 # topology metrics, side by side
//! systems = ["4x4x4 block"]        # default: every system
//!
//! [[run]]
//! what = "collective"              # a collective on each system
//! kind = "all-to-all"              # as `podsim collective`
//! bytes = "16 MiB"                 # per rank
//! algorithm = "direct"             # default: the kind's first
//! model = "flow"                   # analytic | flow (default flow)
//! chunk = "4 KiB"                  # pipeline piece or DMA size (default none)
//! baseline = "4x4x4 block"         # optional: report speed relative to this system
//!
//! [[run]]
//! what = "workload"                # a workload file on its own machine (no [[system]] needed
//! file = "workload-pipeline.toml"  # when every run is a workload), relative to this file
//! ```

use serde::Deserialize;
use toml::Spanned;

use podsim_system::choices::{Setup, parse_names};
use podsim_system::{RUN_KINDS, RunSpec, Scenario, SystemSpec};
use podsim_units::Bytes;

use crate::ctx::{Ctx, MachineFiles, read_capped};
use crate::error::{ConfigError, from_toml, nearest};
use crate::system::RawSystem;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    seed: Option<Spanned<i64>>,
    #[serde(default)]
    system: Vec<RawSystem>,
    #[serde(default)]
    run: Vec<RawRun>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    what: Spanned<String>,
    #[serde(default)]
    file: Option<Spanned<String>>,
    #[serde(default)]
    systems: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    kind: Option<Spanned<String>>,
    #[serde(default)]
    bytes: Option<Spanned<String>>,
    #[serde(default)]
    algorithm: Option<Spanned<String>>,
    #[serde(default)]
    model: Option<Spanned<String>>,
    #[serde(default)]
    chunk: Option<Spanned<String>>,
    #[serde(default)]
    baseline: Option<Spanned<String>>,
    #[serde(default)]
    args: Option<Spanned<Vec<String>>>,
}

/// Parse and validate the scenario in `text`, read from `file`. A workload run's file is
/// read relative to `file`'s directory.
pub fn parse_scenario(file: &str, text: &str) -> Result<Scenario, ConfigError> {
    scenario_in(file, text, None)
}

fn scenario_in(
    file: &str,
    text: &str,
    machines: Option<MachineFiles<'_>>,
) -> Result<Scenario, ConfigError> {
    let raw: RawScenario = toml::from_str(text).map_err(|e| from_toml(file, text, &e))?;
    let ctx = Ctx {
        file,
        text,
        machines,
    };
    // Workload and command runs bring their own machines.
    let only_workloads = !raw.run.is_empty()
        && raw
            .run
            .iter()
            .all(|r| matches!(r.what.get_ref().as_str(), "workload" | "command"));
    if raw.system.is_empty() && !only_workloads {
        return ctx.err(None, "system", "a scenario needs at least one [[system]]");
    }
    let mut systems = Vec::new();
    for (i, s) in raw.system.iter().enumerate() {
        let spec = s.validate(&ctx, &format!("system[{i}]"))?;
        if systems.iter().any(|x: &SystemSpec| x.name == spec.name) {
            return ctx.err(
                s.topology.as_ref().or(s.machine.as_ref()).map(|t| t.span()),
                &format!("system[{i}].name"),
                format!("two systems are named `{}`", spec.name),
            );
        }
        systems.push(spec);
    }
    if raw.run.is_empty() {
        return ctx.err(
            None,
            "run",
            "a scenario needs at least one [[run]], e.g. `[[run]]` with `what = \"metrics\"`",
        );
    }
    let mut runs = Vec::new();
    for (i, r) in raw.run.iter().enumerate() {
        let what = r.what.get_ref().as_str();
        if !RUN_KINDS.contains(&what) {
            return ctx.err(
                Some(r.what.span()),
                &format!("run[{i}].what"),
                format!(
                    "`{what}` is not an analysis; the nearest is `{}` (analyses: {})",
                    nearest(what, &RUN_KINDS).unwrap_or("metrics"),
                    RUN_KINDS.join(", ")
                ),
            );
        }
        let picked = match &r.systems {
            None => (0..systems.len()).collect(),
            Some(names) => {
                let mut out = Vec::new();
                for n in names {
                    let all: Vec<&str> = systems.iter().map(|s| s.name.as_str()).collect();
                    match all.iter().position(|s| s == n.get_ref()) {
                        Some(p) => out.push(p),
                        None => {
                            return ctx.err(
                                Some(n.span()),
                                &format!("run[{i}].systems"),
                                format!(
                                    "no system is named `{}`; the nearest is `{}`",
                                    n.get_ref(),
                                    nearest(n.get_ref(), &all).unwrap_or("")
                                ),
                            );
                        }
                    }
                }
                out
            }
        };
        let key = |k: &str| format!("run[{i}].{k}");
        // The collective keys, which metrics and workload runs do not read.
        let collective_keys = [
            ("kind", r.kind.as_ref().map(|v| v.span())),
            ("bytes", r.bytes.as_ref().map(|v| v.span())),
            ("algorithm", r.algorithm.as_ref().map(|v| v.span())),
            ("model", r.model.as_ref().map(|v| v.span())),
            ("chunk", r.chunk.as_ref().map(|v| v.span())),
            ("baseline", r.baseline.as_ref().map(|v| v.span())),
        ];
        let refuse = |keys: &[(&str, Option<std::ops::Range<usize>>)], why: &str| match keys
            .iter()
            .find(|(_, span)| span.is_some())
        {
            Some((k, span)) => ctx.err(span.clone(), &key(k), why),
            None => Ok(()),
        };
        let systems_span = r.systems.as_ref().and_then(|v| v.first()).map(|v| v.span());
        if what == "command" {
            refuse(
                &[
                    &[
                        ("systems", systems_span.clone()),
                        ("file", r.file.as_ref().map(|v| v.span())),
                    ][..],
                    &collective_keys[..],
                ]
                .concat(),
                "a command run is a podsim command line in `args`; this key would have no effect",
            )?;
            let Some(args) = &r.args else {
                return ctx.err(
                    Some(r.what.span()),
                    &key("args"),
                    "missing: the command line after `podsim`, e.g. args = [\"noc\", \"--topology\", \"mesh:8x8\", \"--rate\", \"0.3\"]",
                );
            };
            if args.get_ref().is_empty() {
                return ctx.err(
                    Some(args.span()),
                    &key("args"),
                    "empty: expected a command and its flags, e.g. [\"gemm\", \"--m\", \"128\"]",
                );
            }
            runs.push(RunSpec::Command {
                args: args.get_ref().clone(),
            });
            continue;
        }
        if let Some(a) = &r.args {
            return ctx.err(
                Some(a.span()),
                &key("args"),
                "only a command run (what = \"command\") takes args; this key would have no effect",
            );
        }
        if what == "workload" {
            let systems = systems_span;
            refuse(
                &[&[("systems", systems)][..], &collective_keys[..]].concat(),
                "a workload run takes its machine, model and tasks from its file; this key would have no effect",
            )?;
            let Some(f) = &r.file else {
                return ctx.err(
                    Some(r.what.span()),
                    &key("file"),
                    "missing: the workload file, e.g. file = \"workload-data-parallel.toml\" (relative to this scenario)",
                );
            };
            let path = std::path::Path::new(file)
                .parent()
                .unwrap_or(std::path::Path::new(""))
                .join(f.get_ref());
            let shown = path.display().to_string();
            let text = read_capped(&path).or_else(|why| {
                ctx.err(Some(f.span()), &key("file"), format!("`{shown}`: {why}"))
            })?;
            let spec = crate::workload::parse_workload(&shown, &text)?;
            runs.push(RunSpec::Workload {
                spec: Box::new(spec),
            });
            continue;
        }
        if let Some(f) = &r.file {
            return ctx.err(
                Some(f.span()),
                &key("file"),
                "only a workload run reads a file; this key would have no effect",
            );
        }
        if what == "metrics" {
            refuse(
                &collective_keys,
                "a metrics run takes no collective keys; this one would have no effect",
            )?;
            runs.push(RunSpec::Metrics { systems: picked });
            continue;
        }
        let Some(kind) = &r.kind else {
            return ctx.err(
                Some(r.what.span()),
                &key("kind"),
                "missing: a collective run names its collective, e.g. kind = \"all-to-all\"",
            );
        };
        // Each name is checked on its own, so the error points at the key that is wrong.
        parse_names(kind.get_ref(), None, "flow")
            .or_else(|e| ctx.err(Some(kind.span()), &key("kind"), e))?;
        if let Some(a) = &r.algorithm {
            parse_names(kind.get_ref(), Some(a.get_ref()), "flow")
                .or_else(|e| ctx.err(Some(a.span()), &key("algorithm"), e))?;
        }
        if let Some(m) = &r.model {
            parse_names(kind.get_ref(), None, m.get_ref())
                .or_else(|e| ctx.err(Some(m.span()), &key("model"), e))?;
        }
        let (k, algorithm, model) = parse_names(
            kind.get_ref(),
            r.algorithm.as_ref().map(|a| a.get_ref().as_str()),
            r.model.as_ref().map_or("flow", |m| m.get_ref().as_str()),
        )
        .or_else(|e| ctx.err(Some(kind.span()), &key("kind"), e))?;
        let bytes = match &r.bytes {
            Some(b) => {
                b.get_ref()
                    .parse::<Bytes>()
                    .or_else(|e| {
                        ctx.err(
                            Some(b.span()),
                            &key("bytes"),
                            format!("{e}; expected a size such as \"16 MiB\""),
                        )
                    })?
                    .0
            }
            None if k == podsim_system::choices::Kind::Barrier => 0,
            None => {
                return ctx.err(
                    Some(r.what.span()),
                    &key("bytes"),
                    "missing: each rank's buffer, e.g. bytes = \"16 MiB\"",
                );
            }
        };
        let chunk = match &r.chunk {
            Some(c) => {
                c.get_ref()
                    .parse::<Bytes>()
                    .or_else(|e| {
                        ctx.err(
                            Some(c.span()),
                            &key("chunk"),
                            format!("{e}; expected a size such as \"4 KiB\""),
                        )
                    })?
                    .0
            }
            None => 0,
        };
        let baseline = match &r.baseline {
            None => None,
            Some(b) => match picked.iter().position(|&s| systems[s].name == *b.get_ref()) {
                Some(p) => Some(picked[p]),
                None => {
                    return ctx.err(
                        Some(b.span()),
                        &key("baseline"),
                        format!("`{}` is not one of this run's systems", b.get_ref()),
                    );
                }
            },
        };
        let setup = Setup {
            kind: k,
            algorithm,
            bytes,
            model,
            packets: podsim_system::choices::Packetization::NONE,
            chunk,
            ecmp: true,
            memory_limit: u64::MAX,
        };
        runs.push(RunSpec::Collective {
            systems: picked,
            setup,
            baseline,
        });
    }
    // No analysis a scenario runs draws random numbers (metrics are closed forms, collectives
    // are deterministic schedules on deterministic models), so a seed would change nothing.
    if let Some(s) = &raw.seed {
        return ctx.err(
            Some(s.span()),
            "seed",
            "no analysis in a scenario draws random numbers, so a seed has no effect; remove the key (`podsim noc --seed` seeds the packet level's traffic)",
        );
    }
    let seed = 0;
    Ok(Scenario {
        file: file.into(),
        name: raw.name,
        description: raw.description,
        seed,
        systems,
        runs,
    })
}

/// As [`parse_scenario`], with `machines` finding the machine files its systems name
/// (`machine = PATH`).
pub fn parse_scenario_with(
    file: &str,
    text: &str,
    machines: MachineFiles<'_>,
) -> Result<Scenario, ConfigError> {
    scenario_in(file, text, Some(machines))
}
