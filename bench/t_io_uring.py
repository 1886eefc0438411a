"""fio's `t/io_uring` as a reference tool for the benchmarks here (not a benchmark itself).

fio's source tree builds `t/io_uring` (`./configure && make t/io_uring`): the bare io_uring read
loop fio's author measures peak rates with, far lighter per I/O than fio's own io_uring engine.
Where fio's engine, not the device, is the limit (fio's job thread near a whole CPU), it tells
what the device delivers. It reads only: random (offsets drawn with
replacement) or sequential.
"""

import re
import subprocess

# t/io_uring prints a plain count below 100,000 and a scaled one above ("IOPS=108.30K").
_SCALE = {"": 1, "K": 1e3, "M": 1e6}


def command(binary, path, qd, block_bytes=4096, random=True, seconds=4, direct=True):
    """t/io_uring reading path for whole seconds: registered buffers and file, no polling.
    Direct (O_DIRECT): one submission and one completion per call, as fio's engine and iolab hand
    them over to a device. Buffered (from the page cache, where the CPU is the limit): its own
    peak-rate batching, the whole depth submitted and reaped per call."""
    batch = 1 if direct else qd
    return [binary, f"-d{qd}", f"-s{batch}", f"-c{batch}", f"-b{block_bytes}", "-p0", "-B1", "-F1", "-n1",
            f"-O{int(direct)}", f"-R{int(random)}", f"-r{seconds}", path]


def iops(binary, path, qd, block_bytes=4096, random=True, ramp_s=1, measure_s=2, wrap=lambda cmd: cmd,
         direct=True):
    """Mean IOPS over measure_s whole seconds after ramp_s, from t/io_uring's per-second lines;
    wrap(cmd) is what runs (a `taskset` in front, say)."""
    cmd = wrap(command(binary, path, qd, block_bytes, random, ramp_s + measure_s + 1, direct))
    out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    per_second = [float(n) * _SCALE[unit] for n, unit in re.findall(r"^IOPS=([\d.]+)([KM]?),", out, re.M)]
    per_second = per_second[ramp_s:ramp_s + measure_s]
    if len(per_second) < measure_s:
        raise SystemExit(f"{binary} printed {len(per_second)} per-second figures, not {measure_s}:\n{out}")
    return sum(per_second) / len(per_second)
