//! The MLPerf steps of `podsim_tpu::mlperf` on the DGX A100 machine file.

use podsim_collective::ModelKind;
use podsim_tpu::mlperf::{Benchmark, a100, run_a100_with};

fn dgx(nodes: u32) -> podsim_system::SystemSpec {
    let path = "examples/machines/dgx-a100.toml";
    let text = podsim_config::machine_file(path).expect("the built-in machine file");
    podsim_config::machine_system(path, &text, Some(nodes)).expect("it parses")
}

#[test]
fn the_analytic_a100_step_is_the_flow_models_on_a_non_blocking_fabric() {
    // A second fidelity: the rail fat tree is non-blocking and each rank of the hierarchical
    // all-reduce sends to one neighbour at a time, so every transfer runs at its route's
    // slowest link under either model; the step times agree (within rounding of the two
    // models' picosecond arithmetic).
    for b in [Benchmark::Bert, Benchmark::Resnet] {
        let flow = run_a100_with(b, &dgx(8), ModelKind::Flow).unwrap();
        let analytic = run_a100_with(b, &dgx(8), ModelKind::Analytic).unwrap();
        let (f, a) = (flow.step.step_time_s, analytic.step.step_time_s);
        assert!(
            (f - a).abs() <= 1e-9 * f,
            "{b:?}: flow {f} s, analytic {a} s"
        );
    }
}

#[test]
fn time_to_train_is_samples_over_batch_times_the_step() {
    // BERT on 4096 A100s: 5,533,259 samples (the log's train_samples) at 16,384 a step
    // (BATCHSIZE 2 rows x PACKING_FACTOR 2 x 4096 GPUs) is 337.72 steps.
    let s = a100(Benchmark::Bert, 4096).unwrap();
    assert_eq!(s.samples_per_step, 2.0 * 2.0 * 4096.0);
    let r = run_a100_with(Benchmark::Bert, &dgx(512), ModelKind::Analytic).unwrap();
    let steps = 5_533_259.0 / 16_384.0;
    assert!((r.time_to_train_s - steps * r.step.step_time_s).abs() < 1e-12);
    // The A100 on BERT runs at section 7.2's measured 1280 MHz, so no chip is busier than
    // its whole step and its power stays under the 400 W limit (90 W idle + 448.5 W x busy).
    let busy = r.step.activity.matrix_busy_s / r.step.activity.chips as f64;
    assert!(busy <= r.step.step_time_s);
    assert!(r.power_w > 90.0 && r.power_w < 400.0, "{} W", r.power_w);
}

#[test]
fn other_chip_counts_and_chips_are_refused() {
    assert!(a100(Benchmark::Resnet, 4096).is_err());
    assert!(podsim_tpu::mlperf::tpu_v4(Benchmark::Bert, 128).is_err());
    let h100 = {
        let path = "examples/machines/dgx-h100.toml";
        let text = podsim_config::machine_file(path).unwrap();
        podsim_config::machine_system(path, &text, Some(1)).unwrap()
    };
    let e = podsim_tpu::mlperf::run_a100(Benchmark::Bert, &h100).unwrap_err();
    assert!(e.contains("A100"), "{e}");
}
