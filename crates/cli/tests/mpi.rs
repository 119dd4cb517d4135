//! Runs over MPI ranks (issues 19 and 38): built with `--features mpi` and started by
//! `mpirun -n 2`, a collective sweep, a noc sweep, `validate` and `train --search` write the
//! same file, byte for byte, and print the same output as one process. Needs OpenMPI's `mpirun` (CI installs it where it can):
//! `cargo test --release -p podsim --features mpi --test mpi`.
#![cfg(feature = "mpi")]

use std::path::Path;
use std::process::Command;

/// Run podsim in `dir`, under `mpirun -n ranks` when ranks > 1; its stdout.
fn podsim_in(dir: &Path, ranks: usize, args: &[&str]) -> Vec<u8> {
    let exe = env!("CARGO_BIN_EXE_podsim");
    let o = if ranks > 1 {
        Command::new("mpirun")
            .args(["--allow-run-as-root", "--oversubscribe", "-n"])
            .arg(ranks.to_string())
            .arg(exe)
            .args(args)
            .current_dir(dir)
            .output()
            .expect("mpirun (OpenMPI) is installed")
    } else {
        Command::new(exe)
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap()
    };
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

#[test]
fn two_ranks_write_the_file_one_process_writes() {
    let base = std::env::temp_dir().join(format!("podsim-mpi-{}", std::process::id()));
    // Each run's arguments and the file it writes. `validate` spreads its cases over the ranks
    // (the whole built-in table: about 10 CPU-s in release), `train --search` its flow-model
    // survivors (one per rank at a time) and keeps their layer times in its CSV.
    let runs: [(&[&str], &str); 4] = [
        (
            &[
                "collective",
                "all-reduce",
                "--topology",
                "torus:4x4",
                "--sweep",
                "1 MiB,2 MiB,4 MiB,8 MiB,16 MiB",
                "--csv",
                "sweep.csv",
            ],
            "sweep.csv",
        ),
        (
            &[
                "noc",
                "--topology",
                "mesh:4x4",
                "--sweep",
                "0.1:0.9:0.1",
                "--cycles",
                "3000",
                "--csv",
                "sweep.csv",
                "--svg",
                "sweep.svg",
            ],
            "sweep.csv",
        ),
        (&["validate", "--csv", "cases.csv"], "cases.csv"),
        (
            &[
                "train",
                "--model",
                "gpt3-1.3b",
                "--search",
                "--chips",
                "64",
                "--csv",
                "flow.csv",
            ],
            "flow.csv",
        ),
    ];
    for (args, written) in runs {
        let mut seen = Vec::new();
        for ranks in [1, 2] {
            let dir = base.join(format!("{}-{ranks}", args[0]));
            std::fs::create_dir_all(&dir).unwrap();
            let out = podsim_in(&dir, ranks, args);
            let file = std::fs::read(dir.join(written)).unwrap();
            seen.push((out, file));
        }
        assert!(!seen[0].1.is_empty());
        assert!(!seen[0].0.is_empty());
        assert_eq!(seen[0].1, seen[1].1, "{}: the file differs", args[0]);
        assert_eq!(seen[0].0, seen[1].0, "{}: the output differs", args[0]);
    }
    std::fs::remove_dir_all(&base).ok();
}
