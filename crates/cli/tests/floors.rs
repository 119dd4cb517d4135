//! The floors of the house (ARCHITECTURE.md), read from `cargo metadata`: every workspace
//! crate stands on a floor, and each of its dependencies inside the workspace stands on a lower
//! one. A dependency that points up or sideways (one machine crate on another, the models on
//! the floor that builds them) fails here with the two crates named; so does a crate no floor
//! lists.

use std::collections::BTreeMap;
use std::process::Command;

/// Each crate's floor, lowest first. A new crate is placed here when it is added.
const FLOORS: &[(&str, u32)] = &[
    // Quantities and bits.
    ("podsim-units", 0),
    ("podsim-numerics", 0),
    ("podsim-ranks", 0),
    ("podsim-energy", 0),
    // Graphs, the event engine, chips.
    ("podsim-topology", 1),
    ("podsim-engine", 1),
    ("podsim-compute", 1),
    // Routes.
    ("podsim-routing", 2),
    // The network model interface and the flow and analytic models.
    ("podsim-net", 3),
    // The packet level, collectives on any model.
    ("podsim-noc", 4),
    ("podsim-collective", 4),
    // The machine floor: machines built at a fidelity, workloads, scenarios.
    ("podsim-system", 5),
    // The formatting of results (tables, JSON, CSV, SVG, traces), the system's included.
    ("podsim-report", 6),
    // Training steps, on any machine the floor builds.
    ("podsim-train", 7),
    // One crate per seed machine: none stands on another.
    ("podsim-tofu", 8),
    ("podsim-tenstorrent", 8),
    ("podsim-dojo", 8),
    ("podsim-tpu", 8),
    // Above every machine: the validation cases, other tools' files.
    ("podsim-validation", 9),
    ("podsim-import", 9),
    // podsim's own file formats.
    ("podsim-config", 10),
    // The binary.
    ("podsim", 11),
];

#[test]
fn every_dependency_points_down() {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let floor: BTreeMap<&str, u32> = FLOORS.iter().copied().collect();
    let packages = meta["packages"].as_array().expect("packages");
    let names: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut problems = Vec::new();
    for p in packages {
        let name = p["name"].as_str().unwrap_or("?");
        let Some(&own) = floor.get(name) else {
            problems.push(format!(
                "{name} stands on no floor: place it in FLOORS (crates/cli/tests/floors.rs) and ARCHITECTURE.md"
            ));
            continue;
        };
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let dep = d["name"].as_str().unwrap_or("?");
            // Dev-dependencies (tests, benches) may reach anywhere.
            if !d["kind"].is_null() || !names.contains(&dep) {
                continue;
            }
            match floor.get(dep) {
                Some(&f) if f < own => {}
                Some(&f) => problems.push(format!(
                    "{name} (floor {own}) depends on {dep} (floor {f}): a dependency points {}",
                    if f == own { "sideways" } else { "up" }
                )),
                None => problems.push(format!("{name} depends on {dep}, which stands on no floor")),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Every floor listed is a crate of the workspace (a removed crate leaves the list too).
    for (name, _) in FLOORS {
        assert!(
            names.contains(name),
            "FLOORS lists {name}, which the workspace no longer has"
        );
    }
}
