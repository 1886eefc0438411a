#!/usr/bin/env bash
# Memory, wall time and speed of the drive model, one binary against another, side by side.
#
# For each binary (BASE_BIN, the reference, and IOLAB_BIN, the one under test) it measures under
# /usr/bin/time -v:
#   - `iolab sim explain sim:ssd750-1200@z97/cpu` (opens the 1.2 TB model six times and fills it
#     analytically): peak RSS and wall time;          target: < 300 MB, < 2 s
#   - `iolab sim calibrate --set calibration`: peak RSS and wall time (two models at a time on
#     any machine);                                   target: < 500 MB
#   - simulated I/Os per wall second: `iolab run` of 4 KiB random reads and then random writes
#     at QD32 over the whole filled drive for VSECONDS of virtual time (default 10), I/O count
#     from the JSON result;                          target: >= 10^6 per second
# and prints each figure for both binaries and their ratio (test / base).
#
# Usage: BASE_BIN=/path/to/old/iolab IOLAB_BIN=/path/to/new/iolab bench/sim_model.sh
#        SKIP_CALIBRATE=1 ... (calibrate takes about a minute per binary)
# Without IOLAB_BIN it builds `cargo build --release -p iolab` here; without BASE_BIN it measures
# the one binary.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/time ]; then
    echo "error: /usr/bin/time is missing; install it (apt-get install time)" >&2
    exit 1
fi
if [ -z "${IOLAB_BIN:-}" ]; then
    cargo build --release -p iolab >&2
    IOLAB_BIN=${CARGO_TARGET_DIR:-target}/release/iolab
fi
VSECONDS=${VSECONDS:-10}
SPEC=sim:ssd750-1200@z97/cpu
DIR=$(mktemp -d -t iolab-sim-bench.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

# measure LABEL BIN ARGS... -> "peak_mib wall_s"
measure() {
    local bin=$1
    shift
    /usr/bin/time -v "$bin" "$@" >"$DIR/out" 2>"$DIR/time" || true
    local rss wall
    rss=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2 / 1024}' "$DIR/time")
    wall=$(awk '/Elapsed \(wall clock\)/ {n = split($NF, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$DIR/time")
    echo "$rss $wall"
}

# ios_per_s BIN ACCESS -> simulated I/Os per wall second
ios_per_s() {
    local bin=$1 access=$2 start end ios
    rm -f "$DIR/run.json"
    start=$(date +%s.%N)
    "$bin" run "$SPEC" --access "$access" --bs 4k --qd 32 --duration "$VSECONDS" \
        --no-probe --json "$DIR/run.json" >/dev/null 2>&1
    end=$(date +%s.%N)
    ios=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); r=r.get('result', r); print(r['read']['ios'] + r['write']['ios'])" "$DIR/run.json" 2>/dev/null ||
        grep -o '"ios": *[0-9]*' "$DIR/run.json" | awk -F: '{s += $2} END {print s}')
    python3 -c "print(round($ios / ($end - $start)))"
}

declare -A R
bins=(test)
[ -n "${BASE_BIN:-}" ] && bins=(base test)
for which in "${bins[@]}"; do
    bin=$IOLAB_BIN
    [ "$which" = base ] && bin=$BASE_BIN
    read -r R[$which.explain_mib] R[$which.explain_s] < <(measure "$bin" sim explain "$SPEC")
    if [ -z "${SKIP_CALIBRATE:-}" ]; then
        if "$bin" sim calibrate --help 2>/dev/null | grep -q -- '--set'; then
            read -r R[$which.cal_mib] R[$which.cal_s] < <(measure "$bin" sim calibrate --set calibration)
        else
            read -r R[$which.cal_mib] R[$which.cal_s] < <(measure "$bin" sim calibrate)
        fi
    fi
    R[$which.read_ios]=$(ios_per_s "$bin" randread)
    R[$which.write_ios]=$(ios_per_s "$bin" randwrite)
done

printf '%-44s %14s %14s %8s\n' figure base test test/base
for key in explain_mib explain_s cal_mib cal_s read_ios write_ios; do
    b=${R[base.$key]:-}
    t=${R[test.$key]:-}
    [ -z "$t" ] && continue
    ratio=-
    [ -n "$b" ] && ratio=$(python3 -c "print(f'{$t / $b:.2f}')")
    case $key in
    explain_mib) name="sim explain peak RSS (MiB; < 300)" ;;
    explain_s) name="sim explain wall (s; < 2)" ;;
    cal_mib) name="sim calibrate peak RSS (MiB; < 500)" ;;
    cal_s) name="sim calibrate wall (s)" ;;
    read_ios) name="4K randread QD32: simulated I/Os per s (>= 1e6)" ;;
    write_ios) name="4K randwrite QD32: simulated I/Os per s (>= 1e6)" ;;
    esac
    printf '%-44s %14s %14s %8s\n' "$name" "${b:--}" "$t" "$ratio"
done
