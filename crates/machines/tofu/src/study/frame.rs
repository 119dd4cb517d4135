//! `podsim tofu frame`: a routing header encoded from its fields or decoded from its 64 bits,
//! and the bytes its frame takes on the two lanes, split and duplicated.

use podsim_report::render;

use super::{StudyError, setting};
use crate::frame::{self as tofu_frame, Frame, Pattern, RoutingHeader, Slice};

/// The header's fields, as numbers (`b` and `s` 0 or 1, `pat` 0 to 2).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fields {
    /// LEN.
    pub len: u8,
    /// DABC1.
    pub dabc1: u8,
    /// DX.
    pub dx: u8,
    /// DY.
    pub dy: u8,
    /// DZ.
    pub dz: u8,
    /// DABC2.
    pub dabc2: u8,
    /// DI.
    pub di: u8,
    /// B.
    pub b: u8,
    /// S.
    pub s: u8,
    /// VC.
    pub vc: u8,
    /// PAT: 0 undivided, 1 and 2 split.
    pub pat: u8,
    /// STAT.
    pub stat: u8,
    /// SEQ.
    pub seq: u16,
}

/// A header and its frame on the wire, as `podsim tofu frame --json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FrameOutput {
    /// The 64-bit header, 16 hex digits.
    pub header_hex: String,
    /// Its fields.
    pub fields: Fields,
    /// TLP bytes of a frame of its LEN.
    pub tlp_bytes: usize,
    /// Bytes on the wire split over the two lanes.
    pub split_wire_bytes: u64,
    /// Bytes on the wire duplicated on both lanes.
    pub duplicate_wire_bytes: u64,
    /// The TLP less its 32-byte transport header, over the split frame's bytes.
    pub payload_efficiency: f64,
}

/// A header from `NAME=VALUE` pairs (`--encode`): fields not named are 0.
pub fn parse_fields(s: &str) -> Result<RoutingHeader, StudyError> {
    const KEY: &str = "--encode";
    if s.trim().is_empty() {
        return Err(setting(
            KEY,
            "no fields: give NAME=VALUE pairs, e.g. len=63,dx=1 (unnamed fields are 0)",
        ));
    }
    let mut h = RoutingHeader::default();
    let names = [
        "len", "dabc1", "dx", "dy", "dz", "dabc2", "di", "b", "s", "vc", "pat", "stat", "seq",
    ];
    let mut seen = Vec::new();
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| setting(KEY, format!("`{part}`: expected NAME=VALUE")))?;
        let k = k.trim().to_ascii_lowercase();
        if seen.contains(&k) {
            return Err(setting(KEY, format!("`{k}` is given twice")));
        }
        let v: u64 = v
            .trim()
            .parse()
            .map_err(|_| setting(KEY, format!("`{k}`: `{}` is not a whole number", v.trim())))?;
        let small = |max: u64| -> Result<u64, StudyError> {
            if v > max {
                Err(setting(
                    KEY,
                    format!("`{k}` = {v} does not fit (at most {max})"),
                ))
            } else {
                Ok(v)
            }
        };
        match k.as_str() {
            "len" => h.len = small(255)? as u8,
            "dabc1" => h.dabc1 = small(255)? as u8,
            "dx" => h.dx = small(255)? as u8,
            "dy" => h.dy = small(255)? as u8,
            "dz" => h.dz = small(255)? as u8,
            "dabc2" => h.dabc2 = small(255)? as u8,
            "di" => h.di = small(255)? as u8,
            "b" => h.b = small(1)? == 1,
            "s" => h.s = small(1)? == 1,
            "vc" => h.vc = small(255)? as u8,
            "pat" => {
                h.pat = match small(7)? {
                    0 => Pattern::Whole,
                    1 => Pattern::SplitLane0,
                    2 => Pattern::SplitLane1,
                    p => {
                        return Err(setting(
                            KEY,
                            format!("`pat` = {p} is reserved (0 undivided, 1 and 2 split)"),
                        ));
                    }
                }
            }
            "stat" => h.stat = small(255)? as u8,
            "seq" => h.seq = small(65535)? as u16,
            other => {
                return Err(setting(
                    KEY,
                    format!(
                        "`{other}` is not a field; the nearest is `{}` (fields: {})",
                        podsim_units::nearest(other, &names).unwrap_or(""),
                        names.join(", ")
                    ),
                ));
            }
        }
        seen.push(k);
    }
    Ok(h)
}

/// The header `--encode FIELDS` or `--decode HEX` gives (exactly one of the two), and its
/// frame on the wire.
pub fn frame(encode: Option<&str>, decode: Option<&str>) -> Result<FrameOutput, StudyError> {
    let (h, word) = match (encode, decode) {
        (Some(f), None) => {
            let h = parse_fields(f)?;
            let w = h.encode().map_err(|e| setting("--encode", e))?;
            (h, w)
        }
        (None, Some(x)) => {
            let t = x.trim().trim_start_matches("0x");
            let w = u64::from_str_radix(t, 16).map_err(|_| {
                setting(
                    "--decode",
                    format!("`{x}` is not a 64-bit hexadecimal number"),
                )
            })?;
            (
                RoutingHeader::decode(w).map_err(|e| setting("--decode", e))?,
                w,
            )
        }
        _ => {
            return Err(setting("--encode", "give --encode FIELDS or --decode HEX"));
        }
    };
    let frame = Frame {
        header: RoutingHeader {
            pat: Pattern::Whole,
            ..h
        },
        tlp: vec![0; h.tlp_bytes()],
        dllp: [0; 16],
        control: [0; 8],
    };
    let wire = |split| -> Result<u64, StudyError> {
        Ok(tofu_frame::slice(&frame, split)
            .map_err(|e| StudyError::Run(e.to_string()))?
            .iter()
            .map(Slice::wire_bytes)
            .sum())
    };
    let (split, dup) = (wire(true)?, wire(false)?);
    // The TLP's own 32-byte transport header (validation/tofud-frame.toml) is not payload.
    let payload = h.tlp_bytes().saturating_sub(32) as f64;
    let pat = match h.pat {
        Pattern::Whole => 0,
        Pattern::SplitLane0 => 1,
        Pattern::SplitLane1 => 2,
    };
    Ok(FrameOutput {
        header_hex: format!("{word:016x}"),
        fields: Fields {
            len: h.len,
            dabc1: h.dabc1,
            dx: h.dx,
            dy: h.dy,
            dz: h.dz,
            dabc2: h.dabc2,
            di: h.di,
            b: u8::from(h.b),
            s: u8::from(h.s),
            vc: h.vc,
            pat,
            stat: h.stat,
            seq: h.seq,
        },
        tlp_bytes: h.tlp_bytes(),
        split_wire_bytes: split,
        duplicate_wire_bytes: dup,
        payload_efficiency: payload / split as f64,
    })
}

impl FrameOutput {
    /// The text `podsim tofu frame` prints.
    pub fn text(&self) -> String {
        let f = &self.fields;
        let (split, dup) = (self.split_wire_bytes, self.duplicate_wire_bytes);
        let payload = self.tlp_bytes.saturating_sub(32) as f64;
        let rows = vec![
            ("header".to_string(), vec![self.header_hex.clone()]),
            (
                "fields".into(),
                vec![format!(
                    "LEN {} DABC1 {} DX {} DY {} DZ {} DABC2 {} DI {} B {} S {} VC {} PAT {} STAT {} SEQ {}",
                    f.len,
                    f.dabc1,
                    f.dx,
                    f.dy,
                    f.dz,
                    f.dabc2,
                    f.di,
                    f.b,
                    f.s,
                    f.vc,
                    f.pat,
                    f.stat,
                    f.seq
                )],
            ),
            ("TLP".into(), vec![format!("{} B", self.tlp_bytes)]),
            (
                "on the wire".into(),
                vec![format!(
                    "{split} B split over two lanes, {dup} B duplicated (preamble, header, link block and gap on each lane)"
                )],
            ),
            (
                "efficiency".into(),
                vec![format!(
                    "{:.2}% of the split frame is payload (TLP less its 32-byte header)",
                    100.0 * payload / split as f64
                )],
            ),
        ];
        render(&rows)
    }
}
