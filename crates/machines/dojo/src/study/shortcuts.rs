//! `podsim dojo shortcuts`: Z-plane shortcuts under sustained mixed load on the flow model
//! ([`crate::shortcuts`]).

use podsim_report::render;
use podsim_topology::Dojo;

use super::{StudyError, setting};
use crate::shortcuts::{MixResult, SHORTCUT_BEYOND_HOPS, mixed};

/// The load as the options give it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShortcutOptions<'a> {
    /// The topology as given, for the output.
    pub topology: &'a str,
    /// The fraction of routers that also send a global transfer.
    pub global_fraction: f64,
    /// The transfer whose time is reported, bytes.
    pub bytes: u64,
    /// The size as given (`1MiB`), for the text.
    pub bytes_label: &'a str,
}

/// One mode's run, as `podsim dojo shortcuts --json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ShortcutsOutput {
    /// The topology as given.
    pub topology: String,
    /// The fraction of routers that also send a global transfer.
    pub global_fraction: f64,
    /// Whether the shortcuts were on.
    pub shortcuts: bool,
    /// What the load got.
    #[serde(flatten)]
    pub result: MixResult,
}

/// The load of `o` on `d`, with the shortcuts on or off.
pub fn shortcuts(
    d: &Dojo,
    o: &ShortcutOptions<'_>,
    on: bool,
) -> Result<ShortcutsOutput, StudyError> {
    let result = mixed(d, o.global_fraction, on, o.bytes).map_err(|e| {
        if e.contains("--memory-limit") {
            return StudyError::Run(format!("<command line>: {e}"));
        }
        let key = if e.contains("fraction") {
            "--global-fraction"
        } else if e.contains("DIPs") {
            "--topology"
        } else {
            "--bytes"
        };
        setting(key, e)
    })?;
    Ok(ShortcutsOutput {
        topology: o.topology.to_string(),
        global_fraction: o.global_fraction,
        shortcuts: on,
        result,
    })
}

/// The load without shortcuts and (unless `off`) with them, a row each.
#[derive(Debug, Clone, PartialEq)]
pub struct ShortcutsTable {
    /// Off, then on.
    pub runs: Vec<ShortcutsOutput>,
    /// The size as given.
    bytes_label: String,
}

/// [`shortcuts`] off and, unless `off`, on.
pub fn compare(d: &Dojo, o: &ShortcutOptions<'_>, off: bool) -> Result<ShortcutsTable, StudyError> {
    let modes: &[bool] = if off { &[false] } else { &[false, true] };
    Ok(ShortcutsTable {
        runs: modes
            .iter()
            .map(|&on| shortcuts(d, o, on))
            .collect::<Result<_, _>>()?,
        bytes_label: o.bytes_label.to_string(),
    })
}

impl ShortcutsTable {
    /// The text `podsim dojo shortcuts` prints.
    pub fn text(&self) -> String {
        let mut rows = vec![(
            "shortcuts".to_string(),
            vec![
                "local throughput".to_string(),
                "last local".into(),
                "global latency".into(),
                "mesh links/global".into(),
                "via DIPs".into(),
                "max link".into(),
            ],
        )];
        for run in &self.runs {
            let r = &run.result;
            rows.push((
                if run.shortcuts { "on" } else { "off" }.to_string(),
                vec![
                    format!("{:.1} TB/s", r.local_throughput_bytes_per_s / 1e12),
                    format!("{:.2} us", r.local_last_s * 1e6),
                    format!("{:.1} us", r.global_latency_s * 1e6),
                    format!("{:.1}", r.global_mesh_links),
                    format!("{}/{}", r.shortcut_transfers, r.global_transfers),
                    format!("{:.0}%", r.max_link_utilization * 100.0),
                ],
            ));
        }
        let (topology, fraction) = self
            .runs
            .first()
            .map_or(("", 0.0), |r| (r.topology.as_str(), r.global_fraction));
        format!(
            "{}{}: every router streams to its neighbour, one in {:.0} also across the plane, all at once (max-min fair rates; times are {} at a stream's rate plus its route's latency); shortcuts for routes over {} hops through the nearest DIP, the Ethernet switch and the DIP nearest the destination\n",
            render(&rows),
            topology,
            1.0 / fraction.max(f64::MIN_POSITIVE),
            self.bytes_label,
            SHORTCUT_BEYOND_HOPS
        )
    }
}
