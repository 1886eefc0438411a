#!/usr/bin/env python3
"""iolab's engine against fio, side by side, on a zram device this script creates and removes.

Not a test: it prints ratios measured in one run on a shared, noisy machine. Run as root:

    python3 bench/engine_vs_fio.py            # ROUNDS=3 SECONDS=5 by default

fio uses io_uring with registered buffers and files, O_DIRECT, one thread; iolab runs the same
job on its automatic engine choice (printed): io_uring, or, on a device that cannot take I/O
without blocking (zram has no NOWAIT support, so io_uring hands every I/O to a kernel worker
thread), one blocking thread per queue slot. Since a fio expert would pick fio's psync engine
with numjobs = queue depth on such a device, that is measured too and shown as a second ratio.
Both tools record every I/O's latency (fio's clat, iolab's histogram). CPU time is measured the same way for both:
the whole process (all its threads, io_uring's io-wq workers included) from the kernel's
rusage of the finished child, so neither tool's own accounting is trusted. Runs alternate
iolab, fio, iolab, fio... so drift on the shared machine hits both alike; medians are reported.

Also checks the "device-limited" points, where iolab must agree with fio within 5 %: a
rate-limited job on zram, and a file on the machine's disk (in $TMPDIR).

The device-bound matrix (issue 36) runs on a 1 GiB file on the machine's disk ($BENCH_DIR, else
$TMPDIR): 4K random reads at QD 1, 4, 16, 32, 64 and 128, 4K random writes at QD32, 128K
sequential reads at QD8 and a 70/30 random mix at QD16; iolab/fio ratios of IOPS, mean and p99
latency (fio with lat_percentiles, so both count from submission). Both tools pick offsets the
same way: fio's default random map, and iolab's --random-map; and end timed runs the same way:
fio counts the I/Os in flight at the end, as iolab's --drain-end does. "in flight" is each tool's
IOPS times its mean latency (Little's law: the requests it kept at the device on average,
iolab/fio), which tells a difference in how a tool issues from the device's own swings between
rounds. Each run warms up RAMP seconds (default 1), then measures MATRIX_SECONDS (default 2), in
MATRIX_ROUNDS (default 30) rounds in ABBA order; before each round the whole file is read once with
O_DIRECT, so that the host's cache below a VM's disk holds every block for both tools alike
(warm_cache_below says why). "IOPS ratio 95 %" is a bootstrap interval of the
median ratio: where the median of this many rounds could land on the device's swings alone (on the
virtio disk here one tool's IOPS moves by up to 46 % from one round to the next). A gap outside it
is the tool's; a target inside it needs more rounds to tell. bench/turnaround.py shows where each
request's time goes at QD1. Then TOGETHER_ROUNDS (default 10) rounds measure each tool while the
other runs beside it on the same file at the same depth, started first and outlasting the
measurement (both measured at once would not do: fio starts issuing about 0.25 s after iolab, so
its last 0.25 s would have the device to itself). A round count of 0 leaves its part out. MATRIX=only
runs the matrix alone, MATRIX=skip leaves it out; MATRIX_POINTS="4K randread QD1,4K randread QD4"
runs only the points named; MATRIX_RAW=file.json keeps every run's figures.

fio's engine is not always the device's measure: "fio CPUs" is its process's CPU time over its
wall time, start-up included; a fio job is one thread, so near 1 it is the limit (on the 2-CPU VM
here, 0.78 over a whole 3.4 s run at 105K IOPS, QD32). With T_IO_URING=path/to/fio/t/io_uring
(see bench/t_io_uring.py) the read points also run fio's bare io_uring loop as a third tool, in
rotating order, and print iolab's ratio to it: where fio's CPU is the limit, that loop and iolab
read more than fio does. "steal" is the median CPU time the hypervisor took from the machine
during iolab's runs / fio's (CPUs over each run's wall time, from /proc/stat): a VM that loses
CPU to its host gets its disk's I/O served later, so a point where one tool's runs had more of it
than the other's compares the host's load, not the tools. After the matrix, its IOPS ratios are
printed again at equal steal (see print_steal_adjusted): an estimate, beside the raw ratios.

FIO_AA=1 adds fio a second time, the same command ("fio again"), as one more tool in the
rotation, and prints fio again / fio ("fio A/A", median of rounds and its 95 % interval) beside
iolab / fio, and after the matrix at equal steal too: fio against itself is what the device and
the host alone make of a ratio, the floor under which no tool's gap can be told. In 6 rounds on
the virtio disk here it read 0.95-1.09, more than 3 % off 1 at 6 of the 9 points (iolab / fio:
0.99-1.15, at 3).

The page-cache point reads the 1 GiB file buffered after reading it once (4K random, QD32): no
device, the tools' and the kernel's CPU per I/O is the limit. With T_IO_URING, t/io_uring reads it
too (buffered, its own batching: the whole depth submitted and reaped per call).

PIN_CPU=n runs every tool of the matrix (and its companions) under `taskset -c n`, all its
threads on that CPU. Where each tool's I/O thread runs moves the low depths more than the tools
do: on the 2-CPU VM here the disk's completions interrupt CPU 1 only (/proc/interrupts), and 4K
random reads at QD1 went at 18-19.5K IOPS with either tool held on CPU 0 and 23-26K on CPU 1;
left to the scheduler, a run lands on one or the other.
"""

import itertools
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from t_io_uring import iops as t_io_uring_iops

ROUNDS = int(os.environ.get("ROUNDS", "3"))
SECONDS = float(os.environ.get("SECONDS", "5"))
# Seconds each matrix run warms up before it measures (fio's ramp_time, iolab's --ramp). After an
# idle spell, fio's own IOPS per half second on the virtio disk here rose from 28K to 54K over its
# first 3 s; the matrix's runs follow each other without a pause, and each tool gets the same ramp.
RAMP = float(os.environ.get("RAMP", "1"))
# The matrix has its own rounds and length: the device swings from round to round, so many short
# rounds tell more than a few long ones (30 rounds of 2 s: about 35 minutes for the nine points,
# the warm-up reads included). Rounds of 1 s read iolab 6 % under fio at QD1 and 4 % at QD4 on
# 2026-11-28 (30 rounds each), where rounds of 2 s an hour later read 0.997 and 0.981: no cause
# was found, and the longer window is the one both tools' start and end matter least in.
MATRIX_ROUNDS = int(os.environ.get("MATRIX_ROUNDS", "30"))
MATRIX_SECONDS = float(os.environ.get("MATRIX_SECONDS", "2"))
# Rounds with both tools at once: the device's swings cancel within each round, so fewer do.
TOGETHER_ROUNDS = int(os.environ.get("TOGETHER_ROUNDS", "10"))
# How long the companion runs before the measured tool starts: past fio's own start (about
# 0.25 s before it issues, on this machine).
COMPANION_LEAD_S = 0.5
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOLAB = os.path.join(ROOT, "target", "release", "iolab")

# (label, access, block size, queue depth, rate limit in IOPS or None)
CPU_BOUND = [
    ("4K randread QD1", "randread", "4k", 1, None),
    ("4K randread QD32", "randread", "4k", 32, None),
    ("128K read QD8", "read", "128k", 8, None),
    ("4K randwrite QD32", "randwrite", "4k", 32, None),
]
# Paced: both tools on io_uring. On zram the latency is mostly io_uring's worker wake-up.
DEVICE_BOUND = [
    ("4K randread QD4 @20k IOPS", "randread", "4k", 4, 20000),
]
# (label, access, block size, queue depth, read share or None): the device-bound matrix.
DISK_MATRIX = [(f"4K randread QD{qd}", "randread", "4k", qd, None) for qd in (1, 4, 16, 32, 64, 128)] + [
    ("4K randwrite QD32", "randwrite", "4k", 32, None),
    ("128K read QD8", "read", "128k", 8, None),
    ("4K 70/30 randrw QD16", "randrw", "4k", 16, 70),
]


def matrix_points():
    """The matrix's points, or only those MATRIX_POINTS names ("4K randread QD1,4K randread QD4")."""
    wanted = os.environ.get("MATRIX_POINTS")
    if not wanted:
        return DISK_MATRIX
    labels = [p[0] for p in DISK_MATRIX]
    unknown = [w for w in wanted.split(",") if w not in labels]
    if unknown:
        sys.exit(f"MATRIX_POINTS: no point {', '.join(map(repr, unknown))}; the points are: {', '.join(labels)}")
    return [p for p in DISK_MATRIX if p[0] in wanted.split(",")]


MATRIX_POINTS = matrix_points()
# From the page cache: no device at all, the tools' and the kernel's CPU per I/O is the limit.
PAGE_CACHE_POINTS = [("page cache 4K randread QD32", "randread", "4k", 32, None)]
FILE_POINTS = [
    ("file 4K randread QD8", "randread", "4k", 8, None),
    ("file 4K randread QD4 @5k IOPS", "randread", "4k", 4, 5000),
]


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def timed(cmd):
    """Runs cmd; returns (stdout, CPU seconds of the child: user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout, cpu


def run_iolab(target, access, bs, qd, rate, result, buffered=False):
    cmd = [IOLAB, "run", "--access", access, "--bs", bs, "--qd", str(qd), "--duration", str(SECONDS),
           "--no-probe", "--json", result, target]
    if rate:
        cmd += ["--rate-iops", str(rate)]
    if buffered:
        cmd += ["--buffered"]
    _, cpu = timed(cmd)
    run = json.load(open(result))
    j = run["jobs"][0]
    d = j["read"] if j["read"]["ios"] else j["write"]
    # fio starts its clock at submission: compare with iolab's service latency where iolab also
    # keeps the latency from the intended start (paced jobs), and show both.
    service = d["service_lat_ns"] or d["lat_ns"]
    return {"iops": d["iops"], "mbs": d["bw_mb_per_s"], "lat_us": service["mean"] / 1e3,
            "lat_intended_us": d["lat_ns"]["mean"] / 1e3, "ios": d["ios"], "cpu": cpu,
            "engine": run["target"]["engine"]}


def run_fio(target, access, bs, qd, rate, result, psync=False, buffered=False):
    # Buffered: fio drops the file's pages from the cache before it starts unless told not to
    # (its `invalidate`), and would read from the disk.
    cmd = ["fio", "--name=bench", f"--filename={target}", f"--direct={int(not buffered)}",
           f"--invalidate={int(not buffered)}", f"--rw={access}",
           f"--bs={bs}", "--time_based", f"--runtime={SECONDS}", "--norandommap",
           "--randrepeat=0", "--output-format=json", f"--output={result}"]
    if psync:
        cmd += ["--ioengine=psync", f"--numjobs={qd}", "--group_reporting"]
    else:
        cmd += ["--ioengine=io_uring", "--fixedbufs", "--registerfiles", f"--iodepth={qd}"]
    if rate:
        cmd += [f"--rate_iops={rate}"]
    _, cpu = timed(cmd)
    j = json.load(open(result))["jobs"][0]
    d = j["read"] if j["read"]["total_ios"] else j["write"]
    return {"iops": d["iops"], "mbs": d["bw_bytes"] / 1e6, "lat_us": d["lat_ns"]["mean"] / 1e3,
            "lat_intended_us": d["lat_ns"]["mean"] / 1e3, "ios": d["total_ios"], "cpu": cpu}


def matrix_iolab_cmd(target, access, bs, qd, read_pct, result, seconds=None):
    cmd = [IOLAB, "run", "--access", access, "--bs", bs, "--qd", str(qd), "--duration", str(seconds or MATRIX_SECONDS),
           "--ramp", str(RAMP), "--no-probe", "--random-map", "--drain-end", "--json", result, target]
    if read_pct is not None:
        cmd += ["--read-pct", str(read_pct)]
    return cmd


def matrix_iolab_figures(result, cpu):
    j = json.load(open(result))["jobs"][0]
    ios = j["read"]["ios"] + j["write"]["ios"]
    # Latency of the side that leads the job (reads where there are any).
    d = j["read"] if j["read"]["ios"] else j["write"]
    return {"iops": j["read"]["iops"] + j["write"]["iops"], "mean_us": d["lat_ns"]["mean"] / 1e3,
            "p99_us": d["lat_ns"]["p99"] / 1e3, "cpu_us_per_io": cpu / max(ios, 1) * 1e6,
            "in_flight": sum(j[k]["iops"] * j[k]["lat_ns"]["mean"] / 1e9 for k in ("read", "write")
                             if j[k]["ios"])}


def matrix_fio_cmd(target, access, bs, qd, read_pct, result, seconds=None):
    cmd = ["fio", "--name=bench", f"--filename={target}", "--direct=1", f"--rw={access}",
           f"--bs={bs}", "--time_based", f"--runtime={seconds or MATRIX_SECONDS}", f"--ramp_time={RAMP}",
           "--ioengine=io_uring", "--fixedbufs", "--registerfiles", f"--iodepth={qd}", "--lat_percentiles=1",
           "--output-format=json", f"--output={result}"]
    if read_pct is not None:
        cmd += [f"--rwmixread={read_pct}"]
    return cmd


def matrix_fio_figures(result, cpu):
    j = json.load(open(result))["jobs"][0]
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    d = j["read"] if j["read"]["total_ios"] else j["write"]
    return {"iops": j["read"]["iops"] + j["write"]["iops"], "mean_us": d["lat_ns"]["mean"] / 1e3,
            "p99_us": d["lat_ns"]["percentile"]["99.000000"] / 1e3,
            "cpu_us_per_io": cpu / max(ios, 1) * 1e6,
            "in_flight": sum(j[k]["iops"] * j[k]["lat_ns"]["mean"] / 1e9 for k in ("read", "write")
                             if j[k]["total_ios"])}


MATRIX_TOOLS = {"iolab": (matrix_iolab_cmd, matrix_iolab_figures), "fio": (matrix_fio_cmd, matrix_fio_figures)}
# FIO_AA=1: fio a second time, the very same command, as one more tool in the rotation ("fio
# again"): fio against itself is the matrix's noise floor, what "within 3 %" can be told from.
FIO_AA = os.environ.get("FIO_AA") == "1"
if FIO_AA:
    MATRIX_TOOLS["fio again"] = MATRIX_TOOLS["fio"]
T_IO_URING = os.environ.get("T_IO_URING")
PIN_CPU = os.environ.get("PIN_CPU")
if PIN_CPU and not (PIN_CPU.isdigit() and int(PIN_CPU) in os.sched_getaffinity(0)):
    sys.exit(f"PIN_CPU: {PIN_CPU!r} is not one of the CPUs this script may run on: "
             f"{', '.join(map(str, sorted(os.sched_getaffinity(0))))}")


def pinned(cmd):
    """cmd run on PIN_CPU alone, where that is set (see the module's documentation)."""
    return ["taskset", "-c", PIN_CPU] + cmd if PIN_CPU else cmd


if T_IO_URING and not (float(MATRIX_SECONDS).is_integer() and float(RAMP).is_integer()):
    sys.exit(f"T_IO_URING: t/io_uring counts whole seconds; MATRIX_SECONDS ({MATRIX_SECONDS:g}) and RAMP "
             f"({RAMP:g}) must be whole numbers of seconds with it")


def parse_size(text):
    """Bytes of a block size as the matrix writes them ("4k", "128k")."""
    units = {"k": 1 << 10, "m": 1 << 20}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def matrix_tools(point):
    """The tools a point is measured with: iolab and fio, fio again (FIO_AA), and t/io_uring
    (T_IO_URING) where it can run the job: it only reads."""
    tools = ["iolab", "fio"] + (["fio again"] if FIO_AA else [])
    if T_IO_URING and point[0] in ("randread", "read"):
        tools.append("t/io_uring")
    return tools


def matrix_run(tool, target, point, result):
    """One tool alone on one point of the matrix, with the CPU time the hypervisor took from this
    machine meanwhile ("steal", CPUs over the run's wall time)."""
    steal_before, start = steal_seconds(), time.monotonic()
    if tool == "t/io_uring":
        access, bs, qd, _ = point
        figures = {"iops": t_io_uring_iops(T_IO_URING, target, qd, parse_size(bs), random=access == "randread",
                                           ramp_s=int(RAMP), measure_s=int(MATRIX_SECONDS), wrap=pinned)}
    else:
        cmd_of, figures_of = MATRIX_TOOLS[tool]
        _, cpu = timed(pinned(cmd_of(target, *point, result)))
        # CPUs the process kept busy over its life (start-up and ramp too, as its CPU time counts them).
        figures = figures_of(result, cpu) | {"cpus": cpu / (time.monotonic() - start)}
    return figures | {"steal": (steal_seconds() - steal_before) / (time.monotonic() - start)}


def steal_seconds():
    """The machine's steal time so far (/proc/stat's first line, USER_HZ ticks): on a VM, time
    the host gave its CPUs to others. A VM whose CPUs are busy gets its virtual disk's I/O served
    later (README, "A quiet machine"), so a round with more steal than the others is suspect."""
    fields = open("/proc/stat").readline().split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else 0.0


def matrix_together(target, point, tmp):
    """Each tool measured while the other runs beside it on the same file, at the same depth.
    The other (the companion) starts first and outlasts the measurement, so the measured
    seconds never have the device to themselves: run side by side with both measured, fio,
    which takes about 0.25 s longer to start issuing, had the device alone for its last 0.25 s
    (a block-layer trace showed each 0.25 s of overlap shared 50/50)."""
    figures = {}
    for tool in ("iolab", "fio"):
        other = "fio" if tool == "iolab" else "iolab"
        companion_cmd = MATRIX_TOOLS[other][0](target, *point, os.path.join(tmp, f"{other}-companion.json"),
                                               seconds=MATRIX_SECONDS + COMPANION_LEAD_S + 2)
        companion = subprocess.Popen(pinned(companion_cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(COMPANION_LEAD_S)
            figures[tool] = matrix_run(tool, target, point, os.path.join(tmp, f"{tool}.json"))
        finally:
            companion.terminate()
            companion.wait()
    return figures


def device_matrix(target, tmp):
    """iolab and fio (and t/io_uring) on each point, alone in rounds of rotating order, then iolab
    and fio at once."""
    where = f", every tool on CPU {PIN_CPU}" if PIN_CPU else ""
    print(f"\ndevice-bound matrix on {target} (1 GiB file on the machine's disk){where}, {MATRIX_ROUNDS} rounds of "
          f"{MATRIX_SECONDS:g} s after {RAMP:g} s of ramp, the tools in rotating order (ABBA for two); medians of "
          f"the tools' figures and of each round's ratios (target: IOPS within 3 %, mean within 5 %, p99 within 10 %)")
    print_matrix_header()
    raw = {"alone": {}, "together": {}}
    for label, *point in MATRIX_POINTS if MATRIX_ROUNDS else []:
        # Every order of the tools in turn (ABBA for two): a device that speeds up or slows down
        # over the rounds favours none of them.
        orders = list(itertools.permutations(matrix_tools(point)))
        runs = {tool: [] for tool in orders[0]}
        for r in range(MATRIX_ROUNDS):
            warm_cache_below(target)
            for tool in orders[r % len(orders)]:
                runs[tool].append(matrix_run(tool, target, point, os.path.join(tmp, f"{tool}.json")))
        raw["alone"][label] = runs
        keep_raw(raw)
        print_matrix_row(label, runs)
    print_steal_adjusted(raw["alone"])
    if FIO_AA:
        print_steal_adjusted(raw["alone"], "fio again")
    print(f"\nthe same points, each tool measured while the other runs beside it on the file at the same depth "
          f"(started {COMPANION_LEAD_S:g} s before and outlasting it), {TOGETHER_ROUNDS} rounds of {MATRIX_SECONDS:g} s "
          f"after {RAMP:g} s of ramp: the device is shared alike in both measurements")
    print_matrix_header()
    for label, *point in MATRIX_POINTS if TOGETHER_ROUNDS else []:
        runs = {"iolab": [], "fio": []}
        for _ in range(TOGETHER_ROUNDS):
            for tool, figures in matrix_together(target, point, tmp).items():
                runs[tool].append(figures)
        raw["together"][label] = runs
        keep_raw(raw)
        print_matrix_row(label, runs)


def print_steal_adjusted(alone, tool="iolab"):
    """The IOPS ratios again, at equal steal: each round's tool/fio ratio less a slope times how
    much more steal fio's run had than the tool's (one least-squares slope over every point's
    rounds, each point about its own mean). On the VM here a run with more steal reads less
    (README, "A quiet machine"), and fio, with more CPU per I/O, had more in 76 of 108 rounds of a
    12-round matrix, so part of a raw ratio over 1 is the host's. An estimate from this run's own
    rounds, not a measurement: both columns are printed. `tool` is iolab, or fio again (FIO_AA):
    fio against itself, where any ratio off 1 is the device's and the host's."""
    pairs = {label: ([f["steal"] - i["steal"] for i, f in zip(runs[tool], runs["fio"])],
                     [i["iops"] / f["iops"] for i, f in zip(runs[tool], runs["fio"])])
             for label, runs in alone.items()}
    if sum(len(d) for d, _ in pairs.values()) < 3:
        return
    num = den = 0.0
    for d, r in pairs.values():
        md, mr = statistics.mean(d), statistics.mean(r)
        num += sum((x - md) * (y - mr) for x, y in zip(d, r))
        den += sum((x - md) ** 2 for x in d)
    if den == 0:
        return
    slope = num / den
    xs = [x for d, _ in pairs.values() for x in d]
    ys = [y for _, r in pairs.values() for y in r]
    print(f"\n{tool}/fio IOPS ratios at equal steal: fio's run had more steal than {tool}'s in {sum(x > 0 for x in xs)} of "
          f"{len(xs)} rounds; the ratio moves by {slope * 0.01:+.3f} per 0.01 CPU more steal on fio's side "
          f"(correlation {statistics.correlation(xs, ys):.2f})")
    for label, (d, r) in pairs.items():
        adjusted = [y - slope * x for x, y in zip(d, r)]
        print(f"{label:<24} ratio {statistics.median(r):.3f}, at equal steal {statistics.median(adjusted):.3f}")


def warm_cache_below(path):
    """Reads the whole file once with O_DIRECT, so that every block is in the cache below the
    guest before a round. This machine's disk is a file on its host, which caches it: QD1 4K
    reads over blocks no run had read went at 3-5K IOPS, over blocks read before at 16-18K. Each
    tool repeats its own offsets run after run (iolab's seed 1, fio's randrepeat), so without
    this, how warm each tool's blocks are depends on what ran before (earlier points, a health
    check with fio's default seed), not on the tool."""
    sh(["dd", f"if={path}", "of=/dev/null", "bs=1M", "iflag=direct", "status=none"])


def keep_raw(raw):
    if os.environ.get("MATRIX_RAW"):
        with open(os.environ["MATRIX_RAW"], "w") as out:
            json.dump(raw, out, indent=1)


def print_matrix_header():
    print(f"{'point':<24}{'iolab IOPS':>12}{'fio IOPS':>12}{'ratio':>7}{'iolab mean':>12}{'fio mean':>10}"
          f"{'ratio':>7}{'iolab p99':>11}{'fio p99':>9}{'ratio':>7}{'CPU/IO ratio':>13}{'IOPS range':>12}"
          f"{'IOPS ratio 95 %':>16}{'in flight':>12}{'fio CPUs':>9}{'steal':>11}"
          + (f"{'fio A/A':>8}{'95 %':>13}" if FIO_AA else "")
          + (f"{'t/io_uring':>11}{'ratio':>7}{'95 %':>13}" if T_IO_URING else ""))


def print_matrix_row(label, runs):
    i, f = ({k: statistics.median(r[k] for r in rs) for k in rs[0] if k != "steal"}
            for rs in (runs["iolab"], runs["fio"]))
    # Ratios are the medians of each round's own ratio (iolab / fio, run back to back or at once),
    # so that the device's drift from round to round cancels; the range shows what is left.
    ratio = {k: [a[k] / b[k] for a, b in zip(runs["iolab"], runs["fio"])] for k in i}
    med = {k: statistics.median(v) for k, v in ratio.items()}
    spread = f"{min(ratio['iops']):.2f}-{max(ratio['iops']):.2f}"
    low, high = median_interval(ratio["iops"])
    print(f"{label:<24}{i['iops']:>12.0f}{f['iops']:>12.0f}{med['iops']:>7.3f}"
          f"{i['mean_us']:>12.1f}{f['mean_us']:>10.1f}{med['mean_us']:>7.3f}"
          f"{i['p99_us']:>11.1f}{f['p99_us']:>9.1f}{med['p99_us']:>7.3f}"
          f"{med['cpu_us_per_io']:>13.2f}{spread:>12}{low:>7.3f}-{high:<5.3f}"
          f"{i['in_flight']:>6.1f}/{f['in_flight']:<5.1f}"
          f"{statistics.median(r['cpus'] for r in runs['fio']):>9.2f}"
          f"{statistics.median(r['steal'] for r in runs['iolab']):>6.3f}/"
          f"{statistics.median(r['steal'] for r in runs['fio']):<5.3f}"
          f"{reference_columns(runs)}", flush=True)


def reference_columns(runs):
    """fio against itself (FIO_AA: fio again / fio, median of rounds, 95 % interval), and
    t/io_uring's IOPS and iolab's ratio to it, where they ran."""
    out = ""
    if "fio again" in runs:
        out += iops_ratio_cells(runs["fio again"], runs["fio"], 8)
    if "t/io_uring" in runs:
        out += (f"{statistics.median(r['iops'] for r in runs['t/io_uring']):>11.0f}"
                + iops_ratio_cells(runs["iolab"], runs["t/io_uring"], 7))
    elif T_IO_URING:
        out += f"{'—':>11}{'':>7}{'':>13}"
    return out


def iops_ratio_cells(tool_runs, reference_runs, width):
    """The median of each round's IOPS ratio (tool / reference) in `width` columns, and its 95 %
    interval."""
    ratios = [a["iops"] / b["iops"] for a, b in zip(tool_runs, reference_runs)]
    low, high = median_interval(ratios)
    return f"{statistics.median(ratios):>{width}.3f}{low:>7.3f}-{high:<5.3f}"


def median_interval(values, resamples=2000):
    """A 95 % bootstrap interval of the median of values: how far the median of this many rounds
    can move with the device's swings alone, so that a gap outside it is the tool's."""
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples))
    return medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def disk_file(tmp):
    """A 1 GiB file of random data on the machine's disk, for the device-bound points."""
    where = os.environ.get("BENCH_DIR", tempfile.gettempdir())
    fill = os.path.join(where, "iolab-bench-file.iolab-tmp")
    sh([IOLAB, "run", "--access", "write", "--bs", "1m", "--qd", "8", "--size", "1g", "--no-probe",
        "--ios-limit", "1", "--json", os.path.join(tmp, "mk.json"), fill])
    # `--size` creates the file fully written, never sparse: every block read holds data.
    return fill


def measure(target, points, tmp, with_psync=False, buffered=False):
    """Each point in ROUNDS alternating rounds; buffered: from the page cache (the file is read
    into it before each round), with fio's t/io_uring as a third tool where T_IO_URING is given."""
    rows = []
    for label, access, bs, qd, rate in points:
        runs = {"iolab": [], "fio": []}
        if with_psync:
            runs["fio psync"] = []
        for _ in range(ROUNDS):
            if buffered:
                sh(["dd", f"if={target}", "of=/dev/null", "bs=1M", "status=none"])
            runs["iolab"].append(run_iolab(target, access, bs, qd, rate, os.path.join(tmp, "i.json"), buffered))
            runs["fio"].append(run_fio(target, access, bs, qd, rate, os.path.join(tmp, "f.json"),
                                       buffered=buffered))
            if with_psync:
                runs["fio psync"].append(
                    run_fio(target, access, bs, qd, rate, os.path.join(tmp, "f.json"), psync=True))
            if buffered and T_IO_URING:
                runs.setdefault("t/io_uring", []).append(
                    {"iops": t_io_uring_iops(T_IO_URING, target, qd, parse_size(bs), access == "randread",
                                             ramp_s=1, measure_s=max(1, round(SECONDS)), direct=False)})
        med = {tool: {k: statistics.median(r[k] for r in rs) for k in rs[0] if k != "engine"}
               for tool, rs in runs.items()}
        for tool in ("iolab", "fio", "fio psync"):
            if tool not in med:
                continue
            med[tool]["cpu_us_per_io"] = statistics.median(r["cpu"] / r["ios"] * 1e6 for r in runs[tool])
        med["iolab"]["engine"] = runs["iolab"][0]["engine"]
        rows.append((label, med))
    return rows


def print_rows(title, rows):
    print(f"\n{title}")
    print(f"{'point':<31}{'iolab IOPS':>12}{'fio IOPS':>12}{'ratio':>7}"
          f"{'iolab µs CPU/IO':>17}{'fio µs CPU/IO':>15}{'ratio':>7}"
          f"{'iolab lat µs':>14}{'fio lat µs':>12}{'MB/s ratio':>11}{'iolab lat from intended start µs':>34}"
          f"  iolab engine")
    for label, m in rows:
        i, f = m["iolab"], m["fio"]
        print(f"{label:<31}{i['iops']:>12.0f}{f['iops']:>12.0f}{i['iops'] / f['iops']:>7.2f}"
              f"{i['cpu_us_per_io']:>17.2f}{f['cpu_us_per_io']:>15.2f}"
              f"{i['cpu_us_per_io'] / f['cpu_us_per_io']:>7.2f}"
              f"{i['lat_us']:>14.1f}{f['lat_us']:>12.1f}{i['mbs'] / f['mbs']:>11.3f}"
              f"{i['lat_intended_us']:>34.1f}  {i['engine']}")
        if "t/io_uring" in m:
            t = m["t/io_uring"]["iops"]
            print(f"  {'':<29}fio's t/io_uring {t:>10.0f} IOPS; iolab/t-io_uring {i['iops'] / t:.2f}"
                  f" (each tool's median; t/io_uring's first second left out as its ramp)")
    if any("fio psync" in m for _, m in rows):
        print("  against fio's psync engine with numjobs = queue depth (its best choice on this device):")
        for label, m in rows:
            i, p = m["iolab"], m["fio psync"]
            print(f"  {label:<29}fio psync {p['iops']:>10.0f} IOPS, {p['cpu_us_per_io']:.2f} µs CPU/IO;"
                  f" iolab/fio psync: IOPS {i['iops'] / p['iops']:.2f}, CPU/IO "
                  f"{i['cpu_us_per_io'] / p['cpu_us_per_io']:.2f}")


def main():
    if os.geteuid() != 0:
        sys.exit("run as root: the benchmark creates a zram device")
    if not shutil.which("fio"):
        sh(["apt-get", "install", "-y", "-qq", "fio"])
    sh(["cargo", "build", "--release", "-q", "-p", "iolab"], cwd=ROOT)
    if os.environ.get("MATRIX") == "only":
        tmp = tempfile.mkdtemp(prefix="iolab-bench-")
        fill = None
        try:
            fill = disk_file(tmp)
            device_matrix(fill, tmp)
        finally:
            if fill and os.path.exists(fill):
                os.remove(fill)
            shutil.rmtree(tmp, ignore_errors=True)
        return
    if not os.path.exists("/sys/class/zram-control"):
        subprocess.run(["modprobe", "zram", "num_devices=0"], check=False)
    n = open("/sys/class/zram-control/hot_add").read().strip()
    dev = f"/dev/zram{n}"
    tmp = tempfile.mkdtemp(prefix="iolab-bench-")
    try:
        open(f"/sys/block/zram{n}/disksize", "w").write("1G")
        # Fill with incompressible data so reads are of real content, not zero pages.
        sh([IOLAB, "run", "--access", "write", "--bs", "1m", "--qd", "8", "--no-probe",
            "--json", os.path.join(tmp, "fill.json"), dev])
        print(f"iolab vs fio on {dev} (1 GiB zram, random data), {ROUNDS} alternating rounds of "
              f"{SECONDS:g} s, medians; kernel {os.uname().release}, {os.cpu_count()} CPUs")
        print_rows("CPU-bound points (target: IOPS ratio >= 1.0, >= 1.3 at 4K QD32; CPU ratio <= 0.8)",
                   measure(dev, CPU_BOUND, tmp, with_psync=True))
        print_rows("device-bound points (target: IOPS, MB/s and mean latency within 5 %)",
                   measure(dev, DEVICE_BOUND, tmp))
        fill = disk_file(tmp)
        try:
            print_rows(f"file on the machine's disk ({fill}, 1 GiB)", measure(fill, FILE_POINTS, tmp))
            print_rows("the same file read from the page cache (buffered; CPU-bound: target IOPS ratio >= 1.3, "
                       "and with T_IO_URING >= 0.93 of fio's t/io_uring)",
                       measure(fill, PAGE_CACHE_POINTS, tmp, buffered=True))
            if os.environ.get("MATRIX") != "skip":
                device_matrix(fill, tmp)
        finally:
            os.remove(fill)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        open(f"/sys/block/zram{n}/reset", "w").write("1")
        open("/sys/class/zram-control/hot_remove", "w").write(n)


if __name__ == "__main__":
    main()
