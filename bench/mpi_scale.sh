#!/usr/bin/env bash
# Aggregate IOPS of `mpirun -np N iolab run` (N = 1, 2, 4) against one process keeping the same
# total queue depth, on the page cache and on zram.
#
# Each rank runs 4K random reads at queue depth QD (default 8) on its own target for DURATION
# seconds (default 5): the page cache (a file read buffered, after one warm pass) and zram
# (O_DIRECT on a zram device this script configures and resets, the ranks in zones of it). The
# single process runs the same job with N threads at QD each (the same total queue depth, as
# many submitting threads) on one target. Printed per target and N: the aggregate IOPS of
# the ranks, the single process's IOPS, their ratio (ranks / single: 1.0 is no overhead), and
# the overhead per rank in percent ((1 - ratio) / N x 100), and the CPU per I/O of each (all
# processes, user + system) with their ratio, which varies less than IOPS on a busy machine.
# Runs alternate REPS times (default 3); medians are shown.
#
# Usage: bench/mpi_scale.sh                 # builds `cargo build --release -p iolab --features mpi`
#        IOLAB_BIN=/path/to/iolab bench/mpi_scale.sh
#        RANKS="1 2 4 8" QD=16 DURATION=10 bench/mpi_scale.sh
# Needs mpirun (openmpi-bin), and root for zram (skipped otherwise).
# Target: ratio >= 0.9 at every N (coordination costs under 10 % of a single process's IOPS).
set -euo pipefail

cd "$(dirname "$0")/.."
RANKS=${RANKS:-"1 2 4"}
QD=${QD:-8}
DURATION=${DURATION:-5}
REPS=${REPS:-3}
# Open MPI binds each of one or two ranks to a core by default: a rank whose engine runs a
# thread per queue slot (zram) would get one core where the single process has them all.
# `none` compares like with like; BIND=core shows the default's cost.
BIND=${BIND:-none}
DIR=$(mktemp -d -t iolab-mpi-bench.XXXXXX)
ZRAM=""
cleanup() {
    if [ -n "$ZRAM" ]; then zramctl --reset "$ZRAM" 2>/dev/null || true; fi
    rm -rf "$DIR"
}
trap cleanup EXIT

command -v mpirun >/dev/null || { echo "error: no mpirun: apt-get install openmpi-bin" >&2; exit 1; }
if [ -n "${IOLAB_BIN:-}" ]; then
    BIN=$IOLAB_BIN
else
    cargo build --release -p iolab --features mpi >&2
    BIN=${CARGO_TARGET_DIR:-target}/release/iolab
fi
echo "binary: $BIN; $(nproc) cores; $(uname -sr); $(mpirun --version | head -1)" >&2
export IOLAB_RESULTS_DIR=$DIR/results

# IOPS of one run's aggregate and its CPU (user + system, every rank's process) per I/O in ns:
# under contention for the cores the CPU per I/O is the steadier measure of overhead.
iops() {
    python3 -c 'import json,sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print(round(j["read"]["iops"]), round((j["cpu"]["user_s"] + j["cpu"]["system_s"]) * 1e9 / max(j["read"]["ios"], 1)))' "$1"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# ranks_run N TARGET EXTRA...: aggregate IOPS of N ranks at QD each.
ranks_run() {
    local n=$1 target=$2; shift 2
    mpirun --oversubscribe --allow-run-as-root --bind-to "$BIND" -np "$n" "$BIN" run --access randread --bs 4k \
        --qd "$QD" --duration "$DURATION" --no-probe --json "$DIR/r.json" "$@" "$target" \
        >/dev/null 2>&1
    iops "$DIR/r.json"
}
# single_run N TARGET EXTRA...: IOPS of one process of N threads at QD each (the ranks' total
# queue depth, and as many submitting threads as ranks).
single_run() {
    local n=$1 target=$2; shift 2
    "$BIN" run --access randread --bs 4k --threads "$n" --qd "$QD" --duration "$DURATION" --no-probe \
        --json "$DIR/s.json" "$@" "$target" >/dev/null 2>&1
    iops "$DIR/s.json"
}

compare() {
    local label=$1 ranks_target=$2 single_target=$3; shift 3
    for n in $RANKS; do
        local r=() s=()
        for _ in $(seq "$REPS"); do
            r+=("$(ranks_run "$n" "$ranks_target" "$@")")
            s+=("$(single_run "$n" "$single_target" "$@")")
        done
        local rm sm rc sc
        rm=$(printf '%s\n' "${r[@]}" | cut -d' ' -f1 | median)
        sm=$(printf '%s\n' "${s[@]}" | cut -d' ' -f1 | median)
        rc=$(printf '%s\n' "${r[@]}" | cut -d' ' -f2 | median)
        sc=$(printf '%s\n' "${s[@]}" | cut -d' ' -f2 | median)
        awk -v l="$label" -v n="$n" -v q="$QD" -v r="$rm" -v s="$sm" -v rc="$rc" -v sc="$sc" 'BEGIN {
            ratio = r / s
            printf "%-11s %5d %8d %11d %11d %6.3f %12.1f %8d %8d %7.3f\n", l, n, n * q, r, s, ratio,
                (1 - ratio) / n * 100, rc, sc, rc / sc }'
    done
}

printf '%-11s %5s %8s %11s %11s %6s %12s %8s %8s %7s\n' target ranks total_qd ranks_IOPS \
    single_IOPS ratio overhead%/rank ranks_ns single_ns cpu_x
echo "(ns: CPU ns per I/O, every process; cpu_x: ranks / single)"
# Page cache: each rank its own 256 MiB file, made by iolab and read once to warm the cache.
for r in 0 1 2 3 4 5 6 7; do
    "$BIN" run --access write --bs 1m --size 256m --no-probe --json /dev/null "$DIR/pc.$r" >/dev/null 2>&1
    cat "$DIR/pc.$r" >/dev/null
done
compare page-cache "$DIR/pc.{rank}" "$DIR/pc.0" --buffered

modprobe zram 2>/dev/null || true   # built in on some kernels
if [ "$(id -u)" = 0 ] && [ -d /sys/class/zram-control ] && ZRAM=$(zramctl --find --size 1G 2>/dev/null); then
    # Filled once with incompressible data, so reads decompress real pages; the ranks share
    # it in zones, the single process reads all of it.
    "$BIN" run --access write --bs 1m --data random --no-probe --destroy-data "$ZRAM" \
        --json /dev/null "$ZRAM" >/dev/null 2>&1
    compare zram "$ZRAM" "$ZRAM"
else
    echo "zram: skipped (needs root and the zram module)" >&2
fi
