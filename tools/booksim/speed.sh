#!/usr/bin/env bash
# BookSim 2 speed on the 8x8 mesh, 1-flit packets, uniform at 0.3
# flits/node/cycle: flit-hops per CPU-second, the reference for issue 18
# item 2 (podsim's packet level must be >= 100x / 50x this, measured on the
# same machine in the same sitting).
#
# Usage: tools/booksim/speed.sh [REPEATS]   (default 3; the median is reported)
#
# The run is configs/mesh8x8_p1.cfg with sample_period = 5000 (instead of the
# default 1000): 3 warm-up periods + 3 converging measurement periods =
# 30000 cycles plus the drain (the run converges after the minimum 3 periods
# at this load, so the length is fixed to within the few drain cycles).
#
# Measured with /usr/bin/time -v: user+system CPU seconds and peak RSS.
# Work counted: flit_hops = accepted_flit_rate x nodes x cycles x hops_avg
#   accepted_flit_rate = "Accepted flit rate average" (measurement window),
#   cycles             = "Time taken is N cycles" (the whole run),
#   hops_avg           = BookSim's "Hops average": routers traversed per packet
#                        (= links traversed + 1, since f->hops++ at every router's
#                        switch traversal, iq_router.cpp l.1079).
# Both flit-hops and flit-link-hops (hops_avg - 1) per CPU-second are printed.
# Output: tools/booksim/curves/speed.txt (appended), and to stdout.
# Only one BookSim process runs at a time (flock on build/booksim.lock,
# shared with curves.sh).
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BOOKSIM="$HERE/build/booksim2/src/booksim"
COMMIT="$(cat "$HERE/build/COMMIT" 2>/dev/null || echo unknown)"
REPEATS="${1:-3}"
RATE=0.3
NODES=64
[ -x "$BOOKSIM" ] || { echo "speed.sh: run tools/booksim/build.sh first" >&2; exit 1; }
mkdir -p "$HERE/build/runs/speed" "$HERE/curves"
CMD="tools/booksim/build/booksim2/src/booksim tools/booksim/configs/mesh8x8_p1.cfg injection_rate=$RATE sample_period=5000"
OUT="$HERE/curves/speed.txt"
{
  echo "# speed.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) booksim $COMMIT"
  echo "# machine: $(uname -a)"
  echo "# cpu: $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
  echo "# command: /usr/bin/time -v $CMD"
  echo "run,cycles,accepted_flit_rate,hops_avg,flit_hops,cpu_seconds,max_rss_kb,flit_hops_per_cpu_s,link_hops_per_cpu_s"
} | tee -a "$OUT"
results=()
for i in $(seq 1 "$REPEATS"); do
  log="$HERE/build/runs/speed/run$i.out"
  (
    flock 9
    cd "$HERE/../.." && /usr/bin/time -v timeout 600 $CMD > "$log" 2> "$log.time"
  ) 9> "$HERE/build/booksim.lock"
  line=$(awk -v i="$i" -v nodes=$NODES '
    FNR==NR && /Overall Traffic Statistics/ {ov=1}
    FNR==NR && /^Time taken is/ {cyc=$4}
    FNR==NR && ov && /^Accepted flit rate average = / {acc=$6}
    FNR==NR && ov && /^Hops average = / {hops=$4}
    FNR!=NR && /User time/ {u=$4}
    FNR!=NR && /System time/ {s=$4}
    FNR!=NR && /Maximum resident set size/ {rss=$6}
    END { cpu=u+s; fh=acc*nodes*cyc*hops; lh=acc*nodes*cyc*(hops-1);
          printf "%d,%d,%s,%s,%.0f,%.2f,%d,%.0f,%.0f\n", i, cyc, acc, hops, fh, cpu, rss, fh/cpu, lh/cpu }' "$log" "$log.time")
  echo "$line" | tee -a "$OUT"
  results+=("$line")
done
printf '%s\n' "${results[@]}" | sort -t, -k8,8g | awk -F, -v n="$REPEATS" 'NR==int((n+1)/2){printf "median: %.3f M flit-hops/CPU-s (%.3f M flit-link-hops/CPU-s), %.2f CPU-s, %d kB peak RSS, %d cycles\n", $8/1e6, $9/1e6, $6, $7, $2}' | tee -a "$OUT"
