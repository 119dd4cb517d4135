//! MLPerf Training 2.0's BERT and ResNet-50 on TPU v4 and on DGX A100 nodes (tpu-v4-isca2023.txt
//! section 6: Figs. 14-15, TPU v4 1.15x as fast as the A100 on BERT and 1.67x on ResNet at the
//! largest scale; Table 6, the mean chip power of 64-chip systems running them), predicted by
//! the same step model as the production applications ([`crate::apps`]): the per-chip work of
//! each submission as a [`DenseModel`] on the workload executor, GEMMs on the chip's matrix
//! units, vector work from HBM, the gradient sums on the system's network.
//!
//! # What is restated and what is predicted
//!
//! Each submission's configuration is restated from its published files (MLCommons
//! training_results_v2.0, cited per figure in [`Submission::source`]): chips, the global batch,
//! the per-chip work, and the samples it trained before reaching the target (its log's
//! `train_samples`, or epochs times ImageNet's 1,281,167 images). podsim predicts the step
//! time; the time to train is samples / batch x step. What podsim does not model is left out
//! on both sides alike: initialisation, evaluation, the input pipeline, kernel launches, and the
//! host.
//!
//! # The two machines
//!
//! TPU v4: a slice of the pod (`tpuv4:slice=4x4x4` for 64 chips, `16x16x16` for 4096), the
//! gradients summed by the all-dimensions all-reduce on the slice's flow model, as
//! [`crate::apps`]. A100: the machine file's nodes (examples/machines/dgx-a100.toml), the
//! gradients summed one dimension of its rank grid at a time (reduce-scatter inside each node on
//! NVSwitch, all-reduce across nodes on the eight rails at once, all-gather inside the node: the
//! hierarchical all-reduce NCCL's rings make on a rail-optimised fabric) on the analytic model:
//! its fat tree is non-blocking, where the analytic model's times are the flow model's (a test
//! checks it on eight nodes), and the analytic one runs 4096 GPUs in seconds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use podsim_collective::{Algorithm, ModelKind};
use podsim_net::Packetization;
use podsim_system::energy::ChipPower;
use podsim_system::workload::ChipSpec;
use podsim_system::{SystemSpec, TopoSpec};
use podsim_topology::Network;
use podsim_units::FlopRate;

use crate::apps::{DenseModel, StepTime, bert, resnet50, run_step, workload_with};

/// ImageNet's training images (the ILSVRC 2012 training set MLPerf's ResNet trains on).
pub const IMAGENET_IMAGES: f64 = 1_281_167.0;

/// The benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Benchmark {
    /// BERT-Large pre-training (phase 2, sequences of 512).
    Bert,
    /// ResNet-50 v1.5 on ImageNet.
    Resnet,
}

impl Benchmark {
    /// The benchmark a case names: `bert` or `resnet`.
    pub fn parse(s: &str) -> Option<Benchmark> {
        match s {
            "bert" => Some(Benchmark::Bert),
            "resnet" => Some(Benchmark::Resnet),
            _ => None,
        }
    }
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::Bert => "bert",
            Benchmark::Resnet => "resnet",
        }
    }
}

/// One submission's configuration, restated from its files.
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    /// Chips.
    pub chips: u64,
    /// One chip's work in a step.
    pub model: DenseModel,
    /// Samples a step over all chips (the global batch).
    pub samples_per_step: f64,
    /// Samples trained to reach the target.
    pub samples: f64,
    /// Gradients are summed in buckets of at least this many bytes.
    pub bucket_bytes: u64,
    /// Whether the optimizer's update is sharded over the chips (each updates its share of the
    /// weights): TPU v4's submissions by XLA's cross-replica weight-update sharding (Xu et al.
    /// 2020, arXiv 2004.13336, which names MLPerf among its uses), NVIDIA's BERT by its
    /// distributed fused LAMB (optim/distributed_fused_lamb.py in the submission).
    pub shard_optimizer: bool,
    /// The matrix units' clock while it runs, where it differs from the chip preset's.
    pub clock_hz: Option<u64>,
    /// Where each figure comes from.
    pub source: &'static str,
}

/// One gradient bucket for the whole model: XLA sums a TPU step's gradients with
/// cross-replica sums it combines (an assumption: the submission's code does not state the
/// combiner's threshold); the A100 BERT submission's distributed LAMB likewise reduces its
/// flattened gradients at once.
const WHOLE: u64 = u64::MAX;

/// BERT-Large's per-chip step as both submissions shape it at 4096 chips: two rows of 512
/// tokens per chip. TPU v4 bucketises sequences by length (run_bert_v4-8192.sh: at 512 tokens
/// 2 sequences a core, at 64 tokens 14, every bucket about 1,000 tokens a chip); the A100
/// packs two sequences a row of 512 (config_DGXA100_512x8x2x1_pack.sh: BATCHSIZE=2,
/// PACKING_FACTOR=2).
fn bert_rows(rows: u64) -> DenseModel {
    bert(24, 1024, 16, 4096, rows, 512)
}

/// TPU v4's submission of `bench` on `chips` chips (4096: MLPerf Training 2.0; 64: the Table 6
/// rerun, at the per-chip batch of [`crate::apps`]' stand-ins).
pub fn tpu_v4(bench: Benchmark, chips: u64) -> Result<Submission, String> {
    Ok(match (bench, chips) {
        (Benchmark::Bert, 4096) => Submission {
            chips,
            model: bert_rows(2),
            samples_per_step: 14_336.0,
            samples: 4_780_367.0,
            bucket_bytes: WHOLE,
            shard_optimizer: true,
            clock_hz: None,
            source: "MLCommons training_results_v2.0 Google/benchmarks/bert/implementations/cloud-tpu-v4-8192-TF/run_bert_v4-8192.sh (4096 chips, train_batch_size 14336, sequence buckets of about 1,000 tokens a chip) and Google/results/cloud-tpu-v4-8192-TF/bert/result_0.txt (4,780,367 samples at run_stop)",
        },
        (Benchmark::Resnet, 4096) => Submission {
            chips,
            model: resnet50(8),
            samples_per_step: 32_768.0,
            samples: 60.0 * IMAGENET_IMAGES,
            bucket_bytes: WHOLE,
            shard_optimizer: true,
            clock_hz: None,
            source: "MLCommons training_results_v2.0 Google/benchmarks/resnet/implementations/cloud-tpu-v4-8192-TF/run_resnet_v4-8192.sh (4096 replicas, train_batch_size 32768: 8 images a chip) and Google/results/cloud-tpu-v4-8192-TF/resnet/result_0.txt (target reached at the evaluation of epoch 60)",
        },
        (Benchmark::Bert, 64) => Submission {
            chips,
            model: bert_rows(4),
            samples_per_step: 64.0 * 4.0,
            samples: 0.0,
            bucket_bytes: crate::apps::BUCKET_BYTES,
            shard_optimizer: true,
            clock_hz: None,
            source: "Table 6's 64-chip rerun of Google's MLPerf 2.0 code; its batch is not published: BERT0's 4 sequences of 512 a chip (crates/machines/tpu/src/apps.rs), an assumption",
        },
        (Benchmark::Resnet, 64) => Submission {
            chips,
            model: resnet50(256),
            samples_per_step: 64.0 * 256.0,
            samples: 0.0,
            bucket_bytes: crate::apps::BUCKET_BYTES,
            shard_optimizer: true,
            clock_hz: None,
            source: "Table 6's 64-chip rerun of Google's MLPerf 2.0 code; its batch is not published: CNN0's 256 images a chip (crates/machines/tpu/src/apps.rs), an assumption",
        },
        _ => {
            return Err(format!(
                "TPU v4 runs MLPerf {} on 64 chips (Table 6) or 4096 (Figs. 14-15), not {chips}",
                bench.name()
            ));
        }
    })
}

/// The A100's matrix clock on BERT: tpu-v4-isca2023.txt section 7.2, "We measured the A100
/// running MLPerf BERT, and the average clock rate was 1280 MHz due to capping of power use by
/// GPU software". ResNet's 273 W (Table 6) is far below the A100's 400 W limit, so it is taken
/// to run at its 1410 MHz boost clock (an assumption).
pub const A100_BERT_CLOCK_HZ: u64 = 1_280_000_000;

/// NVIDIA's A100 submission of `bench` on `chips` GPUs (4096 BERT and 4216 ResNet: MLPerf
/// Training 2.0's largest; 64: Table 6's rerun).
pub fn a100(bench: Benchmark, chips: u64) -> Result<Submission, String> {
    Ok(match (bench, chips) {
        (Benchmark::Bert, 4096) => Submission {
            chips,
            model: bert_rows(2),
            samples_per_step: 16_384.0,
            samples: 5_533_259.0,
            bucket_bytes: WHOLE,
            shard_optimizer: true,
            clock_hz: Some(A100_BERT_CLOCK_HZ),
            source: "MLCommons training_results_v2.0 NVIDIA/benchmarks/bert/implementations/pytorch/config_DGXA100_512x8x2x1_pack.sh (512 nodes, BATCHSIZE 2 rows packing 2 sequences each: 16,384 a step) and NVIDIA/results/dgxa100_n512_ngc22.04_pytorch/bert/result_0.txt (train_samples 5,533,259)",
        },
        (Benchmark::Resnet, 4216) => Submission {
            chips,
            model: resnet50(16),
            samples_per_step: 16.0 * 4216.0,
            samples: 86.0 * IMAGENET_IMAGES,
            bucket_bytes: 64 << 20,
            shard_optimizer: false,
            clock_hz: None,
            source: "MLCommons training_results_v2.0 NVIDIA/benchmarks/resnet/implementations/mxnet/config_DGXA100_multi_527x8x16xgbn2_larsv2.sh (527 nodes, BATCHSIZE 16 a GPU, HOROVOD_FUSION_THRESHOLD 64 MiB) and NVIDIA/results/dgxa100_n527_ngc22.04_mxnet/resnet/result_0.txt (target reached at the evaluation of epoch 86)",
        },
        (Benchmark::Bert, 64) => Submission {
            chips,
            model: bert_rows(28),
            samples_per_step: 64.0 * 56.0,
            samples: 0.0,
            bucket_bytes: 64 << 20,
            shard_optimizer: true,
            clock_hz: Some(A100_BERT_CLOCK_HZ),
            source: "Table 6's rerun of NVIDIA's 64-chip submission; its batch taken from the single-node configuration (config_DGXA100_1x8x56x1.sh: 56 unpadded sequences a GPU, about 28 rows of 512 tokens), an assumption",
        },
        (Benchmark::Resnet, 64) => Submission {
            chips,
            model: resnet50(408),
            samples_per_step: 64.0 * 408.0,
            samples: 0.0,
            bucket_bytes: 64 << 20,
            shard_optimizer: false,
            clock_hz: None,
            source: "Table 6's rerun of NVIDIA's 64-chip submission; its batch taken from the single-node configuration (config_DGXA100.sh: BATCHSIZE 408, HOROVOD_FUSION_THRESHOLD 64 MiB), an assumption",
        },
        _ => {
            return Err(format!(
                "the A100 runs MLPerf BERT on 64 or 4096 GPUs and ResNet on 64 or 4216 (the submissions podsim restates), not {} on {chips}",
                bench.name()
            ));
        }
    })
}

/// A submission's predicted run.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The step.
    pub step: StepTime,
    /// Samples / batch x step, seconds (0 where the submission restates no sample count).
    pub time_to_train_s: f64,
    /// Mean chip power over the step, watts.
    pub power_w: f64,
}

fn run(s: &Submission, net: &Network, chip: ChipSpec, model: ModelKind) -> Result<Run, String> {
    let mut chip = chip;
    if let Some(hz) = s.clock_hz {
        let scale = hz as f64 / chip.arrays.clock_hz as f64;
        chip.arrays.clock_hz = hz;
        chip.matrix = FlopRate((chip.matrix.0 as f64 * scale).round() as u64);
    }
    let algorithm = match net {
        Network::Graph(_) => Algorithm::DimensionWise,
        _ => Algorithm::AllDimensions,
    };
    let shards = if s.shard_optimizer {
        net.endpoints()
    } else {
        1
    };
    let w = workload_with(&s.model, &chip, algorithm, s.bucket_bytes, shards)?;
    let mut m = podsim_system::machine::new_model(net, model, Packetization::NONE, false)
        .map_err(|e| e.to_string())?;
    let step = run_step(&w, net, &chip, m.as_mut())?;
    let power = ChipPower::preset(&chip.name)
        .ok_or_else(|| format!("the chip `{}` has no power figures", chip.name))?;
    Ok(Run {
        power_w: step.energy(&power).average_power_w,
        time_to_train_s: s.samples / s.samples_per_step * step.step_time_s,
        step,
    })
}

/// TPU v4's submission of `bench` on `chips` chips, run.
pub fn run_tpu_v4(bench: Benchmark, chips: u64) -> Result<Run, String> {
    let s = tpu_v4(bench, chips)?;
    let slice = match chips {
        64 => "tpuv4:slice=4x4x4",
        _ => "tpuv4:slice=16x16x16",
    };
    let (net, _) = crate::dlrm::system(slice).map_err(|e| e.to_string())?;
    let chip = ChipSpec::preset("tpuv4").ok_or("no chip preset `tpuv4`")?;
    run(&s, &net, chip, ModelKind::Flow)
}

/// NVIDIA's submission of `bench` on `machine` (a machine file of A100 nodes; its chips pick
/// the submission), run on the analytic model (see the module docs).
pub fn run_a100(bench: Benchmark, machine: &SystemSpec) -> Result<Run, String> {
    run_a100_with(bench, machine, ModelKind::Analytic)
}

/// [`run_a100`] on the network model `model`.
pub fn run_a100_with(
    bench: Benchmark,
    machine: &SystemSpec,
    model: ModelKind,
) -> Result<Run, String> {
    let TopoSpec::Machine(mf) = &machine.topology else {
        return Err(format!("`{}` is not a machine file", machine.name));
    };
    let chip = ChipSpec::of_machine(&mf.chip)?;
    if chip.name != "a100" {
        return Err(format!(
            "`{}` is a machine of {} chips; the MLPerf submissions podsim restates run on A100s",
            machine.name, chip.name
        ));
    }
    let net = machine.build().map_err(|e| e.to_string())?;
    let s = a100(bench, net.endpoints())?;
    run(&s, &net, chip, model)
}

/// `f`'s run under `key`, computed once per process: several validation cases read the same
/// runs (the ratio, each chip's power, the power ratio), on several threads at once.
fn memo(key: String, f: impl FnOnce() -> Result<Run, String>) -> Result<Run, String> {
    type Slot = Arc<OnceLock<Result<Run, String>>>;
    static RUNS: OnceLock<Mutex<HashMap<String, Slot>>> = OnceLock::new();
    let slot = {
        let mut runs = RUNS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        Arc::clone(runs.entry(key).or_default())
    };
    slot.get_or_init(f).clone()
}

/// An MLPerf case as a validation case names it (`[case.mlperf]`); the A100 side runs on the
/// case's machine file (`[case.machine]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MlperfCase {
    /// The benchmark.
    pub benchmark: Benchmark,
    /// TPU v4 chips.
    pub chips: u64,
    /// The chip whose power an `mlperf_power` case reads (`true`: the A100).
    pub power_of_a100: Option<bool>,
}

impl MlperfCase {
    fn tpu(&self) -> Result<Run, String> {
        let (b, chips) = (self.benchmark, self.chips);
        memo(format!("tpuv4 {} {chips}", b.name()), || {
            run_tpu_v4(b, chips)
        })
    }
    fn a100(&self, machine: &SystemSpec) -> Result<Run, String> {
        let b = self.benchmark;
        memo(
            format!("{} {} {:?}", machine.name, b.name(), machine.topology),
            || run_a100(b, machine),
        )
    }
    /// The A100's time to train over TPU v4's (Figs. 14-15), the A100s being `machine`.
    pub fn speedup(&self, machine: &SystemSpec) -> Result<f64, String> {
        Ok(self.a100(machine)?.time_to_train_s / self.tpu()?.time_to_train_s)
    }
    /// The mean chip power of the chip `power_of_a100` names, watts (Table 6).
    pub fn power_w(&self, machine: &SystemSpec) -> Result<f64, String> {
        match self.power_of_a100 {
            Some(true) => Ok(self.a100(machine)?.power_w),
            Some(false) => Ok(self.tpu()?.power_w),
            None => Err("an mlperf_power case names its chip".into()),
        }
    }
    /// The A100's mean chip power over TPU v4's (Table 6's ratio).
    pub fn power_ratio(&self, machine: &SystemSpec) -> Result<f64, String> {
        Ok(self.a100(machine)?.power_w / self.tpu()?.power_w)
    }
}
