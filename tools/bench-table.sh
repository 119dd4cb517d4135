#!/usr/bin/env bash
# The speed table of issue 18 (items 1-3), measured side by side in one sitting: podsim as it is
# now, podsim at a baseline commit (the previous release), and BookSim 2 where it is built
# (tools/booksim/build.sh). Prints a Markdown table with the ratios; BENCHMARKS.md quotes it.
#
# Usage: tools/bench-table.sh [--baseline REF] [--repeats N] [--pod] [--threads] [--sweeps]
#                             [--analytic] [--ranks] [--configs] [--no-booksim]
#   --baseline REF  the commit to compare with (default: the one named in
#                   tools/bench-baseline.txt); built once into tools/bench-build/ (ignored by git)
#   --repeats N     runs of each command; the median is quoted (default 3)
#   --pod           also the pod-scale rows: the 4096-chip ring all-reduce, the 1024-chip
#                   all-to-all, and issue 38 item 1's all-to-all of 16 MiB under a 1 GiB memory
#                   limit on the twisted 1024-chip slice and the 4096-chip torus:16x16x16 and
#                   tpuv4:pod (the baseline tried once on the 4096-chip ones: refused, or
#                   timed); the baseline's 4096-chip ring takes minutes and ~11 GB and the
#                   1024-chip all-to-alls tens of seconds: they run only with --pod-baseline
#   --pod-baseline  run the baseline on the pod-scale rows too
#   --threads       also the packet level on a 32x32 mesh and a 16x16x16 torus on 1, 2, 4 and 8 threads
#                   (RAYON_NUM_THREADS): wall seconds, speed-up against one thread, and a check
#                   that every thread count prints the same bytes
#   --sweeps        also issue 38 item 2: `noc --router booksim --sweep 0.05:0.40:0.05` on the
#                   8x8 mesh and torus with 1- and 4-flit packets, against BookSim 2 run on the
#                   same 8 loads one after another (tools/booksim/configs/*.cfg, its default
#                   sample_period = 1000, podsim's default --cycles 10000), and `--seeds 8` at
#                   0.3 against BookSim's seed = 1..8: total CPU seconds of each side
#                   (whole processes, every point's summed for BookSim) and their ratio;
#                   BookSim's binary from $BOOKSIM_BIN if set (~70 CPU-s a repeat)
#   --analytic      also issue 38 item 6: the 4096-chip ring all-reduce of 64 MiB on the analytic
#                   model (`collective all-reduce --model analytic`, torus:16x16x16 and tpuv4:pod),
#                   CPU seconds and peak RSS against the baseline (about 1 CPU-s a run)
#   --ranks         also issue 38 item 5: `validate` (the whole table) and `train --model gpt3-175b
#                   --search --chips 512` as one process (now and the baseline) and under
#                   `mpirun -n 2` (now, built with `--features mpi` into target/mpi): wall seconds,
#                   and a check that the two ranks print the bytes one process prints; needs
#                   OpenMPI's mpirun (about 2 min)
#   --configs       also issue 38 item 3: one run at 0.3 of each BookSim configuration of the item
#                   (allocators, routing and credit delays, speedups, meshes and tori, 1- and
#                   4-flit packets; tools/booksim/configs_speed.py), podsim, the baseline and
#                   BookSim in turn: CPU seconds and the pair-by-pair ratio BookSim / podsim
#                   (~100 CPU-s a repeat); needs BookSim
#   --no-booksim    skip BookSim even when it is built (its run takes ~15 CPU-s)
#
# Every figure is whole-process: user+system CPU seconds (to the microsecond, from the
# child's rusage) and peak RSS. Packet
# level: flit-hops (router-to-router link traversals, podsim's `flit_hops`; BookSim's "flit-link
# hops" = accepted rate x nodes x cycles x (hops average - 1), tools/booksim/speed.sh) per CPU
# second on an 8x8 mesh, 1-flit packets, uniform traffic at 0.3 flits/node/cycle.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
BASELINE="$(grep -v '^#' "$HERE/bench-baseline.txt" | head -1)"
REPEATS=3
POD=0
POD_BASE=0
BOOKSIM=1
THREADS=0
SWEEPS=0
ANALYTIC=0
RANKS=0
CONFIGS=0
BOOKSIM_BIN="${BOOKSIM_BIN:-$ROOT/tools/booksim/build/booksim2/src/booksim}"
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) BASELINE="$2"; shift 2 ;;
    --repeats) REPEATS="$2"; shift 2 ;;
    --pod) POD=1; shift ;;
    --pod-baseline) POD=1; POD_BASE=1; shift ;;
    --no-booksim) BOOKSIM=0; shift ;;
    --threads) THREADS=1; shift ;;
    --sweeps) SWEEPS=1; shift ;;
    --analytic) ANALYTIC=1; shift ;;
    --ranks) RANKS=1; shift ;;
    --configs) CONFIGS=1; shift ;;
    -h|--help) sed -n '2,44p' "$0"; exit 0 ;;
    *) echo "bench-table.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x /usr/bin/time ] || { echo "bench-table.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

cd "$ROOT"
echo "building podsim (release)..." >&2
cargo build --release --locked -p podsim >&2
NEW="${CARGO_TARGET_DIR:-$ROOT/target}/release/podsim"
BUILD="$ROOT/tools/bench-build"
mkdir -p "$BUILD"
BASE_SHA="$(git rev-parse --verify "$BASELINE^{commit}")"
OLD="$BUILD/podsim-${BASE_SHA:0:12}"
if [ ! -x "$OLD" ]; then
  echo "building the baseline ${BASE_SHA:0:12}..." >&2
  rm -rf "$BUILD/src"
  mkdir -p "$BUILD/src"
  git archive "$BASE_SHA" | tar -x -C "$BUILD/src"
  # The baseline finds ../shared as the project does.
  (cd "$BUILD/src" && CARGO_TARGET_DIR="$BUILD/target" cargo build --release --locked -p podsim >&2)
  cp "$BUILD/target/release/podsim" "$OLD"
fi

# median VALUES...: the middle value (the lower middle of an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# timed BIN ARGS...: one run; prints "cpu_seconds peak_kib json_or_last_line".
# The child's CPU time is read from its rusage (wait4) to the microsecond: /usr/bin/time
# rounds to 10 ms, 5% of a 0.2 s run.
timed() {
  local out err
  out="$(mktemp)"; err="$(mktemp)"
  local t
  t="$(python3 -c '
import os, sys
out, err, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
pid = os.fork()
if pid == 0:
    os.dup2(os.open(out, os.O_WRONLY | os.O_TRUNC), 1)
    os.dup2(os.open(err, os.O_WRONLY | os.O_TRUNC), 2)
    os.execvp(cmd[0], cmd)
_, status, ru = os.wait4(pid, 0)
print(f"{ru.ru_utime + ru.ru_stime:.4f} {ru.ru_maxrss}")
sys.exit(os.waitstatus_to_exitcode(status))
' "$out" "$err" "$@")" || { echo "failed: $*" >&2; cat "$err" >&2; exit 1; }
  printf '%s ' "$t"
  head -c 100000 "$out" | tr -d '\n'
  echo
  rm -f "$out" "$err"
}

# noc_rate BIN ARGS...: median flit-hops per CPU-second of REPEATS runs.
noc_rate() {
  local rates=()
  for _ in $(seq 1 "$REPEATS"); do
    local line
    line="$(timed "$@")"
    rates+=("$(echo "$line" | python3 -c '
import json, sys
cpu, rss, js = sys.stdin.read().split(" ", 2)
print(json.loads(js)["flit_hops"] / float(cpu))')")
  done
  median "${rates[@]}"
}

# cpu_rss BIN ARGS...: "median_cpu_seconds median_peak_MiB".
cpu_rss() {
  local cpus=() rss=()
  for _ in $(seq 1 "$REPEATS"); do
    local line
    line="$(timed "$@")"
    cpus+=("$(echo "$line" | cut -d' ' -f1)")
    rss+=("$(echo "$line" | cut -d' ' -f2)")
  done
  echo "$(median "${cpus[@]}") $(( $(median "${rss[@]}") / 1024 ))"
}

ratio() { python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f'{a / b:.2f}x' if b > 0 else '-')" "$1" "$2"; }
mega() { python3 -c "import sys; print(f'{float(sys.argv[1]) / 1e6:.2f} M')" "$1"; }

NOC=(noc --topology mesh:8x8 --rate 0.3 --cycles 30000 --json)
echo "packet level (own router)..." >&2
NEW_NOC="$(noc_rate "$NEW" "${NOC[@]}")"
OLD_NOC="$(noc_rate "$OLD" "${NOC[@]}")"
BS_RATE=""
if [ "$BOOKSIM" = 1 ] && [ -x "$ROOT/tools/booksim/build/booksim2/src/booksim" ]; then
  echo "BookSim 2 ($REPEATS runs of ~15 CPU-s)..." >&2
  # speed.sh's last line: "median: A M flit-hops/CPU-s (B M flit-link-hops/CPU-s), ...".
  BS_RATE="$(bash "$ROOT/tools/booksim/speed.sh" "$REPEATS" | tail -1 \
    | sed -E 's/.*\(([0-9.]+) M flit-link-hops.*/\1/' | awk '{print $1 * 1e6}')"
fi
NEW_BSMODE=""
if "$NEW" noc --help | grep -q -- '--router'; then
  echo "packet level (BookSim-exact router)..." >&2
  NEW_BSMODE="$(noc_rate "$NEW" "${NOC[@]}" --router booksim)"
fi

echo "flow model..." >&2
RING1K=(collective all-reduce --topology torus:8x8x16 --bytes "64 MiB" --json)
A2A512=(collective all-to-all --topology torus:8x8x8 --bytes "16 MiB" --json)
read -r NEW_R1 NEW_R1M <<<"$(cpu_rss "$NEW" "${RING1K[@]}")"
read -r OLD_R1 OLD_R1M <<<"$(cpu_rss "$OLD" "${RING1K[@]}")"
read -r NEW_A5 NEW_A5M <<<"$(cpu_rss "$NEW" "${A2A512[@]}")"
read -r OLD_A5 OLD_A5M <<<"$(cpu_rss "$OLD" "${A2A512[@]}")"

SHA="$(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- crates || echo '+changes')"
echo
echo "podsim $SHA against the baseline ${BASE_SHA:0:12}, $REPEATS runs each (medians), $(date -u +%Y-%m-%d)"
echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(uname -r)"
echo
echo "| what | podsim now | baseline | now / baseline | BookSim 2 | now / BookSim | target |"
echo "|---|---|---|---|---|---|---|"
bs_cell="-"; bs_ratio="-"; bs_mode_ratio="-"
if [ -n "$BS_RATE" ]; then
  bs_cell="$(mega "$BS_RATE") flit-hops/CPU-s"
  bs_ratio="$(ratio "$NEW_NOC" "$BS_RATE")"
  [ -n "$NEW_BSMODE" ] && bs_mode_ratio="$(ratio "$NEW_BSMODE" "$BS_RATE")"
fi
echo "| packet level, own router, 8x8 mesh at 0.3 | $(mega "$NEW_NOC") flit-hops/CPU-s | $(mega "$OLD_NOC") | $(ratio "$NEW_NOC" "$OLD_NOC") | $bs_cell | $bs_ratio | >= 100x BookSim |"
if [ -n "$NEW_BSMODE" ]; then
  echo "| packet level, BookSim-exact router, 8x8 mesh at 0.3 | $(mega "$NEW_BSMODE") flit-hops/CPU-s | - | - | $bs_cell | $bs_mode_ratio | >= 50x BookSim |"
fi
echo "| flow, ring all-reduce 64 MiB, 1024 chips (torus:8x8x16) | $NEW_R1 CPU-s, $NEW_R1M MiB | $OLD_R1 CPU-s, $OLD_R1M MiB | $(ratio "$OLD_R1" "$NEW_R1") faster | - | - | - |"
echo "| flow, all-to-all 16 MiB, 512 chips (torus:8x8x8) | $NEW_A5 CPU-s, $NEW_A5M MiB | $OLD_A5 CPU-s, $OLD_A5M MiB | $(ratio "$OLD_A5" "$NEW_A5") faster | - | - | - |"
if [ "$POD" = 1 ]; then
  echo "pod scale..." >&2
  RING4K=(--memory-limit "40 GiB" collective all-reduce --topology torus:16x16x16 --bytes "64 MiB" --json)
  A2A1K=(collective all-to-all --topology torus:8x8x16 --bytes "16 MiB" --json)
  read -r NEW_R4 NEW_R4M <<<"$(cpu_rss "$NEW" "${RING4K[@]}")"
  read -r NEW_A1 NEW_A1M <<<"$(cpu_rss "$NEW" "${A2A1K[@]}")"
  OLD_R4="-"; OLD_R4M="-"; OLD_A1="-"; OLD_A1M="-"; R4="-"; A1="-"
  if [ "$POD_BASE" = 1 ]; then
    read -r OLD_R4 OLD_R4M <<<"$(cpu_rss "$OLD" "${RING4K[@]}")"
    read -r OLD_A1 OLD_A1M <<<"$(cpu_rss "$OLD" "${A2A1K[@]}")"
    R4="$(ratio "$OLD_R4" "$NEW_R4") faster"; A1="$(ratio "$OLD_A1" "$NEW_A1") faster"
  fi
  echo "| flow, ring all-reduce 64 MiB, 4096 chips (torus:16x16x16) | $NEW_R4 CPU-s, $NEW_R4M MiB | $OLD_R4 CPU-s, $OLD_R4M MiB | $R4 | ASTRA-sim analytical: 1.9 CPU-s (issue 18) | - | < 2 CPU-s, < 1 GB |"
  echo "| flow, all-to-all 16 MiB, 1024 chips (torus:8x8x16) | $NEW_A1 CPU-s, $NEW_A1M MiB | $OLD_A1 CPU-s, $OLD_A1M MiB | $A1 | - | - | < 5 s (issue 18), < 1 CPU-s (issue 38) |"
  # Issue 38 item 1: the all-to-all at pod scale, under the memory limit it must fit in. The
  # baseline runs once under the same limit: a refusal (its estimate over the limit) is
  # reported as such, and a run that fits is timed.
  A2A_LIMIT=(--memory-limit "1 GiB")
  for topo in tpuv4:slice=8x8x16:twisted torus:16x16x16 tpuv4:pod; do
    A=("${A2A_LIMIT[@]}" collective all-to-all --topology "$topo" --bytes "16 MiB" --json)
    read -r NEW_X NEW_XM <<<"$(cpu_rss "$NEW" "${A[@]}")"
    case "$topo" in
      tpuv4:pod|torus:16x16x16) chips=4096; target="< 10 CPU-s, < 1 GB" ;;
      *) chips=1024; target="< 1 CPU-s" ;;
    esac
    old_cell="-"; old_ratio="-"
    if [ "$POD_BASE" = 1 ] || [ "$chips" = 4096 ]; then
      if "$OLD" "${A[@]}" >/dev/null 2>&1; then
        read -r OLD_X OLD_XM <<<"$(cpu_rss "$OLD" "${A[@]}")"
        old_cell="$OLD_X CPU-s, $OLD_XM MiB"; old_ratio="$(ratio "$OLD_X" "$NEW_X") faster"
      else
        old_cell="refused under 1 GiB"
      fi
    fi
    echo "| flow, all-to-all 16 MiB, $chips chips ($topo), \`--memory-limit \"1 GiB\"\` | $NEW_X CPU-s, $NEW_XM MiB | $old_cell | $old_ratio | - | - | $target |"
  done
fi
if [ "$ANALYTIC" = 1 ]; then
  echo "analytic ring at pod scale..." >&2
  for topo in torus:16x16x16 tpuv4:pod; do
    A=(collective all-reduce --topology "$topo" --bytes "64 MiB" --model analytic --json)
    cmp -s <("$NEW" "${A[@]}") <("$OLD" "${A[@]}") \
      || { echo "bench-table.sh: the analytic ring on $topo printed other bytes than the baseline" >&2; exit 1; }
    read -r NEW_AN NEW_ANM <<<"$(cpu_rss "$NEW" "${A[@]}")"
    read -r OLD_AN OLD_ANM <<<"$(cpu_rss "$OLD" "${A[@]}")"
    echo "| analytic, ring all-reduce 64 MiB, 4096 chips ($topo; same bytes as the baseline) | $NEW_AN CPU-s, $NEW_ANM MiB | $OLD_AN CPU-s, $OLD_ANM MiB | $(ratio "$OLD_AN" "$NEW_AN") faster | - | - | < 0.5 CPU-s |"
  done
fi
if [ "$RANKS" = 1 ]; then
  echo "validate and train --search over two MPI ranks..." >&2
  command -v mpirun >/dev/null 2>&1 || { echo "bench-table.sh: --ranks needs OpenMPI's mpirun" >&2; exit 1; }
  CARGO_TARGET_DIR="$ROOT/target/mpi" cargo build --release --locked -p podsim --features mpi >&2
  MPI_BIN="$ROOT/target/mpi/release/podsim"
  # wall CMD...: the wall seconds of one run, its output dropped.
  wall() {
    python3 -c '
import os, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"{time.monotonic() - t:.3f}")
' "$@"
  }
  MPIRUN=(mpirun --allow-run-as-root --oversubscribe -n 2)
  for what in validate search; do
    case "$what" in
      validate) R=(validate); label="validate, the whole table" ;;
      search) R=(train --model gpt3-175b --search --chips 512); label="train --search, gpt3-175b on 512 chips" ;;
    esac
    cmp -s <("$MPI_BIN" "${R[@]}" 2>/dev/null) <("${MPIRUN[@]}" "$MPI_BIN" "${R[@]}" 2>/dev/null) \
      || { echo "bench-table.sh: $what on two ranks printed other bytes than one process" >&2; exit 1; }
    one=(); two=(); base=()
    for _ in $(seq 1 "$REPEATS"); do
      one+=("$(wall "$NEW" "${R[@]}")")
      two+=("$(wall "${MPIRUN[@]}" "$MPI_BIN" "${R[@]}")")
      base+=("$(wall "$OLD" "${R[@]}")")
    done
    o="$(median "${one[@]}")"; t="$(median "${two[@]}")"; b="$(median "${base[@]}")"
    echo "| $label, wall seconds: one process / \`mpirun -n 2\` (same bytes) | $o s / $t s | $b s (one process) | $(ratio "$b" "$t") faster on two ranks | - | - | two ranks print one process's bytes |"
  done
fi
if [ "$THREADS" = 1 ]; then
  echo "packet level on threads..." >&2
  # threads_row LABEL ARGS...: wall seconds of `podsim ARGS` on 1, 2, 4 and 8 threads (every
  # count checked to print one thread's bytes), and the baseline's on one thread.
  threads_row() {
    local label="$1"; shift
    local ref; ref="$(mktemp)"
    RAYON_NUM_THREADS=1 "$NEW" "$@" >"$ref"
    local cells="" one="" t w ow out err
    for t in 1 2 4 8; do
      local walls=()
      for _ in $(seq 1 "$REPEATS"); do
        out="$(mktemp)"; err="$(mktemp)"
        RAYON_NUM_THREADS=$t /usr/bin/time -f "%e" "$NEW" "$@" >"$out" 2>"$err"
        cmp -s "$out" "$ref" || { echo "bench-table.sh: $t threads printed other bytes than one" >&2; exit 1; }
        walls+=("$(tail -1 "$err")")
        rm -f "$out" "$err"
      done
      w="$(median "${walls[@]}")"
      [ -z "$one" ] && one="$w"
      cells="$cells $t: $w s ($(ratio "$one" "$w"));"
    done
    rm -f "$ref"
    local owalls=()
    for _ in $(seq 1 "$REPEATS"); do
      err="$(mktemp)"
      RAYON_NUM_THREADS=1 /usr/bin/time -f "%e" "$OLD" "$@" >/dev/null 2>"$err"
      owalls+=("$(tail -1 "$err")")
      rm -f "$err"
    done
    ow="$(median "${owalls[@]}")"
    echo "| packet level, own router, $label, wall seconds by threads (same bytes on each; the fast engine, in four parts per thread) |${cells%;} | 1: $ow s | $(ratio "$ow" "$one") faster on one thread | - | - | >= 1.7x on 2 threads |"
  }
  threads_row "32x32 mesh at 0.3, 5000 cycles" noc --topology mesh:32x32 --rate 0.3 --cycles 5000 --json
  threads_row "16x16x16 torus at 0.3, 500 cycles" noc --topology torus:16x16x16 --rate 0.3 --cycles 500 --json
fi
if [ "$SWEEPS" = 1 ]; then
  echo "sweeps and seeds against BookSim..." >&2
  # cpu_any CMD...: the CPU seconds of one run whatever its exit status (BookSim's is inverted:
  # 255 when it finished), its output dropped.
  cpu_any() {
    python3 -c '
import os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1); os.dup2(fd, 2)
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
print(f"{ru.ru_utime + ru.ru_stime:.4f}")
' "$@"
  }
  sum() { python3 -c "import sys; print(f'{sum(map(float, sys.argv[1:])):.4f}')" "$@"; }
  tmpd="$(mktemp -d)"
  for cfg in mesh8x8_p1 mesh8x8_p4 torus8x8_p1 torus8x8_p4; do
    kind="${cfg%%8x8*}"
    flits="${cfg##*_p}"
    COMMON=(noc --topology "$kind:8x8" --router booksim --packet-flits "$flits" --json --quiet)
    SW=("${COMMON[@]}" --sweep 0.05:0.40:0.05 --csv "$tmpd/s.csv" --svg "$tmpd/s.svg" --no-resume)
    SD=("${COMMON[@]}" --rate 0.3 --seeds 8)
    read -r ps_sw _ <<<"$(cpu_rss "$NEW" "${SW[@]}")"
    read -r ps_sd _ <<<"$(cpu_rss "$NEW" "${SD[@]}")"
    bs_sw="-"; bs_sd="-"
    if [ "$BOOKSIM" = 1 ] && [ -x "$BOOKSIM_BIN" ]; then
      sws=(); sds=()
      for _ in $(seq 1 "$REPEATS"); do
        t=()
        for r in 0.05 0.10 0.15 0.20 0.25 0.30 0.35 0.40; do
          t+=("$(cpu_any "$BOOKSIM_BIN" "$ROOT/tools/booksim/configs/$cfg.cfg" "injection_rate=$r")")
        done
        sws+=("$(sum "${t[@]}")")
        t=()
        for seed in 1 2 3 4 5 6 7 8; do
          t+=("$(cpu_any "$BOOKSIM_BIN" "$ROOT/tools/booksim/configs/$cfg.cfg" injection_rate=0.3 "seed=$seed")")
        done
        sds+=("$(sum "${t[@]}")")
      done
      bs_sw="$(median "${sws[@]}")"; bs_sd="$(median "${sds[@]}")"
    fi
    r_sw="-"; r_sd="-"
    [ "$bs_sw" != "-" ] && r_sw="$(ratio "$bs_sw" "$ps_sw")"
    [ "$bs_sd" != "-" ] && r_sd="$(ratio "$bs_sd" "$ps_sd")"
    echo "| sweep, BookSim-exact router, $kind 8x8, $flits-flit, uniform 0.05:0.40:0.05 (8 loads) | $ps_sw CPU-s | - | - | $bs_sw CPU-s (8 runs) | $r_sw | >= 50x BookSim |"
    echo "| --seeds 8, BookSim-exact router, $kind 8x8, $flits-flit, uniform at 0.3 | $ps_sd CPU-s | - | - | $bs_sd CPU-s (seed = 1..8) | $r_sd | >= 50x BookSim |"
  done
  rm -rf "$tmpd"
fi
if [ "$CONFIGS" = 1 ]; then
  if [ "$BOOKSIM" = 1 ] && [ -x "$BOOKSIM_BIN" ]; then
    echo "every BookSim configuration, single runs..." >&2
    echo "| what (uniform at 0.3, --cycles 10000) | podsim CPU-s | baseline CPU-s | BookSim 2 CPU-s | BookSim / podsim | target |"
    echo "|---|---|---|---|---|---|"
    python3 "$ROOT/tools/booksim/configs_speed.py" "$NEW" "$BOOKSIM_BIN" --baseline "$OLD" --repeats "$REPEATS"
  else
    echo "--configs needs BookSim (tools/booksim/build.sh, or \$BOOKSIM_BIN)" >&2
  fi
fi
