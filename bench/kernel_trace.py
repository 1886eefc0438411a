"""The kernel's tracepoints around a command, for bench/turnaround.py and bench/event_gaps.py (not
a benchmark itself). Needs root and tracefs at /sys/kernel/tracing; every setting changed is put
back."""

import os
import re
import subprocess
import sys
import time

TRACING = "/sys/kernel/tracing"


def require(script):
    """Exits, naming script, unless it runs as root with tracefs mounted."""
    if os.geteuid() != 0 or not os.path.isdir(os.path.join(TRACING, "events")):
        sys.exit(f"{script} needs root and tracefs at /sys/kernel/tracing "
                 "(mount -t tracefs nodev /sys/kernel/tracing)")


def _write(path, value):
    with open(os.path.join(TRACING, path), "w") as f:
        f.write(value)


def _read(path):
    with open(os.path.join(TRACING, path)) as f:
        return f.read().strip()


def traced(cmd, events, window_s, after_s=1.5, clock=None, cpu=None, name=None):
    """Runs cmd; returns the trace lines of `events` over window_s seconds, after_s seconds after
    it started (past its ramp): timed by `clock` (a trace_clock, say "x86-tsc") and from `cpu`
    alone where given. Exits naming the command (`name`, else its first word) if it fails."""
    saved = {"trace_clock": re.search(r"\[(\S+)\]", _read("trace_clock")).group(1),
             "tracing_cpumask": _read("tracing_cpumask"),
             "buffer_size_kb": _read("buffer_size_kb").split()[0]}  # "7 (expanded: 1408)"
    _write("tracing_on", "0")
    _write("trace", "")
    _write("buffer_size_kb", "65536")
    if clock:
        _write("trace_clock", clock)
    if cpu is not None:
        _write("tracing_cpumask", f"{1 << cpu:x}")
    for e in events:
        _write(f"events/{e}/enable", "1")
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(after_s)
        _write("tracing_on", "1")
        time.sleep(window_s)
        _write("tracing_on", "0")
        _, err = proc.communicate()
        if proc.returncode != 0:
            sys.exit(f"{name or cmd[0]} failed: {err.strip()}")
        return _read("trace").splitlines()
    finally:
        for e in events:
            _write(f"events/{e}/enable", "0")
        _write("trace", "")
        for path, value in saved.items():
            _write(path, value)


def trimmed_mean(values, cut=0.1):
    """The mean of values without their lowest and highest tenth. Not the median: a trace's
    timestamps in whole microseconds give differences whose median sticks to whole numbers
    where their mean does not."""
    v = sorted(values)
    k = int(len(v) * cut)
    kept = v[k:len(v) - k] or v
    return sum(kept) / len(kept)
