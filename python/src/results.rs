//! What each function of podsim's Python module computes, as the JSON value the `podsim`
//! command of the same name prints with `--json`: each builds the command's typed result
//! (`TopoOutput`, `CollectiveOutput`, `NocOutput`, `GemmOutput`, `WorkloadOutput`,
//! `DramOutput`) and serializes it through `podsim_report::to_json`, as the command does, so
//! the dict's keys are the command's. Pure Rust, no Python: `lib.rs` hands these to Python,
//! and the main workspace's `crates/cli/tests/python_keys.rs` compiles this file to compare
//! its keys with the command's. An error is the message the command would print.

use serde_json::Value;

/// A result, or the message of the ValueError Python raises.
pub type Outcome = Result<Value, String>;

fn network(topology: &str) -> Result<podsim_topology::Network, String> {
    let spec =
        podsim_config::system_from_cli(topology, None, None, None).map_err(|e| e.to_string())?;
    spec.build().map_err(|e| format!("`{}`: {}", e.key, e.why))
}

/// A topology's metrics: `podsim topo SPEC --json`.
pub fn machine(topology: &str) -> Outcome {
    let net = network(topology)?;
    let m = net.metrics();
    Ok(podsim_report::to_json(&podsim_report::TopoOutput::new(
        &net, &m,
    )))
}

/// A collective on a topology: `podsim collective KIND --topology T --bytes B [--algorithm A]
/// --model M --json`.
pub fn collective(
    kind: &str,
    topology: &str,
    bytes: &str,
    algorithm: Option<&str>,
    model: &str,
) -> Outcome {
    let net = network(topology)?;
    let (kind, algorithm, model) =
        podsim_collective::parse_names(kind, algorithm, model).map_err(|e| e.to_string())?;
    let bytes = bytes
        .parse::<podsim_units::Bytes>()
        .map_err(|e| format!("bytes: {e}; expected a size such as \"64 MiB\""))?
        .0;
    let (models, timing) = podsim_system::Models::for_net(&net, None).map_err(|e| e.to_string())?;
    let setup = podsim_collective::Setup {
        kind,
        algorithm,
        bytes,
        model,
        packets: podsim_net::Packetization::NONE,
        chunk: 0,
        ecmp: true,
        memory_limit: u64::MAX,
    };
    let m = podsim_system::measure_with(&net, &setup, &models).map_err(|e| e.to_string())?;
    let timing = timing.output(timing.latency_source(&net));
    Ok(podsim_report::to_json(
        &podsim_collective::CollectiveOutput::new(kind, algorithm, model, topology, &m)
            .with_timing(timing),
    ))
}

/// One load on the packet level, podsim's default router: `podsim noc --topology T --rate R
/// --traffic P --cycles C --seed S --json`.
pub fn noc(topology: &str, rate: f64, traffic: &str, cycles: u64, seed: u64) -> Outcome {
    let net = network(topology)?;
    let pattern = podsim_noc::Pattern::parse(traffic).map_err(|e| e.why)?;
    podsim_noc::check_pattern(&pattern, &net).map_err(|e| e.why)?;
    let spec = podsim_noc::RunSpec {
        seed,
        cycles,
        ..podsim_noc::RunSpec::new(pattern, rate)
    };
    let r = podsim_noc::run(
        &net,
        podsim_noc::NocRouting::default_for(&net),
        &podsim_noc::RouterConfig::default(),
        &spec,
    )
    .map_err(|e| e.to_string())?;
    Ok(podsim_report::to_json(&podsim_report::NocOutput::new(
        &r, &net, false,
    )))
}

/// A GEMM tiled onto a systolic array in podsim's RTL-exact convention (int8 in, int32 out,
/// 64 KiB scratchpads, unlimited DRAM): `podsim gemm --array A --dataflow D --m M --n N --k K
/// --json`.
pub fn gemm(array: &str, dataflow: &str, m: u64, n: u64, k: u64) -> Outcome {
    use podsim_compute::{Convention, Dataflow, GemmOutput, GemmSpec, MemorySpec};
    let shape = || format!("array `{array}`: expected ROWSxCOLS such as 32x32");
    let (r, c) = array.split_once(['x', 'X']).ok_or_else(shape)?;
    let rows = r.trim().parse::<u64>().map_err(|_| shape())?;
    let cols = c.trim().parse::<u64>().map_err(|_| shape())?;
    let dataflow = Dataflow::parse(dataflow)
        .ok_or_else(|| format!("dataflow `{dataflow}`: expected os, ws or is"))?;
    let spec = GemmSpec {
        rows,
        cols,
        dataflow,
        m,
        n,
        k,
        convention: Convention::Rtl,
        memory: MemorySpec::DEFAULT,
    };
    let g = podsim_compute::gemm(&spec).map_err(|e| e.to_string())?;
    Ok(podsim_report::to_json(&GemmOutput::new(&spec, g)))
}

/// A workload file run on its machine: `podsim workload FILE [--model M] [--energy] --json`.
pub fn workload(path: &str, model: Option<&str>, energy: bool) -> Outcome {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let spec = podsim_config::parse_workload(path, &text).map_err(|e| e.to_string())?;
    let model = match model {
        None => spec.model,
        Some(m) => {
            podsim_collective::parse_names("barrier", None, m)
                .map_err(|e| e.to_string())?
                .2
        }
    };
    // As the command: the energy needs the flow model's link loads and the chip's figures,
    // both checked before the run.
    let power = if energy {
        if model != podsim_collective::ModelKind::Flow {
            return Err(format!(
                "energy: the energy of the links comes from the flow model's link loads; the {} model does not report them: give model=\"flow\"",
                model.name()
            ));
        }
        Some(
            podsim_system::energy::ChipPower::of_chip(Some(&spec.chip.name))
                .map_err(|e| format!("energy: {e}"))?,
        )
    } else {
        None
    };
    let (net, r) =
        podsim_system::scenario::run_workload(&spec, model).map_err(|e| e.to_string())?;
    let mut out = podsim_system::workload::WorkloadOutput::new(&spec, &r, model, net.endpoints());
    if let Some(p) = &power {
        out = out.with_energy(&r, p)?;
    }
    Ok(podsim_report::to_json(&out))
}

/// The Tenstorrent DRAM study, its u-benchmark setting with the chip, placement and data rate
/// given: `podsim dram --chip C --placement P [--data-rate R] [--energy] --json`.
pub fn dram(chip: &str, placement: &str, data_rate: Option<f64>, energy: bool) -> Outcome {
    use podsim_tenstorrent::placement::Placement;
    use podsim_tenstorrent::study::{self as tt_study, DramOutput, Study};
    let chip = match chip {
        "wormhole" => podsim_topology::TtChip::Wormhole,
        "grayskull" => podsim_topology::TtChip::Grayskull,
        other => return Err(format!("chip `{other}`: expected wormhole or grayskull")),
    };
    let placement = Placement::parse(placement).ok_or_else(|| {
        format!("placement `{placement}`: expected top-rows, columns, next-to-bank or auto")
    })?;
    let rate = data_rate.unwrap_or_else(|| tt_study::default_data_rate(chip));
    if !(rate > 0.0 && rate <= 1e11) {
        return Err("data_rate: expected transfers per second, e.g. 12e9".into());
    }
    let s = Study {
        chip,
        placement,
        data_rate: rate,
        ..Study::u_benchmark(rate)
    };
    let r = tt_study::run(&s)?;
    let out = DramOutput::new(&s, &r);
    if !energy {
        return Ok(podsim_report::to_json(&out));
    }
    let e = podsim_tenstorrent::energy::dram_energy(&s, &r).map_err(|e| format!("energy: {e}"))?;
    Ok(podsim_report::to_json_with(&out, Some(&e)))
}
