//! The machine files built into podsim, which scenarios and validation cases name by path,
//! and finding a machine file by the path a file names.

use std::path::Path;

/// The machine files built into podsim (`examples/machines/`), which validation cases
/// name by path (a test checks the directory and this list agree).
pub const MACHINES: &[(&str, &str)] = &[
    (
        "examples/machines/dgx-a100.toml",
        include_str!("../../../examples/machines/dgx-a100.toml"),
    ),
    (
        "examples/machines/dgx-h100.toml",
        include_str!("../../../examples/machines/dgx-h100.toml"),
    ),
    (
        "examples/machines/dojo-tile.toml",
        include_str!("../../../examples/machines/dojo-tile.toml"),
    ),
    (
        "examples/machines/ece327-systolic.toml",
        include_str!("../../../examples/machines/ece327-systolic.toml"),
    ),
    (
        "examples/machines/fugaku.toml",
        include_str!("../../../examples/machines/fugaku.toml"),
    ),
    (
        "examples/machines/tpu-v4.toml",
        include_str!("../../../examples/machines/tpu-v4.toml"),
    ),
    (
        "examples/machines/wormhole-n150.toml",
        include_str!("../../../examples/machines/wormhole-n150.toml"),
    ),
];

/// A machine file a scenario in `dir` names: the file at that path from `dir`, else a
/// built-in one (or a file) by that path.
pub fn machine_file_near(dir: &Path, path: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(path))
        .ok()
        .or_else(|| machine_file(path))
}

/// A machine file by path: the built-in copy, else the file on disk.
pub fn machine_file(path: &str) -> Option<String> {
    MACHINES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, t)| (*t).to_string())
        .or_else(|| std::fs::read_to_string(path).ok())
}
