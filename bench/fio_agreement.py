#!/usr/bin/env python3
"""fio and iolab running the same fio job files on the same loop device: do they issue the same
I/O? Run as root, with fio installed:

    python3 bench/fio_agreement.py [IOLAB]

A 512 MiB loop device over a file in /dev/shm (no load on the machine's disk), with merging
off (queue/nomerges = 2) so that every request a tool issues reaches the kernel's counters as
one. For each job, fio runs the file, then `iolab run` runs the same file; the kernel's
counters (/sys/block/loopN/stat) give the I/O count, the read/write split and the bytes read and
written; the kernel's `block_rq_issue` trace event (tracefs, filtered to the device; blktrace is
not permitted in every container) gives every request's direction and size, so the whole
block-size mix (readahead requests, the safety guard's buffered reads of signature areas, are
left out, as are udev's reads after a writer closes the device). A job agrees when the I/O counts and each direction's mean block size are within
1 %, the read share within 1 percentage point, and the share of every (direction, size) of the
mix within 1 percentage point.

Before it writes to a block device, iolab's safety guard reads the device's signature areas (a
dozen reads, some MiB); a job of one 4 KiB I/O in the same direction measures what iolab reads
besides the job, and that is taken out of iolab's counts (the guard's reads are listed).

Not a test (one of these jobs is a cargo test, crates/iolab/tests/fio.rs): it prints a table.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

JOBS = {
    "randread 4k QD32 direct": """
[randread-qd32]
ioengine=libaio
direct=1
rw=randread
bs=4k
iodepth=32
size=256m
""",
    "randrw 70/30 bssplit QD16": """
[mix]
ioengine=libaio
direct=1
rw=randrw
rwmixread=70
bssplit=4k/50:8k/30:16k/20
iodepth=16
size=512m
number_ios=60000
norandommap
""",
    "zipf:1.2 randread QD8": """
[zipf]
ioengine=io_uring
direct=1
rw=randread
bs=4k
iodepth=8
size=512m
number_ios=60000
random_distribution=zipf:1.2
""",
    "seq write 128k psync": """
[seqwrite]
ioengine=psync
direct=1
rw=write
bs=128k
size=256m
""",
    "randread rate 2000 IOPS": """
[rated]
ioengine=libaio
direct=1
rw=randread
bs=4k
iodepth=4
size=512m
rate_iops=2000
runtime=5
time_based
norandommap
""",
}


TRACE = "/sys/kernel/tracing"
ISSUE = f"{TRACE}/events/block/block_rq_issue"
LINE = re.compile(r" (\d+),(\d+) (\S+) (\d+) \(")


class BlockSizes:
    """Counts the requests issued to one device by direction and size, from the kernel's
    block_rq_issue event, over a `with` block. `None` counts where tracefs is not there."""

    def __init__(self, name):
        major, minor = open(f"/sys/block/{name}/dev").read().strip().split(":")
        self.dev = (int(major), int(minor))
        self.counts = None

    def __enter__(self):
        if not os.path.exists(ISSUE):
            subprocess.run(["mount", "-t", "tracefs", "none", TRACE], capture_output=True)
        if os.path.exists(ISSUE):
            open(f"{TRACE}/tracing_on", "w").write("0")
            open(f"{TRACE}/buffer_size_kb", "w").write("65536")
            open(f"{TRACE}/trace", "w").write("")
            open(f"{ISSUE}/filter", "w").write(f"dev == {(self.dev[0] << 20) | self.dev[1]}")
            open(f"{ISSUE}/enable", "w").write("1")
            open(f"{TRACE}/tracing_on", "w").write("1")
        return self

    def __exit__(self, *exc):
        if not os.path.exists(ISSUE):
            return False
        open(f"{TRACE}/tracing_on", "w").write("0")
        open(f"{ISSUE}/enable", "w").write("0")
        open(f"{ISSUE}/filter", "w").write("0")
        lost = sum(int(re.search(r"overrun: (\d+)", open(f"{TRACE}/per_cpu/{c}/stats").read()).group(1))
                   for c in os.listdir(f"{TRACE}/per_cpu"))
        counts = {}
        for line in open(f"{TRACE}/trace"):
            m = LINE.search(line)
            if not m or (int(m.group(1)), int(m.group(2))) != self.dev:
                continue
            rwbs, size = m.group(3), int(m.group(4))
            if "A" in rwbs:
                continue  # readahead: the safety guard's buffered reads, not the job's I/O
            if re.search(r"\[[^]]*(udev|blkid)[^]]*\]\s*$", line):
                continue  # udev probing the device after a writer closed it
            d = "R" if "R" in rwbs else "W" if "W" in rwbs else None
            if d and size:
                counts[(d, size)] = counts.get((d, size), 0) + 1
        self.counts = None if lost else counts
        return False


def mix_dev(ours, fio):
    """The largest difference, in percentage points, between the two mixes' shares of one
    direction's requests taken by one size."""
    worst = 0.0
    for d in "RW":
        a = {s: n for (dd, s), n in ours.items() if dd == d}
        b = {s: n for (dd, s), n in fio.items() if dd == d}
        ta, tb = sum(a.values()), sum(b.values())
        if not ta and not tb:
            continue
        for size in set(a) | set(b):
            worst = max(worst, abs(100.0 * a.get(size, 0) / max(1, ta) - 100.0 * b.get(size, 0) / max(1, tb)))
    return worst


def mix_text(counts):
    total = {d: sum(n for (dd, _), n in counts.items() if dd == d) for d in "RW"}
    return " ".join(f"{d}{s // 1024}k:{100.0 * n / total[d]:.1f}%" for (d, s), n in sorted(counts.items()))


def stat(name):
    f = open(f"/sys/block/{name}/stat").read().split()
    return [int(f[0]), int(f[2]), int(f[4]), int(f[6])]


def measure(name, cmd, tmp):
    before = stat(name)
    env = dict(os.environ, IOLAB_DB=os.path.join(tmp, "results.sqlite"))
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, env=env)
    after = stat(name)
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {r.stdout}{r.stderr}")
    reads, rsec, writes, wsec = (a - b for a, b in zip(after, before))
    return {"reads": reads, "writes": writes, "rbytes": rsec * 512, "wbytes": wsec * 512}


def mean(m, d):
    n = m["reads" if d == "R" else "writes"]
    return m["rbytes" if d == "R" else "wbytes"] / n if n else 0.0


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    iolab = sys.argv[1] if len(sys.argv) > 1 else None
    for build in ("release", "debug"):
        candidate = os.path.join(root, "target", build, "iolab")
        if iolab is None and os.path.exists(candidate):
            iolab = candidate
    for tool in ("fio", "losetup"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is not installed")
    tmp = tempfile.mkdtemp()
    shm = tempfile.mkdtemp(dir="/dev/shm")
    backing = os.path.join(shm, "backing.img")
    with open(backing, "wb") as f:
        f.truncate(512 << 20)
    dev = subprocess.run(["losetup", "--find", "--show", backing], capture_output=True, text=True, check=True).stdout.strip()
    name = os.path.basename(dev)
    try:
        with open(f"/sys/block/{name}/queue/nomerges", "w") as f:
            f.write("2")
        print(f"device {dev} (512 MiB in /dev/shm, nomerges=2); iolab {iolab}")
        print(f"{'job':28} {'tool':6} {'I/Os':>8} {'read %':>7} {'MiB':>8} {'read KiB/IO':>11} {'write KiB/IO':>12}")
        verdicts = []
        for label, body in JOBS.items():
            path = os.path.join(tmp, "job.fio")
            with open(path, "w") as f:
                f.write(body.replace("]\n", f"]\nfilename={dev}\n", 1))
            with BlockSizes(name) as fio_sizes:
                fio = measure(name, ["fio", "--output=fio.out", path], tmp)
            with BlockSizes(name) as our_sizes:
                ours = measure(name, [iolab, "run", path, "--no-probe", "--json", os.path.join(tmp, "r.json"), "--overwrite"], tmp)
            # What iolab reads besides the job: a one-I/O job in the same direction, less its I/O.
            access = "randwrite" if "write" in body or "randrw" in body else "randread"
            with BlockSizes(name) as guard_sizes:
                # On the job's engine: choosing psync reads a sector to see whether the device
                # takes non-blocking reads.
                engine = ["--engine", "psync"] if "ioengine=psync" in body else []
                one = measure(name, [iolab, "run", dev, "--access", access, "--bs", "4k", "--ios-limit", "1", "--no-probe", "--json", os.path.join(tmp, "g.json"), "--overwrite"] + engine, tmp)
            extra_reads = one["reads"] - (1 if access == "randread" else 0)
            extra_bytes = one["rbytes"] - (4096 if access == "randread" else 0)
            ours["reads"] -= extra_reads
            ours["rbytes"] -= extra_bytes
            for tool, m in (("fio", fio), ("iolab", ours)):
                total = m["reads"] + m["writes"]
                mib = (m["rbytes"] + m["wbytes"]) / 2**20
                print(f"{label:28} {tool:6} {total:8} {100.0 * m['reads'] / max(1, total):7.2f} {mib:8.1f} {mean(m, 'R') / 1024:11.2f} {mean(m, 'W') / 1024:12.2f}")
            tf, to = fio["reads"] + fio["writes"], ours["reads"] + ours["writes"]
            count_dev = abs(to - tf) / max(1, tf) * 100
            read_dev = abs(100.0 * ours["reads"] / max(1, to) - 100.0 * fio["reads"] / max(1, tf))
            size_dev = max(abs(mean(ours, d) - mean(fio, d)) / mean(fio, d) * 100 if mean(fio, d) else 0.0 for d in "RW")
            mix = None
            if None not in (fio_sizes.counts, our_sizes.counts, guard_sizes.counts):
                # The guard's signature reads are buffered (readahead) and left out of the mix;
                # anything else the one-I/O job issued besides its I/O would be the guard's too.
                job_io = ("R" if access == "randread" else "W", 4096)
                for key, n in guard_sizes.counts.items():
                    n -= 1 if key == job_io else 0
                    if n:
                        our_sizes.counts[key] = our_sizes.counts.get(key, 0) - n
                mix = mix_dev(our_sizes.counts, fio_sizes.counts)
                print(f"{'':28} {'mix':6} fio   {mix_text(fio_sizes.counts)}")
                print(f"{'':28} {'':6} iolab {mix_text(our_sizes.counts)}")
            ok = count_dev <= 1.0 and read_dev <= 1.0 and size_dev <= 1.0 and (mix is None or mix <= 1.0)
            verdicts.append(ok)
            mix_s = f", block-size mix {mix:.2f} pt" if mix is not None else ", block-size mix not traced (no tracefs, or events lost)"
            print(f"{'':28} {'diff':6} count {count_dev:.2f} %, read share {read_dev:.2f} pt, mean block size {size_dev:.2f} %{mix_s} "
                  f"(iolab's guard: {extra_reads} reads, {extra_bytes / 2**20:.1f} MiB taken out): {'AGREE' if ok else 'DIFFER'}")
        print(f"\n{sum(verdicts)} of {len(verdicts)} jobs agree within 1 %")
    finally:
        subprocess.run(["losetup", "-d", dev])
        shutil.rmtree(shm, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
