//! podsim's Python extension module (`podsim._podsim`): each function runs the model the
//! `podsim` command of the same name runs and returns its result as a JSON string, which the
//! `podsim` package turns into a dict. Bad input raises ValueError with the message the
//! command would print.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::json;

fn bad(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn network(topology: &str) -> PyResult<podsim_topology::Network> {
    let spec = podsim_config::system_from_cli(topology, None, None, None).map_err(bad)?;
    spec.build()
        .map_err(|e| bad(format!("`{}`: {}", e.key, e.why)))
}

/// A topology's metrics: the keys of `podsim topo SPEC --json`.
#[pyfunction]
fn machine(topology: &str) -> PyResult<String> {
    let net = network(topology)?;
    let m = net.metrics();
    Ok(podsim_report::metrics_json(&net, &m).to_string())
}

/// A collective on a topology: time, bandwidths, bound, whether its result was checked.
#[pyfunction]
#[pyo3(signature = (kind, topology, bytes, algorithm=None, model="flow"))]
fn collective(
    kind: &str,
    topology: &str,
    bytes: &str,
    algorithm: Option<&str>,
    model: &str,
) -> PyResult<String> {
    let net = network(topology)?;
    let (kind, algorithm, model) =
        podsim_collective::parse_names(kind, algorithm, model).map_err(bad)?;
    let bytes = bytes
        .parse::<podsim_units::Bytes>()
        .map_err(|e| bad(format!("bytes: {e}; expected a size such as \"64 MiB\"")))?
        .0;
    let (models, _) = podsim_system::Models::for_net(&net, None).map_err(bad)?;
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
    let m = podsim_system::measure_with(&net, &setup, &models).map_err(bad)?;
    Ok(json!({
        "kind": kind.name(),
        "algorithm": algorithm.name(),
        "model": model.name(),
        "topology": topology,
        "ranks": m.ranks,
        "bytes": m.bytes,
        "time_s": m.time_s,
        "algorithm_bandwidth_bytes_per_s": m.algorithm_bandwidth_bytes_per_s,
        "bus_bandwidth_bytes_per_s": m.bus_bandwidth_bytes_per_s,
        "bytes_on_wire": m.bytes_on_wire,
        "max_link_utilization": m.max_link_utilization,
        "lower_bound_time_s": m.lower_bound_time_s,
        "verified": m.verified,
        "transfers": m.transfers,
    })
    .to_string())
}

/// One load on the packet level, podsim's default router.
#[pyfunction]
fn noc(topology: &str, rate: f64, traffic: &str, cycles: u64, seed: u64) -> PyResult<String> {
    let net = network(topology)?;
    let pattern = podsim_noc::Pattern::parse(traffic).map_err(|e| bad(e.why))?;
    podsim_noc::check_pattern(&pattern, &net).map_err(|e| bad(e.why))?;
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
    .map_err(bad)?;
    Ok(podsim_report::noc_result_json(&r, &net, false).to_string())
}

/// A GEMM tiled onto a systolic array in podsim's RTL-exact convention (int8 in, int32 out,
/// 64 KiB scratchpads, unlimited DRAM).
#[pyfunction]
fn gemm(m: u64, n: u64, k: u64, array: &str, dataflow: &str) -> PyResult<String> {
    use podsim_compute::{Convention, Dataflow, GemmSpec, MemorySpec};
    let shape = || bad(format!("array `{array}`: expected ROWSxCOLS such as 32x32"));
    let (r, c) = array.split_once(['x', 'X']).ok_or_else(shape)?;
    let rows = r.trim().parse::<u64>().map_err(|_| shape())?;
    let cols = c.trim().parse::<u64>().map_err(|_| shape())?;
    let dataflow = Dataflow::parse(dataflow)
        .ok_or_else(|| bad(format!("dataflow `{dataflow}`: expected os, ws or is")))?;
    let sram = 64 << 10;
    let spec = GemmSpec {
        rows,
        cols,
        dataflow,
        m,
        n,
        k,
        convention: Convention::Rtl,
        memory: MemorySpec {
            input_bytes: 1,
            output_bytes: 4,
            sram_a: sram,
            sram_b: sram,
            sram_d: sram,
            dram_bytes_per_cycle: None,
        },
    };
    let g = podsim_compute::gemm(&spec).map_err(bad)?;
    Ok(json!({
        "array": format!("{rows}x{cols}"), "dataflow": dataflow.to_string(),
        "m": m, "n": n, "k": k, "cycles": g.cycles, "compute_cycles": g.compute_cycles,
        "folds": g.folds, "macs": g.macs, "utilization": g.utilization,
        "mapping_efficiency": g.mapping_efficiency, "sram_reads": g.sram_reads,
        "sram_writes": g.sram_writes, "dram_bytes": g.dram_bytes,
    })
    .to_string())
}

/// A workload file run on its machine: step time, compute, communication, what overlap did
/// not hide, the critical path and each task's span.
#[pyfunction]
#[pyo3(signature = (path, model=None))]
fn workload(path: &str, model: Option<&str>) -> PyResult<String> {
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("{path}: {e}")))?;
    let spec = podsim_config::parse_workload(path, &text).map_err(bad)?;
    let model = match model {
        None => spec.model,
        Some(m) => {
            podsim_collective::parse_names("barrier", None, m)
                .map_err(bad)?
                .2
        }
    };
    let (_, r) = podsim_system::scenario::run_workload(&spec, model).map_err(bad)?;
    Ok(json!({
        "file": path,
        "model": model.name(),
        "time_s": r.time_s,
        "compute_busy_s": r.compute_busy_s,
        "communication_time_s": r.communication_time_s,
        "exposed_communication_s": r.exposed_communication_s,
        "critical_path": r.critical_path,
        "tasks": r.tasks.iter().map(|t| json!({
            "name": t.name, "start_s": t.start_s, "end_s": t.end_s,
        })).collect::<Vec<_>>(),
    })
    .to_string())
}

/// The Tenstorrent DRAM study, its u-benchmark setting with the placement and data rate
/// given: bandwidth, utilisation, per bank, overlapping routes, reader coordinates.
#[pyfunction]
#[pyo3(signature = (chip, placement, data_rate=None))]
fn dram(chip: &str, placement: &str, data_rate: Option<f64>) -> PyResult<String> {
    use podsim_tenstorrent::placement::Placement;
    use podsim_tenstorrent::study::{self as tt_study, Study};
    let chip = match chip {
        "wormhole" => podsim_topology::TtChip::Wormhole,
        "grayskull" => podsim_topology::TtChip::Grayskull,
        other => {
            return Err(bad(format!(
                "chip `{other}`: expected wormhole or grayskull"
            )));
        }
    };
    let placement = Placement::parse(placement).ok_or_else(|| {
        bad(format!(
            "placement `{placement}`: expected top-rows, columns, next-to-bank or auto"
        ))
    })?;
    let rate = data_rate.unwrap_or_else(|| tt_study::default_data_rate(chip));
    if !(rate > 0.0 && rate <= 1e11) {
        return Err(bad("data_rate: expected transfers per second, e.g. 12e9"));
    }
    let s = Study {
        chip,
        placement,
        data_rate: rate,
        ..Study::u_benchmark(rate)
    };
    let r = tt_study::run(&s).map_err(bad)?;
    Ok(json!({
        "bandwidth_bytes_per_s": r.run.bandwidth_bytes_per_s,
        "utilization": r.utilization,
        "placement_chosen": r.placement.name(),
        "spec_bytes_per_s": r.spec_bytes_per_s,
        "per_bank_bytes_per_s": r.run.per_bank_bytes_per_s,
        "per_reader_bytes_per_s": r.run.per_reader_bytes_per_s,
        "overlapping_routes": r.overlaps.iter().map(|&(a, b, (f, t))| json!({
            "banks": [a, b], "link": [[f.0, f.1], [t.0, t.1]],
        })).collect::<Vec<_>>(),
        "max_link_utilization": r.run.max_link_utilization,
        "reader_coordinates": r.readers.iter().map(|t| [t.0, t.1]).collect::<Vec<_>>(),
    })
    .to_string())
}

/// The module.
#[pymodule]
fn _podsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(machine, m)?)?;
    m.add_function(wrap_pyfunction!(collective, m)?)?;
    m.add_function(wrap_pyfunction!(noc, m)?)?;
    m.add_function(wrap_pyfunction!(gemm, m)?)?;
    m.add_function(wrap_pyfunction!(workload, m)?)?;
    m.add_function(wrap_pyfunction!(dram, m)?)?;
    Ok(())
}
