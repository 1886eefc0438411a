#!/usr/bin/env python3
"""4K random reads at a low queue depth: iolab against fio and against fio's own minimal loop.

    sudo python3 bench/low_qd_references.py                  # QD=1 ROUNDS=24, BENCH_DIR=$TMPDIR
    sudo T_IO_URING=/path/to/fio/t/io_uring QD=4 python3 bench/low_qd_references.py

At QD1 a tool's IOPS is one over the time of one request, so a few microseconds of difference in
how a device serves two tools show as a few per cent. fio's engine is not the only reference:
fio's source tree also builds `t/io_uring` (`./configure && make t/io_uring`), the bare io_uring
loop fio's author measures peak rates with. Given its path in T_IO_URING, it runs as a third tool
(random offsets drawn with replacement, registered buffers and file, O_DIRECT, one submission and
one completion per call; its per-second IOPS, the first second left out as the ramp).

Each round first reads the whole file once with O_DIRECT (a VM's disk is a file its host caches:
blocks read before come back several times faster, see engine_vs_fio.py), then runs every tool
once, in an order that rotates from round to round. Printed: each tool's median IOPS and the
median and mean of its per-round ratio to fio. iolab runs twice, with `--random-map` (fio's
default order: each block once before any again) and without (draws with replacement, as
t/io_uring does). Not a test: ratios on a shared, noisy machine.
"""

import itertools
import json
import os
import statistics
import subprocess
import tempfile

from t_io_uring import iops as t_io_uring_iops

IOLAB = os.environ.get("IOLAB", os.path.join(os.path.dirname(__file__), "..", "target", "release", "iolab"))
QD = int(os.environ.get("QD", "1"))
ROUNDS = int(os.environ.get("ROUNDS", "24"))
T_IO_URING = os.environ.get("T_IO_URING")
RAMP_S, MEASURE_S = 1, 2


def sh(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def iolab(path, tmp, *extra):
    result = os.path.join(tmp, "iolab.json")
    sh([IOLAB, "run", "--access", "randread", "--bs", "4k", "--qd", str(QD), "--duration", str(MEASURE_S),
        "--ramp", str(RAMP_S), "--no-probe", "--drain-end", "--overwrite", "--json", result, *extra, path])
    return json.load(open(result))["jobs"][0]["read"]["iops"]


def fio(path, tmp):
    result = os.path.join(tmp, "fio.json")
    sh(["fio", "--name=low-qd", f"--filename={path}", "--rw=randread", "--bs=4k", "--direct=1",
        "--time_based", f"--runtime={MEASURE_S}", f"--ramp_time={RAMP_S}", "--ioengine=io_uring",
        "--fixedbufs", "--registerfiles", f"--iodepth={QD}", "--output-format=json", f"--output={result}"])
    return json.load(open(result))["jobs"][0]["read"]["iops"]


def t_io_uring(path, _tmp):
    return t_io_uring_iops(T_IO_URING, path, QD, ramp_s=RAMP_S, measure_s=MEASURE_S)


def bench_file(tmp):
    """A 1 GiB file of random data, written by iolab, on the machine's disk ($BENCH_DIR)."""
    where = os.environ.get("BENCH_DIR", tempfile.gettempdir())
    path = os.path.join(where, "iolab-low-qd.iolab-tmp")
    sh([IOLAB, "run", "--access", "write", "--bs", "1m", "--qd", "8", "--size", "1g", "--no-probe",
        "--ios-limit", "1", "--overwrite", "--json", os.path.join(tmp, "mk.json"), path])
    return path


def main():
    tools = {
        "iolab --random-map": lambda p, t: iolab(p, t, "--random-map"),
        "iolab": iolab,
        "fio": fio,
    }
    if T_IO_URING:
        tools["t/io_uring"] = t_io_uring
    orders = list(itertools.permutations(tools))
    runs = {name: [] for name in tools}
    with tempfile.TemporaryDirectory() as tmp:
        path = bench_file(tmp)
        try:
            for r in range(ROUNDS):
                sh(["dd", f"if={path}", "of=/dev/null", "bs=1M", "iflag=direct", "status=none"])
                # Rotating orders: the device drifts within a round, and each tool goes first as often.
                for name in orders[(r * 7) % len(orders)]:
                    runs[name].append(tools[name](path, tmp))
        finally:
            os.remove(path)
    print(f"4K random reads at QD{QD} on a 1 GiB file, {ROUNDS} rounds of {MEASURE_S} s after {RAMP_S} s of ramp")
    for name, iops in runs.items():
        ratios = [a / b for a, b in zip(iops, runs["fio"])]
        print(f"{name:<20} median {statistics.median(iops):9.0f} IOPS   to fio: median {statistics.median(ratios):.3f}"
              f"  mean {statistics.mean(ratios):.3f}")


if __name__ == "__main__":
    main()
