//! `podsim dojo dma` and `podsim dojo host`: a DMA descriptor on a DIP's engine, and a host's
//! upload into its DIPs' HBM ([`crate::dma`]).

use podsim_report::render;
use podsim_topology::Dojo;

use super::{StudyError, coords, setting};
use crate::dma::{Direction, DmaResult, DmaSpec, HostResult, dma as run_dma, host_upload};

/// A DMA descriptor as the options give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaOptions<'a> {
    /// The node, `x,y`.
    pub to: &'a str,
    /// The DIP (default: the one nearest the node).
    pub dip: Option<u32>,
    /// Elements per dimension, innermost first.
    pub shape: &'a [u64],
    /// Bytes between consecutive elements of each dimension (empty: dense).
    pub stride: &'a [u64],
    /// Bytes per element.
    pub element_bytes: u64,
    /// The region's first byte in HBM.
    pub offset: u64,
    /// SRAM to HBM instead of HBM to SRAM.
    pub write: bool,
    /// The topology as given, for the text and errors.
    pub topology: &'a str,
}

/// A descriptor's run, as `podsim dojo dma --json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DmaOutput {
    /// The DIP.
    pub dip: u32,
    /// What the descriptor did.
    #[serde(flatten)]
    pub result: DmaResult,
    /// The node.
    #[serde(skip)]
    node: (u32, u32),
    /// Whether it wrote HBM.
    #[serde(skip)]
    write: bool,
    /// The topology as given.
    #[serde(skip)]
    topology: String,
}

/// Run the descriptor `o` gives on `d`.
pub fn dma(d: &Dojo, o: &DmaOptions<'_>) -> Result<DmaOutput, StudyError> {
    let node = coords("--to", o.to)?;
    if node.0 >= d.width() || node.1 >= d.height() {
        return Err(setting(
            "--to",
            format!(
                "{},{} is off the {}x{} mesh of {}",
                node.0,
                node.1,
                d.width(),
                d.height(),
                o.topology
            ),
        ));
    }
    let dip = match o.dip {
        Some(i) => i,
        None => d.nearest_dip(d.router(node.0, node.1)).ok_or_else(|| {
            setting(
                "--topology",
                format!(
                    "{} has no DIPs (dojo:tile or dojo:system=RxC have them)",
                    o.topology
                ),
            )
        })?,
    };
    let strides = if o.stride.is_empty() {
        let mut st = Vec::with_capacity(o.shape.len());
        let mut ext = Some(o.element_bytes);
        for &n in o.shape {
            st.push(ext.unwrap_or(u64::MAX));
            ext = ext.and_then(|e| e.checked_mul(n));
        }
        st
    } else {
        o.stride.to_vec()
    };
    let spec = DmaSpec {
        dip,
        node,
        element_bytes: o.element_bytes,
        shape: o.shape.to_vec(),
        strides,
        offset: o.offset,
        direction: if o.write {
            Direction::Write
        } else {
            Direction::Read
        },
    };
    let result = run_dma(d, &spec).map_err(|e| {
        let key = if e.0.starts_with("--") {
            e.0.split([' ', ':'])
                .next()
                .unwrap_or("--shape")
                .to_string()
        } else if e.0.contains("DIP") && e.0.contains("HBM") {
            "--offset".into()
        } else {
            "--shape".into()
        };
        let why = e.0.strip_prefix(&format!("{key}: ")).unwrap_or(&e.0);
        setting(&key, why)
    })?;
    Ok(DmaOutput {
        dip,
        result,
        node,
        write: o.write,
        topology: o.topology.to_string(),
    })
}

impl DmaOutput {
    /// The text `podsim dojo dma` prints.
    pub fn text(&self) -> String {
        let r = &self.result;
        let us = |s: f64| format!("{:.3} us", s * 1e6);
        let rows = vec![
            ("time".to_string(), vec![us(r.time_s)]),
            ("bytes".into(), vec![r.bytes.to_string()]),
            ("contiguous runs".into(), vec![r.runs.to_string()]),
            (
                "HBM".into(),
                vec![format!(
                    "{} bursts of 64 B, {} ({:.0}% used)",
                    r.hbm_bursts,
                    us(r.hbm_time_s),
                    r.hbm_efficiency * 100.0
                )],
            ),
            (
                "network".into(),
                vec![format!("{} packets, {}", r.packets, us(r.network_time_s))],
            ),
            (
                "binds".into(),
                vec![if r.hbm_time_s > r.network_time_s {
                    "HBM".to_string()
                } else {
                    "network".into()
                }],
            ),
        ];
        format!(
            "{}DIP {} {} node {},{} on {}\n",
            render(&rows),
            self.dip,
            if self.write { "<-" } else { "->" },
            self.node.0,
            self.node.1,
            self.topology
        )
    }
}

/// A host's upload as the options give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostOptions<'a> {
    /// Bytes in all.
    pub bytes: u64,
    /// The size as given (`16GiB`), for the text.
    pub bytes_label: &'a str,
    /// DIPs that take a share.
    pub dips: u32,
    /// The host.
    pub host: u32,
    /// The topology as given, for the text.
    pub topology: &'a str,
}

/// An upload, as `podsim dojo host --json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HostOutput {
    /// What the upload did.
    #[serde(flatten)]
    pub result: HostResult,
    /// The text's last line.
    #[serde(skip)]
    note: String,
}

/// Run the upload `o` gives on `d`.
pub fn host(d: &Dojo, o: &HostOptions<'_>) -> Result<HostOutput, StudyError> {
    let result = host_upload(d, o.host, o.bytes, o.dips).map_err(|e| {
        let key = e.0.split(' ').next().unwrap_or("--bytes").to_string();
        let key = if key.starts_with("--") {
            key
        } else {
            "--topology".into()
        };
        let why = e.0.strip_prefix(&format!("{key} ")).unwrap_or(&e.0);
        setting(&key, why)
    })?;
    Ok(HostOutput {
        result,
        note: format!(
            "host {} writes {} over {} DIPs' PCIe Gen4 x16 links on {}",
            o.host, o.bytes_label, o.dips, o.topology
        ),
    })
}

impl HostOutput {
    /// The text `podsim dojo host` prints.
    pub fn text(&self) -> String {
        let r = &self.result;
        let rows = vec![
            (
                "time".to_string(),
                vec![format!("{:.3} ms", r.time_s * 1e3)],
            ),
            (
                "bandwidth".into(),
                vec![format!("{:.1} GB/s", r.bandwidth_bytes_per_s / 1e9)],
            ),
        ];
        format!("{}{}\n", render(&rows), self.note)
    }
}
