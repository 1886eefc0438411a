//! fio's zonemode=zbd end to end on a file: zones emulated with write pointers.

mod common;

use common::{iolab, json, text};

const ZONE: usize = 1 << 20;
const BLOCK: usize = 64 << 10;

#[test]
fn random_writes_fill_each_zone_from_its_start() {
    let dir = tempfile::tempdir().unwrap();
    // A target of zeros (a file iolab creates would be laid out with data first).
    std::fs::write(dir.path().join("t.bin"), vec![0u8; 8 * ZONE]).unwrap();
    std::fs::write(
        dir.path().join("z.fio"),
        "[global]\nzonemode=zbd\nzonesize=1m\nmax_open_zones=2\n[z]\nrw=randwrite\nbs=64k\n\
         size=8z\nio_size=4m\n",
    )
    .unwrap();
    let out = iolab(
        &["run", "z.fio", "t.bin", "--json", "r.json", "--overwrite"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let j = &json(&dir.path().join("r.json"))["jobs"][0];
    assert_eq!(j["job"]["zoned"]["max_open"], 2, "{j}");
    assert_eq!(j["write"]["ios"].as_u64(), Some(64), "{j}");
    // Writes only at write pointers: in every zone the written blocks (random data, never all
    // zeros) come first, the untouched ones (zeros) after them.
    let data = std::fs::read(dir.path().join("t.bin")).unwrap();
    let mut written = 0;
    for (z, zone) in data.chunks(ZONE).enumerate() {
        let blocks: Vec<bool> = zone
            .chunks(BLOCK)
            .map(|b| b.iter().any(|&x| x != 0))
            .collect();
        let prefix = blocks.iter().take_while(|&&w| w).count();
        assert!(
            blocks[prefix..].iter().all(|&w| !w),
            "zone {z} written past a hole: {blocks:?}"
        );
        written += prefix;
    }
    // 64 writes of 64k, 16 fill a zone, two open at a time: at least four zones' worth, and
    // fewer blocks where a full zone picked again was reset and written from its start anew.
    assert!((48..=64).contains(&written), "{written} blocks written");
}

#[test]
fn a_read_only_job_below_write_pointers_reads_nothing_as_fio_does() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.bin"), vec![1u8; 4 << 20]).unwrap();
    std::fs::write(
        dir.path().join("r.fio"),
        "[r]\nrw=read\nbs=64k\nzonemode=zbd\nzonesize=1m\nread_beyond_wp=0\n",
    )
    .unwrap();
    let out = iolab(&["run", "r.fio", "t.bin", "--json", "r.json"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("nothing to read"), "{}", text(&out));
    let j = &json(&dir.path().join("r.json"))["jobs"][0];
    assert_eq!(j["read"]["ios"].as_u64(), Some(0), "{j}");
    // read_beyond_wp=1 reads the zones whatever their write pointers.
    std::fs::write(
        dir.path().join("b.fio"),
        "[r]\nrw=read\nbs=64k\nzonemode=zbd\nzonesize=1m\nread_beyond_wp=1\n",
    )
    .unwrap();
    let out = iolab(&["run", "b.fio", "t.bin", "--json", "b.json"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let j = &json(&dir.path().join("b.json"))["jobs"][0];
    assert_eq!(j["read"]["ios"].as_u64(), Some(64), "{j}");
}
