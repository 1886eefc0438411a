#!/usr/bin/env python3
"""fio and iolab running the same fio job files on the same loop device: do they issue the same
I/O? Run as root, with fio and blktrace installed:

    python3 bench/fio_agreement.py [IOLAB]

A 512 MiB loop device over a file in /dev/shm (no load on the machine's disk), with merging
off (queue/nomerges = 2) so that every request a tool issues reaches the kernel's counters as
one. For each job, fio runs the file, then `iolab run` runs the same file; the kernel's
counters (/sys/block/loopN/stat) give the I/O count, the read/write split and the bytes, and
blktrace (completions) the block-size mix per direction. A job agrees when the I/O counts are
within 1 %, the read share and each block size's share within 1 percentage point.

Not a test (one of these jobs is a cargo test, crates/iolab/tests/fio.rs): it prints a table.
"""

import os
import signal
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

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


def stat(name):
    f = open(f"/sys/block/{name}/stat").read().split()
    return [int(f[0]), int(f[2]), int(f[4]), int(f[6])]


def measure(name, dev, cmd, tmp):
    trace_dir = tempfile.mkdtemp(dir=tmp)
    tracer = subprocess.Popen(
        ["blktrace", "-d", dev, "-a", "complete", "-D", trace_dir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1)
    before = stat(name)
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    after = stat(name)
    time.sleep(0.5)
    tracer.send_signal(signal.SIGINT)
    tracer.wait()
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {r.stdout}{r.stderr}")
    parsed = subprocess.run(
        ["blkparse", "-i", name, "-D", trace_dir, "-q", "-f", "%a %d %n\n"],
        capture_output=True,
        text=True,
    ).stdout
    sizes = Counter()
    for line in parsed.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "C" and parts[2] != "0":
            d = "R" if "R" in parts[1] else "W" if "W" in parts[1] else None
            if d:
                sizes[(d, int(parts[2]) * 512)] += 1
    shutil.rmtree(trace_dir)
    reads, rsec, writes, wsec = (a - b for a, b in zip(after, before))
    return {"reads": reads, "writes": writes, "bytes": (rsec + wsec) * 512, "sizes": sizes}


def shares(sizes):
    total = sum(sizes.values()) or 1
    return {k: 100.0 * v / total for k, v in sizes.items()}


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    iolab = sys.argv[1] if len(sys.argv) > 1 else None
    for build in ("release", "debug"):
        candidate = os.path.join(root, "target", build, "iolab")
        if iolab is None and os.path.exists(candidate):
            iolab = candidate
    for tool in ("fio", "blktrace", "blkparse", "losetup"):
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
        print(f"{'job':28} {'tool':6} {'I/Os':>8} {'read %':>7} {'MiB':>8}  block sizes (share of I/Os)")
        verdicts = []
        for label, body in JOBS.items():
            path = os.path.join(tmp, "job.fio")
            with open(path, "w") as f:
                f.write(body.replace("]\n", f"]\nfilename={dev}\n", 1))
            fio = measure(name, dev, ["fio", "--output=fio.out", path], tmp)
            ours = measure(name, dev, [iolab, "run", path, "--no-probe", "--json", os.path.join(tmp, "r.json"), "--overwrite"], tmp)
            worst = []
            for tool, m in (("fio", fio), ("iolab", ours)):
                total = m["reads"] + m["writes"]
                mix = " ".join(f"{d}{s // 1024}k:{p:.1f}" for (d, s), p in sorted(shares(m["sizes"]).items()))
                print(f"{label:28} {tool:6} {total:8} {100.0 * m['reads'] / max(1, total):7.2f} {m['bytes'] / 2**20:8.1f}  {mix}")
            tf, to = fio["reads"] + fio["writes"], ours["reads"] + ours["writes"]
            count_dev = abs(to - tf) / max(1, tf) * 100
            read_dev = abs(100.0 * ours["reads"] / max(1, to) - 100.0 * fio["reads"] / max(1, tf))
            sf, so = shares(fio["sizes"]), shares(ours["sizes"])
            mix_dev = max(abs(sf.get(k, 0.0) - so.get(k, 0.0)) for k in set(sf) | set(so)) if sf or so else 0.0
            ok = count_dev <= 1.0 and read_dev <= 1.0 and mix_dev <= 1.0
            verdicts.append(ok)
            print(f"{'':28} {'diff':6} count {count_dev:.2f} %, read share {read_dev:.2f} pt, block-size mix {mix_dev:.2f} pt: {'AGREE' if ok else 'DIFFER'}")
        print(f"\n{sum(verdicts)} of {len(verdicts)} jobs agree within 1 %")
    finally:
        subprocess.run(["losetup", "-d", dev])
        shutil.rmtree(shm, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
