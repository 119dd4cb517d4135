#!/usr/bin/env bash
# Latency-throughput curves of BookSim 2 for the configurations in
# tools/booksim/configs/, the reference for `podsim noc --router booksim`.
#
# Usage:
#   tools/booksim/curves.sh [CONFIG_NAME...]     (default: all, in the order below)
#   e.g. tools/booksim/curves.sh mesh8x8_p1 mesh8x8_p4
#
# Needs tools/booksim/build.sh to have been run. Runs ONE BookSim process at a
# time (flock on build/booksim.lock, shared with speed.sh), each bounded by
# `timeout $RUN_TIMEOUT` (default 1200 s).
#
# For each configuration NAME it writes tools/booksim/curves/NAME.csv:
#   `# key: value` context lines (commit, command, config, date, machine), then
#   injection_rate,packet_latency_avg,network_latency_avg,flit_latency_avg,
#   accepted_flit_rate,saturated,hops_avg,sim_cycles,cpu_seconds,status
# and keeps BookSim's full output of every run in
# tools/booksim/build/runs/NAME/RATE.out (not committed).
#
# Injection rates (flits/node/cycle; injection_rate_uses_flits = 1):
#   1. coarse: 0.01, then 0.05, 0.10, ... (step $COARSE, default 0.05) up to the
#      first rate BookSim reports unstable, plus one more coarse step past it;
#   2. fine: every 0.01 from the last coarse rate whose packet latency is
#      below twice the 0.01 rate's one up to the first unstable coarse rate
#      (runs just past the knee may still converge, so the knee can lie
#      below the last converged coarse rate);
#   3. finer: the 0.005 midpoint between the highest stable and the lowest
#      unstable rate found so far.
#
# Columns (all from BookSim's own output):
#   stable runs   -> the "Overall Traffic Statistics" block printed after the
#                    measurement periods have converged and all measured
#                    packets have drained:
#                    "Packet latency average", "Network latency average",
#                    "Flit latency average", "Accepted flit rate average",
#                    "Hops average"; saturated=false, status=converged.
#   unstable runs -> BookSim prints "Simulation unstable, ending ..." (average
#                    latency incl. in-flight packets > latency_thres = 500, or
#                    no convergence within max_samples = 10 periods) and no
#                    overall block; the row holds the LAST per-period sample
#                    ("Accepted flit rate average=" etc.; latencies there only
#                    count delivered packets, so they are lower bounds);
#                    saturated=true, status=latency_thres|no_convergence|timeout.
#   sim_cycles  -> "Time taken is N cycles" (stable runs only, else the
#                  cycles simulated = periods x sample_period).
#   cpu_seconds -> user+system CPU time of the BookSim process.
set -uo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
BOOKSIM="$HERE/build/booksim2/src/booksim"
COMMIT="$(cat "$HERE/build/COMMIT" 2>/dev/null || echo unknown)"
RUN_TIMEOUT="${RUN_TIMEOUT:-1200}"
COARSE="${COARSE:-0.05}"
ALL=(mesh8x8_p1 mesh8x8_p4 torus8x8_p1 torus8x8_p4 mesh16x16_p1 mesh16x16_p4)
[ -x "$BOOKSIM" ] || { echo "curves.sh: $BOOKSIM missing: run tools/booksim/build.sh first" >&2; exit 1; }
[ $# -gt 0 ] && NAMES=("$@") || NAMES=("${ALL[@]}")

mkdir -p "$HERE/curves"

fmt() { LC_ALL=C printf '%.3f' "$1"; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a+1e-9<b)}'; }

# run_point NAME RATE -> appends one CSV row to $ROWS, sets STABLE=1/0
run_point() {
  local name=$1 rate; rate=$(fmt "$2")
  local cfg="$HERE/configs/$name.cfg" out="$HERE/build/runs/$name/$rate.out"
  mkdir -p "$(dirname "$out")"
  if grep -q "^$rate," "$ROWS" 2>/dev/null; then
    STABLE=$(grep "^$rate," "$ROWS" | awk -F, '{print ($6=="false")}'); return
  fi
  local t0=$SECONDS
  # one BookSim at a time (lock shared with speed.sh)
  exec 9> "$HERE/build/booksim.lock"; flock 9
  /usr/bin/time -f 'CPU_SECONDS %U %S' -o "$out.time" \
    timeout "$RUN_TIMEOUT" "$BOOKSIM" "$cfg" "injection_rate=$rate" > "$out" 2>&1
  local rc=$?
  flock -u 9; exec 9>&-
  local cpu; cpu=$(awk '/^CPU_SECONDS/{printf "%.2f", $2+$3}' "$out.time" 2>/dev/null)
  [ -n "$cpu" ] || cpu=NaN
  local row
  row=$(awk -v rate="$rate" -v rc="$rc" -v cpu="$cpu" -v sp=1000 '
    /^Class 0:/                      { periods++ }
    /Overall Traffic Statistics/     { overall=1 }
    /^Time taken is/                 { cycles=$4 }
    /exceeded .* cycles. Aborting/   { lat_abort=1 }
    /Too many sample periods/        { nocon=1 }
    /Simulation unstable/            { unstable=1 }
    !overall && /^Packet latency average = /  { pl=$5 }
    !overall && /^Network latency average = / { nl=$5 }
    !overall && /^Flit latency average = /    { fl=$5 }
    !overall && /^Accepted flit rate average= / { acc=$5 }
    overall && /^Packet latency average = /  { opl=$5 }
    overall && /^Network latency average = / { onl=$5 }
    overall && /^Flit latency average = /    { ofl=$5 }
    overall && /^Accepted flit rate average = / { oacc=$6 }
    overall && /^Hops average = /            { ohops=$4 }
    END {
      if (rc == 124) { status="timeout" }
      else if (!unstable && overall && cycles != "") { status="converged" }
      else if (lat_abort) { status="latency_thres" }
      else if (nocon || unstable) { status="no_convergence" }
      else { status="error_rc" rc }
      if (status == "converged")
        printf "%s,%s,%s,%s,%s,false,%s,%s,%s,%s\n", rate, opl, onl, ofl, oacc, ohops, cycles, cpu, status
      else {
        if (pl == "") { pl="NaN"; nl="NaN"; fl="NaN"; acc="NaN" }
        printf "%s,%s,%s,%s,%s,true,NaN,%d,%s,%s\n", rate, pl, nl, fl, acc, periods*sp, cpu, status
      }
    }' "$out")
  echo "$row" >> "$ROWS"
  echo "  $name rate=$rate -> $row ($((SECONDS-t0)) s)"
  case "$row" in *,false,*) STABLE=1;; *) STABLE=0;; esac
}

for name in "${NAMES[@]}"; do
  cfg="$HERE/configs/$name.cfg"
  [ -f "$cfg" ] || { echo "curves.sh: no $cfg" >&2; exit 1; }
  csv="$HERE/curves/$name.csv"
  ROWS="$(mktemp)"
  start=$(date -u +%Y-%m-%dT%H:%M:%SZ); t_start=$SECONDS
  echo "curves.sh: $name"
  # 1. coarse
  last_ok=0; first_bad=""
  run_point "$name" 0.01
  [ "$STABLE" = 1 ] && last_ok=0.01
  r=$COARSE
  while lt "$r" 1.0001; do
    run_point "$name" "$r"
    if [ "$STABLE" = 1 ] && [ -z "$first_bad" ]; then last_ok=$r; fi
    if [ "$STABLE" = 0 ]; then
      if [ -z "$first_bad" ]; then first_bad=$r; else break; fi
    fi
    r=$(awk -v r="$r" -v s="$COARSE" 'BEGIN{printf "%.3f", r+s}')
  done
  # 2. fine: 0.01 steps from the last coarse rate whose packet latency is
  #    below twice the 0.01 one (below the knee) to the first unstable rate
  if [ -n "$first_bad" ]; then
    sort -t, -k1,1g "$ROWS" -o "$ROWS"
    from=$(awk -F, -v bad="$first_bad" 'NR==1{zl=$2} $1+0 < bad+0 && $6=="false" && $2+0 < 2*zl {r=$1} END{print (r=="" ? 0 : r)}' "$ROWS")
    r=$(awk -v r="$from" 'BEGIN{printf "%.3f", r+0.01}')
    while lt "$r" "$first_bad"; do
      run_point "$name" "$r"
      r=$(awk -v r="$r" 'BEGIN{printf "%.3f", r+0.01}')
    done
    # 3. finer: midpoint between the highest rate below which everything is
    #    stable and the lowest unstable rate
    sort -t, -k1,1g "$ROWS" -o "$ROWS"
    hi_ok=$(awk -F, '$6=="true"{exit} {r=$1} END{print r}' "$ROWS")
    lo_bad=$(awk -F, '$6=="true"{print $1; exit}' "$ROWS")
    if [ -n "$hi_ok" ] && [ -n "$lo_bad" ]; then
      mid=$(awk -v a="$hi_ok" -v b="$lo_bad" 'BEGIN{printf "%.3f", (a+b)/2}')
      if lt "$hi_ok" "$mid" && lt "$mid" "$lo_bad"; then run_point "$name" "$mid"; fi
    fi
  fi
  sort -t, -k1,1g "$ROWS" -o "$ROWS"
  {
    echo "# config: $name"
    echo "# booksim_commit: $COMMIT (github.com/booksim/booksim2)"
    echo "# config_file: tools/booksim/configs/$name.cfg"
    echo "# command: tools/booksim/build/booksim2/src/booksim tools/booksim/configs/$name.cfg injection_rate=<injection_rate>"
    echo "# script: tools/booksim/curves.sh $name"
    echo "# date: $start (took $((SECONDS-t_start)) s)"
    echo "# machine: $(uname -a)"
    echo "# cpu: $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
    echo "# units: injection_rate and accepted_flit_rate in flits/node/cycle (injection_rate_uses_flits = 1); latencies in cycles"
    echo "# latency: packet = head creation time (ctime, incl. source queue) to tail ejection, measured packets only; network = head injection into the network (itime) to tail ejection, measured packets only; flit = atime - itime of every flit retired after the last stats reset, incl. unmeasured flits and the drain (trafficmanager.cpp l.676, l.731-732)"
    echo "# saturated: true when BookSim printed 'Simulation unstable' (status latency_thres: avg latency incl. in-flight > 500; no_convergence: not converged in max_samples = 10 periods); such rows hold the last sample period's values"
    echo "injection_rate,packet_latency_avg,network_latency_avg,flit_latency_avg,accepted_flit_rate,saturated,hops_avg,sim_cycles,cpu_seconds,status"
    cat "$ROWS"
  } > "$csv"
  rm -f "$ROWS"
  echo "curves.sh: wrote $csv ($((SECONDS-t_start)) s)"
done
