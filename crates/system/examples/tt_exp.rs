use podsim_system::tt_study::*;
use podsim_system::tt_matmul::*;
fn main() {
    for r in [12e9, 14e9] {
        let u = run(&Study::u_benchmark(r)).unwrap();
        println!("ubench {r:e}: {:.1}", u.run.bandwidth_bytes_per_s / 1e9);
    }
    let shapes = [("llama ff1 bfp4", 32, 8192, 3584, Dtype::Bfp4), ("llama ff2 bfp8", 32, 3584, 8192, Dtype::Bfp8),
      ("llama qkv bfp8", 32, 8192, 1280, Dtype::Bfp8), ("llama wo bfp8", 32, 1024, 8192, Dtype::Bfp8),
      ("mixtral w1 bfp4", 32, 4096, 14336, Dtype::Bfp4), ("mixtral w2 bfp8", 32, 14336, 4096, Dtype::Bfp8),
      ("mixtral w1 bfp8", 32, 4096, 14336, Dtype::Bfp8), ("llama ff1 bfp8", 32, 8192, 3584, Dtype::Bfp8)];
    for (name, m, k, n, d) in shapes {
        for rate in [12e9, 14e9] {
            let t = std::time::Instant::now();
            let mut mm = Matmul::new(m, k, n, rate);
            mm.dtype = d;
            let r = podsim_system::tt_matmul::run(&mm).unwrap();
            println!("{name:18} {rate:e} {:6.1} GB/s {:5.1}% t {:.1} us comp {:.1} us imb {:.3} kb {} ({:.2}s)", r.dram_bandwidth_bytes_per_s/1e9, r.utilization*100.0, r.time_s*1e6, r.compute_time_s*1e6, r.imbalance, r.block_rows, t.elapsed().as_secs_f64());
        }
    }
    let base = Matmul::new(32, 8192, 3584, 12e9);
    for (name, mm) in [("single", Matmul{buffers:1, ..base.clone()}), ("unicast", Matmul{in0: In0::Unicast, ..base.clone()}), ("t16", Matmul{tile_width:16, ..base.clone()}), ("t8", Matmul{tile_width:8, ..base.clone()})] {
        let r = podsim_system::tt_matmul::run(&mm).unwrap();
        println!("{name:18} {:6.1} GB/s {:5.1}% t {:.1} us comp {:.1} us imb {:.3}", r.dram_bandwidth_bytes_per_s/1e9, r.utilization*100.0, r.time_s*1e6, r.compute_time_s*1e6, r.imbalance);
    }
}
