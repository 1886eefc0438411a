//! fio's verify family end to end: a write phase that only stamps (`do_verify=0`) with a
//! `verify_pattern`, then a read phase that checks what it reads (`rw=read` with `verify`), as
//! fio's surface-scan example does; and the read phase finding damage and unwritten blocks.

mod common;

use common::{iolab, json, text};
use std::path::Path;

const PATTERN: [u8; 4] = [0xaa, 0x55, 0x5a, 0xa5];

fn write(dir: &Path, name: &str, body: &str) {
    std::fs::write(dir.join(name), body).unwrap();
}

/// The read phase alone: reads `t.bin` in 64 KiB blocks and checks each.
const READ_PHASE: &str = "[global]\nbs=64k\nverify=meta\nsize=4m\n\
                          [verify-phase]\nrw=read\ndo_verify=1\nfilename=t.bin\n";

#[test]
fn a_stamping_write_phase_then_a_verifying_read_phase() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "scan.fio",
        "[global]\nbs=64k\nverify=meta\nverify_pattern=0xaa555aa5\nverify_interval=512\n\
         size=4m\nfilename=t.bin\n\
         [write-phase]\nrw=write\ndo_verify=0\n\
         [verify-phase]\nstonewall\nrw=read\ndo_verify=1\n",
    );
    let out = iolab(&["run", "scan.fio", "--json", "r.json"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&dir.path().join("r.json"));
    let (w, v) = (&r["jobs"][0], &r["jobs"][1]);
    assert_eq!(w["verify"]["mode"], "stamp", "{w}");
    assert_eq!(w["write"]["ios"], 64, "{w}");
    assert_eq!(v["verify"]["mode"], "reads", "{v}");
    assert_eq!(v["verify"]["bytes_checked"], 4 << 20, "{v}");
    assert_eq!(v["verify"]["failures"], 0, "{v}");
    // Each sector: iolab's stamp at its head, the pattern after it.
    let data = std::fs::read(dir.path().join("t.bin")).unwrap();
    assert_eq!(&data[..4], b"iolV");
    for sector in data.chunks(512).take(256) {
        assert_eq!(&sector[..4], b"iolV");
        assert!(
            sector[56..].chunks(4).all(|c| c == PATTERN),
            "{:x?}",
            &sector[56..64]
        );
    }

    // A changed byte is found by the read phase run on its own, later.
    let mut damaged = data.clone();
    damaged[(1 << 20) + 700] ^= 0x10;
    std::fs::write(dir.path().join("t.bin"), &damaged).unwrap();
    write(dir.path(), "read.fio", READ_PHASE);
    let out = iolab(&["run", "read.fio", "--json", "r2.json"], dir.path());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let v = &json(&dir.path().join("r2.json"))["jobs"][0]["verify"];
    assert_eq!(
        (v["failures"].as_u64(), v["corrupted"].as_u64()),
        (Some(1), Some(1)),
        "{v}"
    );
    assert_eq!(
        v["first_failures"][0]["sector_offset"],
        (1 << 20) + 512,
        "{v}"
    );
}

#[test]
fn a_verifying_read_of_blocks_never_written_with_verify_fails() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.bin"), vec![0u8; 4 << 20]).unwrap();
    write(dir.path(), "read.fio", READ_PHASE);
    let out = iolab(&["run", "read.fio", "--json", "r.json"], dir.path());
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let v = &json(&dir.path().join("r.json"))["jobs"][0]["verify"];
    assert_eq!(v["zeros"], 64, "{v}");
}
