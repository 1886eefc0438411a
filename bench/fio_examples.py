#!/usr/bin/env python3
"""How many of fio's own examples/*.fio iolab runs, and why it refuses the others.

    python3 bench/fio_examples.py FIO_CHECKOUT [IOLAB]

FIO_CHECKOUT is a checkout of https://github.com/axboe/fio (only its examples/*.fio are read,
copied to a temp dir first). IOLAB defaults to target/release/iolab, else target/debug/iolab.

Each example that uses a block or file engine (sync, psync, vsync, pvsync, pvsync2, libaio,
io_uring, posixaio; or none, fio's default psync, unless its comments say to run it with
`--ioengine=` another, as the xnvme examples do) is run against a scratch target: a 4 TiB loop device
over a sparse file in /dev/shm when run as root (no load on the machine's disk; tmpfs takes a
sparse file of any size and holds only what is written), else a 4 TiB sparse file in $TMPDIR.
4 TiB lets the examples' offsets stand as written (zbd-seq-read starts at 131 GiB,
cross-stripe-verify's 30 clones are 124 GiB apart). After each run the file's blocks past its
first GiB are punched out again, so what the runs write there never adds up in memory. Each run is shortened from the command line, which overrides the file's keys: a
64 MiB span, 1 s measured, no ramp, no start delay (`--size 64m --duration 1 --ramp 0
--start-delay 0`). A file is counted as run when `iolab run` exits 0, and as refused when iolab
names what it cannot honour; the refusals are grouped by option. It is run twice: as is, and
with --fio-lenient (which runs without what it cannot honour, and records it).

Not a test: it prints counts.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

SCRATCH_BYTES = 4 << 40
BLOCK_OR_FILE = {"sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio"}
SHORT = ["--size", "64m", "--duration", "1", "--ramp", "0", "--start-delay", "0"]


def engine_of(text):
    """The file's engines: its ioengine lines; else the engine its comments say to run it with
    (`; fio --ioengine=xnvme ...`, as the xnvme examples do); else fio's default, psync."""
    engines = set(re.findall(r"^\s*ioengine\s*=\s*([^\s;#]+)", text, re.M))
    if not engines:
        engines = set(re.findall(r"^\s*[;#].*--ioengine=([^\s\\]+)", text, re.M))
    return engines or {"psync"}


def sparse_file(path):
    with open(path, "wb") as f:
        f.truncate(SCRATCH_BYTES)


KEEP_BYTES = 1 << 30


def punch(path):
    """Frees what a run wrote past the first GiB (the file stays 4 TiB, reading as zeros there).
    The first GiB, where the shortened examples work, stays as the runs left it, as the old
    256 MiB target did: writes into holes of tmpfs are several times slower than overwrites,
    and a timed write phase that covers less of its span leaves a timed verify phase reading
    blocks never written (surface-scan)."""
    subprocess.run(["fallocate", "--punch-hole", "--offset", str(KEEP_BYTES),
                    "--length", str(SCRATCH_BYTES - KEEP_BYTES), path], capture_output=True)


def scratch_target(tmp):
    """The target, the file behind it (punched after each run) and a cleanup."""
    if os.geteuid() == 0 and os.path.exists("/dev/loop-control"):
        shm = tempfile.mkdtemp(dir="/dev/shm")
        backing = os.path.join(shm, "backing.img")
        sparse_file(backing)
        dev = subprocess.run(["losetup", "--find", "--show", backing], capture_output=True, text=True)
        if dev.returncode == 0:
            loop = dev.stdout.strip()
            return loop, backing, (lambda: (subprocess.run(["losetup", "-d", loop]), shutil.rmtree(shm)))
        shutil.rmtree(shm)
    path = os.path.join(tmp, "target.bin")
    sparse_file(path)
    return path, path, (lambda: None)


def refusals(stderr):
    """The options an error names: lines `  FILE:LINE: OPTION: why`."""
    out = []
    for line in stderr.splitlines():
        m = re.match(r"\s+\S+:\d+: (\[[^\]]*\]|[^:=\s]+)(?:[= ].*?)?: (.*)", line)
        if m:
            name = "concurrent jobs" if m.group(1).startswith("[") else m.group(1)
            out.append((name, m.group(2)))
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    checkout = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    iolab = sys.argv[2] if len(sys.argv) > 2 else None
    for build in ("release", "debug"):
        candidate = os.path.join(root, "target", build, "iolab")
        if iolab is None and os.path.exists(candidate):
            iolab = candidate
    tmp = tempfile.mkdtemp()
    examples = os.path.join(tmp, "examples")
    os.mkdir(examples)
    for f in sorted(glob.glob(os.path.join(checkout, "examples", "*.fio"))):
        shutil.copy(f, examples)
    files = sorted(glob.glob(os.path.join(examples, "*.fio")))
    target, backing, cleanup = scratch_target(tmp)
    env = dict(os.environ, IOLAB_DB=os.path.join(tmp, "results.db"))
    try:
        eligible = []
        for path in files:
            with open(path, errors="replace") as f:
                engines = engine_of(f.read())
            if engines <= BLOCK_OR_FILE:
                eligible.append(path)
        print(f"{len(files)} examples, {len(eligible)} with a block or file engine; target {target}")
        for lenient in (False, True):
            ran, refused, failed = [], defaultdict(list), []
            for path in eligible:
                name = os.path.basename(path)
                cmd = [iolab, "run", path, target, *SHORT, "--no-probe", "--json", os.path.join(tmp, "r.json"), "--overwrite"]
                if lenient:
                    cmd.append("--fio-lenient")
                r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
                punch(backing)
                if r.returncode == 0:
                    ran.append(name)
                    continue
                named = refusals(r.stderr)
                if named:
                    for option, _ in sorted(set(named)):
                        refused[option].append(name)
                else:
                    last = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
                    failed.append((name, last))
            mode = "with --fio-lenient" if lenient else "as written"
            share = 100.0 * len(ran) / max(1, len(eligible))
            print(f"\n{mode}: {len(ran)} of {len(eligible)} run ({share:.0f} %)")
            print("  run: " + " ".join(ran))
            if refused:
                print("  refused, by option (a file may name several):")
                for option, names in sorted(refused.items(), key=lambda kv: (-len(set(kv[1])), kv[0])):
                    names = sorted(set(names))
                    print(f"    {option:30} {len(names):3}  {' '.join(names)}")
            for name, why in failed:
                print(f"  failed otherwise: {name}: {why}")
    finally:
        cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
