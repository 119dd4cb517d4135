//! Validation cases: a published figure, its source, a system that should reproduce it, and a
//! tolerance. `podsim validate` runs every file of cases in `validation/`.
//!
//! ```toml
//! [[case]]
//! figure = "K computer: bisection bandwidth of the physical 6-D mesh/torus"
//! source = "tofu-interconnect-d.txt, section II.A"
//! quantity = "bisection_bandwidth"   # see QUANTITIES
//! class = "structural"               # structural | calibrated | prediction (below)
//! published = "46.1 TB/s"            # counts are plain numbers: "82,944"
//! tolerance = "0.05 TB/s"            # absolute, in the same unit (default 0)
//! tolerance_reason = "the paper prints 46.1 (three figures)"   # required when tolerance > 0
//! not_reproduced = "why"             # optional: listed, marked, not evaluated
//! [case.system]                      # as a scenario's [[system]]
//! topology = "kncube:24x18x16x2x3x2:wrap=tmtmtm"
//! link_bandwidth = "5 GB/s"
//! interfaces = 4
//! ```
//!
//! `class` says how podsim's value is produced: `structural` (a count or closed form of the
//! configuration), `calibrated` (a parameter was fitted to this figure, or the value is typed
//! in: the case names it in `calibrated_by = "..."`, which no other class may carry) or
//! `prediction` (computed from lower-level mechanisms with nothing fitted to this figure).
//! A tolerance above 15% of the published value is refused unless `tolerance_reason` says why.

use serde::Deserialize;
use toml::Spanned;

use podsim_system::choices::{Packetization, Setup, parse_names};
use podsim_units::{Bandwidth, Bytes, FlopRate};
use podsim_validation::{
    CaseClass, CaseCollective, CaseCompute, QUANTITIES, Quantity, ValidationCase,
};

use crate::ctx::{Ctx, MachineFiles};
use crate::error::{ConfigError, from_toml, nearest};
use crate::system::RawSystem;

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
    #[serde(default)]
    class: Option<Spanned<String>>,
    #[serde(default)]
    calibrated_by: Option<Spanned<String>>,
    quantity: Spanned<String>,
    published: Spanned<String>,
    #[serde(default)]
    tolerance: Option<Spanned<String>>,
    #[serde(default)]
    tolerance_reason: Option<Spanned<String>>,
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
    compute: Option<RawCompute>,
    #[serde(default)]
    system: Option<RawSystem>,
    #[serde(default)]
    machine: Option<Spanned<RawMachineRef>>,
    #[serde(default)]
    endpoint: Option<Spanned<String>>,
    #[serde(default)]
    availability: Option<Spanned<RawAvailability>>,
    #[serde(default)]
    train: Option<Spanned<RawTrain>>,
    #[serde(default)]
    train_baseline: Option<Spanned<RawTrain>>,
    #[serde(default)]
    dlrm: Option<Spanned<RawDlrm>>,
    #[serde(default)]
    dlrm_baseline: Option<Spanned<RawDlrm>>,
    #[serde(default)]
    tofu_node: Option<Spanned<RawTofuNode>>,
    #[serde(default)]
    tofu_barrier: Option<Spanned<RawTofuBarrier>>,
    #[serde(default)]
    tenstorrent: Option<Spanned<RawTenstorrent>>,
    #[serde(default)]
    app: Option<Spanned<RawApp>>,
    #[serde(default)]
    mlperf: Option<Spanned<RawMlperf>>,
}

/// `[case.mlperf]` as written: an MLPerf Training 2.0 benchmark on TPU v4 and the case's A100
/// machine file (tpu-v4-isca2023.txt Figs. 14-15, Table 6).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMlperf {
    /// bert or resnet.
    benchmark: String,
    /// TPU v4 chips: 64 (Table 6) or 4096 (Figs. 14-15).
    chips: u64,
    /// `mlperf_power`: the chip, a100 or tpuv4.
    #[serde(default)]
    chip: Option<String>,
}

fn mlperf_case(
    ctx: &Ctx<'_>,
    raw: &Spanned<RawMlperf>,
    q: Quantity,
    key: &str,
) -> Result<podsim_tpu::mlperf::MlperfCase, ConfigError> {
    use podsim_tpu::mlperf::{Benchmark, MlperfCase, tpu_v4};
    let r = raw.get_ref();
    let sp = Some(raw.span());
    let Some(benchmark) = Benchmark::parse(&r.benchmark) else {
        return ctx.err(
            sp,
            &format!("{key}.benchmark"),
            format!("`{}` is not bert or resnet", r.benchmark),
        );
    };
    if let Err(e) = tpu_v4(benchmark, r.chips) {
        return ctx.err(sp, &format!("{key}.chips"), e);
    }
    let power_of_a100 = match (q, r.chip.as_deref()) {
        (Quantity::MlperfPower, Some("a100")) => Some(true),
        (Quantity::MlperfPower, Some("tpuv4")) => Some(false),
        (Quantity::MlperfPower, Some(other)) => {
            return ctx.err(
                sp,
                &format!("{key}.chip"),
                format!("`{other}` is not a100 or tpuv4"),
            );
        }
        (Quantity::MlperfPower, None) => {
            return ctx.err(
                sp,
                &format!("{key}.chip"),
                "an mlperf_power case needs chip = \"a100\" or \"tpuv4\"",
            );
        }
        (_, Some(_)) => {
            return ctx.err(
                sp,
                &format!("{key}.chip"),
                "only an mlperf_power case reads chip; drop the key",
            );
        }
        (_, None) => None,
    };
    Ok(MlperfCase {
        benchmark,
        chips: r.chips,
        power_of_a100,
    })
}

/// `[case.app]` as written: the applications of the TPU v4 paper's Figs. 12-13.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawApp {
    /// An application (CNN0, ...) or "all" (the geometric mean of the eight).
    app: String,
    #[serde(default)]
    chips: Option<u64>,
    #[serde(default)]
    cmem: Option<String>,
    /// `app_power`: the chip, tpuv4 or tpuv3.
    #[serde(default)]
    chip: Option<String>,
    /// `app_power`: min, mean or max over the applications.
    #[serde(default)]
    statistic: Option<String>,
}

fn app_case(
    ctx: &Ctx<'_>,
    raw: &Spanned<RawApp>,
    q: Quantity,
    key: &str,
) -> Result<podsim_tpu::apps::AppCase, ConfigError> {
    use podsim_tpu::apps::{APP_NAMES, App, AppCase, PowerStatistic, slices};
    let r = raw.get_ref();
    let sp = Some(raw.span());
    let app = if r.app.eq_ignore_ascii_case("all") {
        None
    } else {
        match App::named(&r.app) {
            Some(a) => Some(a.name.to_string()),
            None => {
                return ctx.err(
                    sp,
                    &format!("{key}.app"),
                    format!(
                        "`{}` is not an application ({} or all)",
                        r.app,
                        APP_NAMES.join(", ")
                    ),
                );
            }
        }
    };
    let chips = r.chips.unwrap_or(128);
    if let Err(e) = slices(chips) {
        return ctx.err(sp, &format!("{key}.chips"), e);
    }
    let cmem = match (r.cmem.as_deref(), q) {
        (Some(_), Quantity::AppCmemGain | Quantity::AppCmemPerfPerWattGain) => {
            return ctx.err(
                sp,
                &format!("{key}.cmem"),
                "an app_cmem_gain or app_cmem_perf_per_watt_gain case compares CMEM on with off; drop the key",
            );
        }
        (None, _) | (Some("on"), _) => true,
        (Some("off"), _) => false,
        (Some(x), _) => {
            return ctx.err(
                sp,
                &format!("{key}.cmem"),
                format!("`{x}` is not on or off"),
            );
        }
    };
    let power = match (q, r.chip.as_deref(), r.statistic.as_deref()) {
        (Quantity::AppPower, Some(chip), Some(stat)) => {
            let v3 = match chip {
                "tpuv4" => false,
                "tpuv3" => true,
                other => {
                    return ctx.err(
                        sp,
                        &format!("{key}.chip"),
                        format!("`{other}` is not tpuv4 or tpuv3"),
                    );
                }
            };
            let Some(stat) = PowerStatistic::parse(stat) else {
                return ctx.err(
                    sp,
                    &format!("{key}.statistic"),
                    format!("`{stat}` is not min, mean or max"),
                );
            };
            Some((v3, stat))
        }
        (Quantity::AppPower, chip, _) => {
            let missing = if chip.is_none() { "chip" } else { "statistic" };
            return ctx.err(
                sp,
                &format!("{key}.{missing}"),
                "an app_power case needs chip = \"tpuv4\" or \"tpuv3\" and statistic = \"min\", \"mean\" or \"max\"",
            );
        }
        (_, Some(_), _) | (_, _, Some(_)) => {
            let extra = if r.chip.is_some() {
                "chip"
            } else {
                "statistic"
            };
            return ctx.err(
                sp,
                &format!("{key}.{extra}"),
                "only an app_power case reads chip and statistic; drop the key",
            );
        }
        _ => None,
    };
    Ok(AppCase {
        app,
        chips,
        cmem,
        power,
    })
}

/// `[case.tenstorrent]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTenstorrent {
    data_rate: String,
    #[serde(default)]
    chip: Option<String>,
    #[serde(default)]
    harvested_rows: Option<Vec<u32>>,
    #[serde(default)]
    m: Option<u64>,
    #[serde(default)]
    k: Option<u64>,
    #[serde(default)]
    n: Option<u64>,
    #[serde(default)]
    dtype: Option<String>,
}

fn tt_case(
    ctx: &Ctx<'_>,
    raw: &Spanned<RawTenstorrent>,
    q: Quantity,
    key: &str,
) -> Result<podsim_validation::TtCase, ConfigError> {
    use podsim_tenstorrent::matmul::Dtype;
    let r = raw.get_ref();
    let sp = Some(raw.span());
    let t = r.data_rate.trim();
    let rate = t
        .strip_suffix("GT/s")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v > 0.0 && *v <= 100.0);
    let Some(rate) = rate else {
        return ctx.err(
            sp,
            &format!("{key}.data_rate"),
            format!("`{}` is not a rate such as \"12 GT/s\"", r.data_rate),
        );
    };
    let matmul = match (q, r.m, r.k, r.n) {
        (Quantity::MatmulDramBandwidth, Some(m), Some(k), Some(n)) => {
            let dtype = match r.dtype.as_deref() {
                None => Dtype::Bfp8,
                Some(d) => match Dtype::ALL.iter().find(|(x, _)| *x == d) {
                    Some((_, x)) => *x,
                    None => {
                        return ctx.err(
                            sp,
                            &format!("{key}.dtype"),
                            format!("`{d}` is not bf16, bfp8 or bfp4"),
                        );
                    }
                },
            };
            if m == 0
                || m > 1024
                || k == 0
                || k % 32 != 0
                || k > 1 << 20
                || n == 0
                || n > 1 << 20
                || k * n > 1 << 31
            {
                return ctx.err(
                    sp,
                    key,
                    "expected 1 <= m <= 1024, k a positive multiple of 32, n positive, k and n up to 1,048,576 and k x n up to 2^31 (a Wormhole's 12 GB)",
                );
            }
            Some((m, k, n, dtype))
        }
        (Quantity::MatmulDramBandwidth, ..) => {
            return ctx.err(sp, key, "a matmul_dram_bandwidth case needs m, k and n");
        }
        (_, None, None, None) if r.dtype.is_none() => None,
        _ => {
            return ctx.err(
                sp,
                key,
                "only a matmul_dram_bandwidth case reads m, k, n and dtype; drop them",
            );
        }
    };
    let chip = match r.chip.as_deref() {
        None | Some("wormhole") => podsim_topology::TtChip::Wormhole,
        Some("grayskull") => podsim_topology::TtChip::Grayskull,
        Some(other) => {
            return ctx.err(
                sp,
                &format!("{key}.chip"),
                format!("`{other}` is not wormhole or grayskull"),
            );
        }
    };
    if q == Quantity::TtFullLoadPower && r.harvested_rows.is_some() {
        return ctx.err(
            sp,
            &format!("{key}.harvested_rows"),
            "a full load keeps every Tensix core streaming; harvested rows change nothing here: drop them",
        );
    }
    if matmul.is_some() && (r.chip.is_some() || r.harvested_rows.is_some()) {
        return ctx.err(
            sp,
            key,
            "the matmul runs on a whole Wormhole: drop chip and harvested_rows",
        );
    }
    Ok(podsim_validation::TtCase {
        chip,
        harvested_rows: r.harvested_rows.clone().unwrap_or_default(),
        data_rate: rate * 1e9,
        matmul,
    })
}

/// `[case.tofu_barrier]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTofuBarrier {
    points: u32,
    #[serde(default)]
    allocation: Option<String>,
    #[serde(default)]
    metric: Option<String>,
}

/// `[case.tofu_node]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTofuNode {
    generation: String,
    resource: String,
}

/// `[case.dlrm]` as written: Fig. 8's DLRM on a TPU slice.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDlrm {
    system: String,
    #[serde(default)]
    embeddings: Option<String>,
    #[serde(default)]
    time: Option<String>,
}

fn dlrm_case(
    ctx: &Ctx<'_>,
    raw: &Spanned<RawDlrm>,
    key: &str,
) -> Result<podsim_tpu::dlrm::DlrmCase, ConfigError> {
    let r = raw.get_ref();
    let span = Some(raw.span());
    podsim_tpu::dlrm::system(&r.system)
        .or_else(|e| ctx.err(span.clone(), &format!("{key}.system"), e))?;
    let host = match r.embeddings.as_deref() {
        None | Some("sparsecore") => false,
        Some("host") => true,
        Some(x) => {
            return ctx.err(
                span,
                &format!("{key}.embeddings"),
                format!("`{x}` is not sparsecore or host"),
            );
        }
    };
    let embedding_only = match r.time.as_deref() {
        None | Some("step") => false,
        Some("embedding") => true,
        Some(x) => {
            return ctx.err(
                span,
                &format!("{key}.time"),
                format!("`{x}` is not step or embedding"),
            );
        }
    };
    Ok(podsim_tpu::dlrm::DlrmCase {
        system: r.system.clone(),
        host,
        embedding_only,
    })
}

/// `[case.machine]` as written: a machine file (by its path from the repository's root, as
/// the binary holds it) and its node count.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMachineRef {
    file: String,
    #[serde(default)]
    nodes: Option<u32>,
}

/// The machine file `path` of `nodes` nodes as a system, found by `machines`.
fn machine_ref(
    ctx: &Ctx<'_>,
    span: Option<std::ops::Range<usize>>,
    key: &str,
    path: &str,
    nodes: Option<u32>,
    machines: MachineFiles<'_>,
) -> Result<podsim_system::SystemSpec, ConfigError> {
    let text = machines(path).map_or_else(
        || {
            ctx.err(
                span,
                key,
                format!("no machine file `{path}` (a validation case names one of examples/machines/ by its path)"),
            )
        },
        Ok,
    )?;
    crate::machine::machine_system(path, &text, nodes)
}

/// `[case.train]` as written: a model (a built-in's name, or an inline table of a model file's
/// keys) and a step's configuration.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrain {
    model: toml::Value,
    system: String,
    #[serde(default)]
    nodes: Option<u32>,
    parallel: String,
    partition: String,
    #[serde(default)]
    mapping: Option<String>,
    #[serde(default)]
    batch: Option<u64>,
    #[serde(default)]
    microbatches: Option<u64>,
    #[serde(default)]
    remat: Option<String>,
    #[serde(default)]
    fidelity: Option<String>,
    #[serde(default)]
    shard: Option<String>,
    #[serde(default)]
    sequence_parallel: Option<bool>,
    #[serde(default)]
    virtual_stages: Option<u64>,
}

fn train_case(
    ctx: &Ctx<'_>,
    raw: &Spanned<RawTrain>,
    key: &str,
    machines: MachineFiles<'_>,
) -> Result<podsim_train::TrainCase, ConfigError> {
    use podsim_train::{Mapping, Parallel, Partition, Remat, Transformer};
    let span = Some(raw.span());
    let r = raw.get_ref();
    let k = |x: &str| format!("{key}.{x}");
    let model = match &r.model {
        toml::Value::String(name) => Transformer::builtin(name).map_or_else(
            || {
                let names: Vec<String> = Transformer::builtins()
                    .into_iter()
                    .map(|m| m.name)
                    .collect();
                ctx.err(
                    span.clone(),
                    &k("model"),
                    format!(
                        "`{name}` is not a built-in model ({}); or give a table of a model file's keys",
                        names.join(", ")
                    ),
                )
            },
            Ok,
        )?,
        toml::Value::Table(table) => {
            let text = toml::to_string(table).or_else(|e| ctx.err(span.clone(), &k("model"), e))?;
            crate::model::parse_model(&k("model"), &text).map_err(|e| ConfigError {
                file: ctx.file.into(),
                line: span
                    .clone()
                    .map(|s| crate::error::line_of(ctx.text, s.start)),
                key: format!("{}.{}", k("model"), e.key),
                why: e.why,
            })?
        }
        other => {
            return ctx.err(
                span,
                &k("model"),
                format!(
                    "expected a built-in model's name or a table of a model file's keys (layers, d_model, heads, ...), not a {}",
                    other.type_str()
                ),
            );
        }
    };
    let system = if r.system.ends_with(".toml") {
        machine_ref(
            ctx,
            span.clone(),
            &k("system"),
            &r.system,
            r.nodes,
            machines,
        )?
    } else if r.nodes.is_some() {
        return ctx.err(
            span,
            &k("nodes"),
            "sets a machine file's node count, and the system is a slice; drop the key",
        );
    } else {
        crate::system_from_cli(&r.system, None, None, None).map_err(|e| ConfigError {
            file: ctx.file.into(),
            line: span
                .clone()
                .map(|s| crate::error::line_of(ctx.text, s.start)),
            key: k("system"),
            why: e.why,
        })?
    };
    let parallel =
        Parallel::parse(&r.parallel).or_else(|e| ctx.err(span.clone(), &k("parallel"), e))?;
    let partition = Partition::parse(&r.partition).map_or_else(
        || {
            ctx.err(
                span.clone(),
                &k("partition"),
                "expected 1d/1d, 1d/2d, 2d/1d or 2d/2d",
            )
        },
        Ok,
    )?;
    let mapping = match &r.mapping {
        None => None,
        Some(m) => Some(Mapping::parse(m).or_else(|e| ctx.err(span.clone(), &k("mapping"), e))?),
    };
    let remat = match r.remat.as_deref() {
        None => Remat::Full,
        Some(x) => Remat::parse(x).map_or_else(
            || {
                ctx.err(
                    span.clone(),
                    &k("remat"),
                    "expected full, selective or none",
                )
            },
            Ok,
        )?,
    };
    let flow = match r.fidelity.as_deref() {
        None | Some("flow") => true,
        Some("analytic") => false,
        Some(x) => {
            return ctx.err(
                span,
                &k("fidelity"),
                format!("`{x}` is not analytic or flow"),
            );
        }
    };
    let shard = match r.shard.as_deref() {
        None => podsim_train::Sharding::None,
        Some(x) => podsim_train::Sharding::parse(x).map_or_else(
            || {
                ctx.err(
                    span.clone(),
                    &k("shard"),
                    "expected none, optimizer, gradients or weights",
                )
            },
            Ok,
        )?,
    };
    let virtual_stages = match r.virtual_stages {
        Some(0) => return ctx.err(span, &k("virtual_stages"), "expected 1 or more"),
        v => v.unwrap_or(1),
    };
    Ok(podsim_train::TrainCase {
        model,
        system,
        parallel,
        partition,
        mapping,
        batch: r.batch,
        microbatches: r.microbatches,
        remat,
        flow,
        shard,
        sequence_parallel: r.sequence_parallel.unwrap_or(false),
        virtual_stages,
    })
}

/// `[case.availability]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAvailability {
    slice_chips: u64,
    host_availability: f64,
    #[serde(default, rename = "static")]
    static_wiring: bool,
}

/// `[case.compute]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCompute {
    #[serde(default)]
    chip: Option<String>,
    #[serde(default)]
    size: Option<u64>,
    #[serde(default)]
    k: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPackets {
    #[serde(default)]
    payload: Option<Spanned<String>>,
    #[serde(default)]
    header: Option<Spanned<String>>,
    /// A Tofu family machine whose frame model gives payload and header instead.
    #[serde(default)]
    frame: Option<Spanned<String>>,
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

/// `[case.packets]`: payload and header given, or a Tofu family machine's frame.
fn packets(
    ctx: &Ctx<'_>,
    p: &RawPackets,
    key: &dyn Fn(&str) -> String,
) -> Result<(Packetization, Option<podsim_tofu::family::Machine>), ConfigError> {
    use podsim_tofu::family::Machine;
    let size = |v: &Spanned<String>, k: &str| {
        v.get_ref().parse::<Bytes>().map(|b| b.0).or_else(|e| {
            ctx.err(
                Some(v.span()),
                &key(k),
                format!("{e}; expected a size such as \"2016 B\""),
            )
        })
    };
    match (&p.payload, &p.header, &p.frame) {
        (None, None, Some(f)) => {
            let Some(m) = Machine::parse(f.get_ref()) else {
                let names: Vec<&str> = Machine::ALL.iter().map(|(n, _)| *n).collect();
                return ctx.err(
                    Some(f.span()),
                    &key("packets.frame"),
                    format!(
                        "`{}` is not a Tofu frame ({})",
                        f.get_ref(),
                        names.join(", ")
                    ),
                );
            };
            Ok((m.frame().packetization(), Some(m)))
        }
        (Some(payload), Some(header), None) => {
            let bytes = size(payload, "packets.payload")?;
            if bytes == 0 {
                return ctx.err(
                    Some(payload.span()),
                    &key("packets.payload"),
                    "a packet needs at least one byte of payload",
                );
            }
            Ok((
                Packetization {
                    payload: bytes,
                    header: size(header, "packets.header")?,
                },
                None,
            ))
        }
        (_, _, Some(f)) => ctx.err(
            Some(f.span()),
            &key("packets.frame"),
            "give either frame or payload and header, not both",
        ),
        _ => ctx.err(
            None,
            &key("packets"),
            "expected payload and header (such as \"2016 B\" and \"136 B\") or frame = \"tofud\"",
        ),
    }
}

fn value(ctx: &Ctx<'_>, q: Quantity, v: &Spanned<String>, key: &str) -> Result<u64, ConfigError> {
    let s = v.get_ref();
    if matches!(
        q,
        Quantity::Goodput
            | Quantity::DramUtilization
            | Quantity::TrainMfu
            | Quantity::AppOcsPowerShare
    ) {
        // A percentage such as "75%", held in thousandths of one.
        return match s.trim().trim_end_matches('%').trim().parse::<f64>() {
            Ok(r) if (0.0..=100.0).contains(&r) => Ok((r * 10.0).round() as u64),
            _ => ctx.err(
                Some(v.span()),
                key,
                format!("`{s}` is not a percentage such as \"75%\""),
            ),
        };
    }
    if q == Quantity::RidgePoint {
        // FLOPs per byte such as "229.2", held in thousandths.
        return match s.trim().trim_end_matches("FLOP/B").trim().parse::<f64>() {
            Ok(r) if r > 0.0 && r.is_finite() => Ok((r * 1000.0).round() as u64),
            _ => ctx.err(
                Some(v.span()),
                key,
                format!("`{s}` is not FLOPs per byte such as \"229.2\""),
            ),
        };
    }
    if matches!(
        q,
        Quantity::AppPower | Quantity::MlperfPower | Quantity::TtFullLoadPower
    ) {
        // Watts such as "170 W", held in milliwatts.
        return match s.trim().trim_end_matches('W').trim().parse::<f64>() {
            Ok(r) if r >= 0.0 && r.is_finite() => Ok((r * 1000.0).round() as u64),
            _ => ctx.err(
                Some(v.span()),
                key,
                format!("`{s}` is not watts such as \"170 W\""),
            ),
        };
    }
    if q == Quantity::TrainThroughput {
        // Sequences per second such as "21.0", held in thousandths.
        return match s.trim().trim_end_matches("seqs/s").trim().parse::<f64>() {
            Ok(r) if r >= 0.0 && r.is_finite() => Ok((r * 1000.0).round() as u64),
            _ => ctx.err(
                Some(v.span()),
                key,
                format!("`{s}` is not sequences per second such as \"21.0\""),
            ),
        };
    }
    if matches!(
        q,
        Quantity::CollectiveSpeedup
            | Quantity::BisectionScalingExponent
            | Quantity::TrainSpeedup
            | Quantity::DlrmSpeedup
            | Quantity::BisectionRatio
            | Quantity::AppSpeedup
            | Quantity::AppCmemGain
            | Quantity::AppPerfPerWattGain
            | Quantity::AppCmemPerfPerWattGain
            | Quantity::MlperfSpeedup
            | Quantity::MlperfPowerRatio
    ) {
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
    if matches!(
        q,
        Quantity::PeakFlops | Quantity::Fp32Flops | Quantity::TrainTflopsPerChip
    ) {
        return s.parse::<FlopRate>().map(|r| r.0).or_else(|e| {
            ctx.err(
                Some(v.span()),
                key,
                format!("{e}; expected a rate such as \"275 TFLOP/s\""),
            )
        });
    }
    if matches!(q, Quantity::PutLatency | Quantity::TofuBarrierLatency) {
        return s
            .parse::<podsim_units::SimDuration>()
            .map(|d| d.as_ps())
            .or_else(|e| {
                ctx.err(
                    Some(v.span()),
                    key,
                    format!("{e}; expected a time such as \"0.49 us\""),
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

/// Parse and validate a file of cases (naming no machine file).
pub fn parse_validation(file: &str, text: &str) -> Result<Vec<ValidationCase>, ConfigError> {
    parse_validation_with(file, text, &|_| None)
}

/// Parse and validate a file of cases whose `[case.machine]` and `[case.train]` may name the
/// machine files `machines` finds by path.
pub fn parse_validation_with(
    file: &str,
    text: &str,
    machines: MachineFiles<'_>,
) -> Result<Vec<ValidationCase>, ConfigError> {
    let raw: RawFile = toml::from_str(text).map_err(|e| from_toml(file, text, &e))?;
    let ctx = Ctx {
        file,
        text,
        machines: Some(machines),
    };
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
            if let (Some(e), false) = (&c.endpoint, q == Quantity::PutLatency) {
                return ctx.err(
                    Some(e.span()),
                    &key("endpoint"),
                    "only a put_latency case reads an endpoint setting; drop the key",
                );
            }
            if let (Some(a), false) = (&c.availability, q == Quantity::Goodput) {
                return ctx.err(
                    Some(a.span()),
                    &key("availability"),
                    "only a goodput case reads [case.availability]; drop it",
                );
            }
            let is_train = matches!(
                q,
                Quantity::TrainThroughput
                    | Quantity::TrainSpeedup
                    | Quantity::TrainMfu
                    | Quantity::TrainTflopsPerChip
            );
            if let (Some(t), false) = (&c.train, is_train) {
                return ctx.err(
                    Some(t.span()),
                    &key("train"),
                    "only a train_throughput, train_speedup, train_mfu or train_tflops_per_chip case reads [case.train]; drop it",
                );
            }
            if let (Some(t), false) = (&c.train_baseline, q == Quantity::TrainSpeedup) {
                return ctx.err(
                    Some(t.span()),
                    &key("train_baseline"),
                    "only a train_speedup case reads [case.train_baseline]; drop it",
                );
            }
            for (given, name) in [
                (c.dlrm.as_ref().map(|d| d.span()), "dlrm"),
                (c.dlrm_baseline.as_ref().map(|d| d.span()), "dlrm_baseline"),
            ] {
                if let (Some(sp), false) = (given, q == Quantity::DlrmSpeedup) {
                    return ctx.err(
                        Some(sp),
                        &key(name),
                        format!("only a dlrm_speedup case reads [case.{name}]; drop it"),
                    );
                }
            }
            if let (Some(t), false) = (&c.tofu_node, q == Quantity::TofuNodeResource) {
                return ctx.err(
                    Some(t.span()),
                    &key("tofu_node"),
                    "only a tofu_node_resource case reads [case.tofu_node]; drop it",
                );
            }
            let is_barrier = matches!(q, Quantity::TofuBarrier | Quantity::TofuBarrierLatency);
            if let (Some(t), false) = (&c.tofu_barrier, is_barrier) {
                return ctx.err(
                    Some(t.span()),
                    &key("tofu_barrier"),
                    "only a tofu_barrier or tofu_barrier_latency case reads [case.tofu_barrier]; drop it",
                );
            }
            let tofu_barrier = match &c.tofu_barrier {
                None => None,
                Some(t) => {
                    use podsim_tofu::barrier::Allocation;
                    use podsim_validation::{BarrierCase, BarrierMetric};
                    let r = t.get_ref();
                    let allocation = match r.allocation.as_deref() {
                        None => Allocation::Test,
                        Some(a) => match Allocation::parse(a) {
                            Some(x) => x,
                            None => {
                                return ctx.err(
                                    Some(t.span()),
                                    &key("tofu_barrier.allocation"),
                                    format!("`{a}` is not test or mpi"),
                                );
                            }
                        },
                    };
                    let names: Vec<&str> = BarrierMetric::ALL.iter().map(|(n, _)| *n).collect();
                    let metric = match (r.metric.as_deref(), q == Quantity::TofuBarrier) {
                        (Some(m), true) => match BarrierMetric::ALL.iter().find(|(n, _)| *n == m) {
                            Some((_, x)) => *x,
                            None => {
                                return ctx.err(
                                    Some(t.span()),
                                    &key("tofu_barrier.metric"),
                                    format!("`{m}` is not one of {}", names.join(", ")),
                                );
                            }
                        },
                        (None, true) => {
                            return ctx.err(
                                Some(t.span()),
                                &key("tofu_barrier.metric"),
                                format!("a tofu_barrier case needs a metric ({})", names.join(", ")),
                            );
                        }
                        (Some(_), false) => {
                            return ctx.err(
                                Some(t.span()),
                                &key("tofu_barrier.metric"),
                                "a tofu_barrier_latency case reads the serialized latency; drop the metric",
                            );
                        }
                        (None, false) => BarrierMetric::Stages,
                    };
                    Some(BarrierCase {
                        points: r.points,
                        allocation,
                        metric,
                    })
                }
            };
            let is_tt = q.is_tenstorrent();
            let tenstorrent = match (&c.tenstorrent, is_tt) {
                (Some(t), true) => Some(tt_case(&ctx, t, q, &key("tenstorrent"))?),
                (Some(t), false) => {
                    return ctx.err(
                        Some(t.span()),
                        &key("tenstorrent"),
                        "only a dram_bandwidth, dram_utilization, matmul_dram_bandwidth or tt_full_load_power case reads [case.tenstorrent]; drop it",
                    );
                }
                (None, true) => {
                    return ctx.err(
                        None,
                        &key("tenstorrent"),
                        "a dram_bandwidth, dram_utilization, matmul_dram_bandwidth or tt_full_load_power case needs [case.tenstorrent] with data_rate",
                    );
                }
                (None, false) => None,
            };
            let is_app = q.is_app();
            let app = match (&c.app, is_app) {
                (Some(a), true) => Some(app_case(&ctx, a, q, &key("app"))?),
                (Some(a), false) => {
                    return ctx.err(
                        Some(a.span()),
                        &key("app"),
                        "only an app_* case (app_speedup, app_cmem_gain, app_perf_per_watt_gain, app_cmem_perf_per_watt_gain, app_power, app_ocs_power_share) reads [case.app]; drop it",
                    );
                }
                (None, true) => {
                    return ctx.err(
                        Some(c.quantity.span()),
                        &key("app"),
                        "an app_* case needs [case.app] with app = \"CNN0\" (or another, or \"all\")",
                    );
                }
                (None, false) => None,
            };
            let mlperf = match (&c.mlperf, q.is_mlperf()) {
                (Some(m), true) => Some(mlperf_case(&ctx, m, q, &key("mlperf"))?),
                (Some(m), false) => {
                    return ctx.err(
                        Some(m.span()),
                        &key("mlperf"),
                        "only an mlperf_* case (mlperf_speedup, mlperf_power, mlperf_power_ratio) reads [case.mlperf]; drop it",
                    );
                }
                (None, true) => {
                    return ctx.err(
                        Some(c.quantity.span()),
                        &key("mlperf"),
                        "an mlperf_* case needs [case.mlperf] with benchmark = \"bert\" or \"resnet\" and chips",
                    );
                }
                (None, false) => None,
            };
            if q.is_mlperf() && c.machine.is_none() {
                return ctx.err(
                    Some(c.quantity.span()),
                    &key("machine"),
                    "an mlperf_* case runs its A100s on [case.machine] (file = \"examples/machines/dgx-a100.toml\", nodes)",
                );
            }
            let names: Vec<&str> = CaseClass::ALL.iter().map(|(n, _)| *n).collect();
            let class = match &c.class {
                None => {
                    return ctx.err(
                        None,
                        &key("class"),
                        format!(
                            "every case says how podsim's value is produced: class = {}",
                            names.join(" | ")
                        ),
                    );
                }
                Some(s) => match CaseClass::parse(s.get_ref()) {
                    Some(x) => x,
                    None => {
                        return ctx.err(
                            Some(s.span()),
                            &key("class"),
                            format!("`{}` is not one of {}", s.get_ref(), names.join(", ")),
                        );
                    }
                },
            };
            let calibrated_by = match (&c.calibrated_by, class) {
                (Some(b), CaseClass::Calibrated) if !b.get_ref().trim().is_empty() => {
                    Some(b.get_ref().trim().to_string())
                }
                (Some(b), CaseClass::Calibrated) => {
                    return ctx.err(
                        Some(b.span()),
                        &key("calibrated_by"),
                        "name the fitted or typed-in parameter and where it is defined",
                    );
                }
                (None, CaseClass::Calibrated) => {
                    return ctx.err(
                        c.class.as_ref().map(|s| s.span()),
                        &key("calibrated_by"),
                        "a calibrated case names its parameter: calibrated_by = \"...\"",
                    );
                }
                (Some(b), _) => {
                    return ctx.err(
                        Some(b.span()),
                        &key("calibrated_by"),
                        format!(
                            "only a calibrated case names a fitted parameter; this case is class {}: drop the key or change the class",
                            class.name()
                        ),
                    );
                }
                (None, _) => None,
            };
            let tolerance_reason = c
                .tolerance_reason
                .as_ref()
                .map(|r| r.get_ref().trim().to_string())
                .filter(|r| !r.is_empty());
            let (packets, tofu_frame) = match &c.packets {
                None => (Packetization::NONE, None),
                Some(p) => packets(&ctx, p, &key)?,
            };
            let mut case = ValidationCase {
                mlperf,
                class,
                calibrated_by,
                tolerance_reason,
                app,
                tenstorrent,
                tofu_barrier,
                tofu_node: match &c.tofu_node {
                    None => None,
                    Some(t) => {
                        use podsim_tofu::node::Resource;
                        use podsim_topology::TofuGeneration;
                        let r = t.get_ref();
                        let generation = match r.generation.as_str() {
                            "tofu" => TofuGeneration::Tofu,
                            "tofu2" => TofuGeneration::Tofu2,
                            "tofud" => TofuGeneration::TofuD,
                            other => {
                                return ctx.err(
                                    Some(t.span()),
                                    &key("tofu_node.generation"),
                                    format!("`{other}` is not tofu, tofu2 or tofud"),
                                );
                            }
                        };
                        let names: Vec<&str> = Resource::ALL.iter().map(|(n, _)| *n).collect();
                        let resource = Resource::parse(&r.resource).map_or_else(
                            || {
                                ctx.err(
                                    Some(t.span()),
                                    &key("tofu_node.resource"),
                                    format!(
                                        "`{}` is not a resource ({})",
                                        r.resource,
                                        names.join(", ")
                                    ),
                                )
                            },
                            Ok,
                        )?;
                        Some((generation, resource))
                    }
                },
                dlrm: match &c.dlrm {
                    Some(d) => Some(dlrm_case(&ctx, d, &key("dlrm"))?),
                    None => None,
                },
                dlrm_baseline: match &c.dlrm_baseline {
                    Some(d) => Some(dlrm_case(&ctx, d, &key("dlrm_baseline"))?),
                    None => None,
                },
                train: match &c.train {
                    Some(t) => Some(train_case(&ctx, t, &key("train"), machines)?),
                    None => None,
                },
                train_baseline: match &c.train_baseline {
                    Some(t) => Some(train_case(&ctx, t, &key("train_baseline"), machines)?),
                    None => None,
                },
                availability: c.availability.as_ref().map(|a| {
                    let a = a.get_ref();
                    podsim_tpu::availability::Availability {
                        slice_chips: a.slice_chips,
                        host_availability: a.host_availability,
                        static_wiring: a.static_wiring,
                    }
                }),
                endpoint: c.endpoint.as_ref().map(|e| e.get_ref().clone()),
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
                system: match (&c.system, &c.machine) {
                    (Some(_), Some(m)) => {
                        return ctx.err(
                            Some(m.span()),
                            &key("machine"),
                            "a case runs on [case.system] or [case.machine], not both",
                        );
                    }
                    (None, Some(m)) => Some(machine_ref(
                        &ctx,
                        Some(m.span()),
                        &key("machine.file"),
                        &m.get_ref().file,
                        m.get_ref().nodes,
                        machines,
                    )?),
                    (Some(s), None) => Some(s.validate(&ctx, &key("system"))?),
                    (None, None) if q.is_compute() => None,
                    (None, None) => {
                        return ctx.err(
                            Some(c.quantity.span()),
                            &key("system"),
                            "this quantity is measured on a network: the case needs [case.system] (or [case.machine])",
                        );
                    }
                },
                compute: c.compute.as_ref().map(|c| CaseCompute {
                    chip: c.chip.clone(),
                    size: c.size,
                    k: c.k,
                }),
                baseline: match &c.baseline {
                    Some(b) => Some(b.validate(&ctx, &key("baseline"))?),
                    None => None,
                },
                tofu_frame,
                packets,
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
            if case.tolerance > 0 && case.tolerance_reason.is_none() {
                let wide = case.tolerance as f64 > 0.15 * case.published as f64;
                return ctx.err(
                    c.tolerance.as_ref().map(|t| t.span()),
                    &key("tolerance_reason"),
                    if wide {
                        "a tolerance above 15% of the published value needs its reason: tolerance_reason = \"...\" (the model's stated assumptions, a figure read off a plot, the words of the source turned into a bound)"
                    } else {
                        "a non-zero tolerance needs its reason: tolerance_reason = \"...\" (the published figure's precision, the model's stated assumptions, a figure read off a plot)"
                    },
                );
            }
            // The case's packet overheads apply to its collective too.
            if let Some(c) = &mut case.collective {
                c.setup.packets = case.packets;
            }
            Ok(case)
        })
        .collect()
}

/// The validation case files (name and text): those of `dir` (every `.toml` in it), or the
/// built-in ones, sorted; an error naming the directory or the file that cannot be read.
pub fn validation_files(dir: Option<&std::path::Path>) -> Result<Vec<(String, String)>, String> {
    let Some(d) = dir else {
        let mut files: Vec<(String, String)> = podsim_validation::CASE_FILES
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect();
        files.sort();
        return Ok(files);
    };
    let entries =
        std::fs::read_dir(d).map_err(|e| format!("{}: cannot read directory: {e}", d.display()))?;
    let mut paths: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(format!(
            "{}: no validation cases (no .toml file) in this directory",
            d.display()
        ));
    }
    paths
        .into_iter()
        .map(|p| {
            let text = crate::read_input(&p).map_err(|e| e.to_string())?;
            Ok((p.display().to_string(), text))
        })
        .collect()
}
