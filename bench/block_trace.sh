#!/usr/bin/env bash
# How a tool's requests reach the block layer, from the kernel's own trace events: block_plug,
# block_unplug, block_rq_insert, block_rq_issue, block_rq_complete and io_uring_submit_req,
# counted over WINDOW seconds in the middle of a run (root; debugfs/tracefs). Where blktrace is
# refused (it is, with EPERM, on this project's VM disk), these events still tell how many
# requests went out per plug: iolab handing ~30 requests to one io_uring_enter was plugged and
# issued in waves at 0.83x fio's IOPS (issue 36); one or two per call are issued at once.
#
#   bench/block_trace.sh NAME COMMAND...      # e.g.
#   bench/block_trace.sh iolab target/release/iolab run --access randread --qd 32 --duration 3 \
#       --no-probe --random-map ./f.iolab-tmp
#   bench/block_trace.sh fio fio --name=b --filename=./f.iolab-tmp --size=1g --direct=1 \
#       --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 --time_based --runtime=3
#
# Prints the event counts and the sizes of the unplugs; keeps the raw trace in /tmp/trace-NAME.txt.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,14p "$0"; exit 2; }
name=$1; shift
T=/sys/kernel/tracing
[ -e "$T/events/block" ] || T=/sys/kernel/debug/tracing
[ -e "$T/events/block" ] || mount -t debugfs none /sys/kernel/debug
[ -e "$T/events/block" ] || { echo "no tracefs with block events here" >&2; exit 1; }
events=(block/block_plug block/block_unplug block/block_rq_insert block/block_rq_issue
  block/block_rq_complete io_uring/io_uring_submit_req)
start=${START:-1.5}
window=${WINDOW:-0.5}
off() {
  echo 0 > "$T/tracing_on"
  for e in "${events[@]}"; do echo 0 > "$T/events/$e/enable" 2>/dev/null || true; done
}
trap off EXIT
off
echo > "$T/trace"
echo 65536 > "$T/buffer_size_kb"
for e in "${events[@]}"; do echo 1 > "$T/events/$e/enable" 2>/dev/null || true; done
"$@" >/dev/null 2>&1 &
pid=$!
sleep "$start"; echo 1 > "$T/tracing_on"; sleep "$window"; echo 0 > "$T/tracing_on"
wait "$pid" || true
cat "$T/trace" > "/tmp/trace-$name.txt"
echo > "$T/trace"
grep -v '^#' "/tmp/trace-$name.txt" | awk -v name="$name" '
  { for (i = 1; i <= NF; i++) if ($i ~ /^(block_|io_uring_)/) { k = $i; sub(":", "", k); c[k]++ } }
  /block_unplug:/ { u[$NF]++ }
  END {
    printf "%s:", name; for (k in c) printf " %s=%d", k, c[k]; print ""
    printf "%s: requests per unplug:", name; for (k in u) printf " %s x%d", k, u[k]; print ""
  }'
