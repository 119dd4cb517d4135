//! Validation cases: a published figure, its source, a system that should reproduce it, and a
//! tolerance. `podsim validate` runs every file of cases in `validation/`.
//!
//! ```toml
//! [[case]]
//! figure = "K computer: bisection bandwidth of the physical 6-D mesh/torus"
//! source = "tofu-interconnect-d.txt, section II.A"
//! quantity = "bisection_bandwidth"   # see QUANTITIES
//! published = "46.1 TB/s"            # counts are plain numbers: "82,944"
//! tolerance = "0.05 TB/s"            # absolute, in the same unit (default 0)
//! not_reproduced = "why"             # optional: listed, marked, not evaluated
//! [case.system]                      # as a scenario's [[system]]
//! topology = "kncube:24x18x16x2x3x2:wrap=tmtmtm"
//! link_bandwidth = "5 GB/s"
//! interfaces = 4
//! ```

use serde::Deserialize;
use toml::Spanned;

use podsim_collective::{Micro, ModelKind, Setup, parse_names};
use podsim_compute::chips::{CHIPS, Chip};
use podsim_net::Packetization;
use podsim_routing::{Faults, Shortcut, dojo_route, mesh_links};
use podsim_system::{measure, microbench};
use podsim_topology::{Metrics, Network, metrics};
use podsim_units::{Bandwidth, Bytes, FlopRate};

use crate::error::{ConfigError, from_toml, nearest};
use crate::scenario::{Ctx, RawSystem, SystemSpec};

/// What a case measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Node count.
    Nodes,
    /// Bidirectional link count.
    Links,
    /// Ports of the best-connected node.
    DegreeMax,
    /// Longest minimal route in hops.
    Diameter,
    /// Links cut by the bisection.
    BisectionLinks,
    /// Two-way bisection bandwidth.
    BisectionBandwidth,
    /// Injection bandwidth of one node.
    InjectionBandwidth,
    /// Injection bandwidth of all nodes together.
    TotalInjectionBandwidth,
    /// Bandwidth of one link in one direction.
    LinkBandwidth,
    /// Two-way bisection bandwidth of the virtual torus laid over the network (Tofu).
    VirtualBisectionBandwidth,
    /// Optical circuit switches a TPU v4 system programs.
    OcsSwitches,
    /// On-chip SRAM of all compute nodes, in bytes (DOJO).
    Sram,
    /// Mesh links a DOJO route between the case's two routers occupies.
    RouteMeshLinks,
    /// DRAM banks of a Tenstorrent chip.
    DramBanks,
    /// Usable Tensix workers of a Tenstorrent chip.
    Workers,
    /// How many times faster the case's collective runs on its system than on its baseline
    /// (baseline time / system time), held in thousandths.
    CollectiveSpeedup,
    /// The exponent e in bisection ~ N^e between the baseline and the system:
    /// ln(B / B_base) / ln(N / N_base), held in thousandths.
    BisectionScalingExponent,
    /// Payload throughput of one large put between neighbours (flow model, the case's packet
    /// overheads), to the nearest MB/s.
    PutThroughput,
    /// Payload throughput of one node putting to as many neighbours as it has interfaces, at
    /// once (flow model, the case's packet overheads; Tofu's injection rate), to the nearest
    /// MB/s.
    InjectionRate,
    /// Peak matrix-unit FLOP/s of `[case.compute] chip`.
    PeakFlops,
    /// Peak FP32 FLOP/s of `[case.compute] chip` outside its matrix units.
    Fp32Flops,
    /// Cycles from a tensor core's inputs to its output (`[case.compute] size`), measured on
    /// the register-level model.
    TensorCoreLatency,
    /// MACs a tensor core of `[case.compute] size` completes per cycle in steady state,
    /// measured on the register-level model.
    TensorCoreMacsPerCycle,
    /// The cycle from which every output of the lecture's `size` x `size` array, streaming
    /// K = `k`, holds its final value, measured on the register-level model.
    SystolicCompletion,
}

/// The quantity names a case may use.
pub const QUANTITIES: [&str; 24] = [
    "nodes",
    "links",
    "degree_max",
    "diameter",
    "bisection_links",
    "bisection_bandwidth",
    "injection_bandwidth",
    "total_injection_bandwidth",
    "link_bandwidth",
    "virtual_bisection_bandwidth",
    "ocs_switches",
    "sram",
    "route_mesh_links",
    "dram_banks",
    "workers",
    "collective_speedup",
    "bisection_scaling_exponent",
    "put_throughput",
    "injection_rate",
    "peak_flops",
    "fp32_flops",
    "tensor_core_latency_cycles",
    "tensor_core_macs_per_cycle",
    "systolic_completion_cycle",
];

impl Quantity {
    fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "nodes" => Quantity::Nodes,
            "links" => Quantity::Links,
            "degree_max" => Quantity::DegreeMax,
            "diameter" => Quantity::Diameter,
            "bisection_links" => Quantity::BisectionLinks,
            "bisection_bandwidth" => Quantity::BisectionBandwidth,
            "injection_bandwidth" => Quantity::InjectionBandwidth,
            "total_injection_bandwidth" => Quantity::TotalInjectionBandwidth,
            "link_bandwidth" => Quantity::LinkBandwidth,
            "virtual_bisection_bandwidth" => Quantity::VirtualBisectionBandwidth,
            "ocs_switches" => Quantity::OcsSwitches,
            "sram" => Quantity::Sram,
            "route_mesh_links" => Quantity::RouteMeshLinks,
            "dram_banks" => Quantity::DramBanks,
            "workers" => Quantity::Workers,
            "collective_speedup" => Quantity::CollectiveSpeedup,
            "bisection_scaling_exponent" => Quantity::BisectionScalingExponent,
            "put_throughput" => Quantity::PutThroughput,
            "injection_rate" => Quantity::InjectionRate,
            "peak_flops" => Quantity::PeakFlops,
            "fp32_flops" => Quantity::Fp32Flops,
            "tensor_core_latency_cycles" => Quantity::TensorCoreLatency,
            "tensor_core_macs_per_cycle" => Quantity::TensorCoreMacsPerCycle,
            "systolic_completion_cycle" => Quantity::SystolicCompletion,
            _ => return None,
        })
    }

    /// Whether the quantity is measured on a compute model (no `[case.system]`).
    pub fn is_compute(self) -> bool {
        matches!(
            self,
            Quantity::PeakFlops
                | Quantity::Fp32Flops
                | Quantity::TensorCoreLatency
                | Quantity::TensorCoreMacsPerCycle
                | Quantity::SystolicCompletion
        )
    }

    /// The value of a compute quantity for `case`.
    pub fn measure_compute(self, case: &ValidationCase) -> Result<u64, String> {
        let c = case
            .compute
            .as_ref()
            .ok_or("a compute quantity needs [case.compute]")?;
        let chip = || {
            let name = c.chip.as_deref().ok_or("needs [case.compute] chip")?;
            Chip::preset(name).ok_or_else(|| {
                let names: Vec<&str> = CHIPS.iter().map(|c| c.name).collect();
                format!(
                    "`{name}` is not a chip preset (presets: {})",
                    names.join(", ")
                )
            })
        };
        let size = || c.size.ok_or("needs [case.compute] size");
        Ok(match self {
            Quantity::PeakFlops => chip()?.peak_matrix_flops().round() as u64,
            Quantity::Fp32Flops => chip()?.peak_fp32_flops().round() as u64,
            Quantity::TensorCoreLatency | Quantity::TensorCoreMacsPerCycle => {
                let (lat, macs) = podsim_compute::lecture::measure_tensor_core(size()? as usize);
                if self == Quantity::TensorCoreLatency {
                    lat
                } else {
                    macs
                }
            }
            Quantity::SystolicCompletion => {
                let s = size()? as usize;
                let k = c.k.ok_or("needs [case.compute] k")? as usize;
                podsim_compute::lecture::measure_completion(s, k).map_err(|e| e.to_string())?
            }
            _ => return Err("not a compute quantity".into()),
        })
    }

    /// Whether the quantity is a bandwidth (bytes/s) rather than a count.
    pub fn is_bandwidth(self) -> bool {
        matches!(
            self,
            Quantity::BisectionBandwidth
                | Quantity::InjectionBandwidth
                | Quantity::TotalInjectionBandwidth
                | Quantity::LinkBandwidth
                | Quantity::VirtualBisectionBandwidth
                | Quantity::PutThroughput
                | Quantity::InjectionRate
        )
    }

    /// The value of this quantity for `net`, whose metrics are `m` (bytes/s for bandwidths);
    /// an error when the network has no such quantity.
    pub fn measure(self, case: &ValidationCase, net: &Network, m: &Metrics) -> Result<u64, String> {
        let (spec, route) = (&case.system, case.route);
        let (collective, baseline) = (case.collective, case.baseline.as_ref());
        let wide = |v: u128| {
            u64::try_from(v).map_err(|_| {
                format!("{v} does not fit the 64 bits a published figure is compared in")
            })
        };
        Ok(match self {
            Quantity::Nodes => m.nodes,
            Quantity::Links => m.links,
            Quantity::DegreeMax => u64::from(m.degree_max),
            Quantity::Diameter => m.diameter,
            Quantity::BisectionLinks => m.bisection_links,
            Quantity::BisectionBandwidth => wide(m.bisection_bandwidth_bytes_per_s)?,
            Quantity::InjectionBandwidth => m.injection_bandwidth_bytes_per_s,
            Quantity::TotalInjectionBandwidth => wide(m.total_injection_bandwidth_bytes_per_s)?,
            Quantity::LinkBandwidth => net.link().bandwidth.bytes_per_s(),
            Quantity::VirtualBisectionBandwidth => match net {
                Network::Tofu(t) => t
                    .virtual_torus()
                    .map(|v| wide(metrics(v).bisection_bandwidth_bytes_per_s))
                    .ok_or("this Tofu shape has no virtual 3-D torus")??,
                _ => {
                    return Err("only a Tofu network has a virtual torus".into());
                }
            },
            Quantity::OcsSwitches => spec
                .as_ref()
                .and_then(SystemSpec::ocs_switches)
                .ok_or("only a TPU v4 system (tpuv4:...) has optical circuit switches")?,
            Quantity::Sram => match net {
                Network::Dojo(d) => d.sram().0,
                _ => return Err("only a DOJO system states its SRAM".into()),
            },
            Quantity::CollectiveSpeedup => {
                let (Some(c), Some(base)) = (collective, baseline) else {
                    return Err(
                        "collective_speedup needs [case.collective] and [case.baseline]".into(),
                    );
                };
                let base_net = base.build().map_err(|e| e.why)?;
                let t_sys = measure(net, &c.setup)?.time_s;
                let t_base = measure(&base_net, &c.setup)?.time_s;
                if t_sys <= 0.0 {
                    return Err("the collective took no time".into());
                }
                (t_base / t_sys * 1000.0).round() as u64
            }
            Quantity::BisectionScalingExponent => {
                let base = baseline.ok_or("bisection_scaling_exponent needs [case.baseline]")?;
                let bm = base.build().map_err(|e| e.why)?.metrics();
                let (b, n) = (m.bisection_bandwidth_bytes_per_s as f64, m.nodes as f64);
                let (b0, n0) = (bm.bisection_bandwidth_bytes_per_s as f64, bm.nodes as f64);
                if n <= n0 || b0 <= 0.0 {
                    return Err("the baseline must be smaller than the system".into());
                }
                ((b / b0).ln() / (n / n0).ln() * 1000.0).round() as u64
            }
            Quantity::DramBanks | Quantity::Workers => match net {
                Network::Tenstorrent(g) if self == Quantity::DramBanks => g.dram_banks() as u64,
                Network::Tenstorrent(g) => g.workers() as u64,
                _ => return Err("only a Tenstorrent grid has DRAM banks and Tensix workers".into()),
            },
            Quantity::PeakFlops
            | Quantity::Fp32Flops
            | Quantity::TensorCoreLatency
            | Quantity::TensorCoreMacsPerCycle
            | Quantity::SystolicCompletion => return self.measure_compute(case),
            Quantity::PutThroughput | Quantity::InjectionRate => {
                let micro = if self == Quantity::PutThroughput {
                    Micro::PutThroughput
                } else {
                    Micro::Injection
                };
                let r = microbench(
                    net,
                    micro,
                    micro.default_bytes(),
                    ModelKind::Flow,
                    case.packets,
                    u64::MAX,
                )?;
                // Reported to the nearest MB/s.
                ((r.throughput_bytes_per_s / 1e6).round() * 1e6) as u64
            }
            Quantity::RouteMeshLinks => {
                let Network::Dojo(d) = net else {
                    return Err("route_mesh_links needs a DOJO system".into());
                };
                let [[x0, y0], [x1, y1]] =
                    route.ok_or("route_mesh_links needs `route = [[x, y], [x, y]]`")?;
                if x0.max(x1) >= d.width() || y0.max(y1) >= d.height() {
                    return Err(format!(
                        "the route leaves the {}x{} plane",
                        d.width(),
                        d.height()
                    ));
                }
                let (a, b) = (d.router(x0, y0), d.router(x1, y1));
                let path = dojo_route(d, &Faults::new(), a, b, Shortcut::Never)
                    .map_err(|e| e.to_string())?;
                mesh_links(d, a, &path)
            }
        })
    }

    /// Print a value of this quantity for people.
    pub fn show(self, v: u64) -> String {
        if matches!(self, Quantity::PeakFlops | Quantity::Fp32Flops) {
            format!("{:.3} TFLOP/s", v as f64 / 1e12)
        } else if self == Quantity::CollectiveSpeedup {
            format!("{:.3}x", v as f64 / 1000.0)
        } else if self == Quantity::BisectionScalingExponent {
            format!("{:.3}", v as f64 / 1000.0)
        } else if self == Quantity::Sram {
            Bytes(v).to_string()
        } else if self.is_bandwidth() {
            Bandwidth::from_bytes_per_s(v).map_or_else(|| "0 B/s".into(), |b| b.to_string())
        } else {
            v.to_string()
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    case: Vec<RawCase>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    figure: String,
    source: String,
    quantity: Spanned<String>,
    published: Spanned<String>,
    #[serde(default)]
    tolerance: Option<Spanned<String>>,
    #[serde(default)]
    not_reproduced: Option<String>,
    #[serde(default)]
    route: Option<Spanned<Vec<Vec<i64>>>>,
    #[serde(default)]
    collective: Option<RawCollective>,
    #[serde(default)]
    baseline: Option<RawSystem>,
    #[serde(default)]
    packets: Option<RawPackets>,
    #[serde(default)]
    compute: Option<CaseCompute>,
    #[serde(default)]
    system: Option<RawSystem>,
}

/// What a compute case measures: `[case.compute]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseCompute {
    /// A chip preset (peak_flops, fp32_flops).
    #[serde(default)]
    pub chip: Option<String>,
    /// Tensor core or array size.
    #[serde(default)]
    pub size: Option<u64>,
    /// Reduction length streamed through the array.
    #[serde(default)]
    pub k: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPackets {
    payload: Spanned<String>,
    header: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCollective {
    kind: Spanned<String>,
    bytes: Spanned<String>,
    #[serde(default)]
    algorithm: Option<String>,
    #[serde(default)]
    model: Option<String>,
}

/// A collective a case runs: kind, algorithm, model and bytes per rank.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CaseCollective {
    /// What to run.
    pub setup: Setup,
}

/// One validated case.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationCase {
    /// What the figure is.
    pub figure: String,
    /// Seed file and section or table.
    pub source: String,
    /// What is measured.
    pub quantity: Quantity,
    /// The published value (bytes/s for bandwidths).
    pub published: u64,
    /// The accepted absolute difference, same unit.
    pub tolerance: u64,
    /// Why podsim cannot reproduce it yet, if it cannot.
    pub not_reproduced: Option<String>,
    /// For route quantities: from and to, as plane coordinates.
    pub route: Option<[[u32; 2]; 2]>,
    /// For collective quantities: the collective.
    pub collective: Option<CaseCollective>,
    /// For speedups: the system the case's system is compared with.
    pub baseline: Option<SystemSpec>,
    /// Packet overheads for the network model (`[case.packets]`; default none).
    pub packets: Packetization,
    /// The system that should reproduce it (network quantities).
    pub system: Option<SystemSpec>,
    /// The compute model that should reproduce it (compute quantities).
    pub compute: Option<CaseCompute>,
}

fn value(ctx: &Ctx<'_>, q: Quantity, v: &Spanned<String>, key: &str) -> Result<u64, ConfigError> {
    let s = v.get_ref();
    if q == Quantity::CollectiveSpeedup || q == Quantity::BisectionScalingExponent {
        // A ratio such as "1.63", held in thousandths.
        return match s.trim().trim_end_matches('x').parse::<f64>() {
            Ok(r) if r >= 0.0 && r.is_finite() => Ok((r * 1000.0).round() as u64),
            _ => ctx.err(
                Some(v.span()),
                key,
                format!("`{s}` is not a ratio such as \"1.63\""),
            ),
        };
    }
    if matches!(q, Quantity::PeakFlops | Quantity::Fp32Flops) {
        return s.parse::<FlopRate>().map(|r| r.0).or_else(|e| {
            ctx.err(
                Some(v.span()),
                key,
                format!("{e}; expected a rate such as \"275 TFLOP/s\""),
            )
        });
    }
    if q == Quantity::Sram {
        return s.parse::<Bytes>().map(|b| b.0).or_else(|e| {
            ctx.err(
                Some(v.span()),
                key,
                format!("{e}; expected a size such as \"440 MB\""),
            )
        });
    }
    if q.is_bandwidth() {
        if s.trim() == "0" {
            return Ok(0);
        }
        s.parse::<Bandwidth>()
            .map(|b| b.bytes_per_s())
            .or_else(|e| {
                ctx.err(
                    Some(v.span()),
                    key,
                    format!("{e}; expected a bandwidth such as \"46.1 TB/s\""),
                )
            })
    } else {
        s.replace([',', '_'], "")
            .trim()
            .parse::<u64>()
            .or_else(|_| ctx.err(Some(v.span()), key, format!("`{s}` is not a whole number")))
    }
}

/// Parse and validate a file of cases.
pub fn parse_validation(file: &str, text: &str) -> Result<Vec<ValidationCase>, ConfigError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| from_toml(file, text, &e))?;
    let ctx = Ctx { file, text };
    raw.case
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let key = |k: &str| format!("case[{i}].{k}");
            let q = Quantity::from_name(c.quantity.get_ref()).map_or_else(
                || {
                    let name = c.quantity.get_ref();
                    ctx.err(
                        Some(c.quantity.span()),
                        &key("quantity"),
                        format!(
                            "`{name}` is not a quantity; the nearest is `{}` (quantities: {})",
                            nearest(name, &QUANTITIES).unwrap_or(""),
                            QUANTITIES.join(", ")
                        ),
                    )
                },
                Ok,
            )?;
            let mut case = ValidationCase {
                figure: c.figure.clone(),
                source: c.source.clone(),
                quantity: q,
                published: value(&ctx, q, &c.published, &key("published"))?,
                tolerance: match &c.tolerance {
                    Some(t) => value(&ctx, q, t, &key("tolerance"))?,
                    None => 0,
                },
                not_reproduced: c.not_reproduced.clone(),
                route: match &c.route {
                    None => None,
                    Some(r) => {
                        let v: Vec<u32> = r
                            .get_ref()
                            .iter()
                            .flatten()
                            .filter_map(|&x| u32::try_from(x).ok())
                            .collect();
                        let pairs = r.get_ref().iter().all(|p| p.len() == 2);
                        match (pairs, &v[..]) {
                            (true, &[a, b, c2, d]) => Some([[a, b], [c2, d]]),
                            _ => {
                                return ctx.err(
                                    Some(r.span()),
                                    &key("route"),
                                    "expected [[x, y], [x, y]] with non-negative whole numbers",
                                );
                            }
                        }
                    }
                },
                system: match &c.system {
                    Some(s) => Some(s.validate(&ctx, &key("system"))?),
                    None if q.is_compute() => None,
                    None => {
                        return ctx.err(
                            Some(c.quantity.span()),
                            &key("system"),
                            "this quantity is measured on a network: the case needs [case.system]",
                        );
                    }
                },
                compute: c.compute.clone(),
                baseline: match &c.baseline {
                    Some(b) => Some(b.validate(&ctx, &key("baseline"))?),
                    None => None,
                },
                packets: match &c.packets {
                    None => Packetization::NONE,
                    Some(p) => {
                        let size = |v: &Spanned<String>, k: &str| {
                            v.get_ref().parse::<Bytes>().map(|b| b.0).or_else(|e| {
                                ctx.err(
                                    Some(v.span()),
                                    &key(k),
                                    format!("{e}; expected a size such as \"2016 B\""),
                                )
                            })
                        };
                        let payload = size(&p.payload, "packets.payload")?;
                        if payload == 0 {
                            return ctx.err(
                                Some(p.payload.span()),
                                &key("packets.payload"),
                                "a packet needs at least one byte of payload",
                            );
                        }
                        Packetization {
                            payload,
                            header: size(&p.header, "packets.header")?,
                        }
                    }
                },
                collective: match &c.collective {
                    None => None,
                    Some(rc) => {
                        let (kind, algorithm, model) = parse_names(
                            rc.kind.get_ref(),
                            rc.algorithm.as_deref(),
                            rc.model.as_deref().unwrap_or("flow"),
                        )
                        .or_else(|e| ctx.err(Some(rc.kind.span()), &key("collective"), e))?;
                        let bytes = rc.bytes.get_ref().parse::<Bytes>().or_else(|e| {
                            ctx.err(
                                Some(rc.bytes.span()),
                                &key("collective.bytes"),
                                format!("{e}; expected a size such as \"16 MiB\""),
                            )
                        })?;
                        Some(CaseCollective {
                            setup: Setup {
                                kind,
                                algorithm,
                                bytes: bytes.0,
                                model,
                                packets: Packetization::NONE,
                                chunk: 0,
                                ecmp: true,
                                memory_limit: u64::MAX,
                            },
                        })
                    }
                },
            };
            // The case's packet overheads apply to its collective too.
            if let Some(c) = &mut case.collective {
                c.setup.packets = case.packets;
            }
            Ok(case)
        })
        .collect()
}
