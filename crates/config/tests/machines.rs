//! The machine files built into podsim are the files of `examples/machines/`.

/// The machine files built into the binary are those of `examples/machines/`.
#[test]
fn built_in_machines_are_the_directory() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/machines");
    let mut on_disk: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| format!("examples/machines/{}", e.file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".toml"))
        .collect();
    on_disk.sort();
    let mut built: Vec<String> = podsim_config::MACHINES
        .iter()
        .map(|(p, _)| p.to_string())
        .collect();
    built.sort();
    assert_eq!(built, on_disk);
}
