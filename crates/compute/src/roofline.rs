//! `podsim roofline`: a chip preset's roofline ([`crate::chips`]), and the attainable FLOP/s
//! at an operational intensity, as JSON (serde) and text.

use crate::RequestError;
use crate::chips::{CHIPS, Chip, TpuFeatures};
use podsim_units::table::{render, row};

/// A roofline as `podsim roofline --json` prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RooflineOutput {
    /// The preset.
    pub chip: &'static str,
    /// Peak matrix FLOP/s.
    pub peak_flops: f64,
    /// Memory bandwidth, bytes/s.
    pub memory_bytes_per_s: u64,
    /// Where the roofline bends, FLOPs per byte.
    pub ridge_flop_per_byte: f64,
    /// The roofline at the intensity asked for.
    #[serde(flatten)]
    pub at: Option<Attainable>,
    /// Table 4's system features, for the TPUs.
    #[serde(flatten)]
    pub tpu: Option<TpuFeatures>,
    /// What the memory is (text only).
    #[serde(skip)]
    pub memory: &'static str,
}

/// The roofline at one intensity.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Attainable {
    /// The intensity, FLOPs per byte.
    pub intensity_flop_per_byte: f64,
    /// FLOP/s attainable there.
    pub attainable_flops: f64,
    /// `memory` below the ridge point, else `compute`.
    pub bound: &'static str,
}

/// The roofline of the preset `chip`, at `intensity` (FLOPs per byte, as text) if given.
pub fn roofline(chip: &str, intensity: Option<&str>) -> Result<RooflineOutput, RequestError> {
    let names: Vec<&str> = CHIPS.iter().map(|c| c.name).collect();
    let c = Chip::preset(chip).ok_or_else(|| {
        RequestError::input(
            "--chip",
            format!(
                "`{chip}` is not a chip preset; the nearest is `{}` (presets: {})",
                podsim_units::nearest(chip, &names).unwrap_or(""),
                names.join(", ")
            ),
        )
    })?;
    let intensity = match intensity {
        None => None,
        Some(s) => match s.trim().parse::<f64>() {
            Ok(x) if x > 0.0 && x.is_finite() => Some(x),
            _ => {
                return Err(RequestError::input(
                    "--intensity",
                    format!("`{s}` is not a positive number of FLOPs per byte, e.g. 100"),
                ));
            }
        },
    };
    let ridge = c.ridge_point();
    Ok(RooflineOutput {
        chip: c.name,
        peak_flops: c.peak_matrix_flops(),
        memory_bytes_per_s: c.memory_bytes_per_s,
        ridge_flop_per_byte: ridge,
        at: intensity.map(|x| Attainable {
            intensity_flop_per_byte: x,
            attainable_flops: c.roofline(x),
            bound: if x < ridge { "memory" } else { "compute" },
        }),
        tpu: c.tpu,
        memory: c.memory,
    })
}

impl RooflineOutput {
    /// The rooflines to draw, (name, peak FLOP/s, bytes/s): TPU v4, TPU v3 and A100
    /// (tpu-v4-isca2023.txt Fig. 16), and this chip's if it is another.
    pub fn roofs(&self) -> Vec<(&'static str, f64, f64)> {
        let mut roofs: Vec<_> = ["tpuv4", "tpuv3", "a100"]
            .iter()
            .filter_map(|n| Chip::preset(n))
            .map(|c| (c.name, c.peak_matrix_flops(), c.memory_bytes_per_s as f64))
            .collect();
        if !roofs.iter().any(|r| r.0 == self.chip) {
            roofs.push((self.chip, self.peak_flops, self.memory_bytes_per_s as f64));
        }
        roofs
    }

    /// The text `podsim roofline` prints.
    pub fn text(&self) -> String {
        let bw = self.memory_bytes_per_s as f64;
        let mut rows = vec![
            row("chip", self.chip.to_string()),
            row("peak", format!("{:.1} TFLOP/s", self.peak_flops / 1e12)),
            row("memory", format!("{:.0} GB/s ({})", bw / 1e9, self.memory)),
            row(
                "ridge point",
                format!("{:.1} FLOP/B", self.ridge_flop_per_byte),
            ),
        ];
        if let Some(a) = self.at {
            rows.push((
                format!("at {} FLOP/B", a.intensity_flop_per_byte),
                vec![format!(
                    "{:.1} TFLOP/s ({}-bound)",
                    a.attainable_flops / 1e12,
                    a.bound
                )],
            ));
        }
        if let Some(t) = self.tpu {
            rows.push(row(
                "Table 4",
                format!(
                    "HBM {} GiB, CMEM {} MiB, ICI {} links x {} GB/s ({}-D torus), {} chips per host, {} SparseCores",
                    t.hbm_bytes >> 30,
                    t.cmem_bytes >> 20,
                    t.ici_links,
                    t.ici_link_bytes_per_s / 1_000_000_000,
                    t.torus_dims,
                    t.chips_per_host,
                    t.sparsecores
                ),
            ));
        }
        render(&rows)
    }
}
