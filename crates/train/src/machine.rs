//! The chip and slice figures a step uses, from a TPU slice or a machine file.

use podsim_system::workload::ChipSpec;
use podsim_topology::Network;

use crate::TrainError;

/// The chip and slice figures a step uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// The chip.
    pub chip: ChipSpec,
    /// HBM capacity per chip, bytes (Table 4 via the chip preset).
    pub hbm_bytes: u64,
    /// Slice shape, chips along x, y, z (a 2-D torus has z = 1); on a machine file, its rank
    /// grid: chips a node, then nodes.
    pub dims: [u32; 3],
    /// Whether each dimension wraps.
    pub wrap: [bool; 3],
    /// Whether each dimension's chips meet through switches (a machine file's NVSwitch or fat
    /// tree): any chip reaches any other of the dimension at the dimension's rate, so rings
    /// there use each chip's link once a step and interleaved groups do not share links.
    pub switched: [bool; 3],
    /// Per dimension, the rate one chip sends to the next of that dimension, bytes/s one way
    /// (a torus: its link's, in every dimension).
    pub dim_bytes_per_s: [f64; 3],
    /// Per dimension, the latency of that send plus the endpoint overhead, seconds (the
    /// rings' per-step cost there).
    pub dim_latency_s: [f64; 3],
    /// Link bandwidth one way, bytes/s (a machine file: its slowest dimension's rate, where
    /// pipeline stages meet).
    pub link_bytes_per_s: f64,
    /// Per-hop latency plus endpoint overhead, seconds (the rings' per-step cost; a machine
    /// file: its slowest dimension's).
    pub step_latency_s: f64,
    /// CMEM capacity, bytes (128 MiB on TPU v4, Table 4 via the chip preset; none on v3).
    pub cmem_bytes: u64,
    /// CMEM bandwidth to the cores, bytes/s ([`CMEM_BYTES_PER_S`]).
    pub cmem_bytes_per_s: f64,
    /// Whether CMEM is used (`--cmem off` turns it off, as Fig. 13 does).
    pub cmem_on: bool,
}

pub use podsim_system::presets::CMEM_BYTES_PER_S;

impl Machine {
    /// The machine of a k-ary n-cube network of `chip`s (2-D or 3-D), TPUs whose HBM
    /// capacity Table 4 gives.
    pub fn of(net: &Network, chip: ChipSpec) -> Result<Machine, TrainError> {
        let hbm_bytes = podsim_compute::chips::Chip::preset(&chip.name)
            .and_then(|c| c.tpu)
            .map(|t| t.hbm_bytes)
            .ok_or_else(|| TrainError::NotTpu {
                chip: chip.name.clone(),
            })?;
        let c = net.cube().ok_or_else(|| TrainError::NotCube {
            network: net.shorthand(),
        })?;
        let d = c.dims();
        if d.is_empty() || d.len() > 3 {
            return Err(TrainError::Dimensions {
                network: net.shorthand(),
                dims: d.len(),
            });
        }
        let mut dims = [1u32; 3];
        let mut wrap = [false; 3];
        for (i, &k) in d.iter().enumerate() {
            dims[i] = k;
            wrap[i] = c.wrap()[i];
        }
        let link = net.link();
        let endpoint = podsim_system::presets::endpoint(net, None)?
            .map(|e| e.overhead.as_secs_f64())
            .unwrap_or(0.0);
        let (beta, alpha) = (
            link.bandwidth.bytes_per_s() as f64,
            link.latency.as_secs_f64() + endpoint,
        );
        Ok(Machine {
            hbm_bytes,
            dims,
            wrap,
            switched: [false; 3],
            dim_bytes_per_s: [beta; 3],
            dim_latency_s: [alpha; 3],
            link_bytes_per_s: beta,
            step_latency_s: alpha,
            cmem_bytes: chip.cmem.map_or(0, |c| c.bytes),
            cmem_bytes_per_s: chip.cmem.map_or(0.0, |c| c.bandwidth.bytes_per_s() as f64),
            cmem_on: chip.cmem.is_some(),
            chip,
        })
    }

    /// The machine of a machine file's network (a [`Network::Graph`] of chips, NICs and
    /// switches) of `chip`s with `hbm_bytes` of memory each: its rank grid (chips a node, then
    /// nodes) as the dimensions, each switched, at the rate and latency of the route from
    /// chip 0 to the next chip along it (the slowest link and the links' latencies on the way,
    /// plus the endpoint overhead).
    pub fn of_machine(
        net: &Network,
        chip: ChipSpec,
        hbm_bytes: u64,
    ) -> Result<Machine, TrainError> {
        let Network::Graph(g) = net else {
            return Err(TrainError::NotMachineFile {
                network: net.shorthand(),
            });
        };
        let grid = g.grid();
        if grid.is_empty() || grid.len() > 3 {
            return Err(TrainError::RankGrid {
                machine: g.label().to_string(),
                dims: grid.len(),
            });
        }
        let endpoint = g.endpoint_overhead().as_secs_f64();
        let (mut dims, mut rate, mut latency) = ([1u32; 3], [0.0f64; 3], [0.0f64; 3]);
        let mut stride = 1u64;
        for (d, &k) in grid.iter().enumerate() {
            dims[d] = k;
            if k > 1 {
                let route = g
                    .paths(podsim_topology::NodeId(0), podsim_topology::NodeId(stride))
                    .into_iter()
                    .next()
                    .ok_or_else(|| TrainError::NoRoute {
                        machine: g.label().to_string(),
                        chip: stride,
                    })?;
                let (mut at, mut slowest, mut flight) = (podsim_topology::NodeId(0), f64::MAX, 0.0);
                for next in route {
                    let spec = g
                        .links_from(at)
                        .into_iter()
                        .find(|(v, _)| *v == next)
                        .map(|(_, s)| s)
                        .ok_or_else(|| TrainError::RouteOffLinks {
                            machine: g.label().to_string(),
                        })?;
                    slowest = slowest.min(spec.bandwidth.bytes_per_s() as f64);
                    flight += spec.latency.as_secs_f64();
                    at = next;
                }
                rate[d] = slowest;
                latency[d] = flight + endpoint;
            }
            stride *= u64::from(k);
        }
        let spanned = (0..3).filter(|&d| dims[d] > 1);
        let slowest = spanned
            .clone()
            .min_by(|&a, &b| rate[a].total_cmp(&rate[b]))
            .unwrap_or(0);
        let (beta, alpha) = if dims.iter().all(|&k| k <= 1) {
            (net.link().bandwidth.bytes_per_s() as f64, endpoint)
        } else {
            (rate[slowest], latency[slowest])
        };
        for d in 0..3 {
            if dims[d] <= 1 {
                rate[d] = beta;
                latency[d] = alpha;
            }
        }
        Ok(Machine {
            hbm_bytes,
            dims,
            wrap: [false; 3],
            switched: [true; 3],
            dim_bytes_per_s: rate,
            dim_latency_s: latency,
            link_bytes_per_s: beta,
            step_latency_s: alpha,
            cmem_bytes: chip.cmem.map_or(0, |c| c.bytes),
            cmem_bytes_per_s: chip.cmem.map_or(0.0, |c| c.bandwidth.bytes_per_s() as f64),
            cmem_on: chip.cmem.is_some(),
            chip,
        })
    }

    /// The machine a step runs on for `spec`, built as `net`: a machine file's own chip (a
    /// chip preset, or the matrix units the file states, which time the GEMMs) with the file's
    /// memory per chip, or
    /// TPU v4 chips on a slice, mesh or torus.
    pub fn for_system(
        spec: &podsim_system::SystemSpec,
        net: &Network,
    ) -> Result<Machine, TrainError> {
        match &spec.topology {
            podsim_system::TopoSpec::Machine(mf) => {
                let chip = ChipSpec::of_machine(&mf.chip).map_err(TrainError::Chip)?;
                Machine::of_machine(net, chip, mf.chip.memory.0)
            }
            _ => {
                let chip =
                    ChipSpec::preset("tpuv4").ok_or(TrainError::MissingPreset { chip: "tpuv4" })?;
                Machine::of(net, chip)
            }
        }
    }

    /// Set CMEM as `--cmem` says: `on` (the default, where the chip has CMEM) or `off`; a chip
    /// without CMEM takes neither. The error says why the setting does not apply.
    pub fn set_cmem(&mut self, setting: Option<&str>) -> Result<(), TrainError> {
        self.cmem_on = match (setting, self.chip.cmem.is_some()) {
            (None | Some("on"), true) => true,
            (Some("off"), true) => false,
            (Some("on" | "off"), false) => {
                return Err(TrainError::NoCmem {
                    chip: self.chip.name.clone(),
                });
            }
            (None, false) => false,
            (Some(other), _) => {
                return Err(TrainError::CmemSetting {
                    setting: other.to_string(),
                });
            }
        };
        Ok(())
    }

    /// CMEM as a step's output names it: `none` (the chip has none), `on` or `off`.
    pub fn cmem_name(&self) -> &'static str {
        match (self.chip.cmem.is_some(), self.cmem_on) {
            (false, _) => "none",
            (true, true) => "on",
            (true, false) => "off",
        }
    }

    pub(crate) fn chips(&self) -> u64 {
        self.dims.iter().map(|&d| u64::from(d)).product()
    }
}
