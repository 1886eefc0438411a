//! Verify end to end: faults injected between a run and `iolab verify` are found with their
//! offset and kind, mixed jobs of compressible and duplicate data verify clean, and a journal
//! survives a writer killed with SIGKILL.

mod common;

use common::{iolab, iolab_cmd, json, text};
use iolab_testkit::{loop_skip_reason, LoopDevice, MachineLock};
use serde_json::Value;
use std::os::unix::fs::FileExt;
use std::path::Path;

const BLOCK: u64 = 4096;

fn failures(summary: &Value) -> Vec<(String, u64)> {
    let mut f: Vec<(String, u64)> = summary["first_failures"]
        .as_array()
        .expect("first_failures")
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["sector_offset"].as_u64().unwrap(),
            )
        })
        .collect();
    f.sort_by_key(|x| x.1);
    f
}

fn job_verify(result: &Value, job: usize) -> &Value {
    &result["jobs"][job]["verify"]
}

/// Where the faults go: the target iolab writes and verifies, and the file its bytes live in
/// (the same file, or a loop device's backing file).
struct Victim<'a> {
    target: &'a str,
    bytes: &'a Path,
}

/// Writes the victim's first 4 MiB in 4 KiB blocks with verify, and returns those bytes.
fn write_pass(dir: &Path, victim: &Victim, extra: &[&str]) -> Vec<u8> {
    let mut args = vec![
        "run",
        victim.target,
        "--size",
        "4m",
        "--access",
        "write",
        "--qd",
        "4",
        "--verify",
        "--json",
        "r.json",
        "--no-probe",
        "--overwrite",
    ];
    args.extend_from_slice(extra);
    let out = iolab(&args, dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&dir.join("r.json"));
    let v = job_verify(&r, 0);
    assert_eq!(v["failures"], 0, "{v}");
    assert_eq!(v["blocks_checked"], 1024, "{v}");
    let mut bytes = std::fs::read(victim.bytes).unwrap();
    bytes.truncate(4 << 20);
    bytes
}

#[test]
fn every_injected_fault_is_found_with_its_offset_and_kind() {
    let dir = tempfile::tempdir().unwrap();
    let victim = Victim {
        target: "t.bin",
        bytes: &dir.path().join("t.bin"),
    };
    faults_are_found(dir.path(), &victim);
}

#[test]
fn faults_in_a_loop_devices_backing_file_are_found() {
    if let Some(why) = loop_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    // The backing file in RAM where there is a tmpfs, off the machine's disk.
    let shm = Path::new("/dev/shm");
    let dev = if shm.is_dir() {
        LoopDevice::new_in(shm, 8 << 20)
    } else {
        LoopDevice::new(8 << 20)
    }
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let target = dev.path.to_str().unwrap();
    let victim = Victim {
        target,
        bytes: dev.backing_file(),
    };
    faults_are_found(dir.path(), &victim);
}

/// Writes the victim twice, injects one fault of each kind into its bytes, and checks that
/// `iolab verify` names each with its offset and kind.
fn faults_are_found(d: &Path, victim: &Victim) {
    let older = write_pass(d, victim, &[]);
    // The second pass is journaled: `iolab verify` then knows what each block should hold.
    let newer = write_pass(d, victim, &["--verify-journal", "j.bin"]);
    let clean = iolab(&["verify", victim.target, "--journal", "j.bin"], d);
    assert_eq!(clean.status.code(), Some(0), "{}", text(&clean));

    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(victim.bytes)
        .unwrap();
    let block = |b: &[u8], i: u64| b[(i * BLOCK) as usize..((i + 1) * BLOCK) as usize].to_vec();
    // A flipped bit in block 10, sector 1.
    let at = 10 * BLOCK + 700;
    f.write_all_at(&[newer[at as usize] ^ 0x08], at).unwrap();
    // Blocks 20 and 21 zeroed.
    f.write_all_at(&[0u8; 2 * BLOCK as usize], 20 * BLOCK)
        .unwrap();
    // Blocks 30 and 40 swapped.
    f.write_all_at(&block(&newer, 40), 30 * BLOCK).unwrap();
    f.write_all_at(&block(&newer, 30), 40 * BLOCK).unwrap();
    // The first pass's copy of block 50 put back.
    f.write_all_at(&block(&older, 50), 50 * BLOCK).unwrap();
    // Block 60 torn at its fourth sector: the rest is the first pass's.
    f.write_all_at(&block(&older, 60)[2048..], 60 * BLOCK + 2048)
        .unwrap();
    f.sync_all().unwrap();

    let out = iolab(
        &[
            "verify",
            victim.target,
            "--journal",
            "j.bin",
            "--json",
            "v.json",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let v = json(&d.join("v.json"));
    assert_eq!(
        failures(&v),
        [
            ("corrupted".to_string(), 10 * BLOCK + 512),
            ("zeros".to_string(), 20 * BLOCK),
            ("zeros".to_string(), 21 * BLOCK),
            ("misplaced".to_string(), 30 * BLOCK),
            ("misplaced".to_string(), 40 * BLOCK),
            ("stale".to_string(), 50 * BLOCK),
            ("torn".to_string(), 60 * BLOCK + 2048),
        ],
        "{}",
        text(&out)
    );
    assert_eq!(v["failures"], 7);
    assert!(text(&out).contains("verify FAILED"), "{}", text(&out));

    // Without the journal the stamps alone still show corruption, misplacement and the tear
    // (a lost write and zeros need the journal).
    let out = iolab(
        &["verify", victim.target, "--json", "s.json", "--overwrite"],
        d,
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let kinds: Vec<String> = failures(&json(&d.join("s.json")))
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        kinds,
        ["corrupted", "misplaced", "misplaced", "torn"],
        "{}",
        text(&out)
    );
}

#[test]
fn mixed_jobs_of_compressible_and_duplicate_data_verify_clean() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let jobs = r#"
[[job]]
name = "fill"
access = "write"
block_size = "1m"
size = "1g"
compress_pct = 60
dedupe_pct = 30
verify = "end"

[[job]]
name = "mixed-sizes"
access = "randrw"
read_pct = 30
bssplit = "4k/50:16k/30:64k/20"
queue_depth = 16
threads = 2
ios_limit = 6000
dedupe_pct = 40
compress_pct = 30
verify = "end"

[[job]]
name = "inline"
access = "randwrite"
queue_depth = 8
ios_limit = 4000
dedupe_pct = 70
verify = "inline"

[[job]]
name = "zeros"
access = "randwrite"
block_size = "8k"
data = "zeros"
ios_limit = 2000
random_map = true
verify = "crc32c"
"#;
    std::fs::write(d.join("jobs.toml"), jobs).unwrap();
    let out = iolab(
        &[
            "run",
            "jobs.toml",
            "t.bin",
            "--json",
            "r.json",
            "--no-probe",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&d.join("r.json"));
    for (i, mode) in ["end", "end", "inline", "end"].iter().enumerate() {
        let v = job_verify(&r, i);
        assert_eq!(v["mode"], *mode, "{v}");
        assert_eq!(v["failures"], 0, "job {i}: {v}");
        assert!(v["blocks_checked"].as_u64().unwrap() > 100, "job {i}: {v}");
    }
    // The fill alone wrote and checked the whole GiB.
    assert_eq!(job_verify(&r, 0)["bytes_checked"], 1u64 << 30);
    // Every write of the inline job was read back: its 4000 writes.
    assert_eq!(job_verify(&r, 2)["blocks_checked"], 4000);
    // And the stamps left on the target hold together.
    let out = iolab(&["verify", "t.bin"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn a_journal_survives_its_writer_killed_and_every_flushed_write_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut child = iolab_cmd(
        &[
            "run",
            "t.bin",
            "--size",
            "16m",
            "--access",
            "randwrite",
            "--qd",
            "8",
            "--duration",
            "60",
            "--verify-journal",
            "j.bin",
            "--verify-flush",
            "20ms",
            "--no-probe",
        ],
        d,
    )
    .spawn()
    .unwrap();
    // Killed once the journal holds a few flushes (a flush record is kind `F`).
    let flushes = || {
        std::fs::read(d.join("j.bin")).map_or(0, |b| {
            b.get(16..)
                .unwrap_or_default()
                .chunks_exact(24)
                .filter(|r| r[0] == b'F')
                .count()
        })
    };
    let mut waited = 0;
    while flushes() < 5 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the writer ended before it flushed"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        waited += 1;
        assert!(waited < 3000, "no flushes in the journal");
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let out = iolab(
        &["verify", "t.bin", "--journal", "j.bin", "--json", "v.json"],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v = json(&d.join("v.json"));
    assert_eq!(v["failures"], 0, "{v}");
    assert!(v["journal_flushes"].as_u64().unwrap() >= 5, "{v}");
    assert!(v["blocks_checked"].as_u64().unwrap() > 0, "{v}");
    // The page cache kept every acknowledged write: none was lost.
    assert_eq!(v["unflushed_lost"], 0, "{v}");
}

#[test]
fn verify_refuses_what_it_cannot_check() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = iolab(
        &[
            "run", "t.bin", "--size", "1m", "--access", "read", "--verify",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("verify"), "{}", text(&out));
    std::fs::write(d.join("j.bin"), b"not a journal").unwrap();
    std::fs::write(d.join("t.bin"), vec![0u8; 4096]).unwrap();
    let out = iolab(&["verify", "t.bin", "--journal", "j.bin"], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("not an iolab verify journal"),
        "{}",
        text(&out)
    );
}

/// The README's power-loss demonstration, as a user types it: a drive without power-loss
/// protection loses acknowledged writes its DRAM buffer held, one with it loses none, and
/// neither is a failure (no flush was asked for).
#[test]
fn power_loss_on_a_model_loses_writes_only_without_protection() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut lost = Vec::new();
    for target in ["sim:nvme2018-500@x470/cpu-m2a", "sim:ssd750-400@z97/cpu"] {
        let out = iolab(
            &[
                "run",
                target,
                "--size",
                "256m",
                "--access",
                "randwrite",
                "--qd",
                "32",
                "--duration",
                "1",
                "--power-loss-at",
                "0.5s",
                "--json",
                "r.json",
            ],
            d,
        );
        assert_eq!(out.status.code(), Some(0), "{target}: {}", text(&out));
        let r = json(&d.join("r.json"));
        let v = job_verify(&r, 0);
        assert_eq!(v["failures"], 0, "{target}: {v}");
        assert!(v["blocks_checked"].as_u64().unwrap() > 0, "{target}: {v}");
        lost.push(v["unflushed_lost"].as_u64().unwrap());
    }
    assert!(lost[0] > 0, "no protection, nothing lost: {lost:?}");
    assert_eq!(lost[1], 0, "with protection: {lost:?}");
}
