//! Topology shorthands: `mesh:8x8`, `torus:4x4x8`, `torus:4x4x8:twisted`, `ring:16`,
//! `kncube:24x18x16:wrap=tmt`.

use podsim_system::SystemSpec;
use podsim_topology::{LinkKind, LinkSpec};

use crate::error::ConfigError;
use podsim_system::{Shape, TofuSpec, TopoSpec};
use podsim_topology::{DojoSpec, KAryNCube, TofuGeneration};

use crate::error::nearest;

/// The kinds a shorthand may start with.
pub const SHORTHAND_KINDS: [&str; 14] = [
    "mesh",
    "torus",
    "ring",
    "kncube",
    "tofu",
    "tofu1",
    "tofu2",
    "tofud",
    "tpuv4",
    "fattree",
    "dojo",
    "grayskull",
    "wormhole",
    "hybrid",
];

/// The shorthand grammar and every preset, for `--help`.
pub const SHORTHAND_HELP: &str = "\
Topology shorthands:
  mesh:AxBx..         a mesh of any number of dimensions (mesh:8x8, mesh:4x4x4)
  torus:AxBx..        a torus (torus:4x4x8); add :twisted for a twisted torus of shape
                      kxkx2k or kx2k (torus:4x4x8:twisted)
  ring:N              a ring of N nodes (a 1-D torus)
  kncube:AxBx..:wrap=FLAGS
                      wrap per dimension, t = torus, m = mesh (kncube:24x18x16:wrap=tmt)
  tofu:XxYxZ          Tofu interconnect D with X, Y, Z tori and A, B, C = 2, 3, 2
  tofud: tofu1: tofu2: + XxYxZ[:wrap=ttm]
                      TofuD, Tofu (K computer) or Tofu2 links; wrap per X, Y, Z
  fattree:K           a 3-level fat tree of K-port switches (K even), K^3/4 hosts
  hybrid:N            N chips (a multiple of 8) in 8-chip ICI groups joined by an
                      InfiniBand fat tree (tpu-v4-isca2023.txt section 7.3)

Presets:
  tpuv4:pod           the 4096-chip TPU v4 pod: 64 4x4x4 blocks joined by OCS
  tpuv4:slice=AxBxC[:twisted]
                      a TPU v4 slice of 4x4x4 blocks (tpuv4:slice=4x4x8:twisted)
  tofu:k              the K computer (Tofu, X, Y, Z = 24x18x16, Y a mesh)
  tofu:fugaku         Fugaku (TofuD, 24x23x24)
  tofu:fx100          one FX100 chassis (Tofu2, 12 nodes)
  dojo:die            one D1 die: 354 nodes in an 18x20 mesh
  dojo:tile           a training tile: 5x5 D1 dies, 8,850 nodes
  dojo:plane          5x5 training tiles with their DIPs (dojo:system=5x5)
  dojo:system=RxC     R x C training tiles
  grayskull           the Tenstorrent Grayskull NoC (a 13x12 torus grid, 8 DRAM banks)
  wormhole[:harvest=N]
                      the Tenstorrent Wormhole NoC (a 10x12 torus grid, 12 DRAM banks),
                      N worker rows harvested
";

/// Read any topology shorthand: the k-ary n-cube forms of [`parse_shorthand`], and
/// `tofu:k` (K computer), `tofu:fugaku`, `tofu:fx100` (one FX100 chassis), `tofu:XxYxZ`
/// (TofuD, all tori), `tofu1:`, `tofu2:` or `tofud:` + `XxYxZ`, each optionally `:wrap=ttm`.
pub fn parse_topology(text: &str) -> Result<TopoSpec, ShorthandError> {
    topology(text).map_err(ShorthandError)
}

/// A topology shorthand that does not parse: the message names the text and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShorthandError(pub String);

fn topology(text: &str) -> Result<TopoSpec, String> {
    let t = text.trim();
    let kind = t.split(':').next().unwrap_or("");
    if kind == "tpuv4" {
        return parse_tpuv4(t);
    }
    match t {
        "grayskull" => return Ok(TopoSpec::Grayskull),
        "wormhole" => return Ok(TopoSpec::Wormhole { harvest: 0 }),
        _ => {}
    }
    if let Some(n) = t.strip_prefix("wormhole:harvest=") {
        return match n.parse::<u32>() {
            Ok(h) if h <= 10 => Ok(TopoSpec::Wormhole { harvest: h }),
            _ => Err(format!(
                "`{t}`: expected `wormhole:harvest=N` with N from 0 to 10 worker rows"
            )),
        };
    }
    if kind == "grayskull" || kind == "wormhole" {
        return Err(format!(
            "`{t}`: expected `grayskull`, `wormhole` or `wormhole:harvest=N`"
        ));
    }
    if kind == "dojo" {
        return match &t[4..] {
            ":die" => Ok(TopoSpec::Dojo(DojoSpec::die())),
            ":tile" => Ok(TopoSpec::Dojo(DojoSpec::tile())),
            // "A full DOJO system is composed of multiple 5 x 5 DOJO training tiles"
            // (dojo-microarchitecture.txt): the 5x5-tile plane.
            ":plane" => Ok(TopoSpec::Dojo(DojoSpec {
                label: "dojo:plane".into(),
                ..DojoSpec::system(5, 5)
            })),
            rest => {
                let sizes = rest.strip_prefix(":system=").ok_or_else(|| {
                    format!("`{t}`: expected `dojo:die`, `dojo:tile`, `dojo:plane` or `dojo:system=RxC` (tile rows x columns)")
                })?;
                match parse_sizes(sizes, t)?[..] {
                    [r, c] => Ok(TopoSpec::Dojo(DojoSpec::system(r, c))),
                    _ => Err(format!(
                        "`{t}`: a DOJO system is RxC tiles, e.g. `dojo:system=10x12`"
                    )),
                }
            }
        };
    }
    if kind == "hybrid" {
        return match t["hybrid".len()..].strip_prefix(':').map(str::parse::<u32>) {
            Some(Ok(chips)) => Ok(TopoSpec::Hybrid { chips }),
            _ => Err(format!(
                "`{t}`: expected `hybrid:N` with N chips, a multiple of 8, e.g. `hybrid:128`"
            )),
        };
    }
    if kind == "fattree" {
        let k = t["fattree".len()..].strip_prefix(':').unwrap_or("");
        return match k.parse::<u32>() {
            Ok(k) if k >= 2 && k % 2 == 0 => Ok(TopoSpec::FatTree { k }),
            _ => Err(format!(
                "`{t}`: expected `fattree:K` with K an even number of switch ports, at least 2, e.g. `fattree:16`"
            )),
        };
    }
    let generation = match kind {
        "tofu" | "tofud" => TofuGeneration::TofuD,
        "tofu1" => TofuGeneration::Tofu,
        "tofu2" => TofuGeneration::Tofu2,
        _ => return shorthand(t).map(TopoSpec::Cube),
    };
    let rest = t[kind.len()..].strip_prefix(':').unwrap_or("");
    let preset = |generation, xyz, xyz_wrap, abc| {
        Ok(TopoSpec::Tofu(TofuSpec {
            generation,
            xyz,
            xyz_wrap,
            abc,
            label: t.to_string(),
        }))
    };
    if kind == "tofu" {
        match rest {
            "k" => {
                return preset(
                    TofuGeneration::Tofu,
                    [24, 18, 16],
                    [true, false, true],
                    [2, 3, 2],
                );
            }
            "fugaku" => return preset(TofuGeneration::TofuD, [24, 23, 24], [true; 3], [2, 3, 2]),
            "fx100" => {
                return preset(
                    TofuGeneration::Tofu2,
                    [1, 1, 3],
                    [false, false, true],
                    [2, 1, 2],
                );
            }
            _ => {}
        }
    }
    let (sizes, opts) = match rest.split_once(':') {
        Some((s, o)) => (s, Some(o)),
        None => (rest, None),
    };
    if !sizes.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(format!(
            "`{t}`: expected a preset (tofu:k, tofu:fugaku, tofu:fx100) or X, Y and Z sizes such as `tofu:24x23x24`"
        ));
    }
    let dims = parse_sizes(sizes, t)?;
    let [x, y, z] = dims[..] else {
        return Err(format!(
            "`{t}`: a Tofu network takes three sizes (X, Y, Z), `{sizes}` gives {}",
            dims.len()
        ));
    };
    let wrap = match opts {
        None => [true; 3],
        Some(o) => {
            let flags = parse_wrap_flags(o, 3, t)?;
            [flags[0], flags[1], flags[2]]
        }
    };
    preset(generation, [x, y, z], wrap, [2, 3, 2])
}

/// `tpuv4:pod` (all 4096 chips, 16x16x16) or `tpuv4:slice=AxBxC[:twisted]`.
fn parse_tpuv4(t: &str) -> Result<TopoSpec, String> {
    let rest = t.strip_prefix("tpuv4:").unwrap_or("");
    let label = t.to_string();
    if rest == "pod" {
        return Ok(TopoSpec::TpuV4 {
            shape: [16, 16, 16],
            twisted: false,
            label,
        });
    }
    let Some(slice) = rest.strip_prefix("slice=") else {
        return Err(format!(
            "`{t}`: expected `tpuv4:pod` or `tpuv4:slice=AxBxC` (optionally `:twisted`)"
        ));
    };
    let (sizes, twisted) = match slice.split_once(':') {
        None => (slice, false),
        Some((s, "twisted")) => (s, true),
        Some((_, o)) => {
            return Err(format!(
                "`{t}`: unknown option `{o}`; the only option is `:twisted`"
            ));
        }
    };
    let dims = parse_sizes(sizes, t)?;
    let [x, y, z] = dims[..] else {
        return Err(format!(
            "`{t}`: a TPU v4 slice has three sides, `{sizes}` gives {}",
            dims.len()
        ));
    };
    Ok(TopoSpec::TpuV4 {
        shape: [x, y, z],
        twisted,
        label,
    })
}

fn parse_wrap_flags(o: &str, n: usize, t: &str) -> Result<Vec<bool>, String> {
    let flags = o
        .strip_prefix("wrap=")
        .ok_or_else(|| format!("`{t}`: expected `wrap=` after the sizes, found `{o}`"))?;
    if flags.chars().count() != n {
        return Err(format!(
            "`{t}`: `wrap={flags}` has {} flags for {n} dimensions",
            flags.chars().count()
        ));
    }
    flags
        .chars()
        .map(|c| match c {
            't' | 'T' => Ok(true),
            'm' | 'M' => Ok(false),
            other => Err(format!(
                "`{t}`: wrap flag `{other}` is neither `t` (torus) nor `m` (mesh)"
            )),
        })
        .collect()
}

/// Read a shorthand; the error says what was expected and quotes the text.
pub fn parse_shorthand(text: &str) -> Result<Shape, ShorthandError> {
    shorthand(text).map_err(ShorthandError)
}

fn shorthand(text: &str) -> Result<Shape, String> {
    let t = text.trim();
    let (kind, rest) = t.split_once(':').ok_or_else(|| {
        format!("`{t}` is not a topology: expected KIND:SIZES such as `torus:4x4x8`, `mesh:8x8`, `ring:16` or `kncube:24x18x16:wrap=tmt`")
    })?;
    let (sizes, opts) = match rest.split_once(':') {
        Some((s, o)) => (s, Some(o)),
        None => (rest, None),
    };
    if !["mesh", "torus", "ring", "kncube"].contains(&kind) {
        let hint = nearest(kind, &SHORTHAND_KINDS).unwrap_or("torus");
        return Err(format!(
            "`{t}`: unknown topology kind `{kind}`; the nearest is `{hint}` (kinds: {})",
            SHORTHAND_KINDS.join(", ")
        ));
    }
    let dims = parse_sizes(sizes, t)?;
    let n = dims.len();
    let mut twist = None;
    let wrap = match kind {
        "torus" if opts == Some("twisted") => {
            twist = Some(KAryNCube::named_twist(&dims).ok_or_else(|| {
                format!("`{t}`: this shape has no named twist; twisted shapes are k x k x 2k, k x 2k x 2k (any order) and 2a x a")
            })?);
            vec![true; n]
        }
        "torus" if opts.is_some() => {
            return Err(format!(
                "`{t}`: the only option a torus takes is `:twisted`"
            ));
        }
        "mesh" | "ring" if opts.is_some() => {
            return Err(format!(
                "`{t}`: `{kind}` takes no options after the sizes (only `kncube` takes `:wrap=` and `torus` takes `:twisted`)"
            ));
        }
        "mesh" => vec![false; n],
        "torus" => vec![true; n],
        "ring" if n == 1 => vec![true],
        "ring" => {
            return Err(format!(
                "`{t}`: a ring has one dimension, `{sizes}` gives {n}"
            ));
        }
        "kncube" => {
            let o = opts.ok_or_else(|| format!("`{t}`: `kncube` needs `:wrap=` with one `t` (torus) or `m` (mesh) per dimension, e.g. `kncube:24x18x16:wrap=tmt`"))?;
            parse_wrap_flags(o, n, t)?
        }
        other => {
            let hint = nearest(other, &SHORTHAND_KINDS).unwrap_or("torus");
            return Err(format!(
                "`{t}`: unknown topology kind `{other}`; the nearest is `{hint}` (kinds: {})",
                SHORTHAND_KINDS.join(", ")
            ));
        }
    };
    Ok(Shape { dims, wrap, twist })
}

fn parse_sizes(sizes: &str, whole: &str) -> Result<Vec<u32>, String> {
    if sizes.is_empty() {
        return Err(format!(
            "`{whole}`: no sizes given; expected sizes separated by `x`, e.g. `4x4x8`"
        ));
    }
    sizes
        .split('x')
        .enumerate()
        .map(|(i, s)| {
            if s.is_empty() {
                return Err(format!(
                    "`{whole}`: size {} is empty; expected sizes separated by `x`, e.g. `4x4x8`",
                    i + 1
                ));
            }
            let k: u32 = s
                .parse()
                .map_err(|_| format!("`{whole}`: size `{s}` is not a whole number"))?;
            if k == 0 {
                return Err(format!(
                    "`{whole}`: size {} is 0; every size must be at least 1",
                    i + 1
                ));
            }
            Ok(k)
        })
        .collect()
}

/// The link bandwidth `podsim topo` assumes for a mesh, torus or ring when none is given:
/// a TPU v4 ICI link (tpu-v4-isca2023.txt, Table 4).
pub const DEFAULT_LINK_BANDWIDTH: &str = "50 GB/s";

/// A system from the command line: a topology shorthand and the optional values of
/// `--link-bandwidth`, `--link-latency` and `--interfaces`. Errors name the flag.
pub fn system_from_cli(
    spec: &str,
    link_bandwidth: Option<&str>,
    link_latency: Option<&str>,
    interfaces: Option<&str>,
) -> Result<SystemSpec, ConfigError> {
    let err = |key: &str, why: String| ConfigError {
        file: "<command line>".into(),
        line: None,
        key: key.into(),
        why,
    };
    let topology = parse_topology(spec).map_err(|e| err("SPEC", e.0))?;
    let latency = match link_latency {
        None => topology.preset_latency(),
        Some(s) => s.parse().map_err(|e| {
            err(
                "--link-latency",
                format!("{e}; expected a time such as \"100 ns\""),
            )
        })?,
    };
    let interfaces = match interfaces {
        None => None,
        Some(s) => match s.parse::<u32>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                return Err(err(
                    "--interfaces",
                    format!("`{s}` is not a positive whole number"),
                ));
            }
        },
    };
    let preset = topology
        .preset_bandwidth()
        .map_err(|e| err("SPEC", e.why))?;
    let bandwidth = match (&topology, link_bandwidth) {
        (
            TopoSpec::Tofu(_)
            | TopoSpec::Dojo(_)
            | TopoSpec::Grayskull
            | TopoSpec::Wormhole { .. }
            | TopoSpec::Hybrid { .. }
            | TopoSpec::Machine(_)
            | TopoSpec::TpuV4 { .. },
            None,
        ) => preset.ok_or_else(|| {
            err(
                "SPEC",
                "this preset states no link bandwidth; give --link-bandwidth".into(),
            )
        })?,
        (TopoSpec::Machine(_), Some(_)) => {
            return Err(err(
                "--link-bandwidth",
                "a machine file sets its own link classes; drop the flag".to_string(),
            ));
        }
        (TopoSpec::Hybrid { .. }, Some(_)) => {
            return Err(err(
                "--link-bandwidth",
                "a hybrid has 400 Gb/s ICI and 200 Gb/s InfiniBand links; drop the flag"
                    .to_string(),
            ));
        }
        (TopoSpec::Grayskull | TopoSpec::Wormhole { .. }, Some(_)) => {
            return Err(err(
                "--link-bandwidth",
                "a Tenstorrent grid has 32 B/cycle NoC links at its clock; drop the flag"
                    .to_string(),
            ));
        }
        (TopoSpec::Dojo(_), Some(_)) => {
            return Err(err(
                "--link-bandwidth",
                "a DOJO system sets its link bandwidths per level from the seed; drop the flag"
                    .to_string(),
            ));
        }
        (TopoSpec::TpuV4 { .. }, Some(_)) => {
            return Err(err(
                "--link-bandwidth",
                "a TPU v4 slice has 50 GB/s ICI links (Table 4); drop the flag".to_string(),
            ));
        }
        (TopoSpec::Tofu(t), Some(_)) => {
            return Err(err(
                "--link-bandwidth",
                format!(
                    "{} sets its link bandwidth from lanes x rate x coding; drop the flag",
                    t.generation
                ),
            ));
        }
        (TopoSpec::Cube(_) | TopoSpec::FatTree { .. }, b) => {
            b.unwrap_or(DEFAULT_LINK_BANDWIDTH).parse().map_err(|e| {
                err(
                    "--link-bandwidth",
                    format!("{e}; expected a bandwidth such as \"50 GB/s\""),
                )
            })?
        }
    };
    if link_latency.is_some() {
        let fixed = match &topology {
            TopoSpec::Cube(_) | TopoSpec::FatTree { .. } | TopoSpec::Tofu(_) => None,
            TopoSpec::TpuV4 { .. } => Some("a TPU v4 slice"),
            TopoSpec::Hybrid { .. } => Some("a hybrid ICI/InfiniBand system"),
            TopoSpec::Dojo(_) => Some("a DOJO system"),
            TopoSpec::Machine(_) => Some("a machine file"),
            TopoSpec::Grayskull | TopoSpec::Wormhole { .. } => Some("a Tenstorrent grid"),
        };
        if let Some(what) = fixed {
            // The flag used to be accepted and silently ignored.
            return Err(err(
                "--link-latency",
                format!(
                    "{what} sets its own link latencies, which the flag would not change; drop the flag"
                ),
            ));
        }
    }
    if let (false, Some(_)) = (matches!(topology, TopoSpec::Cube(_)), interfaces) {
        // Presets (and a fat tree's one link per host) fix the interfaces per node.
        return Err(err(
                "--interfaces",
                "this preset sets its own interfaces per node (Tofu TNIs, TPU v4 ICI links); drop the flag".into(),
            ));
    }
    let spec = SystemSpec {
        name: spec.to_string(),
        topology,
        link: LinkSpec {
            kind: LinkKind::Electrical,
            bandwidth,
            latency,
        },
        blocks: None,
        interfaces,
    };
    spec.build()
        .map_err(|e| err("SPEC", format!("`{spec}`: {}", e.why, spec = spec.name)))?;
    Ok(spec)
}
