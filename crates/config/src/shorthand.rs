//! Topology shorthands: `mesh:8x8`, `torus:4x4x8`, `torus:4x4x8:twisted`, `ring:16`,
//! `kncube:24x18x16:wrap=tmt`.

use podsim_topology::KAryNCube;

use crate::error::nearest;

/// The shape a shorthand names: sizes, wrap flags and twist per dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// Size of each dimension (each at least 1).
    pub dims: Vec<u32>,
    /// Whether each dimension wraps around.
    pub wrap: Vec<bool>,
    /// Twist shifts (see `KAryNCube::with_twist`), if twisted.
    pub twist: Option<Vec<Vec<u32>>>,
}

/// The kinds a shorthand may start with.
pub const SHORTHAND_KINDS: [&str; 4] = ["mesh", "torus", "ring", "kncube"];

/// Read a shorthand; the error says what was expected and quotes the text.
pub fn parse_shorthand(text: &str) -> Result<Shape, String> {
    let t = text.trim();
    let (kind, rest) = t.split_once(':').ok_or_else(|| {
        format!("`{t}` is not a topology: expected KIND:SIZES such as `torus:4x4x8`, `mesh:8x8`, `ring:16` or `kncube:24x18x16:wrap=tmt`")
    })?;
    let (sizes, opts) = match rest.split_once(':') {
        Some((s, o)) => (s, Some(o)),
        None => (rest, None),
    };
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
                .collect::<Result<_, _>>()?
        }
        other => {
            let hint = nearest(other, &SHORTHAND_KINDS).unwrap_or("torus");
            return Err(format!(
                "`{t}`: unknown topology kind `{other}`; the nearest is `{hint}` (kinds: mesh, torus, ring, kncube)"
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
