#!/usr/bin/env python3
"""Where each request's time goes at queue depth 1, iolab against fio, from the kernel's own clock.

    sudo python3 bench/turnaround.py          # ROUNDS=4, BENCH_DIR=$TMPDIR
    sudo T_IO_URING=/path/to/fio/t/io_uring python3 bench/turnaround.py   # and fio's bare loop

At QD1 a tool's IOPS is 1 / (device time + the host's turnaround), so a tool that is slower at QD1
either gets slower service from the device or adds time between a completion and its next request.
This script runs both tools, in alternating order, on a 1 GiB file on the machine's disk (4K random
reads, O_DIRECT, io_uring; fio with registered buffers and files, iolab with --random-map as fio's
random map) and, half a second into each run's measurement, records the kernel's tracepoints for
0.5 s: `block_rq_issue` / `block_rq_complete` and the tool's `io_uring_enter` calls. Per I/O it prints
the medians over rounds of each round's trimmed mean of:

- device:   block issue -> block completion (the device and its driver),
- turn:     block completion -> the next block issue (everything the host adds),
  - wake:   completion -> the tool's io_uring_enter returns (interrupt, task work, wake-up),
  - user:   that return -> the tool's next io_uring_enter (the tool's own code),
  - submit: that call -> the block issue (io_uring and the block layer).

With T_IO_URING (see bench/t_io_uring.py) fio's bare io_uring loop runs as a third tool, its
order rotating with the other two: it tells what a request costs the host with nothing around the
submit-and-wait call.

Needs root and tracefs (/sys/kernel/tracing); it changes the tracing settings and restores them.
"""

import os
import re
import statistics
import tempfile

from engine_vs_fio import IOLAB, disk_file
from kernel_trace import require, trimmed_mean, traced
from t_io_uring import command as t_io_uring_command

ROUNDS = int(os.environ.get("ROUNDS", "4"))
T_IO_URING = os.environ.get("T_IO_URING")
# Both tools repeat their offsets from run to run by default (iolab's seed 1, fio's randrepeat), so
# each reads the same blocks every round; FRESH_OFFSETS=1 gives every run its own seed.
FRESH_OFFSETS = os.environ.get("FRESH_OFFSETS") == "1"
EVENTS = ["block/block_rq_issue", "block/block_rq_complete",
          "syscalls/sys_enter_io_uring_enter", "syscalls/sys_exit_io_uring_enter"]
LINE = re.compile(r"\s*(\S+)-\d+\s+\[\d+\]\s+\S+\s+(\d+\.\d+): (\w+)(.*)")


def phases(lines, comm):
    """Per-I/O phases (µs) of the process named comm: see the module's documentation."""
    out = {"device": [], "turn": [], "wake": [], "user": [], "submit": []}
    issue = complete = returned = entered = None
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        who, t, event, rest = m.group(1), float(m.group(2)) * 1e6, m.group(3), m.group(4)
        mine = who.startswith(comm)
        if event == "block_rq_issue":
            if complete is not None:
                out["turn"].append(t - complete)
            if entered is not None and (issue is None or entered > issue):
                out["submit"].append(t - entered)
            issue = t
        elif event == "block_rq_complete":
            if issue is not None:
                out["device"].append(t - issue)
            complete = t
        elif mine and event == "sys_io_uring_enter" and rest.startswith("("):
            if returned is not None and (entered is None or entered < returned):
                out["user"].append(t - returned)
            entered = t
        elif mine and event == "sys_io_uring_enter":
            # fio calls twice per I/O (submit, then wait): the wake is the call that a completion ends.
            if complete is not None and (returned is None or returned < complete):
                out["wake"].append(t - complete)
            returned = t
    return out


def main():
    require("turnaround.py")
    with tempfile.TemporaryDirectory() as tmp:
        target = disk_file(tmp)
        try:
            tools = {
                "iolab": [IOLAB, "run", "--access", "randread", "--bs", "4k", "--qd", "1", "--duration", "2",
                          "--ramp", "1", "--no-probe", "--random-map", "--json", os.path.join(tmp, "i.json"),
                          target],
                "fio": ["fio", "--name=turnaround", f"--filename={target}", "--direct=1", "--rw=randread",
                        "--bs=4k", "--time_based", "--runtime=2", "--ramp_time=1", "--ioengine=io_uring",
                        "--fixedbufs", "--registerfiles", "--iodepth=1", "--output-format=json",
                        f"--output={os.path.join(tmp, 'f.json')}"],
            }
            if T_IO_URING:
                # Its process and thread are named after the binary: "io_uring".
                tools["io_uring"] = t_io_uring_command(T_IO_URING, target, 1, seconds=3)
            got = {tool: {k: [] for k in ("device", "turn", "wake", "user", "submit", "ios")} for tool in tools}
            names = list(tools)
            for r in range(ROUNDS):
                # Every tool first, second, ... in turn.
                order = names[r % len(names):] + names[:r % len(names)]
                for tool in order:
                    cmd = tools[tool]
                    if FRESH_OFFSETS and tool != "io_uring":
                        cmd = cmd + ([f"--seed={1000 + r}"] if tool == "iolab" else [f"--randseed={1000 + r}"])
                    p = phases(traced(cmd, EVENTS, 0.5), tool)
                    for k, v in p.items():
                        if v:
                            got[tool][k].append(trimmed_mean(v))
                    got[tool]["ios"].append(len(p["device"]) * 2)
            print(f"4K random reads at QD1 on {target}, {ROUNDS} alternating rounds, 0.5 s traced each; "
                  "medians over rounds of each round's per-I/O mean (10 % trimmed), µs (IOPS from the traced I/Os)")
            print(f"{'tool':<9}{'IOPS':>8}{'device':>9}{'turn':>7}{'wake':>7}{'user':>7}{'submit':>8}")
            for tool, g in got.items():
                med = {k: statistics.median(v) if v else float("nan") for k, v in g.items()}
                print(f"{tool:<9}{med['ios']:>8.0f}{med['device']:>9.2f}{med['turn']:>7.2f}{med['wake']:>7.2f}"
                      f"{med['user']:>7.2f}{med['submit']:>8.2f}")
        finally:
            os.unlink(target)


if __name__ == "__main__":
    main()
