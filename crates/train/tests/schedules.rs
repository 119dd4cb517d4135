//! Issue 36 item 2: sequence parallelism, the interleaved pipeline schedule and selective
//! recomputation. Expected values from closed forms and hand calculations (in the comments)
//! after Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
//! Models", arXiv 2205.05198) and Narayanan et al. SC'21 (Megatron-LM's interleaved 1F1B).

use podsim_system::workload::ChipSpec;
use podsim_topology::Network;
use podsim_train::{
    Axis, Config, Machine, Mapping, Parallel, Partition, Remat, Sharding, SliceShape, StepReport,
    TrainError, Transformer, analytic, measured,
};

fn machine(dims: [u32; 3]) -> (Network, Machine) {
    let net = SliceShape {
        dims,
        twisted: false,
    }
    .network()
    .unwrap();
    let m = Machine::of(&net, ChipSpec::preset("tpuv4").unwrap()).unwrap();
    (net, m)
}

fn config(par: &str, batch: u64, mb: u64, remat: Remat) -> Config {
    Config {
        parallel: Parallel::parse(par).unwrap(),
        partition: Partition::ALL[0],
        mapping: Mapping([Axis::Model2, Axis::Data, Axis::Model1, Axis::Pipeline]),
        batch,
        microbatches: mb,
        remat,
        shard: Sharding::None,
        sequence_parallel: false,
        virtual_stages: 1,
        expert: 1,
    }
}

/// GPT-3 1.3B (24 layers, d_model 2048) on a 4x4x4 torus: model2 = 8 along x, data = 2,
/// pipeline = 4 along z; batch 512, 8 microbatches of 32 sequences.
fn pipelined(v: u64) -> (Transformer, Machine, Config) {
    let t = Transformer::builtin("gpt3-1.3b").unwrap();
    let (_, m) = machine([4, 4, 4]);
    let c = Config {
        virtual_stages: v,
        ..config("[4,2,1,8]", 512, 8, Remat::Full)
    };
    (t, m, c)
}

#[test]
fn the_interleaved_bubble_is_the_closed_form_and_the_sends_grow_by_v() {
    // Narayanan et al. SC'21, section 2.2.2: with V chunks a stage the bubble fraction (the
    // bubble over the ideal m (t_f + t_b)) is (p - 1)/(V m): here 3/(2 x 8) = 3/16, against
    // 3/8 for 1F1B.
    let (t, m, c1) = pipelined(1);
    let (_, _, c2) = pipelined(2);
    let one = analytic(&t, &m, &c1).unwrap();
    let two = analytic(&t, &m, &c2).unwrap();
    let fraction =
        |r: &StepReport| r.bubble_time_s / (8.0 * (r.stage_times_s.0 + r.stage_times_s.1));
    assert!(
        (fraction(&one) - 3.0 / 8.0).abs() < 1e-12,
        "{}",
        fraction(&one)
    );
    assert!(
        (fraction(&two) - 3.0 / 16.0).abs() < 1e-12,
        "{}",
        fraction(&two)
    );
    // Each microbatch crosses V stage boundaries a stage each way: one more send of the
    // stage's output, 32 sequences x 2048 tokens x 2048 x 2 bytes = 268,435,456 bytes over one
    // 50 GB/s link plus one 0.3 us hop (the TPU v4 ICI figures the FSDP test of layer.rs
    // uses): 5.36871 ms more a microbatch forward and as much backward.
    let send = 268_435_456.0 / 50e9 + 0.3e-6;
    assert!((two.stage_times_s.0 - one.stage_times_s.0 - send).abs() < 1e-12);
    assert!((two.stage_times_s.1 - one.stage_times_s.1 - send).abs() < 1e-12);
    assert!(two.step_time_s < one.step_time_s);
    assert_eq!(one.compute_time_s, two.compute_time_s);
}

#[test]
fn interleaving_keeps_the_activations_megatrons_schedule_keeps() {
    // Full recomputation keeps a layer's input, 32 x 2048 x 2048 x 2 = 268,435,456 bytes. 1F1B
    // (Korthikanti et al. 2022, section 4.2.3): the first stage holds min(m, p) = 4 microbatches
    // through its 6 layers, 24 layers: 6,442,450,944 bytes. Interleaved, V = 2: Megatron-LM's
    // first stage runs 2(p - 1) + (V - 1)p = 10 warm-up chunks and one more before its first
    // backward, 11 chunks of L/(pV) = 3 layers = 33 layers = L (1 + (p - 1)/(pV)) = 24 x 11/8
    // (Korthikanti et al., section 4.2.3): 8,858,370,048 bytes.
    let (t, m, c1) = pipelined(1);
    let (_, _, c2) = pipelined(2);
    let one = analytic(&t, &m, &c1).unwrap();
    let two = analytic(&t, &m, &c2).unwrap();
    assert_eq!(one.memory.activations, 6_442_450_944.0);
    assert_eq!(two.memory.activations, 8_858_370_048.0);
    // With m = p every microbatch is in flight either way: 4 x 6 = 24 layers = 8 chunks x 3.
    let (_, _, c) = pipelined(2);
    let c = Config {
        microbatches: 4,
        ..c
    };
    let four = analytic(&t, &m, &c).unwrap();
    assert_eq!(four.memory.activations, 24.0 * 2.0 * 268_435_456.0);
}

#[test]
fn interleaving_and_sequence_parallelism_refuse_what_has_no_effect_or_cannot_run() {
    let t = Transformer::builtin("gpt3-1.3b").unwrap();
    let (_, m) = machine([4, 4, 4]);
    let err = |c: Config| analytic(&t, &m, &c).unwrap_err();
    let base = config("[4,2,1,8]", 512, 8, Remat::Full);
    // No pipeline to interleave.
    let e = err(Config {
        virtual_stages: 2,
        ..config("[1,8,1,8]", 512, 8, Remat::Full)
    });
    assert!(matches!(e, TrainError::VirtualStagesWithoutPipeline { .. }));
    assert!(e.to_string().contains("--virtual-stages 2"), "{e}");
    // 24 layers do not split into 4 x 5 chunks.
    let e = err(Config {
        virtual_stages: 5,
        ..base
    });
    assert!(e.to_string().contains("24 layers"), "{e}");
    // 2 microbatches are not a multiple of 4 stages.
    let e = err(Config {
        virtual_stages: 2,
        microbatches: 2,
        ..base
    });
    assert!(e.to_string().contains("multiple of pipeline = 4"), "{e}");
    assert_eq!(
        err(Config {
            virtual_stages: 0,
            ..base
        }),
        TrainError::NoVirtualStages
    );
    // No tensor axis, or activations already split over it.
    let e = err(Config {
        sequence_parallel: true,
        ..config("[4,16,1,1]", 512, 8, Remat::Full)
    });
    assert!(e.to_string().contains("model2 = 1"), "{e}");
    let e = err(Config {
        sequence_parallel: true,
        partition: Partition::parse("2d/1d").unwrap(),
        ..base
    });
    assert_eq!(e, TrainError::SequenceParallelWith2d);
}

/// One GPT-3 175B layer on an 8x8x8 torus, model2 = 8 along x, 64-way data parallel, one
/// sequence a chip (batch 64, one microbatch).
fn one_gpt3_layer(remat: Remat, sp: bool) -> (Transformer, Machine, Config) {
    let mut t = Transformer::builtin("gpt3-175b").unwrap();
    t.layers = 1;
    let (_, m) = machine([8, 8, 8]);
    let c = Config {
        sequence_parallel: sp,
        ..config("[1,64,1,8]", 64, 1, remat)
    };
    (t, m, c)
}

#[test]
fn sequence_parallelism_splits_the_replicated_activations_as_korthikanti_et_al_count() {
    // Korthikanti et al. 2022, per layer (bytes; s = 2048, b = 1, h = 12288, a = 96, t = 8):
    // tensor parallel alone keeps sbh(10 + 24/t) + 5as^2b/t (Eq. 2), with sequence parallelism
    // sbh(34/t) + 5as^2b/t (Eq. 3): 10sbh(1 - 1/t) less. Of the 10sbh, 2sbh are the two dropout
    // masks, which podsim does not model (no dropout); the 8sbh left are the two layer norms'
    // and the two blocks' inputs: 8 x 2048 x 12288 x 7/8 = 176,160,768 bytes less (Eq. 3's
    // 220,200,960 less the masks' 44,040,192).
    let act = |remat, sp| {
        let (t, m, c) = one_gpt3_layer(remat, sp);
        analytic(&t, &m, &c).unwrap().memory.activations
    };
    assert_eq!(
        act(Remat::None, false) - act(Remat::None, true),
        176_160_768.0
    );
    // Full recomputation keeps the layer's input, 2sbh = 2 x 2048 x 12288 = 50,331,648 bytes,
    // split over t with sequence parallelism: 6,291,456.
    assert_eq!(act(Remat::Full, false), 50_331_648.0);
    assert_eq!(act(Remat::Full, true), 6_291_456.0);
    // Selective recomputation drops the attention scores: Korthikanti et al.'s 5as^2b/t
    // (softmax output 2as^2b, dropout mask as^2b, dropout output 2as^2b; Table 2's "selective"
    // rows), of which podsim keeps the softmax output, 2 x 96 x 2048^2 / 8 = 100,663,296 bytes.
    for sp in [false, true] {
        assert_eq!(
            act(Remat::None, sp) - act(Remat::Selective, sp),
            100_663_296.0
        );
    }
}

#[test]
fn selective_recomputation_costs_the_attention_again() {
    // GPT-3 175B per sequence: a layer's forward is 2 x 1,811,939,328 weights x 2048 tokens +
    // 4 x 2048^2 x 12288 = 7,627,861,917,696 FLOPs; 96 layers and the logits (2 x 2048 x 12288
    // x 50257 = 2,529,517,633,536): 734,804,261,732,352; the model FLOPs 3x that. Selective
    // recomputation runs the attention's QK^T and weighted sum again: 96 x 4 x 2048^2 x 12288
    // = 19,791,209,299,968 FLOPs more, so HFU / MFU = 1 + 19,791,209,299,968 /
    // 2,204,412,785,197,056 (about 1.009; full recomputation's is 4/3 less the logits').
    let t = Transformer::builtin("gpt3-175b").unwrap();
    let (_, m) = machine([8, 8, 8]);
    let c = config("[8,8,1,8]", 1536, 24, Remat::Selective);
    let r = analytic(&t, &m, &c).unwrap();
    let expect = 1.0 + 19_791_209_299_968.0 / 2_204_412_785_197_056.0;
    assert!((r.hfu / r.mfu - expect).abs() < 1e-12, "{}", r.hfu / r.mfu);
}

#[test]
fn sequence_parallel_collectives_move_the_all_reduces_bytes() {
    // A ring all-reduce of B bytes over f chips puts 2 (f - 1)/f B on the wire a chip; an
    // all-gather and a reduce-scatter of the same B, (f - 1)/f B each: the same. The layer's
    // model2 collectives with full recomputation: 2 forward, 2 recomputed, 2 backward, of B =
    // 2048 x 12288 x 2 = 50,331,648 bytes over f = 8: 6 x 2 x 7/8 x B = 528,482,304 bytes a
    // chip either way; the gradient sum over data is the same in both, so the slice's link
    // bytes are equal.
    let link = |sp| {
        let (t, m, c) = one_gpt3_layer(Remat::Full, sp);
        analytic(&t, &m, &c).unwrap().activity.link_bytes
    };
    let (plain, sp) = (link(false), link(true));
    assert!((plain - sp).abs() <= 1e-12 * plain, "{plain} vs {sp}");
    // With the step's gradient sum: (1,811,939,328 layer + 617,558,016 embedding weights)/8 =
    // 303,687,168 a chip, 607,374,336 bytes all-reduced over the 64 data chips, 2 x 63/64 of
    // it = 1,195,768,224 on the wire a chip; 1,724,250,528 in all, on each of 512 chips.
    let expect = 512.0 * (528_482_304.0 + 1_195_768_224.0);
    assert!(
        (plain - expect).abs() <= 1e-12 * expect,
        "{plain} vs {expect}"
    );
}

#[test]
fn the_flow_model_never_times_sequence_parallelism_below_the_closed_form() {
    // The gathers and scatters of sequence parallelism run on the flow model as the layers'
    // other collectives do: contention-free rings stay a lower bound.
    let t = Transformer::builtin("gpt3-13b").unwrap();
    let (net, m) = machine([4, 4, 4]);
    for remat in [Remat::Full, Remat::Selective] {
        let c = Config {
            sequence_parallel: true,
            mapping: Mapping::DEFAULT,
            ..config("[1,8,1,8]", 1024, 8, remat)
        };
        let a = analytic(&t, &m, &c).unwrap();
        let mut mk = || podsim_system::flow_model(&net);
        let f = measured(&t, &m, &net, &c, &mut mk).unwrap();
        assert!(
            f.step_time_s >= a.step_time_s * (1.0 - 1e-9),
            "{remat:?}: flow {} < closed form {}",
            f.step_time_s,
            a.step_time_s
        );
        assert!((f.compute_time_s - a.compute_time_s).abs() < 1e-9);
    }
}

#[test]
fn the_optimizer_state_is_mixed_precision_adams() {
    // ZeRO (Rajbhandari et al. 2020, section 3.1): mixed-precision Adam keeps 2 bytes of bf16
    // weights, 2 of gradients and 12 of fp32 master weights and moments a weight. GPT-3 1.3B
    // on model2 = 8 and data = 8: 24 layers x 12 x 2048^2 = 1,207,959,552 weights + the
    // embedding 50257 x 2048 = 102,926,336, 1,310,885,888 in all, 163,860,736 a chip:
    // 327,721,472 bytes of weights and as many of gradients; 12 bytes a weight of optimizer
    // state, 1,966,328,832, split over the 8 data replicas (weight-update sharding):
    // 245,791,104, of which 4/12 master weights (81,930,368) and 8/12 moments (163,860,736).
    let t = Transformer::builtin("gpt3-1.3b").unwrap();
    let (_, m) = machine([4, 4, 4]);
    let c = config("[1,8,1,8]", 8, 1, Remat::Full);
    let r = analytic(&t, &m, &c).unwrap();
    assert_eq!(r.memory.weights, 327_721_472.0);
    assert_eq!(r.memory.gradients, 327_721_472.0);
    assert_eq!(r.memory.optimizer, 245_791_104.0);
    let json = podsim_train::StepFigures::new(&r);
    assert_eq!(
        json.memory.optimizer_parts.master_weights_bytes,
        81_930_368.0
    );
    assert_eq!(
        json.memory.optimizer_parts.adam_moments_bytes,
        163_860_736.0
    );
}
