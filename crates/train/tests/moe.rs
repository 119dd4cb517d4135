//! Mixtures of experts: expected values from GLaM's Table 4 (Du et al. 2022), hand
//! calculations (in the comments), the flow model as a second fidelity and the twisted torus's
//! all-to-all gain (tpu-v4-isca2023.txt, Fig. 6).

use podsim_system::workload::ChipSpec;
use podsim_topology::Network;
use podsim_train::{
    Axis, Config, Machine, Mapping, Moe, Parallel, Partition, Remat, Sharding, SliceShape,
    TrainError, Transformer, analytic, measured,
};

fn machine(dims: [u32; 3], twisted: bool) -> (Network, Machine) {
    let net = SliceShape { dims, twisted }.network().unwrap();
    let m = Machine::of(&net, ChipSpec::preset("tpuv4").unwrap()).unwrap();
    (net, m)
}

/// The shape of `examples/models/glam-like-moe.toml`: 24 layers of d_model 2048 (16 heads of
/// 128), a gated feed-forward of 8192 in the dense layers, 128 two-matrix experts of 8192 in
/// every other layer, top-2, capacity factor 1, 256k vocabulary, 1024-token sequences.
fn glam_like() -> Transformer {
    Transformer {
        name: "glam-like".into(),
        layers: 24,
        d_model: 2048,
        heads: 16,
        kv_heads: 16,
        head_dim: Some(128),
        d_ff: 8192,
        ffn_matrices: 3,
        vocabulary: 256000,
        sequence: 1024,
        format: "bf16".into(),
        batch: Some(512),
        source: "a test".into(),
        moe: Some(Moe {
            experts: 128,
            per_token: 2,
            capacity_factor: 1.0,
            every: 2,
            ffn_matrices: 2,
        }),
    }
}

fn config(parallel: [u64; 4], expert: u64, mapping: Mapping, batch: u64) -> Config {
    Config {
        parallel: Parallel(parallel),
        partition: Partition::ALL[0],
        mapping,
        batch,
        microbatches: 1,
        remat: Remat::Full,
        shard: Sharding::None,
        sequence_parallel: false,
        virtual_stages: 1,
        expert,
    }
}

#[test]
fn glam_has_the_weights_of_its_table_4() {
    // GLaM 64B/64E (Du et al. 2022, Table 4: 1.2T weights, 96.6B activated per token).
    // Attention 4 x 8192 x (128 x 128) = 536,870,912 a layer; the dense layers' gated
    // feed-forward 3 x 8192 x 32768 = 805,306,368; an expert 2 x 8192 x 32768 = 536,870,912;
    // a router 8192 x 64 = 524,288; the embedding 256,000 x 8192 = 2,097,152,000.
    // 32 dense layers: 32 x 1,342,177,280 = 42,949,672,960; 32 MoE layers of 64 experts:
    // 32 x (536,870,912 + 524,288 + 64 x 536,870,912) = 1,116,708,274,176. In all
    // 1,161,755,099,136 (Table 4's 1.2T); a token uses 2 experts of each MoE layer:
    // 42,949,672,960 + 32 x (536,870,912 + 524,288 + 2 x 536,870,912) + 2,097,152,000
    // = 96,603,209,728 (Table 4's 96.6B).
    let t = Transformer::builtin("glam-64b-64e").unwrap();
    assert_eq!(t.moe_layers(), 32);
    assert_eq!(t.params(), 1_161_755_099_136.0);
    assert_eq!(t.active_params(), 96_603_209_728.0);
    assert!((t.active_params() / 1e9 - 96.6).abs() < 0.05);
    // A dense model's weights a token uses are all of them.
    let g = Transformer::builtin("gpt3-175b").unwrap();
    assert_eq!(g.active_params(), g.params());
}

#[test]
fn each_chip_holds_its_experts_and_their_optimizer_state_alone() {
    // The GLaM-like model on 128 chips, [1,128,1,1] with every chip one of the 128 experts of
    // each of the 12 MoE layers: 12 x 2 x 2048 x 8192 = 402,653,184 expert weights a chip.
    // Dense (on every chip): 24 attentions of 4 x 2048 x 2048 = 402,653,184, 12 gated
    // feed-forwards of 3 x 2048 x 8192 = 603,979,776, 12 routers of 2048 x 128 = 3,145,728
    // and the embedding 524,288,000: 1,534,066,688. bf16 weights: 2 x 1,936,719,872 =
    // 3,873,439,744 bytes. Adam's 12 bytes a weight split over each weight's replicas: the
    // dense ones over 128, the experts' over 1 (each expert is on one chip):
    // 1,534,066,688 x 12 / 128 + 402,653,184 x 12 = 143,818,752 + 4,831,838,208.
    let t = glam_like();
    let (_, m) = machine([4, 4, 8], false);
    let c = config([1, 128, 1, 1], 128, Mapping::DEFAULT, 512);
    let r = analytic(&t, &m, &c).unwrap();
    assert_eq!(r.memory.weights, 3_873_439_744.0);
    assert_eq!(r.memory.gradients, 3_873_439_744.0);
    assert_eq!(r.memory.optimizer, 143_818_752.0 + 4_831_838_208.0);
    // With the experts over 64 chips each chip holds 2 of each layer's (and there are two
    // replicas of each expert): 805,306,368 expert weights, optimizer state halved per weight.
    let c64 = config([1, 128, 1, 1], 64, Mapping::DEFAULT, 512);
    let r64 = analytic(&t, &m, &c64).unwrap();
    assert_eq!(r64.memory.weights, 2.0 * (1_534_066_688.0 + 805_306_368.0));
    assert_eq!(
        r64.memory.optimizer,
        143_818_752.0 + 805_306_368.0 * 12.0 / 2.0
    );
}

#[test]
fn the_closed_form_all_to_all_is_the_most_loaded_link() {
    // The GLaM-like step on a regular 4x4x8 torus with the expert axis over all 128 chips: 4
    // sequences (4096 tokens) a chip, 2 experts a token at capacity factor 1: 8192 rows of
    // 2048 in bf16, 33,554,432 bytes each chip sends and receives in each all-to-all. Under
    // minimal routing the z ring of 8 carries B x (0+1+2+3+4+3+2+1)/(2 x 8) = B on each link
    // (x and y, rings of 4, B/2): 33,554,432 / 50e9 = 671.08864 us, plus the longest route's
    // 2 + 2 + 4 hops of 0.3 us: 673.48864 us. Six a layer (dispatch and combine forward,
    // again in the recomputed forward, and their gradients backward), 12 MoE layers, one
    // microbatch: 72 x 673.48864 us = 48.49118208 ms.
    let t = glam_like();
    let (_, m) = machine([4, 4, 8], false);
    let c = config([1, 128, 1, 1], 128, Mapping::DEFAULT, 512);
    let r = analytic(&t, &m, &c).unwrap();
    let expect = 72.0 * (33_554_432.0 / 50e9 + 8.0 * 0.3e-6);
    assert!(
        (r.expert_all_to_all_s - expect).abs() < 1e-12,
        "{} vs {expect}",
        r.expert_all_to_all_s
    );
    assert!((expect - 48.491_182_08e-3).abs() < 1e-12);
    // All of it is exposed communication.
    assert!(r.exposed_communication_s >= r.expert_all_to_all_s * (1.0 - 1e-12));
}

#[test]
fn without_contention_the_flow_models_all_to_all_is_the_closed_forms() {
    // The expert axis of 2 chips side by side along x of a 4x4x4 torus (data = 2 laid first),
    // model2 = 32 over the rest: 32 pairs, each exchanging over its own link, nothing
    // shared. Each chip sends half its B to its neighbour: B/2 over one 50 GB/s link and one
    // 0.3 us hop, in either fidelity. 2 layers of 1024 (32 heads of 32), 4 two-matrix
    // experts of 4096 in every layer, top-1, capacity factor 1.25, 8 sequences of 512.
    let t = Transformer {
        name: "pairs".into(),
        layers: 2,
        d_model: 1024,
        heads: 32,
        kv_heads: 32,
        head_dim: None,
        d_ff: 4096,
        ffn_matrices: 2,
        vocabulary: 32768,
        sequence: 512,
        format: "bf16".into(),
        batch: Some(8),
        source: "a test".into(),
        moe: Some(Moe {
            experts: 4,
            per_token: 1,
            capacity_factor: 1.25,
            every: 1,
            ffn_matrices: 2,
        }),
    };
    let (net, m) = machine([4, 4, 4], false);
    let mapping = Mapping([Axis::Data, Axis::Model2, Axis::Model1, Axis::Pipeline]);
    let c = config([1, 2, 1, 32], 2, mapping, 8);
    let a = analytic(&t, &m, &c).unwrap();
    let mut mk = || podsim_system::flow_model(&net);
    let f = measured(&t, &m, &net, &c, &mut mk).unwrap();
    // 4 sequences of 512 a chip: 2048 tokens x 1 x 1.25 = 2560 rows of 1024 in bf16 =
    // 5,242,880 bytes; half of it to the neighbour: 52.4288 us + 0.3 us; 6 a layer, 2 layers.
    let each = 5_242_880.0 / 2.0 / 50e9 + 0.3e-6;
    assert!((a.expert_all_to_all_s - 12.0 * each).abs() < 1e-12);
    let rel = (f.expert_all_to_all_s - a.expert_all_to_all_s).abs() / a.expert_all_to_all_s;
    assert!(
        rel < 0.01,
        "flow {} vs closed form {}",
        f.expert_all_to_all_s,
        a.expert_all_to_all_s
    );
    assert!(f.step_time_s >= a.step_time_s * (1.0 - 1e-9));
}

#[test]
fn a_twisted_torus_speeds_up_the_experts_all_to_all() {
    // tpu-v4-isca2023.txt, Fig. 6: the twisted 4x4x8 torus has 1.63x the all-to-all
    // throughput of the regular one (podsim's flow model: 1.48x on 16 MiB). With the expert
    // axis over every chip, the MoE step's all-to-alls are that much faster; the rest of the
    // step (chip work, the gradient sum over all 128 chips) barely changes.
    let t = glam_like();
    let c = config([1, 128, 1, 1], 128, Mapping::DEFAULT, 512);
    let mut a2a = Vec::new();
    let mut step = Vec::new();
    for twisted in [false, true] {
        let (net, m) = machine([4, 4, 8], twisted);
        let mut mk = || podsim_system::flow_model(&net);
        let f = measured(&t, &m, &net, &c, &mut mk).unwrap();
        // The flow model is never faster than the closed form on the regular torus.
        if !twisted {
            let a = analytic(&t, &m, &c).unwrap();
            assert!(f.expert_all_to_all_s >= a.expert_all_to_all_s * (1.0 - 1e-9));
            assert!(f.step_time_s >= a.step_time_s * (1.0 - 1e-9));
        }
        a2a.push(f.expert_all_to_all_s);
        step.push(f.step_time_s);
    }
    let gain = a2a[0] / a2a[1];
    assert!(gain > 1.3 && gain < 1.7, "all-to-all gain {gain}");
    assert!(
        step[1] < step[0],
        "twisted {} vs regular {}",
        step[1],
        step[0]
    );
}

#[test]
fn the_expert_axis_refuses_what_has_no_effect_or_does_not_split() {
    let (_, m) = machine([4, 4, 8], false);
    // On a dense model.
    let g = Transformer::builtin("gpt3-1.3b").unwrap();
    let e = analytic(&g, &m, &config([1, 128, 1, 1], 2, Mapping::DEFAULT, 512)).unwrap_err();
    assert!(
        matches!(e, TrainError::ExpertOnDense { expert: 2, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("--parallel expert=2"), "{e}");
    // Not dividing data.
    let t = glam_like();
    let e = analytic(&t, &m, &config([1, 32, 1, 4], 64, Mapping::DEFAULT, 512)).unwrap_err();
    assert_eq!(
        e,
        TrainError::ExpertNotInData {
            expert: 64,
            data: 32
        }
    );
    // 6 experts do not split over 4 chips.
    let mut t6 = glam_like();
    if let Some(x) = t6.moe.as_mut() {
        x.experts = 6;
    }
    let e = analytic(&t6, &m, &config([1, 128, 1, 1], 4, Mapping::DEFAULT, 512)).unwrap_err();
    assert_eq!(
        e,
        TrainError::ExpertsSplit {
            expert: 4,
            experts: 6
        }
    );
    // An expert axis that would split a dimension unevenly (3 of the data axis's 96 along a y
    // of 8 on a 4x8x12 slice) names the dimension.
    let (_, m3) = machine([4, 8, 12], false);
    let mut t3 = glam_like();
    if let Some(x) = t3.moe.as_mut() {
        x.experts = 96;
    }
    let e = analytic(&t3, &m3, &config([1, 96, 1, 4], 3, Mapping::DEFAULT, 96)).unwrap_err();
    assert!(
        matches!(
            e,
            TrainError::Uneven {
                axis: "expert",
                dim: "y",
                ..
            }
        ),
        "{e}"
    );
    // Sharding the gradients or weights over data is not modelled for experts.
    let c = Config {
        shard: Sharding::Weights,
        ..config([1, 128, 1, 1], 128, Mapping::DEFAULT, 512)
    };
    assert!(matches!(
        analytic(&t, &m, &c).unwrap_err(),
        TrainError::ShardWithExperts { .. }
    ));
    // The spec's forms: named, bracket, and the plain parse refuses the expert axis.
    assert_eq!(
        Parallel::parse_with_expert("pipeline=1,data=128,model1=1,model2=1,expert=128").unwrap(),
        (Parallel([1, 128, 1, 1]), Some(128))
    );
    assert_eq!(
        Parallel::parse_with_expert("[1,32,1,4,8]").unwrap(),
        (Parallel([1, 32, 1, 4]), Some(8))
    );
    assert_eq!(
        Parallel::parse_with_expert("[1,32,1,4]").unwrap(),
        (Parallel([1, 32, 1, 4]), None)
    );
    assert!(Parallel::parse("[1,32,1,4,8]").is_err());
    assert_eq!(Parallel([1, 32, 1, 4]).with_expert(8), "[1,32,1,4,8]");
    assert_eq!(Parallel([1, 32, 1, 4]).with_expert(1), "[1,32,1,4]");
}
