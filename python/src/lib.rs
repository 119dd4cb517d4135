//! podsim's Python extension module (`podsim._podsim`): each function runs the model the
//! `podsim` command of the same name runs and returns its result as a JSON string, which the
//! `podsim` package turns into a dict. The result is the command's own typed struct,
//! serialized as its `--json` is (`results.rs`), so the dict has the command's keys. Bad input
//! raises ValueError with the message the command would print; a file that cannot be read
//! raises the OSError Python's own `open` would (FileNotFoundError for a missing one).

use pyo3::exceptions::{
    PyFileNotFoundError, PyIsADirectoryError, PyOSError, PyPermissionError, PyValueError,
};
use pyo3::prelude::*;

mod results;

/// A result as the JSON text of its command's `--json`, or ValueError with the message.
fn json(r: results::Outcome) -> PyResult<String> {
    r.map(|v| v.to_string()).map_err(PyValueError::new_err)
}

/// A topology's metrics: the keys of `podsim topo SPEC --json`.
#[pyfunction]
fn machine(topology: &str) -> PyResult<String> {
    json(results::machine(topology))
}

/// A collective on a topology: the keys of `podsim collective --json` (time, bandwidths,
/// bound and whether it was applied, whether the result was checked and why not, the timing).
#[pyfunction]
#[pyo3(signature = (kind, topology, bytes, algorithm=None, model="flow"))]
fn collective(
    kind: &str,
    topology: &str,
    bytes: &str,
    algorithm: Option<&str>,
    model: &str,
) -> PyResult<String> {
    json(results::collective(kind, topology, bytes, algorithm, model))
}

/// One load on the packet level, podsim's default router: the keys of `podsim noc --json`.
#[pyfunction]
fn noc(topology: &str, rate: f64, traffic: &str, cycles: u64, seed: u64) -> PyResult<String> {
    json(results::noc(topology, rate, traffic, cycles, seed))
}

/// A GEMM tiled onto a systolic array in podsim's RTL-exact convention (int8 in, int32 out,
/// 64 KiB scratchpads, unlimited DRAM): the keys of `podsim gemm --json`. The arguments come
/// in the command's order: `podsim gemm --array A --dataflow D --m M --n N --k K`.
#[pyfunction]
fn gemm(array: &str, dataflow: &str, m: u64, n: u64, k: u64) -> PyResult<String> {
    json(results::gemm(array, dataflow, m, n, k))
}

/// A workload file run on its machine: the keys of `podsim workload FILE --json` (step time,
/// compute, communication, what overlap did not hide, the critical path, each task's span);
/// with `energy`, those of `--energy` too (energy_j, average_power_w, energy_breakdown_j,
/// perf_per_watt).
#[pyfunction]
#[pyo3(signature = (path, model=None, energy=false))]
fn workload(path: &str, model: Option<&str>, energy: bool) -> PyResult<String> {
    // A file that is missing or cannot be read is an OSError, as `open(path)` raises, with
    // the errno, the reason and the file name; a directory is an IsADirectoryError.
    let opened = std::fs::File::open(path).and_then(|f| f.metadata());
    if let Ok(m) = &opened
        && m.is_dir()
    {
        return Err(PyIsADirectoryError::new_err((
            21, // EISDIR
            "Is a directory",
            path.to_string(),
        )));
    }
    if let Err(e) = opened {
        let errno = e.raw_os_error().unwrap_or(0);
        let reason = e.to_string();
        let reason = reason
            .split(" (os error")
            .next()
            .unwrap_or(&reason)
            .to_string();
        let args = (errno, reason, path.to_string());
        return Err(match e.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(args),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(args),
            _ => PyOSError::new_err(args),
        });
    }
    json(results::workload(path, model, energy))
}

/// The Tenstorrent DRAM study, its u-benchmark setting with the placement and data rate
/// given: the keys of `podsim dram --json`; with `energy`, those of `--energy` too.
#[pyfunction]
#[pyo3(signature = (chip, placement, data_rate=None, energy=false))]
fn dram(chip: &str, placement: &str, data_rate: Option<f64>, energy: bool) -> PyResult<String> {
    json(results::dram(chip, placement, data_rate, energy))
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
