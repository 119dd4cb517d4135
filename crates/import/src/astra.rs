//! ASTRA-sim: a network configuration (the analytical backend's YAML of ASTRA-sim 2.0, or the
//! older JSON with `topologies-per-dim`) as a podsim system file, and a system configuration's
//! `<collective>-implementation` as podsim's algorithm, naming every key podsim does not
//! honour.
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
//!
//! The YAML is read with `serde_norway` (a maintained fork of `serde_yaml`): any YAML whose
//! document is a mapping of keys to lists of scalars (or one scalar) is taken, every scalar
//! kept as written, so `50.0` GB/s stays `50.0 GiB/s` in the system file.

use std::fmt;
use std::path::Path;

use podsim_collective::{Algorithm, Kind};
use podsim_units::{Bandwidth, SimDuration};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::{ImportError, Result};

/// One dimension of the network as the file states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dim {
    /// Ring, FullyConnected or Switch.
    pub kind: String,
    /// Its NPUs.
    pub npus: u64,
    /// The bandwidth's number as written (GB/s of 2^30 B).
    pub bandwidth: String,
    /// The latency's number as written (ns).
    pub latency: String,
}

/// A network file's dimensions, with the keys to cite, and what it says that podsim does
/// not honour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    /// The file, as the user named it.
    pub file: String,
    /// The dimensions, dimension 0 first.
    pub dims: Vec<Dim>,
    /// The file's names for the topology, NPU count, bandwidth and latency keys.
    pub keys: [&'static str; 4],
    /// Every key podsim does not honour, as `key = value (why)`.
    pub not_honoured: Vec<String>,
}

impl Network {
    /// Read a network configuration's text: JSON when it starts with `{`, else YAML.
    pub fn parse(file: &str, text: &str) -> Result<Self> {
        if text.trim_start().starts_with('{') {
            let v: Value = serde_json::from_str(text)
                .map_err(|e| ImportError::new(file, format!("not JSON: {e}")))?;
            json_network(file, &v)
        } else {
            yaml_network(file, text)
        }
    }
}

/// A YAML document that is one flat mapping: each key with its list of scalars as written,
/// in the file's order (a key given twice is here twice).
struct FlatYaml(Vec<(String, Vec<String>)>);

/// A scalar as written (`50.0` stays `50.0`).
struct Scalar(String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d).map(Scalar)
    }
}

/// A key's value: a list of scalars, or one scalar (a list of one), or nothing (empty).
struct Scalars(Vec<String>);

impl<'de> Deserialize<'de> for Scalars {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Scalars;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of scalars, e.g. `[ 4, 8 ]`")
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Scalars, A::Error> {
                let mut out = Vec::new();
                while let Some(Scalar(s)) = seq.next_element()? {
                    out.push(s);
                }
                Ok(Scalars(out))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Scalars, E> {
                Ok(Scalars(vec![v.to_string()]))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Scalars, E> {
                Ok(Scalars(vec![v.to_string()]))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Scalars, E> {
                Ok(Scalars(vec![v.to_string()]))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Scalars, E> {
                // Debug keeps a decimal point: 50.0, not 50.
                Ok(Scalars(vec![format!("{v:?}")]))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Scalars, E> {
                Ok(Scalars(vec![v.to_string()]))
            }
            fn visit_unit<E: de::Error>(self) -> std::result::Result<Scalars, E> {
                Ok(Scalars(Vec::new()))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for FlatYaml {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FlatYaml;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping of keys to lists")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<FlatYaml, A::Error> {
                let mut out: Vec<(String, Vec<String>)> = Vec::new();
                while let Some(Scalar(k)) = map.next_key()? {
                    let Scalars(v) = map.next_value()?;
                    out.push((k, v));
                }
                Ok(FlatYaml(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The lines (from 1) where a top-level key of a block mapping is written: those that start,
/// unindented, with the key (quoted or not) and a colon. ASTRA-sim's files are written so; a
/// key of a flow mapping (`{ topology: [ Ring ] }`) has no line here.
fn key_lines(text: &str, key: &str) -> Vec<usize> {
    let spellings = [key.to_string(), format!("\"{key}\""), format!("'{key}'")];
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            spellings.iter().any(|k| {
                l.strip_prefix(k.as_str())
                    .is_some_and(|r| r.trim_start().starts_with(':'))
            })
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// The network from ASTRA-sim 2.0's YAML: `topology`, `npus_count`, `bandwidth`, `latency`,
/// each a list with one entry per dimension.
fn yaml_network(file: &str, text: &str) -> Result<Network> {
    let FlatYaml(map) = serde_norway::from_str(text).map_err(|e| {
        let not = "not ASTRA-sim's network YAML (`key: [ a, b ]` per key)";
        let err = ImportError::new(file, format!("{not}: {e}"));
        match e.location() {
            // The line leads, as in every other error, rather than ending the message.
            Some(l) => {
                let msg = e.to_string();
                let end = format!(" at line {} column {}", l.line(), l.column());
                ImportError {
                    what: format!("{not}: {}", msg.strip_suffix(&end).unwrap_or(&msg)),
                    ..err.line(l.line())
                }
            }
            None => err,
        }
    })?;
    for (i, (k, _)) in map.iter().enumerate() {
        if map[..i].iter().any(|e| &e.0 == k) {
            let e = ImportError::new(file, format!("`{k}` is given twice"));
            return Err(match key_lines(text, k).get(1) {
                Some(&l) => e.line(l),
                None => e,
            });
        }
    }
    let known = ["topology", "npus_count", "bandwidth", "latency"];
    let at = |k: &str, e: ImportError| match key_lines(text, k).first() {
        Some(&l) => e.line(l).key(k),
        None => e.key(k),
    };
    let mut lists = Vec::new();
    for k in known {
        let Some((_, v)) = map.iter().find(|e| e.0 == k) else {
            return Err(ImportError::new(
                file,
                format!(
                    "missing; expected a list with one entry per dimension, e.g. `{k}: [ {} ]`",
                    match k {
                        "topology" => "Ring",
                        "npus_count" => "8",
                        "bandwidth" => "50.0",
                        _ => "500.0",
                    }
                ),
            )
            .key(k));
        };
        lists.push(v.clone());
    }
    let n = lists[0].len();
    if n == 0 {
        return Err(at(
            "topology",
            ImportError::new(
                file,
                "empty; expected one of Ring, FullyConnected, Switch per dimension",
            ),
        ));
    }
    for (k, v) in known.iter().zip(&lists).skip(1) {
        if v.len() != n {
            return Err(at(
                k,
                ImportError::new(
                    file,
                    format!(
                        "{} entries for {n} dimensions in `topology`; expected one per dimension",
                        v.len()
                    ),
                ),
            ));
        }
    }
    let mut dims = Vec::new();
    for (d, npus) in lists[1].iter().enumerate() {
        let npus = npus.parse::<u64>().map_err(|_| {
            at(
                "npus_count",
                ImportError::new(file, format!("`{npus}` is not a whole number")),
            )
        })?;
        dims.push(Dim {
            kind: lists[0][d].clone(),
            npus,
            bandwidth: lists[2][d].clone(),
            latency: lists[3][d].clone(),
        });
    }
    let not_honoured = map
        .iter()
        .filter(|e| !known.contains(&e.0.as_str()))
        .map(|(k, v)| {
            format!(
                "{k} = [{}] (not a key of ASTRA-sim's analytical network)",
                v.join(", ")
            )
        })
        .collect();
    Ok(Network {
        file: file.to_string(),
        dims,
        keys: known,
        not_honoured,
    })
}

/// A number (JSON) as text, if it is one.
fn number_text(v: &Value) -> Option<String> {
    v.as_number().map(|n| n.to_string())
}

/// The network from the older analytical JSON (`topology-name: Hierarchical`).
fn json_network(file: &str, v: &Value) -> Result<Network> {
    let obj = v.as_object().ok_or_else(|| {
        ImportError::new(
            file,
            "expected a JSON object with topologies-per-dim, units-count, link-bandwidth and link-latency",
        )
    })?;
    let err = |k: &str, why: String| ImportError::new(file, why).key(k);
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
    let list = |k: &str| -> Result<&Vec<Value>> {
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
    if let Some(c) = obj.get("dimensions-count")
        && c.as_u64() != Some(n as u64)
    {
        return Err(err(
            "dimensions-count",
            format!("{c}, but topologies-per-dim lists {n} dimensions"),
        ));
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
        file: file.to_string(),
        dims,
        keys,
        not_honoured,
    })
}

/// What the network maps onto: the shorthand, one link spec, and blocks (a per-dimension
/// block size, with the links between blocks) when the dimensions' links differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapped {
    /// podsim's topology shorthand (`ring:4`, `torus:4x8`, `mesh:2`, `kncube:4x2:wrap=tm`).
    pub topology: String,
    /// (bandwidth, latency) of the links inside blocks (all links without blocks), as podsim
    /// writes them (`50.0 GiB/s`, `500.0 ns`).
    pub inside: (String, String),
    /// Block shape and the (bandwidth, latency) of the links between blocks.
    pub blocks: Option<(Vec<u64>, (String, String))>,
}

impl Mapped {
    /// podsim's system for the network: a Ring is a torus dimension, FullyConnected of 2 a
    /// mesh dimension of 2 and of 3 a ring of 3; two link specs become blocks. A Switch, a
    /// larger FullyConnected or more than two link specs have no exact podsim equivalent and
    /// are refused.
    pub fn new(net: &Network) -> Result<Self> {
        map_network(&net.file, net)
    }

    /// The podsim system file (TOML, what `--topology FILE` reads) for the network file at
    /// `network`, named after its stem.
    pub fn system_file(&self, network: &Path) -> String {
        let file = network.display().to_string();
        let name = network
            .file_stem()
            .map_or("astra-sim".into(), |s| s.to_string_lossy().into_owned());
        let mut text = format!(
            "# podsim's system for {file} (podsim import astra-sim)\nname = {}\ntopology = \"{}\"\nlink_bandwidth = \"{}\"\nlink_latency = \"{}\"\n",
            toml::Value::String(name),
            self.topology,
            self.inside.0,
            self.inside.1
        );
        if let Some((shape, (b, l))) = &self.blocks {
            let s: Vec<String> = shape.iter().map(u64::to_string).collect();
            text.push_str(&format!(
                "\n# Dimensions whose block size is 1 have only links between blocks.\n[blocks]\nshape = [{}]\nbandwidth = \"{b}\"\nlatency = \"{l}\"\n",
                s.join(", ")
            ));
        }
        text
    }
}

fn map_network(file: &str, net: &Network) -> Result<Mapped> {
    let [topo_key, npus_key, bw_key, lat_key] = net.keys;
    let mut wraps = Vec::new();
    for (d, dim) in net.dims.iter().enumerate() {
        let what = format!("{} of {} (dimension {d})", dim.kind, dim.npus);
        let takes = "podsim takes Ring (a torus dimension), FullyConnected of 2 NPUs (a mesh dimension of 2) and FullyConnected of 3 (a ring of 3)";
        if dim.npus < 2 {
            return Err(ImportError::new(
                file,
                format!("{} NPUs in dimension {d}; expected at least 2", dim.npus),
            )
            .key(npus_key));
        }
        let wrap = match (dim.kind.as_str(), dim.npus) {
            ("Ring", _) => true,
            ("FullyConnected", 2) => false,
            ("FullyConnected", 3) => true,
            ("FullyConnected", _) => {
                return Err(ImportError::new(
                    file,
                    format!(
                        "{what}: every NPU linked to every other has no podsim equivalent beyond 3 NPUs; {takes}"
                    ),
                )
                .key(topo_key));
            }
            ("Switch", _) => {
                return Err(ImportError::new(
                    file,
                    format!(
                        "{what}: NPUs joined through one switch have no podsim equivalent (podsim's fat trees are 3-level, fattree:K); {takes}"
                    ),
                )
                .key(topo_key));
            }
            (other, _) => {
                return Err(ImportError::new(
                    file,
                    format!(
                        "`{other}` (dimension {d}) is not an ASTRA-sim building block; expected Ring, FullyConnected or Switch"
                    ),
                )
                .key(topo_key));
            }
        };
        let bw = format!("{} GiB/s", dim.bandwidth);
        match bw.parse::<Bandwidth>() {
            Ok(_) if !dim.bandwidth.starts_with('-') => {}
            _ => {
                return Err(ImportError::new(
                    file,
                    format!(
                        "`{}` (dimension {d}): expected a positive number of GB/s",
                        dim.bandwidth
                    ),
                )
                .key(bw_key));
            }
        }
        if format!("{} ns", dim.latency)
            .parse::<SimDuration>()
            .is_err()
        {
            return Err(ImportError::new(
                file,
                format!(
                    "`{}` (dimension {d}): expected a non-negative number of ns",
                    dim.latency
                ),
            )
            .key(lat_key));
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
        return Err(ImportError::new(
            file,
            format!(
                "{}: podsim's system gives at most two link specs, one inside blocks and one between them (every wrapped dimension, Ring or FullyConnected of 3, between); these dimensions have no exact podsim equivalent",
                listing.join("; ")
            ),
        )
        .key(bw_key)
        .key(lat_key));
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
        _ => Err(ImportError::new(
            file,
            "two link specs but not one dimension of each; please report this",
        )
        .internal()),
    }
}

/// The podsim algorithm for an ASTRA-sim implementation list, or why there is none.
pub fn algorithm(
    kind: Kind,
    impls: &[String],
    dims: usize,
) -> std::result::Result<Algorithm, String> {
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

/// What podsim takes from an ASTRA-sim system configuration (JSON) for one collective.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemConfig {
    /// The algorithm its `<collective>-implementation` names.
    pub algorithm: Algorithm,
    /// Every key podsim does not honour, as `key = value (why)`.
    pub not_honoured: Vec<String>,
}

impl SystemConfig {
    /// Read the system configuration's text (file `file`) for a `kind` collective on `net`:
    /// every `-implementation` must list one name per dimension of the network.
    pub fn parse(file: &str, text: &str, kind: Kind, net: &Network) -> Result<Self> {
        let dims = net.dims.len();
        let v: Value = serde_json::from_str(text)
            .map_err(|e| ImportError::new(file, format!("not JSON: {e}")))?;
        let obj = v.as_object().ok_or_else(|| {
            ImportError::new(
                file,
                "expected a JSON object (ASTRA-sim's system configuration)",
            )
        })?;
        let wanted = format!("{}-implementation", kind.name());
        let impls = |k: &str, v: &Value| -> Result<Vec<String>> {
            let list: Option<Vec<String>> = v
                .as_array()
                .and_then(|l| l.iter().map(|x| x.as_str().map(String::from)).collect());
            match list {
                Some(l) if l.len() == dims => Ok(l),
                _ => Err(ImportError::new(
                    file,
                    format!(
                        "{v}: expected a list of {dims} implementation names, one per dimension of {}",
                        net.file
                    ),
                )
                .key(k)),
            }
        };
        let Some(w) = obj.get(&wanted) else {
            return Err(ImportError::new(
                file,
                format!(
                    "missing; expected the {kind}'s implementation per dimension, e.g. [\"ring\"]"
                ),
            )
            .key(&wanted));
        };
        let algorithm = algorithm(kind, &impls(&wanted, w)?, dims)
            .map_err(|why| ImportError::new(file, why).key(&wanted))?;
        let mut not_honoured = Vec::new();
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
        Ok(SystemConfig {
            algorithm,
            not_honoured,
        })
    }
}

/// An ASTRA-sim import as podsim ran it: the system file, the collective and its
/// measurement, handed back by the caller that ran it.
#[derive(Debug, Clone)]
pub struct AstraRun<'a> {
    /// The podsim system file (TOML).
    pub system_toml: &'a str,
    /// Where the system file is (what the command's `--topology` names).
    pub system_ref: &'a str,
    /// podsim's topology shorthand for the network.
    pub topology: &'a str,
    /// The collective.
    pub kind: podsim_collective::Kind,
    /// Its algorithm.
    pub algorithm: Algorithm,
    /// The model that ran it.
    pub model: podsim_collective::ModelKind,
    /// Each rank's buffer in bytes.
    pub bytes: u64,
    /// The run.
    pub measurement: &'a podsim_collective::Measurement,
    /// Every key podsim does not honour.
    pub not_honoured: &'a [String],
}

impl AstraRun<'_> {
    /// The `podsim collective` command that runs the same collective on the system file.
    pub fn command(&self) -> String {
        format!(
            "podsim collective {} --topology {} --bytes \"{}\" --algorithm {} --model {}",
            self.kind.name(),
            self.system_ref,
            podsim_units::Bytes(self.bytes),
            self.algorithm.name(),
            self.model.name()
        )
    }

    /// The import as `podsim import astra-sim --json` prints it.
    pub fn json(&self) -> Value {
        let run = podsim_collective::CollectiveOutput::new(
            self.kind,
            self.algorithm,
            self.model,
            self.system_ref,
            self.measurement,
        );
        serde_json::json!({
            "system": toml::from_str::<Value>(self.system_toml).unwrap_or_default(),
            "command": self.command(),
            "run": serde_json::to_value(&run).unwrap_or_else(|e| Value::String(format!("cannot serialize the result: {e}"))),
            "not_honoured": self.not_honoured,
        })
    }

    /// The import as `podsim import astra-sim` prints it: the system file (unless
    /// `system_written` elsewhere), the command, the run's summary and a line per key podsim
    /// does not honour, as TOML comments.
    pub fn text(&self, system_written: bool) -> String {
        let m = self.measurement;
        let mut out = String::new();
        if !system_written {
            out.push_str(self.system_toml);
        }
        out.push_str(&format!("# run it: {}\n", self.command()));
        let rows = vec![
            (
                "# collective".to_string(),
                vec![format!(
                    "{} ({}), {} model",
                    self.kind,
                    self.algorithm.name(),
                    self.model.name()
                )],
            ),
            (
                "# ranks".into(),
                vec![format!("{} on {}", m.ranks, self.topology)],
            ),
            (
                "# bytes per rank".into(),
                vec![podsim_units::Bytes(m.bytes).to_string()],
            ),
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
        out.push_str(&podsim_units::table::render(&rows));
        for n in self.not_honoured {
            out.push_str(&format!("# not honoured: {n}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    const REAL: &str = "topology: [ Ring, FullyConnected ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 50.0, 200.0 ]  # GB/s\nlatency: [ 500.0, 100.0 ]  # ns\n";

    /// Arbitrary text, and every line of a real file mangled, give a network or an error,
    /// never a panic.
    #[test]
    fn parsing_never_panics() {
        let Ok(net) = Network::parse("real.yml", REAL) else {
            panic!("the real file did not parse")
        };
        assert_eq!(net.dims.len(), 2);
        assert!(Mapped::new(&net).is_ok());
        let alphabet: Vec<char> = "[]:,-# \n\tRingSwch0123456789.e\"'{}".chars().collect();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(19);
        for _ in 0..3000 {
            let n = rng.random_range(0..80);
            let text: String = (0..n)
                .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                .collect();
            if let Ok(net) = yaml_network("junk.yml", &text) {
                let _ = Mapped::new(&net);
            }
            if let Ok(v) = serde_json::from_str::<Value>(&text)
                && let Ok(net) = json_network("junk.json", &v)
            {
                let _ = Mapped::new(&net);
            }
            let mut chars: Vec<char> = REAL.chars().collect();
            let i = rng.random_range(0..chars.len());
            chars[i] = alphabet[rng.random_range(0..alphabet.len())];
            let text: String = chars.into_iter().collect();
            if let Ok(net) = yaml_network("mangled.yml", &text) {
                let _ = Mapped::new(&net);
            }
        }
    }

    /// Scalars are kept as written, in flow or block lists, quoted or not; a lone scalar is a
    /// list of one.
    #[test]
    fn yaml_scalars_are_kept_as_written() {
        let net = Network::parse(
            "b.yml",
            "# a comment\ntopology:\n  - Ring\n  - \"Ring\"\nnpus_count: [4, 8]\nbandwidth: [ 50.10, 5e1 ]\nlatency: [ '500', 1000.0 ]\nextra: 7\n",
        )
        .unwrap();
        let got: Vec<(&str, u64, &str, &str)> = net
            .dims
            .iter()
            .map(|d| {
                (
                    d.kind.as_str(),
                    d.npus,
                    d.bandwidth.as_str(),
                    d.latency.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [("Ring", 4, "50.10", "500"), ("Ring", 8, "5e1", "1000.0")]
        );
        assert_eq!(
            net.not_honoured,
            ["extra = [7] (not a key of ASTRA-sim's analytical network)"]
        );
    }

    #[test]
    fn yaml_errors_name_the_file_line_and_key() {
        let short = "topology: [ Ring, Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0, 50.0 ]\nlatency: [ 500.0, 500.0 ]\n";
        assert_eq!(
            Network::parse("short.yml", short).unwrap_err().to_string(),
            "short.yml, line 2: `npus_count`: 1 entries for 2 dimensions in `topology`; expected one per dimension"
        );
        let e = Network::parse("m.yml", "topology: [ Ring ]\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "m.yml: `npus_count`: missing; expected a list with one entry per dimension, e.g. `npus_count: [ 8 ]`"
        );
        let e = Network::parse("d.yml", "topology: [ Ring ]\ntopology: [ Ring ]\n").unwrap_err();
        assert_eq!(e.to_string(), "d.yml, line 2: `topology` is given twice");
        let e = Network::parse("n.yml", "topology: [ Ring ]\nnpus_count: { a: 1 }\n").unwrap_err();
        assert!(e.to_string().starts_with("n.yml, line 2: "), "{e}");
        let e = Network::parse("s.yml", "topology: [ Ring\n").unwrap_err();
        assert!(e.to_string().starts_with("s.yml, line "), "{e}");
        // An empty file lacks the first key.
        let e = Network::parse("e.yml", "# nothing\n").unwrap_err();
        assert!(
            e.to_string().starts_with("e.yml: `topology`: missing"),
            "{e}"
        );
    }

    #[test]
    fn implementations_map_to_podsim_algorithms() {
        let ring = vec!["ring".to_string(); 2];
        assert_eq!(
            algorithm(Kind::AllReduce, &ring, 2),
            Ok(Algorithm::DimensionWise)
        );
        assert!(algorithm(Kind::AllGather, &ring, 2).is_err());
    }
}
