#!/usr/bin/env bash
# Zero-load latency of every configuration, measured precisely: one long
# BookSim run per configuration at a very low load (0.005 flits/node/cycle,
# sample_period = 40000 instead of the default 1000, so ~19000 measured
# packets with 1-flit packets, ~4800 with 4-flit ones), next to the exact
# zero-load packet latency derived from BookSim's pipeline (README.md,
# "Pipeline"), for the default delays (routing 1, VA 1, SA 1, ST 1, credit 0):
#   T0 = (3 + L + 1) * D + 7 + (P - 1)                      [cycles]
#   3     cycles from a flit's arrival in a router to its departure
#         (route computation in the arrival cycle, VA, SA, ST + send);
#   L + 1 cycles from departure to arrival in the next router
#         (channel latency L: 1 on the mesh, 2 on the torus, + 1);
#   7     = 2 (injection channel) + 3 (last router) + 2 (ejection channel);
#   D     mean hop count of uniform traffic (self included):
#         mesh 2(k^2-1)/(3k) (8x8: 5.25, 16x16: 10.625), torus (even k) k/2;
#   P     packet size in flits (the tail follows the head one cycle apart).
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
  echo "# analytic_t0: exact zero-load packet latency for the mean hop count D of uniform traffic: per link hop 5 cycles on the mesh (L=1), 6 on the torus (L=2), + 7, + (packet_size - 1)"
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
      if (topo == "mesh") { D = 2*(k*k-1)/(3*k); per = 5 } else { D = 2*(k/4); per = 6 }
      t0 = per*D + 7 + (ps-1); ts = per*(hops-1) + 7 + (ps-1)
      printf "%s,%s,%s,%s,%s,%s,%.3f,%.3f,%.2f\n", name, rate, sp, pl, nl, hops, t0, ts, cpu
    }' "$log" "$log.time" | tee -a "$OUT.tmp"
done
mv "$OUT.tmp" "$OUT"
