#!/usr/bin/env bash
# What verify costs: 4K random writes at QD32 with and without --verify, side by side.
#
# Targets: a file in a tmpfs (as root; else /tmp) through the page cache (--buffered), and a
# zram device the script sets up (1 GiB) and resets at the end (root). Modes: off, end (stamps
# and checksums on the write path, then a read-back pass after the measured window), inline
# (each write read back as it completes, inside the window). Runs alternate, REPS times each
# (default 3); prints the median write IOPS and CPU µs per write of each, and their ratios to
# `off`.
# Target: verify costs <= 10 % of the IOPS. Then the checksum's own speed on one core
# (XXH3 over sectors, stamping, checking; target >= 5 GB/s).
#
# Usage: bench/verify.sh                      # as root for zram
#        REPS=5 DURATION=10 bench/verify.sh
#        ONLY_ZRAM=1 bench/verify.sh             # skip the page-cache target
#        IOLAB_BIN=/path/to/iolab CARGO_PROFILE_FLAG=--profile=dev bench/verify.sh   # no release build
set -euo pipefail

cd "$(dirname "$0")/.."
REPS=${REPS:-3}
DURATION=${DURATION:-5}
DIR=$(mktemp -d -t iolab-verify-bench.XXXXXX)
# The page-cache target lives in a tmpfs the script mounts (root): a file on a disk's
# filesystem has its dirty pages written back during the runs, and that writeback's CPU and
# I/O made the medians swing by a third from one invocation to the next.
PCDIR=$DIR
TMPFS=""
if [ "$(id -u)" = 0 ] && mkdir "$DIR/tmpfs" && mount -t tmpfs -o size=1200m iolab-bench "$DIR/tmpfs"; then
    TMPFS=$DIR/tmpfs
    PCDIR=$TMPFS
fi
ZRAM=""
cleanup() {
    if [ -n "$ZRAM" ]; then
        echo 1 > "/sys/block/$ZRAM/reset" || true
        echo "${ZRAM#zram}" > /sys/class/zram-control/hot_remove 2>/dev/null || true
    fi
    if [ -n "$TMPFS" ]; then umount "$TMPFS" || true; fi
    rm -rf "$DIR"
}
trap cleanup EXIT

if [ -n "${IOLAB_BIN:-}" ]; then
    BIN=$IOLAB_BIN
else
    cargo build --release -p iolab >&2
    BIN=${CARGO_TARGET_DIR:-target}/release/iolab
fi
echo "binary: $BIN; $(nproc) cores; $(uname -sr)" >&2
echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)" >&2

# One run: prints "iops cpu_us_per_write".
one() {
    local target=$1 mode=$2
    shift 2
    local flag=()
    [ "$mode" != off ] && flag=("--verify=$mode")
    "$BIN" run "$target" --access randwrite --bs 4k --qd 32 --duration "$DURATION" \
        --no-probe --json "$DIR/r.json" "${flag[@]}" "$@" > /dev/null 2> "$DIR/err" ||
        { cat "$DIR/err" >&2; exit 1; }
    python3 - "$DIR/r.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
w = j["write"]
cpu = j["cpu"]["user_s"] + j["cpu"]["system_s"]
v = j.get("verify") or {}
assert v.get("failures", 0) == 0, v
print(f'{w["iops"]:.0f} {1e6 * cpu / max(w["ios"], 1):.2f}')
PY
}

bench() {
    local label=$1 target=$2
    shift 2
    declare -A iops cpu
    for m in off end inline; do iops[$m]=""; cpu[$m]=""; done
    for r in $(seq "$REPS"); do
        for m in off end inline; do
            read -r i c < <(one "$target" "$m" "$@")
            iops[$m]+="$i "
            cpu[$m]+="$c "
        done
    done
    python3 - "$label" "${iops[off]}" "${cpu[off]}" "${iops[end]}" "${cpu[end]}" \
        "${iops[inline]}" "${cpu[inline]}" <<'PY'
import statistics as st, sys
label = sys.argv[1]
vals = [list(map(float, a.split())) for a in sys.argv[2:]]
med = [st.median(v) for v in vals]
base_i, base_c = med[0], med[1]
print(f"{label}: off {base_i:,.0f} IOPS, {base_c:.2f} µs CPU per write")
for name, (i, c) in zip(["end", "inline"], [(med[2], med[3]), (med[4], med[5])]):
    print(f"  verify={name:<6} {i:>10,.0f} IOPS ({i / base_i:.3f}× off), "
          f"{c:.2f} µs CPU per write ({c / base_c:.3f}× off)")
PY
}

if [ -z "${ONLY_ZRAM:-}" ]; then
    bench "page cache ($PCDIR, buffered)" "$PCDIR/t.bin" --size 1g --buffered
fi

# zram may be built in (no module to load): its control directory says so.
if [ "$(id -u)" = 0 ] && { [ -e /sys/class/zram-control/hot_add ] || modprobe zram 2>/dev/null; } &&
    [ -e /sys/class/zram-control/hot_add ]; then
    ZRAM=zram$(cat /sys/class/zram-control/hot_add)
    echo 1G > "/sys/block/$ZRAM/disksize"
    # Filled once first, so that every measured run overwrites stored pages (zram frees the old
    # copy on each overwrite): otherwise the first run, on an empty device, is cheaper.
    dd if=/dev/urandom of="/dev/$ZRAM" bs=1M count=1024 oflag=direct status=none
    bench "zram (/dev/$ZRAM, O_DIRECT)" "/dev/$ZRAM" --destroy-data="/dev/$ZRAM"
else
    echo "zram: skipped (needs root and the zram module)"
fi

cargo run -q "${CARGO_PROFILE_FLAG:---release}" -p iolab-verify --example checksum_speed
