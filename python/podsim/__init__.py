"""podsim from Python.

Each function runs the same model as the `podsim` command of the same name and returns its
result as a dict (the keys of that command's `--json`), its arguments in the order of the
command's. Errors raise ValueError with the message the command would print; a file that
cannot be read raises the OSError `open` would (FileNotFoundError for a missing one).

    >>> import podsim
    >>> podsim.collective("all-reduce", "torus:4x4x4", "64 MiB")["time_s"]
"""

import json as _json

from . import _podsim

__all__ = ["machine", "collective", "noc", "gemm", "workload", "dram"]


def machine(topology):
    """A topology's metrics (as `podsim topo SPEC --json`): nodes, links, diameter, bisection..."""
    return _json.loads(_podsim.machine(topology))


def collective(kind, topology, bytes, algorithm=None, model="flow"):
    """A collective's time and bandwidths (as `podsim collective KIND --topology T --bytes B --json`)."""
    return _json.loads(_podsim.collective(kind, topology, bytes, algorithm, model))


def noc(topology, rate, traffic="uniform", cycles=10000, seed=1):
    """One load on the packet level (as `podsim noc --topology T --rate R --json`)."""
    return _json.loads(_podsim.noc(topology, float(rate), traffic, int(cycles), int(seed)))


def gemm(array, dataflow, m, n, k):
    """A GEMM tiled onto a systolic array (as `podsim gemm --array A --dataflow D --m M --n N
    --k K --json`, the arguments in that order), podsim's RTL-exact cycles."""
    if not isinstance(array, str) or not isinstance(dataflow, str):
        raise TypeError(
            "gemm(array, dataflow, m, n, k), as `podsim gemm --array A --dataflow D --m M --n N "
            "--k K`: array is ROWSxCOLS such as \"32x32\", dataflow os, ws or is; got "
            f"array={array!r}, dataflow={dataflow!r}"
        )
    return _json.loads(_podsim.gemm(array, dataflow, int(m), int(n), int(k)))


def workload(path, model=None, energy=False):
    """A workload file run on its machine (as `podsim workload FILE --json`; with energy=True,
    `--energy`'s keys too: energy_j, average_power_w, energy_breakdown_j, perf_per_watt); a
    missing file raises FileNotFoundError."""
    return _json.loads(_podsim.workload(str(path), model, bool(energy)))


def dram(chip="wormhole", placement="next-to-bank", data_rate=None, energy=False):
    """The Tenstorrent DRAM study (as `podsim dram --json`), its u-benchmark by default; with
    energy=True, `--energy`'s keys too."""
    return _json.loads(_podsim.dram(chip, placement, data_rate, bool(energy)))
