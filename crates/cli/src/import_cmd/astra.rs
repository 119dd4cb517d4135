//! `podsim import astra-sim`: an ASTRA-sim network configuration (the analytical backend's
//! YAML of ASTRA-sim 2.0, or the older JSON with `topologies-per-dim`) and optionally its
//! system configuration, as a podsim system file, the `podsim collective` command that runs
//! the system's collective on it, and that run.
//!
//! ASTRA-sim's building blocks and podsim's exact equivalents (astra-network-analytical,
//! congestion_aware/basic-topology): a `Ring` of n NPUs links i to i + 1 and n - 1 to 0, each
//! link both ways at the stated bandwidth per direction, routed the shorter way round: a
//! torus dimension of n (for n = 2, two parallel links, as podsim's wrapped dimension of 2
//! has). `FullyConnected` links every pair once each way: for 2 NPUs one link (a mesh
//! dimension of 2), for 3 a triangle (a torus dimension of 3); for 4 or more podsim has no
//! equivalent. `Switch` joins its NPUs through one switch, which no podsim topology is (its
//! fat trees are 3-level): refused. Dimension 0 varies fastest in an NPU's id in both tools.
//! ASTRA-sim's GB is 2^30 bytes (`bw_GBps_to_Bpns`: "1 GB is 2^30 B"), so `50` GB/s is
//! podsim's `50 GiB/s`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use podsim_collective::{Algorithm, Kind, Setup};
use podsim_report::render;
use podsim_units::{Bandwidth, Bytes, SimDuration};
use serde_json::{Value, json};

use crate::collective_cmd::{flag_err, measurement_json, size};
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
    #[arg(long, value_name = "KIND", default_value = "all-reduce")]
    collective: String,
    /// Each rank's buffer, as `podsim collective --bytes`.
    #[arg(long, value_name = "SIZE", default_value = "64 MiB")]
    size: String,
    /// analytic, flow or packet, as `podsim collective --model`.
    #[arg(long, value_name = "MODEL", default_value = "flow")]
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

/// One dimension of the network as the file states it.
struct Dim {
    /// Ring, FullyConnected or Switch.
    kind: String,
    npus: u64,
    /// The bandwidth's number as written (GB/s of 2^30 B).
    bandwidth: String,
    /// The latency's number as written (ns).
    latency: String,
}

/// A network file's dimensions, with the keys to cite, and what it says that podsim does
/// not honour.
struct Network {
    dims: Vec<Dim>,
    /// The file's names for the topology, NPU count, bandwidth and latency keys.
    keys: [&'static str; 4],
    not_honoured: Vec<String>,
}

/// A number (JSON or YAML scalar) as text, if it is one.
fn number_text(v: &Value) -> Option<String> {
    v.as_number().map(|n| n.to_string())
}

/// The network from ASTRA-sim 2.0's YAML: `key: [ a, b ]` (or a block list), `#` comments.
fn yaml_network(file: &str, text: &str) -> Result<Network, Failure> {
    let mut map: Vec<(String, Vec<String>, usize)> = Vec::new();
    let mut open: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim_end();
        if line.trim().is_empty() {
            continue;
        }
        let bad = |why: &str| Failure::usage(format!("{file}, line {}: {why}", i + 1));
        if let Some(item) = line.trim_start().strip_prefix("- ") {
            let Some(k) = open else {
                return Err(bad("a list item outside a key; expected `key: [ a, b ]`"));
            };
            map[k].1.push(unquote(item));
            continue;
        }
        if line.starts_with([' ', '\t']) {
            return Err(bad(
                "nested YAML; ASTRA-sim's network file is flat: `key: [ a, b ]` per line",
            ));
        }
        let Some((k, v)) = line.split_once(':') else {
            return Err(bad("expected `key: [ a, b ]`"));
        };
        let (k, v) = (k.trim().to_string(), v.trim());
        if map.iter().any(|e| e.0 == k) {
            return Err(bad(&format!("`{k}` is given twice")));
        }
        let values = if v.is_empty() {
            open = Some(map.len());
            Vec::new()
        } else if let Some(inner) = v.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            open = None;
            inner
                .split(',')
                .map(unquote)
                .filter(|s| !s.is_empty())
                .collect()
        } else {
            open = None;
            vec![unquote(v)]
        };
        map.push((k, values, i + 1));
    }
    let known = ["topology", "npus_count", "bandwidth", "latency"];
    let mut lists = Vec::new();
    for k in known {
        let Some((_, v, line)) = map.iter().find(|e| e.0 == k) else {
            return Err(Failure::usage(format!(
                "{file}: `{k}`: missing; expected a list with one entry per dimension, e.g. `{k}: [ {} ]`",
                match k {
                    "topology" => "Ring",
                    "npus_count" => "8",
                    "bandwidth" => "50.0",
                    _ => "500.0",
                }
            )));
        };
        lists.push((v.clone(), *line));
    }
    let n = lists[0].0.len();
    if n == 0 {
        return Err(Failure::usage(format!(
            "{file}, line {}: `topology`: empty; expected one of Ring, FullyConnected, Switch per dimension",
            lists[0].1
        )));
    }
    for (k, (v, line)) in known.iter().zip(&lists).skip(1) {
        if v.len() != n {
            return Err(Failure::usage(format!(
                "{file}, line {line}: `{k}`: {} entries for {n} dimensions in `topology`; expected one per dimension",
                v.len()
            )));
        }
    }
    let mut dims = Vec::new();
    for d in 0..n {
        let npus = lists[1].0[d].parse::<u64>().map_err(|_| {
            Failure::usage(format!(
                "{file}, line {}: `npus_count`: `{}` is not a whole number",
                lists[1].1, lists[1].0[d]
            ))
        })?;
        dims.push(Dim {
            kind: lists[0].0[d].clone(),
            npus,
            bandwidth: lists[2].0[d].clone(),
            latency: lists[3].0[d].clone(),
        });
    }
    let not_honoured = map
        .iter()
        .filter(|e| !known.contains(&e.0.as_str()))
        .map(|(k, v, _)| {
            format!(
                "{k} = [{}] (not a key of ASTRA-sim's analytical network)",
                v.join(", ")
            )
        })
        .collect();
    Ok(Network {
        dims,
        keys: known,
        not_honoured,
    })
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches(['"', '\'']).to_string()
}

/// The network from the older analytical JSON (`topology-name: Hierarchical`).
fn json_network(file: &str, v: &Value) -> Result<Network, Failure> {
    let obj = v.as_object().ok_or_else(|| {
        Failure::usage(format!(
            "{file}: expected a JSON object with topologies-per-dim, units-count, link-bandwidth and link-latency"
        ))
    })?;
    let err = |k: &str, why: String| Failure::usage(format!("{file}: `{k}`: {why}"));
    match obj.get("topology-name").and_then(Value::as_str) {
        Some("Hierarchical") | None => {}
        Some(other) => {
            return Err(err(
                "topology-name",
                format!(
                    "`{other}`: expected Hierarchical, the only one ASTRA-sim's analytical network has"
                ),
            ));
        }
    }
    let list = |k: &str| -> Result<&Vec<Value>, Failure> {
        obj.get(k).and_then(Value::as_array).ok_or_else(|| {
            err(
                k,
                "missing or not a list; expected one entry per dimension".into(),
            )
        })
    };
    let keys = [
        "topologies-per-dim",
        "units-count",
        "link-bandwidth",
        "link-latency",
    ];
    let topo = list(keys[0])?;
    let n = topo.len();
    if n == 0 {
        return Err(err(
            keys[0],
            "empty; expected Ring, FullyConnected or Switch per dimension".into(),
        ));
    }
    if let Some(c) = obj.get("dimensions-count") {
        if c.as_u64() != Some(n as u64) {
            return Err(err(
                "dimensions-count",
                format!("{c}, but topologies-per-dim lists {n} dimensions"),
            ));
        }
    }
    let mut lists = Vec::new();
    for k in &keys[1..] {
        let l = list(k)?;
        if l.len() != n {
            return Err(err(
                k,
                format!(
                    "{} entries for {n} dimensions; expected one per dimension",
                    l.len()
                ),
            ));
        }
        lists.push(l);
    }
    let links = match obj.get("links-count") {
        None => None,
        Some(_) => {
            let l = list("links-count")?;
            if l.len() != n {
                return Err(err(
                    "links-count",
                    format!(
                        "{} entries for {n} dimensions; expected one per dimension",
                        l.len()
                    ),
                ));
            }
            Some(l)
        }
    };
    let mut dims = Vec::new();
    for d in 0..n {
        let kind = match topo[d].as_str() {
            // ASTRA-sim 1.0's name for a fully connected dimension.
            Some("AllToAll") => "FullyConnected".to_string(),
            Some(s) => s.to_string(),
            None => return Err(err(keys[0], format!("{}: expected a name", topo[d]))),
        };
        let npus = lists[0][d]
            .as_u64()
            .ok_or_else(|| err(keys[1], format!("{}: expected a whole number", lists[0][d])))?;
        let num = |i: usize, k: &str| {
            number_text(&lists[i][d])
                .ok_or_else(|| err(k, format!("{}: expected a number", lists[i][d])))
        };
        let (bandwidth, latency) = (num(1, keys[2])?, num(2, keys[3])?);
        if let Some(l) = links {
            // One link each way to each neighbour of a ring (2 per NPU), one per pair of a
            // fully connected dimension (n - 1 per NPU); more are parallel links, which the
            // 1.0 cost model merged into one faster link and podsim does not.
            let want = match kind.as_str() {
                "Ring" => Some(2),
                "FullyConnected" => Some(npus.saturating_sub(1)),
                _ => None,
            };
            let got = l[d].as_u64();
            if let (Some(w), true) = (want, got != want) {
                return Err(err(
                    "links-count",
                    format!(
                        "{} for dimension {d} ({kind} of {npus}): podsim takes one link to each neighbour, {w} links per NPU; parallel links have no podsim equivalent",
                        l[d]
                    ),
                ));
            }
        }
        dims.push(Dim {
            kind,
            npus,
            bandwidth,
            latency,
        });
    }
    let mut not_honoured = Vec::new();
    for (k, v) in obj {
        let why = match k.as_str() {
            "topology-name" | "dimensions-count" | "links-count" => continue,
            k if keys.contains(&k) => continue,
            "nic-latency" | "router-latency" | "hbm-scale"
                if v.as_array()
                    .is_some_and(|a| a.iter().all(|x| x.as_f64() == Some(0.0))) =>
            {
                continue;
            }
            "dimension-type" => {
                "ASTRA-sim 1.0's class of a dimension's cost model; podsim's links are a graph"
            }
            "nic-latency" => "podsim's system files give no per-dimension NIC latency",
            "router-latency" => {
                "no switch in the podsim system (only Ring and FullyConnected import)"
            }
            "hbm-latency" | "hbm-bandwidth" | "hbm-scale" => {
                "memory; a network system has no HBM model"
            }
            _ => "not modelled",
        };
        not_honoured.push(format!("{k} = {v} ({why})"));
    }
    Ok(Network {
        dims,
        keys,
        not_honoured,
    })
}

/// What the network maps onto: the shorthand, one link spec, and blocks (a per-dimension
/// block size, with the links between blocks) when the dimensions' links differ.
struct Mapped {
    topology: String,
    /// (bandwidth text, latency text) of the links inside blocks (all links without blocks).
    inside: (String, String),
    /// Block shape and the links between blocks.
    blocks: Option<(Vec<u64>, (String, String))>,
}

fn map_network(file: &str, net: &Network) -> Result<Mapped, Failure> {
    let [topo_key, npus_key, bw_key, lat_key] = net.keys;
    let mut wraps = Vec::new();
    for (d, dim) in net.dims.iter().enumerate() {
        let what = format!("{} of {} (dimension {d})", dim.kind, dim.npus);
        let takes = "podsim takes Ring (a torus dimension), FullyConnected of 2 NPUs (a mesh dimension of 2) and FullyConnected of 3 (a ring of 3)";
        if dim.npus < 2 {
            return Err(Failure::usage(format!(
                "{file}: `{npus_key}`: {} NPUs in dimension {d}; expected at least 2",
                dim.npus
            )));
        }
        let wrap = match (dim.kind.as_str(), dim.npus) {
            ("Ring", _) => true,
            ("FullyConnected", 2) => false,
            ("FullyConnected", 3) => true,
            ("FullyConnected", _) => {
                return Err(Failure::usage(format!(
                    "{file}: `{topo_key}`: {what}: every NPU linked to every other has no podsim equivalent beyond 3 NPUs; {takes}"
                )));
            }
            ("Switch", _) => {
                return Err(Failure::usage(format!(
                    "{file}: `{topo_key}`: {what}: NPUs joined through one switch have no podsim equivalent (podsim's fat trees are 3-level, fattree:K); {takes}"
                )));
            }
            (other, _) => {
                return Err(Failure::usage(format!(
                    "{file}: `{topo_key}`: `{other}` (dimension {d}) is not an ASTRA-sim building block; expected Ring, FullyConnected or Switch"
                )));
            }
        };
        let bw = format!("{} GiB/s", dim.bandwidth);
        match bw.parse::<Bandwidth>() {
            Ok(_) if !dim.bandwidth.starts_with('-') => {}
            _ => {
                return Err(Failure::usage(format!(
                    "{file}: `{bw_key}`: `{}` (dimension {d}): expected a positive number of GB/s",
                    dim.bandwidth
                )));
            }
        }
        if format!("{} ns", dim.latency)
            .parse::<SimDuration>()
            .is_err()
        {
            return Err(Failure::usage(format!(
                "{file}: `{lat_key}`: `{}` (dimension {d}): expected a non-negative number of ns",
                dim.latency
            )));
        }
        wraps.push(wrap);
    }
    let sizes: Vec<String> = net.dims.iter().map(|d| d.npus.to_string()).collect();
    let shape = sizes.join("x");
    let topology = if wraps.iter().all(|&w| w) {
        if sizes.len() == 1 {
            format!("ring:{shape}")
        } else {
            format!("torus:{shape}")
        }
    } else if wraps.iter().all(|&w| !w) {
        format!("mesh:{shape}")
    } else {
        let w: String = wraps.iter().map(|&w| if w { 't' } else { 'm' }).collect();
        format!("kncube:{shape}:wrap={w}")
    };
    // The links of each dimension, as exact values (the same figure written two ways is one
    // link spec).
    type Spec = (String, String, Option<Bandwidth>, Option<SimDuration>);
    let spec = |d: &Dim| -> Spec {
        let b = format!("{} GiB/s", d.bandwidth);
        let l = format!("{} ns", d.latency);
        let (bv, lv) = (b.parse::<Bandwidth>().ok(), l.parse::<SimDuration>().ok());
        (b, l, bv, lv)
    };
    let specs: Vec<_> = net.dims.iter().map(spec).collect();
    let first = &specs[0];
    if specs.iter().all(|s| (s.2, s.3) == (first.2, first.3)) {
        return Ok(Mapped {
            topology,
            inside: (first.0.clone(), first.1.clone()),
            blocks: None,
        });
    }
    // Two link specs map exactly onto podsim's blocks: a dimension whose block is 1 has only
    // links between blocks, a mesh dimension whose block is the whole dimension only links
    // inside. A wrapped dimension's wrap-around link is always between blocks, so every
    // wrapped dimension must carry the `between` links.
    let mut distinct: Vec<(Option<Bandwidth>, Option<SimDuration>)> = Vec::new();
    for s in &specs {
        if !distinct.contains(&(s.2, s.3)) {
            distinct.push((s.2, s.3));
        }
    }
    let wrapped: Vec<usize> = (0..specs.len()).filter(|&d| wraps[d]).collect();
    let between = wrapped.first().map(|&d| (specs[d].2, specs[d].3));
    let fits = distinct.len() == 2
        && wrapped
            .iter()
            .all(|&d| Some((specs[d].2, specs[d].3)) == between);
    let listing: Vec<String> = net
        .dims
        .iter()
        .enumerate()
        .map(|(d, x)| {
            format!(
                "dimension {d} ({}): {} GB/s, {} ns",
                x.kind, x.bandwidth, x.latency
            )
        })
        .collect();
    if !fits {
        return Err(Failure::usage(format!(
            "{file}: `{bw_key}`/`{lat_key}`: {}: podsim's system gives at most two link specs, one inside blocks and one between them (every wrapped dimension, Ring or FullyConnected of 3, between); these dimensions have no exact podsim equivalent",
            listing.join("; ")
        )));
    }
    // `fits` with two specs: if no dimension wraps, the first dimension's spec goes between.
    let between = between.unwrap_or((specs[0].2, specs[0].3));
    let mut shape = Vec::new();
    let (mut inside, mut outside) = (None, None);
    for (d, s) in specs.iter().enumerate() {
        if (s.2, s.3) == between {
            shape.push(1);
            outside = Some((s.0.clone(), s.1.clone()));
        } else {
            shape.push(net.dims[d].npus);
            inside = Some((s.0.clone(), s.1.clone()));
        }
    }
    match (inside, outside) {
        (Some(inside), Some(outside)) => Ok(Mapped {
            topology,
            inside,
            blocks: Some((shape, outside)),
        }),
        _ => Err(Failure::runtime(format!(
            "{file}: two link specs but not one dimension of each; please report this"
        ))),
    }
}

/// The podsim algorithm for an ASTRA-sim implementation list, or why there is none.
fn algorithm(kind: Kind, impls: &[String], dims: usize) -> Result<Algorithm, String> {
    let all = |name: &str| impls.iter().all(|i| i == name);
    let alg = match kind {
        Kind::AllReduce if all("oneRing") => Some(Algorithm::Ring),
        Kind::AllReduce if all("ring") && dims == 1 => Some(Algorithm::Ring),
        Kind::AllReduce if all("ring") => Some(Algorithm::DimensionWise),
        Kind::AllReduce if all("halvingDoubling") && dims == 1 => Some(Algorithm::HalvingDoubling),
        Kind::AllReduce if all("oneHalvingDoubling") => Some(Algorithm::HalvingDoubling),
        Kind::AllReduce if all("doubleBinaryTree") && dims == 1 => {
            Some(Algorithm::DoubleBinaryTree)
        }
        Kind::ReduceScatter | Kind::AllGather if all("oneRing") => Some(Algorithm::Ring),
        Kind::ReduceScatter | Kind::AllGather if all("ring") && dims == 1 => Some(Algorithm::Ring),
        Kind::AllToAll if all("oneDirect") => Some(Algorithm::Direct),
        Kind::AllToAll if all("direct") && dims == 1 => Some(Algorithm::Direct),
        Kind::AllToAll if all("direct") => Some(Algorithm::DimensionWise),
        _ => None,
    };
    alg.ok_or_else(|| {
        let takes = match kind {
            Kind::AllReduce => "ring or oneRing (ring; ring on several dimensions: dimension), halvingDoubling or oneHalvingDoubling (halving-doubling), doubleBinaryTree on one dimension (double-binary-tree)",
            Kind::ReduceScatter | Kind::AllGather => "oneRing, or ring on one dimension (ring)",
            _ => "oneDirect, or direct (direct; on several dimensions: dimension)",
        };
        format!(
            "[{}]: podsim has no {kind} that runs this per dimension; expected the same on every dimension: {takes}",
            impls.join(", ")
        )
    })
}

/// `podsim import astra-sim`.
pub fn astra(a: &AstraArgs) -> Result<ExitCode, Failure> {
    let file = a.network.display().to_string();
    let text = read(&a.network)?;
    let net = if text.trim_start().starts_with('{') {
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| Failure::usage(format!("{file}: not JSON: {e}")))?;
        json_network(&file, &v)?
    } else {
        yaml_network(&file, &text)?
    };
    let mapped = map_network(&file, &net)?;
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
    let dims = net.dims.len();
    let mut alg = default_alg;
    if let Some(sys) = &a.system {
        let sfile = sys.display().to_string();
        let v: Value = serde_json::from_str(&read(sys)?)
            .map_err(|e| Failure::usage(format!("{sfile}: not JSON: {e}")))?;
        let obj = v.as_object().ok_or_else(|| {
            Failure::usage(format!(
                "{sfile}: expected a JSON object (ASTRA-sim's system configuration)"
            ))
        })?;
        let wanted = format!("{}-implementation", kind.name());
        let impls = |k: &str, v: &Value| -> Result<Vec<String>, Failure> {
            let list: Option<Vec<String>> = v
                .as_array()
                .and_then(|l| l.iter().map(|x| x.as_str().map(String::from)).collect());
            match list {
                Some(l) if l.len() == dims => Ok(l),
                _ => Err(Failure::usage(format!(
                    "{sfile}: `{k}`: {v}: expected a list of {dims} implementation names, one per dimension of {file}"
                ))),
            }
        };
        let Some(w) = obj.get(&wanted) else {
            return Err(Failure::usage(format!(
                "{sfile}: `{wanted}`: missing; expected the {kind}'s implementation per dimension, e.g. [\"ring\"]"
            )));
        };
        alg = algorithm(kind, &impls(&wanted, w)?, dims)
            .map_err(|why| Failure::usage(format!("{sfile}: `{wanted}`: {why}")))?;
        for (k, v) in obj {
            let off = v.as_u64() == Some(0) || v.as_f64() == Some(0.0);
            let why = match k.as_str() {
                k if k == wanted => continue,
                k if k.ends_with("-implementation") => {
                    impls(k, v)?;
                    "used by another collective than this run's; --collective picks it"
                }
                "preferred-dataset-splits" | "active-chunks-per-dimension"
                    if v.as_u64() == Some(1) =>
                {
                    continue;
                }
                "preferred-dataset-splits" | "active-chunks-per-dimension" => {
                    "podsim runs a collective's buffer as one piece per step, not split into chunks"
                }
                "endpoint-delay" if off => continue,
                "endpoint-delay" => "a podsim system file sets no per-message endpoint delay",
                "scheduling-policy" => "orders ASTRA-sim's chunks; podsim runs one collective",
                "collective-optimization" => {
                    "ASTRA-sim's per-dimension phase order; podsim runs the algorithm above as it is"
                }
                "boost-mode" | "roofline-enabled" | "trace-enabled" | "replay-only"
                | "track-local-mem"
                    if off =>
                {
                    continue;
                }
                "local-mem-bw" | "peak-perf" | "roofline-enabled" | "local-reduction-delay" => {
                    "compute and memory: a collective run has none; podsim import chakra runs workloads"
                }
                _ => "not modelled",
            };
            not_honoured.push(format!("{k} = {v} ({why})"));
        }
    }
    // The system file.
    let name = a
        .network
        .file_stem()
        .map_or("astra-sim".into(), |s| s.to_string_lossy().into_owned());
    let mut toml_text = format!(
        "# podsim's system for {file} (podsim import astra-sim)\nname = {}\ntopology = \"{}\"\nlink_bandwidth = \"{}\"\nlink_latency = \"{}\"\n",
        toml::Value::String(name.clone()),
        mapped.topology,
        mapped.inside.0,
        mapped.inside.1
    );
    if let Some((shape, (b, l))) = &mapped.blocks {
        let s: Vec<String> = shape.iter().map(u64::to_string).collect();
        toml_text.push_str(&format!(
            "\n# Dimensions whose block size is 1 have only links between blocks.\n[blocks]\nshape = [{}]\nbandwidth = \"{b}\"\nlatency = \"{l}\"\n",
            s.join(", ")
        ));
    }
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
    let command = format!(
        "podsim collective {} --topology {system_ref} --bytes \"{}\" --algorithm {} --model {}",
        kind.name(),
        Bytes(bytes),
        alg.name(),
        model.name()
    );
    if let Some(p) = &a.out {
        std::fs::write(p, &toml_text)
            .map_err(|e| Failure::runtime(format!("{}: cannot write: {e}", p.display())))?;
    }
    if a.json {
        outln!(
            "{}",
            json!({
                "system": toml::from_str::<Value>(&toml_text).unwrap_or_default(),
                "command": command,
                "run": measurement_json(kind, alg, model, &system_ref, &m),
                "not_honoured": not_honoured,
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    if a.out.is_none() {
        out!("{toml_text}");
    }
    outln!("# run it: {command}");
    let rows = vec![
        (
            "# collective".to_string(),
            vec![format!("{kind} ({}), {} model", alg.name(), model.name())],
        ),
        (
            "# ranks".into(),
            vec![format!("{} on {}", m.ranks, mapped.topology)],
        ),
        ("# bytes per rank".into(), vec![Bytes(m.bytes).to_string()]),
        ("# time".into(), vec![format!("{:.6e} s", m.time_s)]),
        (
            "# bus bandwidth".into(),
            vec![format!("{:.3} GB/s", m.bus_bandwidth_bytes_per_s / 1e9)],
        ),
        (
            "# lower bound".into(),
            vec![format!("{:.6e} s", m.lower_bound_time_s)],
        ),
        (
            "# result".into(),
            vec![
                if m.verified {
                    "verified"
                } else {
                    "not verified"
                }
                .to_string(),
            ],
        ),
    ];
    out!("{}", render(&rows));
    for n in &not_honoured {
        outln!("# not honoured: {n}");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Arbitrary text, and every line of a real file mangled, give a network or an error,
    /// never a panic.
    #[test]
    fn parsing_never_panics() {
        let real = "topology: [ Ring, FullyConnected ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50.0, 200.0 ]  # GB/s\nlatency: [ 500.0, 100.0 ]  # ns\n";
        let Ok(net) = yaml_network("real.yml", real) else {
            panic!("the real file did not parse")
        };
        assert_eq!(net.dims.len(), 2);
        assert!(map_network("real.yml", &net).is_ok());
        let alphabet: Vec<char> = "[]:,-# \n\tRingSwch0123456789.e\"'{}".chars().collect();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(19);
        for _ in 0..3000 {
            let n = rng.random_range(0..80);
            let text: String = (0..n)
                .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                .collect();
            if let Ok(net) = yaml_network("junk.yml", &text) {
                let _ = map_network("junk.yml", &net);
            }
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                if let Ok(net) = json_network("junk.json", &v) {
                    let _ = map_network("junk.json", &net);
                }
            }
            let mut chars: Vec<char> = real.chars().collect();
            let i = rng.random_range(0..chars.len());
            chars[i] = alphabet[rng.random_range(0..alphabet.len())];
            let text: String = chars.into_iter().collect();
            if let Ok(net) = yaml_network("mangled.yml", &text) {
                let _ = map_network("mangled.yml", &net);
            }
        }
    }
}
