#!/usr/bin/env bash
# Captures fio's own JSON output for iolab's import tests (see README.md). Runs fio on a 64 MiB
# temporary file in DIR (default: a new directory under the current one; not tmpfs, which
# refuses O_DIRECT), then removes it. Not run by the tests: its output is checked in.
set -euo pipefail
out="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-$(mktemp -d ./fio-capture.XXXXXX)}"
f="$dir/fio-test.bin"
common=(--filename="$f" --size=64m --ioengine=io_uring --direct=1 --time_based --runtime=2)
fio --name=randread --rw=randread --bs=4k --iodepth=4 "${common[@]}" \
  --output-format=json --output="$out/randread-4k-qd4.json"
fio --name=randrw --rw=randrw --rwmixread=70 --bs=4k --iodepth=8 "${common[@]}" \
  --output-format=json+ --output="$out/randrw-70-jsonplus.json"
fio --name=seqwrite --rw=write --bs=128k --iodepth=2 --numjobs=2 "${common[@]}" \
  --output-format=json --output="$out/seqwrite-numjobs2.json"
rm -f "$f"
rmdir "$dir" 2>/dev/null || true
