#!/usr/bin/env python3
"""How many of fio's own examples/*.fio iolab runs, and why it refuses the others.

    python3 bench/fio_examples.py FIO_CHECKOUT [IOLAB]

FIO_CHECKOUT is a checkout of https://github.com/axboe/fio (only its examples/*.fio are read,
copied to a temp dir first). IOLAB defaults to target/release/iolab, else target/debug/iolab.

Each example that uses a block or file engine (sync, psync, vsync, pvsync, pvsync2, libaio,
io_uring, posixaio; or none, fio's default psync, unless its comments say to run it with
`--ioengine=` another, as the xnvme examples do) is run against a scratch target: a 256 MiB loop device
over a file in /dev/shm when run as root (no load on the machine's disk), else a 256 MiB file
in $TMPDIR. Each run is shortened from the command line, which overrides the file's keys: a
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

BLOCK_OR_FILE = {"sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio"}
SHORT = ["--size", "64m", "--duration", "1", "--ramp", "0", "--start-delay", "0"]


def engine_of(text):
    """The file's engines: its ioengine lines; else the engine its comments say to run it with
    (`; fio --ioengine=xnvme ...`, as the xnvme examples do); else fio's default, psync."""
    engines = set(re.findall(r"^\s*ioengine\s*=\s*([^\s;#]+)", text, re.M))
    if not engines:
        engines = set(re.findall(r"^\s*[;#].*--ioengine=([^\s\\]+)", text, re.M))
    return engines or {"psync"}


def scratch_target(tmp):
    backing = None
    if os.geteuid() == 0 and os.path.exists("/dev/loop-control"):
        shm = tempfile.mkdtemp(dir="/dev/shm")
        backing = os.path.join(shm, "backing.img")
        with open(backing, "wb") as f:
            f.truncate(256 << 20)
        dev = subprocess.run(["losetup", "--find", "--show", backing], capture_output=True, text=True)
        if dev.returncode == 0:
            return dev.stdout.strip(), (lambda: (subprocess.run(["losetup", "-d", dev.stdout.strip()]), shutil.rmtree(shm)))
        shutil.rmtree(shm)
    path = os.path.join(tmp, "target.bin")
    with open(path, "wb") as f:
        f.truncate(256 << 20)
    return path, (lambda: None)


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
    target, cleanup = scratch_target(tmp)
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
