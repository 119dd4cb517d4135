#!/usr/bin/env bash
# Zero-load latency of every configuration, measured precisely: one long
# BookSim run per configuration at a very low load (0.005 flits/node/cycle,
# sample_period = 40000 instead of the default 1000, so ~19000 measured
# packets with 1-flit packets, ~4800 with 4-flit ones), next to the exact
# zero-load packet latency derived from BookSim's pipeline (README.md):
#   T0 = H * (routing_delay + vc_alloc_delay + sw_alloc_delay
#             + st_prepare_delay + st_final_delay) + D * L + 3 + (P - 1)
#      = (D + 1) * 4 + D * L + 3 + (P - 1)       for the default delays
#   D  mean number of links of uniform traffic (self-addressed packets
#      included): mesh 2(k^2-1)/(3k) (8x8: 5.25, 16x16: 10.625), torus (even
#      k) k/2; H = D + 1 routers; L channel latency (1 mesh, 2 torus);
#   3  = injection channel + ejection channel + 1; P packet size in flits.
# The 0.01 row of each curve (default sampling) is noisier: ~0.3-0.6 cycles
# standard error from the random hop counts of a few hundred packets.
#
# Usage: tools/booksim/zeroload.sh [CONFIG_NAME...]
# Output: tools/booksim/curves/zeroload.csv
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BOOKSIM="$HERE/build/booksim2/src/booksim"
COMMIT="$(cat "$HERE/build/COMMIT" 2>/dev/null || echo unknown)"
RATE=0.005
SP=40000
ALL=(mesh8x8_p1 mesh8x8_p4 torus8x8_p1 torus8x8_p4 mesh16x16_p1 mesh16x16_p4)
[ $# -gt 0 ] && NAMES=("$@") || NAMES=("${ALL[@]}")
mkdir -p "$HERE/build/runs/zeroload"
OUT="$HERE/curves/zeroload.csv"
{
  echo "# zeroload.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) booksim $COMMIT"
  echo "# machine: $(uname -a)"
  echo "# command: tools/booksim/build/booksim2/src/booksim tools/booksim/configs/<config>.cfg injection_rate=$RATE sample_period=$SP"
  echo "# analytic_t0: exact zero-load packet latency (D+1)*4 + D*L + 3 + (packet_size-1) for the mean link count D of uniform traffic (channel latency L = 1 mesh, 2 torus; 4 = routing+VA+SA+ST delays per router)"
  echo "# analytic_at_sampled_hops: the same formula with D = hops_avg - 1 of this run's packets (removes the sampling noise of the destinations)"
  echo "config,injection_rate,sample_period,packet_latency_avg,network_latency_avg,hops_avg,analytic_t0,analytic_at_sampled_hops,cpu_seconds"
} > "$OUT.tmp"
for name in "${NAMES[@]}"; do
  cfg="$HERE/configs/$name.cfg"; log="$HERE/build/runs/zeroload/$name.out"
  (
    flock 9
    /usr/bin/time -f 'CPU_SECONDS %U %S' -o "$log.time" \
      timeout 1200 "$BOOKSIM" "$cfg" injection_rate=$RATE sample_period=$SP > "$log" 2>&1
  ) 9> "$HERE/build/booksim.lock"
  k=$(awk -F'[=;]' '/^k *=/{gsub(/ /,"",$2); print $2}' "$cfg")
  topo=$(awk -F'[=;]' '/^topology *=/{gsub(/ /,"",$2); print $2}' "$cfg")
  ps=$(awk -F'[=;]' '/^packet_size *=/{gsub(/ /,"",$2); print $2}' "$cfg")
  awk -v name="$name" -v rate=$RATE -v sp=$SP -v k="$k" -v topo="$topo" -v ps="$ps" '
    FNR==NR && /Overall Traffic Statistics/ {ov=1}
    FNR==NR && ov && /^Packet latency average = / {pl=$5}
    FNR==NR && ov && /^Network latency average = / {nl=$5}
    FNR==NR && ov && /^Hops average = / {hops=$4}
    FNR!=NR && /^CPU_SECONDS/ {cpu=$2+$3}
    END {
      if (topo == "mesh") { D = 2*(k*k-1)/(3*k); L = 1 } else { D = 2*(k/4); L = 2 }
      t0 = (D+1)*4 + D*L + 3 + (ps-1); ts = hops*4 + (hops-1)*L + 3 + (ps-1)
      printf "%s,%s,%s,%s,%s,%s,%.3f,%.3f,%.2f\n", name, rate, sp, pl, nl, hops, t0, ts, cpu
    }' "$log" "$log.time" | tee -a "$OUT.tmp"
done
mv "$OUT.tmp" "$OUT"
