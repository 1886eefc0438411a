#!/usr/bin/env python3
"""Where a QD1 request's time goes, step by kernel step, iolab against fio's t/io_uring.

    sudo T_IO_URING=/path/to/fio/t/io_uring python3 bench/event_gaps.py   # ROUNDS=3, CPU=1

Both tools read 4K at random at QD1 from a 1 GiB file on the machine's disk (BENCH_DIR, else
$TMPDIR), O_DIRECT, each held on one CPU (`taskset -c CPU`: pick the CPU the disk's completions
interrupt, see /proc/interrupts). For 0.3 s, 1.5 s into each run, the kernel's tracepoints on that
CPU are recorded with the TSC as the clock (x86 only; bench/turnaround.py has a portable,
coarser view): block (bio queued, request inserted, issued, completed), io_uring (request
submitted, completion posted), the interrupt and the block softirq, wake-ups and switches. Each
pair of consecutive events, "A -> B", is a step; per tool and step it prints how often the step
occurred per request and its mean length (10 % trimmed), medians over the rounds, so the steps
that differ between the tools stand out.

Two steps tell the two ways a request ends: "block_rq_issue -> sched_switch:idle" (the CPU went
idle while the device worked) and "block_rq_issue -> irq_handler_entry" (it did not, and no guest
event happened until the completion's interrupt).

Needs root and tracefs at /sys/kernel/tracing; it changes the tracing settings and restores them.
"""

import collections
import os
import re
import statistics
import subprocess
import sys
import tempfile

from engine_vs_fio import IOLAB, disk_file
from kernel_trace import require, trimmed_mean, traced
from t_io_uring import command as t_io_uring_command

ROUNDS = int(os.environ.get("ROUNDS", "3"))
CPU = int(os.environ.get("CPU", "1"))
T_IO_URING = os.environ.get("T_IO_URING")
EVENTS = ["io_uring/io_uring_submit_req", "io_uring/io_uring_complete", "block/block_bio_queue",
          "block/block_rq_insert", "block/block_rq_issue", "block/block_rq_complete",
          "irq/irq_handler_entry", "irq/softirq_entry", "sched/sched_wakeup", "sched/sched_switch"]
# task-pid [cpu] flags timestamp: event: details
LINE = re.compile(r"\s*.+?-\d+\s+\[\d+\]\s+\S+\s+(\d+): (\w+): (.*)")


def tsc_per_us():
    """The TSC's ticks per microsecond, as the kernel measured it at boot."""
    log = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    m = re.search(r"tsc: Detected ([\d.]+) MHz", log) or re.search(r"tsc: Refined TSC clocksource calibration: ([\d.]+) MHz", log)
    if not m:
        sys.exit("event_gaps.py: the kernel log does not say the TSC's frequency (tsc: Detected ... MHz)")
    return float(m.group(1))


def kind(event, details):
    """An event's name, with what tells its cases apart: the interrupt's and softirq's number,
    and whether a switch goes to the idle task."""
    if event in ("irq_handler_entry", "softirq_entry"):
        return f"{event}:{details.split()[0]}"
    if event == "sched_switch":
        return "sched_switch:idle" if "next_comm=swapper" in details else "sched_switch:task"
    return event


def steps(lines, ticks_per_us):
    """Per step "A -> B": its lengths in µs; and how many requests were issued."""
    out = collections.defaultdict(list)
    prev = None
    issued = 0
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        t, k = int(m.group(1)) / ticks_per_us, kind(m.group(2), m.group(3))
        issued += k == "block_rq_issue"
        if prev:
            out[f"{prev[1]} -> {k}"].append(t - prev[0])
        prev = (t, k)
    return out, issued


def main():
    require("event_gaps.py")
    if not T_IO_URING:
        sys.exit("event_gaps.py: set T_IO_URING to fio's t/io_uring (see bench/t_io_uring.py)")
    if CPU not in os.sched_getaffinity(0):
        sys.exit(f"CPU={CPU}: not one of the CPUs this script may run on: {sorted(os.sched_getaffinity(0))}")
    ticks = tsc_per_us()
    pin = ["taskset", "-c", str(CPU)]
    with tempfile.TemporaryDirectory() as tmp:
        target = disk_file(tmp)
        try:
            tools = {
                "iolab": pin + [IOLAB, "run", "--access", "randread", "--bs", "4k", "--qd", "1", "--duration", "3",
                                "--no-probe", "--random-map", "--json", os.path.join(tmp, "i.json"), target],
                "t/io_uring": pin + t_io_uring_command(T_IO_URING, target, 1, seconds=3),
            }
            per_request = {t: collections.defaultdict(list) for t in tools}
            mean_us = {t: collections.defaultdict(list) for t in tools}
            issued = {t: [] for t in tools}
            names = list(tools)
            for r in range(ROUNDS):
                for tool in names[r % 2:] + names[:r % 2]:
                    gaps, n = steps(traced(tools[tool], EVENTS, 0.3, clock="x86-tsc", cpu=CPU, name=tool), ticks)
                    issued[tool].append(n)
                    for step, v in gaps.items():
                        per_request[tool][step].append(len(v) / max(n, 1))
                        mean_us[tool][step].append(trimmed_mean(v))
            print(f"4K random reads at QD1 on {target}, both tools on CPU {CPU}, {ROUNDS} rounds of 0.3 s traced; "
                  f"requests issued per round: " + "; ".join(f"{t} {' '.join(map(str, n))}" for t, n in issued.items()))
            print("step (consecutive events on the CPU)                          per request     mean µs "
                  "(iolab, t/io_uring)")
            def med(d, s):
                return statistics.median(d[s]) if d.get(s) else 0.0

            # Steps of at least one request in twenty for either tool, the costliest first.
            shown = [s for s in set(mean_us["iolab"]) | set(mean_us["t/io_uring"])
                     if max(med(per_request[t], s) for t in tools) >= 0.05]
            shown.sort(key=lambda s: -max(med(mean_us[t], s) * med(per_request[t], s) for t in tools))
            for s in shown:
                print(f"{s:<62}{med(per_request['iolab'], s):>6.2f} {med(per_request['t/io_uring'], s):>5.2f}"
                      f"{med(mean_us['iolab'], s):>9.2f} {med(mean_us['t/io_uring'], s):>7.2f}")
        finally:
            os.unlink(target)


if __name__ == "__main__":
    main()
