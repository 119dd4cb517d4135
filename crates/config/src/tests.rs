use super::*;
use podsim_system::{RunSpec, Shape, TopoSpec};

const GOOD: &str = r#"
name = "two systems"
# (no seed: nothing a scenario runs is random)

[[system]]
name = "block"
topology = "mesh:4x4x4"
link_bandwidth = "50 GB/s"
link_latency = "10 ns"

[[system]]
name = "slice"
topology = "torus:4x4x8"
link_bandwidth = "50 GB/s"
interfaces = 6
[system.blocks]
shape = [4, 4, 4]
kind = "optical"

[[run]]
what = "metrics"
"#;

#[test]
fn a_good_scenario_validates_and_builds() {
    let s = parse_scenario("good.toml", GOOD).unwrap();
    assert_eq!(s.systems.len(), 2);
    assert_eq!(
        s.systems[1].topology,
        TopoSpec::Cube(Shape {
            dims: vec![4, 4, 8],
            wrap: vec![true; 3],
            twist: None,
        })
    );
    assert_eq!(s.systems[0].link.latency.as_ps(), 10_000);
    let t = s.systems[1].build().unwrap();
    assert_eq!(t.metrics().nodes, 128);
    assert_eq!(
        s.runs,
        vec![RunSpec::Metrics {
            systems: vec![0, 1]
        }]
    );
}

fn error_of(text: &str) -> ConfigError {
    parse_scenario("bad.toml", text).unwrap_err()
}

#[test]
fn a_misspelt_key_names_file_line_key_and_the_nearest_valid_key() {
    let e = error_of(&GOOD.replace("link_latency = ", "link_latnecy = "));
    assert_eq!(e.file, "bad.toml");
    assert_eq!(e.line, Some(9));
    assert_eq!(e.key, "system.link_latnecy");
    assert!(e.why.contains("nearest valid key is `link_latency`"), "{e}");
    let shown = e.to_string();
    assert!(
        shown.starts_with("bad.toml, line 9: `system.link_latnecy`: unknown key"),
        "{shown}"
    );
    assert!(!shown.contains('\n'));
}

#[test]
fn bad_values_name_their_key_and_line() {
    let e = error_of(&GOOD.replace(
        "link_bandwidth = \"50 GB/s\"\nlink_latency",
        "link_bandwidth = \"-50 GB/s\"\nlink_latency",
    ));
    assert_eq!(
        (e.line, e.key.as_str()),
        (Some(8), "system[0].link_bandwidth")
    );
    assert!(e.why.contains("negative"), "{e}");
    let e = error_of(&GOOD.replace("torus:4x4x8", "torus:0x4"));
    assert_eq!(e.key, "system[1].topology");
    assert!(e.why.contains("size 1 is 0"), "{e}");
    let e = error_of(&GOOD.replace("shape = [4, 4, 4]", "shape = [4, 4, 3]"));
    assert_eq!(e.key, "system[1].blocks.shape");
    assert!(e.why.contains("does not divide"), "{e}");
    let e = error_of(&GOOD.replace("interfaces = 6", "interfaces = -1"));
    assert_eq!(e.key, "system[1].interfaces");
    let e = error_of(&GOOD.replace("kind = \"optical\"", "kind = \"opticle\""));
    assert!(e.why.contains("nearest is `optical`"), "{e}");
    let e = error_of(&GOOD.replace("what = \"metrics\"", "what = \"metric\""));
    assert!(e.why.contains("nearest is `metrics`"), "{e}");
    let e = error_of(&GOOD.replace("interfaces = 6", "interfaces = \"six\""));
    assert_eq!(e.line, Some(15));
    assert!(e.to_string().contains("interfaces"), "{e}");
    let e = error_of(&GOOD.replace(
        "interfaces = 6",
        "twist = [[0, 0, 4], [0, 0, 4], [1, 0, 0]]",
    ));
    assert_eq!(e.key, "system[1].twist");
    assert!(e.why.contains("both shifts and is shifted"), "{e}");
    let e = error_of("name = \"x\"\n[[run]]\nwhat = \"metrics\"\n");
    assert_eq!(e.key, "system");
}

#[test]
fn shorthands() {
    assert_eq!(
        parse_shorthand("ring:16").unwrap(),
        Shape {
            dims: vec![16],
            wrap: vec![true],
            twist: None,
        }
    );
    assert_eq!(
        parse_shorthand("kncube:24x18x16:wrap=tmt").unwrap(),
        Shape {
            dims: vec![24, 18, 16],
            wrap: vec![true, false, true],
            twist: None,
        }
    );
    // k x k x 2k twists both k-dimensions into the 2k one by k (see KAryNCube::named_twist).
    assert_eq!(
        parse_shorthand("torus:4x4x8:twisted").unwrap().twist,
        Some(vec![vec![0, 0, 4], vec![0, 0, 4], vec![0, 0, 0]])
    );
    assert!(
        parse_shorthand("torus:16x8:twisted")
            .unwrap()
            .twist
            .is_some()
    );
    for (bad, says) in [
        ("torus:0x4", "size 1 is 0"),
        ("torus:4x", "size 2 is empty"),
        ("torus:", "no sizes"),
        ("tors:4x4", "nearest is `torus`"),
        ("4x4", "expected KIND:SIZES"),
        ("kncube:4x4", "needs `:wrap=`"),
        ("kncube:4x4:wrap=t", "1 flags for 2"),
        ("kncube:4x4:wrap=tq", "neither"),
        ("ring:4x4", "one dimension"),
        ("mesh:4xfour", "not a whole number"),
        ("torus:4x4x4:twisted", "no named twist"),
        ("torus:4x4x8:twist", "only option"),
        ("mesh:4x8:twisted", "no options"),
    ] {
        let e = parse_shorthand(bad).unwrap_err();
        assert!(e.0.contains(says), "{bad}: {e}");
        assert!(e.0.contains(&format!("`{bad}`")), "{bad}: {e}");
    }
}

#[test]
fn edit_distance_by_hand() {
    // kitten -> sitting: substitute k/s, e/i, insert g = 3.
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(
        nearest("bandwith", &["latency", "link_bandwidth", "bandwidth"]),
        Some("bandwidth")
    );
}

#[test]
fn validation_cases_parse() {
    let text = r#"
[[case]]
figure = "f"
source = "s"
class = "structural"
quantity = "bisection_bandwidth"
published = "46.1 TB/s"
tolerance = "0.05 TB/s"
tolerance_reason = "the paper prints 46.1"
[case.system]
topology = "kncube:24x18x16x2x3x2:wrap=tmtmtm"
link_bandwidth = "5 GB/s"
interfaces = 4
"#;
    let cases = parse_validation("v.toml", text).unwrap();
    assert_eq!(cases[0].published, 46_100_000_000_000);
    assert_eq!(cases[0].tolerance, 50_000_000_000);
    let e = parse_validation(
        "v.toml",
        &text.replace("bisection_bandwidth", "bisection_bandwith"),
    )
    .unwrap_err();
    assert!(e.why.contains("nearest is `bisection_bandwidth`"), "{e}");
    // A wide tolerance without its reason is refused, and says why.
    let e = parse_validation(
        "v.toml",
        &text
            .replace("\"0.05 TB/s\"", "\"10 TB/s\"")
            .replace("tolerance_reason = \"the paper prints 46.1\"\n", ""),
    )
    .unwrap_err();
    assert!(e.why.contains("above 15%"), "{e}");
    assert!(cases[0].calibrated_by.is_none() && cases[0].tolerance_reason.is_some());
}

#[test]
fn validation_packets_from_a_tofu_frame() {
    let text = r#"
[[case]]
figure = "f"
source = "s"
class = "prediction"
quantity = "injection_rate"
published = "17.6 GB/s"
tolerance = "0.35 GB/s"
tolerance_reason = "r"
[case.packets]
frame = "tofu-fx10"
[case.system]
topology = "tofu:k"
"#;
    let cases = parse_validation("v.toml", text).unwrap();
    // Tofu's frame: 2016 B of payload in 2112 B on the link (tofu_family's table): 96 B.
    assert_eq!(
        (cases[0].packets.payload, cases[0].packets.header),
        (2016, 96)
    );
    assert_eq!(
        cases[0].tofu_frame,
        Some(podsim_tofu::family::Machine::Fx10)
    );
    // FX10's links give 4 x 5.0 x 2016 / 2112 = 19.09 GB/s, its host bus 20 x 128 / 144 =
    // 17.78 GB/s (the smaller, to the MB/s).
    assert_eq!(cases[0].evaluate().unwrap(), Some(17_778_000_000));
    for (bad, says) in [
        (
            "frame = \"tofu3\"",
            "`tofu3` is not a Tofu frame (tofu-k, tofu-fx10, tofu2, tofud)",
        ),
        (
            "frame = \"tofud\"\npayload = \"1 B\"",
            "either frame or payload and header",
        ),
        ("payload = \"2016 B\"", "expected payload and header"),
    ] {
        let e =
            parse_validation("v.toml", &text.replace("frame = \"tofu-fx10\"", bad)).unwrap_err();
        assert!(e.why.contains(says), "{bad}: {e}");
    }
    // A frame of another generation than the system's is refused when measured.
    let c = parse_validation("v.toml", &text.replace("tofu-fx10", "tofu2")).unwrap();
    let e = c[0].evaluate().unwrap_err();
    assert!(
        e.to_string()
            .contains("is a Tofu2 frame, but the system is Tofu"),
        "{e}"
    );
    // The K computer's host bus rate is unknown: an error, not a number.
    let c = parse_validation("v.toml", &text.replace("tofu-fx10", "tofu-k")).unwrap();
    let e = c[0].evaluate().unwrap_err();
    assert!(e.to_string().contains("tofu-k: the rate of the bus"), "{e}");
}

#[test]
fn app_cases_parse_and_refuse_what_they_do_not_read() {
    let text = r#"
[[case]]
figure = "f"
source = "s"
class = "prediction"
quantity = "app_speedup"
published = "3.3x"
tolerance = "0.33"
tolerance_reason = "the paper prints 3.3x"
[case.app]
app = "rnn1"
cmem = "off"
"#;
    let cases = parse_validation("v.toml", text).unwrap();
    assert_eq!(cases[0].published, 3300);
    let app = cases[0].app.as_ref().unwrap();
    assert_eq!(app.app.as_deref(), Some("RNN1"));
    assert_eq!((app.chips, app.cmem), (128, false));
    let all = parse_validation("v.toml", &text.replace("\"rnn1\"", "\"all\"")).unwrap();
    assert_eq!(all[0].app.as_ref().unwrap().app, None);
    for (from, to, why) in [
        ("\"rnn1\"", "\"rnn2\"", "not an application"),
        ("cmem = \"off\"", "cmem = \"maybe\"", "not on or off"),
        ("cmem = \"off\"", "chips = 100", "64, 128, 256, 512 or 1024"),
        ("app_speedup", "app_cmem_gain", "compares CMEM on with off"),
        ("app_speedup", "dlrm_speedup", "only an app_* case"),
        (
            "app_speedup",
            "app_cmem_perf_per_watt_gain",
            "compares CMEM on with off",
        ),
        (
            "cmem = \"off\"",
            "chip = \"tpuv4\"",
            "only an app_power case",
        ),
        ("app_speedup", "app_power", "an app_power case needs chip"),
        (
            "[case.app]\napp = \"rnn1\"\ncmem = \"off\"\n",
            "",
            "needs [case.app]",
        ),
    ] {
        let e = parse_validation("v.toml", &text.replace(from, to)).unwrap_err();
        assert!(e.why.contains(why), "{from} -> {to}: {e}");
    }
    // An app_power case names its chip and statistic, each from its list.
    let power = text
        .replace("app_speedup", "app_power")
        .replace("\"3.3x\"", "\"170 W\"")
        .replace("cmem = \"off\"", "chip = \"tpuv3\"\nstatistic = \"max\"");
    let cases = parse_validation("v.toml", &power).unwrap();
    assert_eq!(cases[0].published, 170_000);
    let app = cases[0].app.as_ref().unwrap();
    assert_eq!(
        app.power,
        Some((true, podsim_tpu::apps::PowerStatistic::Max))
    );
    for (from, to, why) in [
        ("\"tpuv3\"", "\"tpuv5\"", "not tpuv4 or tpuv3"),
        ("\"max\"", "\"median\"", "not min, mean or max"),
        ("statistic = \"max\"", "", "needs chip"),
        ("\"170 W\"", "\"many\"", "not watts"),
    ] {
        let e = parse_validation("v.toml", &power.replace(from, to)).unwrap_err();
        assert!(e.why.contains(why), "{from} -> {to}: {e}");
    }
}

#[test]
fn tofu_shorthands_and_keys() {
    let TopoSpec::Tofu(k) = parse_topology("tofu:k").unwrap() else {
        panic!("tofu:k is Tofu")
    };
    assert_eq!(
        (k.xyz, k.xyz_wrap, k.abc),
        ([24, 18, 16], [true, false, true], [2, 3, 2])
    );
    let TopoSpec::Tofu(f) = parse_topology("tofu:fugaku").unwrap() else {
        panic!()
    };
    assert_eq!(f.xyz, [24, 23, 24]);
    let TopoSpec::Tofu(x) = parse_topology("tofu2:4x6x8:wrap=tmt").unwrap() else {
        panic!()
    };
    assert_eq!(
        (x.generation, x.xyz_wrap),
        (podsim_topology::TofuGeneration::Tofu2, [true, false, true])
    );
    assert!(matches!(parse_topology("torus:4x4"), Ok(TopoSpec::Cube(_))));
    for (bad, says) in [
        ("tofu:2x2", "three sizes"),
        ("tofu:kk", "expected a preset"),
        ("tofo:k", "nearest is `tofu`"),
    ] {
        let e = parse_topology(bad).unwrap_err();
        assert!(e.0.contains(says), "{bad}: {e}");
    }
    // A Tofu system takes its links from the generation; setting them is an error.
    let text = "name = \"t\"\n[[system]]\ntopology = \"tofu:k\"\nlink_bandwidth = \"5 GB/s\"\n[[run]]\nwhat = \"metrics\"\n";
    let e = parse_scenario("t.toml", text).unwrap_err();
    assert_eq!(
        (e.line, e.key.as_str()),
        (Some(4), "system[0].link_bandwidth")
    );
    let ok = parse_scenario(
        "t.toml",
        &text.replace(
            "link_bandwidth = \"5 GB/s\"\n",
            "link_latency = \"100 ns\"\n",
        ),
    )
    .unwrap();
    assert_eq!(ok.systems[0].link.bandwidth.bytes_per_s(), 5_000_000_000);
    // A torus without link_bandwidth is an error naming the key.
    let e = parse_scenario(
        "t.toml",
        &text
            .replace("tofu:k", "torus:4x4")
            .replace("link_bandwidth = \"5 GB/s\"\n", ""),
    )
    .unwrap_err();
    assert_eq!(e.key, "system[0].link_bandwidth");
}

#[test]
fn every_preset_shorthand_builds_in_a_scenario() {
    // Each preset as a scenario's topology, with no link keys: it must validate and build, and
    // report the node count its preset implies (derivations in the topology tests).
    for (spec, nodes) in [
        ("tpuv4:pod", 4096),
        ("tpuv4:slice=4x4x8:twisted", 128),
        ("tpuv4:slice=1x2x2", 4),
        ("tofu:k", 82_944),
        ("tofu:fugaku", 158_976),
        ("tofu:fx100", 12),
        ("tofu:2x2x3", 144),
        ("dojo:die", 354),
        ("dojo:tile", 8_850),
        ("dojo:system=1x2", 17_700),
        ("grayskull", 156),
        ("wormhole:harvest=2", 120),
        ("hybrid:128", 128),
    ] {
        let text = format!(
            "name = \"p\"\n[[system]]\ntopology = \"{spec}\"\n[[run]]\nwhat = \"metrics\"\n"
        );
        let s = parse_scenario("p.toml", &text).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(
            s.systems[0].build().unwrap().metrics().nodes,
            nodes,
            "{spec}"
        );
        // Presets refuse link keys.
        let with_bw = text.replace("[[run]]", "link_bandwidth = \"1 GB/s\"\n[[run]]");
        let e = parse_scenario("p.toml", &with_bw).unwrap_err();
        assert_eq!(e.key, "system[0].link_bandwidth", "{spec}");
    }
    // A fat tree needs its link bandwidth like a torus does.
    let text = "name = \"f\"\n[[system]]\ntopology = \"fattree:8\"\nlink_bandwidth = \"25 GB/s\"\n[[run]]\nwhat = \"metrics\"\n";
    assert_eq!(
        parse_scenario("f.toml", text).unwrap().systems[0]
            .build()
            .unwrap()
            .metrics()
            .nodes,
        128
    );
}

/// The error of `text` as a scenario.
fn scenario_err(text: &str) -> ConfigError {
    parse_scenario("bad.toml", text).unwrap_err()
}

const SYSTEM: &str =
    "[[system]]\nname = \"r\"\ntopology = \"ring:4\"\nlink_bandwidth = \"50 GB/s\"\n";

#[test]
fn a_bad_algorithm_or_model_is_named_at_its_own_key_and_line() {
    // Regression: both pointed at `run[0].kind` and the line of `kind`.
    let text = format!(
        "name = \"x\"\n{SYSTEM}[[run]]\nwhat = \"collective\"\nkind = \"all-reduce\"\nbytes = \"1 MiB\"\nalgorithm = \"rign\"\n"
    );
    let e = scenario_err(&text);
    assert_eq!(
        (e.key.as_str(), e.line),
        ("run[0].algorithm", Some(10)),
        "{e}"
    );
    let text = format!(
        "name = \"x\"\n{SYSTEM}[[run]]\nwhat = \"collective\"\nkind = \"all-reduce\"\nbytes = \"1 MiB\"\nmodel = \"flwo\"\n"
    );
    let e = scenario_err(&text);
    assert_eq!((e.key.as_str(), e.line), ("run[0].model", Some(10)), "{e}");
}

#[test]
fn keys_without_effect_are_errors() {
    // Collective keys in a metrics run used to be ignored (algorithm, model, chunk).
    for (k, v) in [
        ("algorithm", "\"ring\""),
        ("model", "\"flow\""),
        ("chunk", "\"4 KiB\""),
    ] {
        let text = format!("name = \"x\"\n{SYSTEM}[[run]]\nwhat = \"metrics\"\n{k} = {v}\n");
        let e = scenario_err(&text);
        assert_eq!(e.key, format!("run[0].{k}"), "{e}");
        assert_eq!(e.line, Some(8), "{e}");
    }
    // The seed reached no random stream.
    let e = scenario_err(&format!(
        "name = \"x\"\nseed = 1\n{SYSTEM}[[run]]\nwhat = \"metrics\"\n"
    ));
    assert_eq!((e.key.as_str(), e.line), ("seed", Some(2)), "{e}");
    // link_latency on a preset that does not read it.
    let e = scenario_err(
        "name = \"x\"\n[[system]]\nname = \"t\"\ntopology = \"tpuv4:slice=4x4x4\"\nlink_latency = \"1 us\"\n[[run]]\nwhat = \"metrics\"\n",
    );
    assert_eq!(
        (e.key.as_str(), e.line),
        ("system[0].link_latency", Some(5)),
        "{e}"
    );
}

#[test]
fn workload_runs_read_their_file_and_take_no_other_keys() {
    // Relative to the scenario's directory: examples/ from the repository root.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let scenario = root.join("s.toml");
    let file = scenario.to_str().unwrap();
    let ok = "name = \"w\"\n[[run]]\nwhat = \"workload\"\nfile = \"workload-pipeline.toml\"\n";
    let s = parse_scenario(file, ok).unwrap();
    assert!(matches!(&s.runs[0], RunSpec::Workload { spec } if spec.workload.tasks.len() > 4));
    for (text, key, says) in [
        (
            "[[run]]\nwhat = \"workload\"\nfile = \"no-such.toml\"\n",
            "run[0].file",
            "no-such.toml",
        ),
        (
            "[[run]]\nwhat = \"workload\"\nfile = \"workload-pipeline.toml\"\nmodel = \"flow\"\n",
            "run[0].model",
            "from its file",
        ),
        ("[[run]]\nwhat = \"workload\"\n", "run[0].file", "missing"),
        (
            "[[system]]\nname = \"a\"\ntopology = \"torus:2x2\"\nlink_bandwidth = \"1 GB/s\"\n[[run]]\nwhat = \"metrics\"\nfile = \"x.toml\"\n",
            "run[0].file",
            "only a workload run",
        ),
    ] {
        let text = format!("name = \"w\"\n{text}");
        let e = parse_scenario(file, &text).unwrap_err();
        assert_eq!(e.key, key, "{e}");
        assert!(e.why.contains(says), "{e}");
    }
}

#[test]
fn command_runs_hold_a_command_line_and_take_no_other_keys() {
    // A scenario of command runs needs no [[system]].
    let ok = "name = \"c\"\n[[run]]\nwhat = \"command\"\nargs = [\"gemm\", \"--m\", \"8\"]\n";
    let s = parse_scenario("c.toml", ok).unwrap();
    assert_eq!(
        s.runs,
        vec![RunSpec::Command {
            args: vec!["gemm".into(), "--m".into(), "8".into()]
        }]
    );
    for (text, key, says) in [
        ("[[run]]\nwhat = \"command\"\n", "run[0].args", "missing"),
        (
            "[[run]]\nwhat = \"command\"\nargs = []\n",
            "run[0].args",
            "empty",
        ),
        (
            "[[run]]\nwhat = \"command\"\nargs = [\"gemm\"]\nbytes = \"1 MiB\"\n",
            "run[0].bytes",
            "no effect",
        ),
        (
            "[[run]]\nwhat = \"command\"\nargs = [\"gemm\"]\nfile = \"x.toml\"\n",
            "run[0].file",
            "no effect",
        ),
        (
            "[[system]]\nname = \"a\"\ntopology = \"tpuv4:slice=4x4x4\"\n[[run]]\nwhat = \"metrics\"\nargs = [\"gemm\"]\n",
            "run[0].args",
            "only a command run",
        ),
    ] {
        let e = parse_scenario("c.toml", &format!("name = \"c\"\n{text}")).unwrap_err();
        assert_eq!(e.key, key, "{e}");
        assert!(e.to_string().contains(says), "{e}");
    }
}

#[test]
fn a_training_case_takes_an_inline_model_and_counts_megatrons_flops() {
    // GPT-3 175B's shape as a table of model-file keys, on a 4x4x4 TPU v4 slice (64 chips,
    // [1,1,8,8]), a batch of 16.
    let text = r#"
[[case]]
figure = "f"
source = "s"
class = "prediction"
quantity = "QUANTITY"
published = "PUBLISHED"
tolerance = "TOLERANCE"
tolerance_reason = "r"
[case.train]
model = { name = "gpt-like", layers = 2, d_model = 12288, heads = 96, d_ff = 49152, vocabulary = 51200, sequence = 2048, batch = 16 }
system = "tpuv4:slice=4x4x4"
parallel = "[1,1,8,8]"
partition = "1d/1d"
"#;
    let case = |q: &str, p: &str, t: &str| {
        let t = text
            .replace("QUANTITY", q)
            .replace("PUBLISHED", p)
            .replace("TOLERANCE", t);
        parse_validation("v.toml", &t).unwrap().remove(0)
    };
    let seqs = case("train_throughput", "1", "0.1")
        .evaluate()
        .unwrap()
        .unwrap() as f64
        / 1000.0;
    let flops = case("train_tflops_per_chip", "100 TFLOP/s", "10 TFLOP/s")
        .evaluate()
        .unwrap()
        .unwrap() as f64;
    // Megatron's count a sequence (Narayanan et al. 2021, section 5.1), by hand:
    // 96 x 2048 x 2 x 12288^2 x (1 + 2048/73728 + 51200/(16 x 2 x 12288)) =
    // 5.9374e13 x (1 + 0.027778 + 0.130208) = 6.8754e13 FLOPs; FLOP/s a chip = that x the
    // sequences a second / 64 chips.
    let per_seq = 96.0
        * 2048.0
        * 2.0
        * 12288f64.powi(2)
        * (1.0 + 2048.0 / 73728.0 + 51200.0 / (16.0 * 2.0 * 12288.0));
    assert!((per_seq / 6.8754e13 - 1.0).abs() < 1e-4);
    // seqs is rounded to thousandths of a sequence a second.
    assert!(
        (flops / (per_seq * seqs / 64.0) - 1.0).abs() < 1e-3,
        "{flops} {seqs}"
    );
    // A table that is no model names the inner key; a number is neither name nor table.
    let e = parse_validation(
        "v.toml",
        &text
            .replace("QUANTITY", "train_throughput")
            .replace("PUBLISHED", "1")
            .replace("TOLERANCE", "0.1")
            .replace("d_model = 12288, ", ""),
    )
    .unwrap_err();
    assert!(
        e.key.contains("train.model") && e.why.contains("d_model"),
        "{e}"
    );
    let e = parse_validation(
        "v.toml",
        &text
            .replace("QUANTITY", "train_throughput")
            .replace("PUBLISHED", "1")
            .replace("TOLERANCE", "0.1")
            .replace(
                "model = { name = \"gpt-like\", layers = 2, d_model = 12288, heads = 96, d_ff = 49152, vocabulary = 51200, sequence = 2048, batch = 16 }",
                "model = 3",
            ),
    )
    .unwrap_err();
    assert!(e.why.contains("built-in model's name"), "{e}");
}
