#!/usr/bin/env bash
# Throughput and memory of `iolab trace analyze` on MSR Cambridge CSV traces.
#
# Generates two synthetic MSR traces (default 1 M and 10 M lines, The Destroyer profile)
# with `iolab trace synth --format msr`, analyses each under /usr/bin/time -v, and prints
# lines per second per core (lines / CPU seconds; analysis is single-threaded) and peak
# RSS. Peak RSS should stay flat as the file grows: readers stream, and the analysis keeps
# only per-extent state (bounded by the footprint, not by the number of lines).
#
# Usage: bench/trace_analyze.sh            # 1 M and 10 M lines
#        SIZES="2000000 20000000" bench/trace_analyze.sh
#        KEEP=1 BENCH_DIR=/tmp/tb bench/trace_analyze.sh   # keep the generated files
#        IOLAB_BIN=/path/to/iolab bench/trace_analyze.sh    # use a built binary
# Builds with `cargo build --release -p iolab` (honours CARGO_TARGET_DIR) unless IOLAB_BIN
# is set.
# Target: >= 5 M lines/s per core.
#
# Then gzip against plain (GZIP_SIZES, default the first size): the same trace gzip-compressed
# (gzip -6, as SNIA IOTTA ships them) analysed side by side with the plain file, alternating,
# REPS times each (default 5); prints the median wall and CPU seconds of each and the speed
# ratio gzip/plain (plain time / gzip time: 1.0 is as fast, 0.7 the target). Decompression runs
# on its own thread, so the wall ratio shows the overlap only when a second core is free; the
# CPU ratio is what decompression costs in all.
set -euo pipefail

cd "$(dirname "$0")/.."
SIZES=${SIZES:-"1000000 10000000"}
DIR=${BENCH_DIR:-$(mktemp -d -t iolab-trace-bench.XXXXXX)}
mkdir -p "$DIR"
if [ -z "${KEEP:-}" ]; then
    trap 'rm -rf "$DIR"' EXIT
fi

if [ ! -x /usr/bin/time ]; then
    echo "error: /usr/bin/time is missing; install it (apt-get install time)" >&2
    exit 1
fi

if [ -n "${IOLAB_BIN:-}" ]; then
    BIN=$IOLAB_BIN
else
    cargo build --release -p iolab >&2
    BIN=${CARGO_TARGET_DIR:-target}/release/iolab
fi
echo "binary: $BIN ($("$BIN" --version 2>/dev/null || echo '?')); $(nproc) cores; $(uname -sr)" >&2
echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)" >&2

printf '%-10s %8s %9s %8s %8s %14s %12s\n' lines MB gen_s wall_s cpu_s "lines/s/core" peak_RSS_MiB
for n in $SIZES; do
    f="$DIR/msr_$n.csv"
    gen_start=$(date +%s.%N)
    if [ ! -s "$f" ]; then
        # FILETIME start in Feb 2007, so timestamps have 18 digits like the real traces.
        "$BIN" trace synth --profile destroyer --requests "$n" --format msr \
            --start-ns 12816638529551466300 -o "$f"
    fi
    gen_end=$(date +%s.%N)
    lines=$(wc -l < "$f")
    mb=$(( $(stat -c %s "$f") / 1000000 ))
    /usr/bin/time -v "$BIN" trace analyze --json "$f" > "$DIR/report_$n.json" 2> "$DIR/time_$n.txt"
    user=$(awk -F': ' '/User time/ {print $2}' "$DIR/time_$n.txt")
    sys=$(awk -F': ' '/System time/ {print $2}' "$DIR/time_$n.txt")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$DIR/time_$n.txt" \
        | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
    rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$DIR/time_$n.txt")
    cpu=$(echo "$user + $sys" | bc -l)
    rate=$(echo "$lines / $cpu" | bc -l)
    printf '%-10s %8s %9.2f %8.2f %8.2f %14.0f %12.1f\n' \
        "$lines" "$mb" "$(echo "$gen_end - $gen_start" | bc -l)" "$wall" "$cpu" "$rate" \
        "$(echo "$rss_kb / 1024" | bc -l)"
    # The analysis must have seen every line.
    got=$(grep -m1 '"requests"' "$DIR/report_$n.json" | tr -dc 0-9)
    if [ "$got" != "$lines" ]; then
        echo "error: analysis counted $got requests, file has $lines lines" >&2
        exit 1
    fi
done

# gzip against plain, side by side.
REPS=${REPS:-5}
GZIP_SIZES=${GZIP_SIZES:-${SIZES%% *}}
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo
printf '%-10s %6s %10s %10s %10s %10s %10s %10s\n' lines reps plain_wall gz_wall wall_ratio \
    plain_cpu gz_cpu cpu_ratio
for n in $GZIP_SIZES; do
    f="$DIR/msr_$n.csv"
    [ -s "$f.gz" ] || gzip -6 -c "$f" > "$f.gz"
    : > "$DIR/walls_plain"; : > "$DIR/walls_gz"; : > "$DIR/cpus_plain"; : > "$DIR/cpus_gz"
    for _ in $(seq "$REPS"); do
        for kind in plain gz; do
            input=$f
            [ "$kind" = gz ] && input=$f.gz
            /usr/bin/time -f '%e %U %S' -o "$DIR/t" "$BIN" trace analyze --json "$input" > "$DIR/r.json"
            read -r wall user sys < "$DIR/t"
            echo "$wall" >> "$DIR/walls_$kind"
            echo "$user + $sys" | bc -l >> "$DIR/cpus_$kind"
            got=$(grep -m1 '"requests"' "$DIR/r.json" | tr -dc 0-9)
            if [ "$got" != "$(wc -l < "$f")" ]; then
                echo "error: $input: analysis counted $got requests" >&2
                exit 1
            fi
        done
    done
    pw=$(median < "$DIR/walls_plain"); gw=$(median < "$DIR/walls_gz")
    pc=$(median < "$DIR/cpus_plain"); gc=$(median < "$DIR/cpus_gz")
    printf '%-10s %6s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n' "$n" "$REPS" "$pw" "$gw" \
        "$(echo "$pw / $gw" | bc -l)" "$pc" "$gc" "$(echo "$pc / $gc" | bc -l)"
done
echo "load average while measuring: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2
