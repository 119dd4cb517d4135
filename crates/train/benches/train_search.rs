//! The closed-form pass of `podsim train --search`: GPT-3 175B on 512 TPU v4 chips (every
//! slice shape, partition spec, 1D/2D option, rematerialisation, microbatch count and axis
//! order), no flow survivors. The configurations per second per core are printed beside
//! criterion's time (the bar: 10,000; Calculon-style spreadsheets: ~74).

#![allow(missing_docs)] // criterion_group! generates undocumented functions

use criterion::{Criterion, criterion_group, criterion_main};
use podsim_system::workload::ChipSpec;
use podsim_train::{Transformer, search};

fn bench(c: &mut Criterion) {
    let t = Transformer::builtin("gpt3-175b").expect("built-in");
    let chip = ChipSpec::preset("tpuv4").expect("preset");
    let mut no_flow =
        |_: &podsim_topology::Network| -> Result<Box<dyn podsim_net::NetworkModel>, String> {
            Err("the closed-form pass runs no flow model".into())
        };
    let r = search(&t, &chip, 512, 1536, 5, 0, &mut no_flow).expect("search");
    eprintln!(
        "train search, gpt3-175b on 512 chips: {} configurations in {:.3} s = {:.0} configurations/s on one core",
        r.configurations_evaluated,
        r.closed_form_s,
        r.configurations_evaluated as f64 / r.closed_form_s
    );
    let mut g = c.benchmark_group("train");
    g.sample_size(10);
    g.bench_function("train_search_gpt3_512_closed_form", |b| {
        b.iter(|| search(&t, &chip, 512, 1536, 5, 0, &mut no_flow).expect("search"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
