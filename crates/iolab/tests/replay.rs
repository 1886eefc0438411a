//! Trace replay issues exactly the trace's requests: checked against the JSON counts on a temp
//! file and against the kernel's counters on a zram device (bio-based, so nothing is merged).

use iolab_testkit::{zram_skip_reason, BlockStat, MachineLock, Zram};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces/msr_hm_0_first1000.csv")
}

/// Reads, writes and their bytes as replayed: lengths rounded up to 4 KiB (O_DIRECT).
fn expected() -> (u64, u64, u64, u64) {
    let text = std::fs::read_to_string(sample()).unwrap();
    let (mut r, mut w, mut rb, mut wb) = (0, 0, 0, 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        let len: u64 = f[5].parse().unwrap();
        let bytes = len.div_ceil(4096).max(1) * 4096;
        if f[3] == "Read" {
            (r, rb) = (r + 1, rb + bytes);
        } else {
            (w, wb) = (w + 1, wb + bytes);
        }
    }
    (r, w, rb, wb)
}

fn replay(target: &str, extra: &[&str], dir: &Path) -> Value {
    replay_of(&sample(), target, extra, dir)
}

fn replay_of(trace: &Path, target: &str, extra: &[&str], dir: &Path) -> Value {
    let mut args = vec![
        "trace",
        "replay",
        trace.to_str().unwrap(),
        target,
        "--as-fast-as-possible",
        "--json",
        "r.json",
        "--no-probe",
        "--size",
        "64m",
    ];
    args.extend(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(&args)
        .current_dir(dir)
        .env("IOLAB_DB", dir.join("results.sqlite")) // the results store stays in the temp dir
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap()
}

#[test]
fn replay_on_a_temp_file_issues_every_request_once() {
    let dir = tempfile::tempdir().unwrap();
    let r = replay("t.bin", &[], dir.path());
    let (reads, writes, rb, wb) = expected();
    let j = &r["jobs"][0];
    assert_eq!(
        (
            j["read"]["ios"].as_u64().unwrap(),
            j["write"]["ios"].as_u64().unwrap()
        ),
        (reads, writes)
    );
    assert_eq!(
        (
            j["read"]["bytes"].as_u64().unwrap(),
            j["write"]["bytes"].as_u64().unwrap()
        ),
        (rb, wb)
    );
    let s = &r["replay"];
    assert_eq!(s["planned_ios"].as_u64().unwrap(), reads + writes);
    assert!(s["data_rate_mb_per_s"].as_f64().unwrap() > 0.0);
    assert!(s["pct_over_10ms"].as_f64().unwrap() >= 0.0);
    // A measurement carries no note of the model's validation.
    let notes = r["notes"].to_string();
    assert!(!notes.contains("replayed on the model"), "{notes}");
    // Timestamp-faithful at 100× speed replays the same requests.
    let r = replay("t.bin", &["--time-scale", "100"], dir.path());
    let _ = r;
}

#[test]
fn as_fast_as_possible_keeps_the_depth_of_the_trace_in_time_order() {
    if !sample().exists() {
        println!("skipped: {} not found", sample().display());
        return;
    }
    // The sample with every four lines reversed: out of file order, not out of time.
    let text = std::fs::read_to_string(sample()).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let shuffled: Vec<&str> = lines
        .chunks(4)
        .flat_map(|c| c.iter().rev().copied())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shuffled.csv");
    std::fs::write(&file, shuffled.join("\n") + "\n").unwrap();
    let qd = |r: Value| r["jobs"][0]["job"]["queue_depth"].as_u64().unwrap();
    // The job says how sequential the trace is: 3.9 % of its requests, by `trace analyze`.
    let r = replay("sim:sm951-512@x470", &[], dir.path());
    let random = r["jobs"][0]["job"]["random_pct"].as_f64().unwrap();
    assert!((random - 96.1).abs() < 0.1, "{random}");
    let sorted = qd(r);
    let unsorted = qd(replay_of(&file, "sim:sm951-512@x470", &[], dir.path()));
    assert_eq!(unsorted, sorted, "the depth in file order would be deeper");
}

#[test]
fn replay_on_zram_matches_the_kernel_counters() {
    if let Some(why) = zram_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let dev = Zram::new(64 << 20).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (reads, writes, rb, wb) = expected();
    // Reads only: no write, so no safety check either; the kernel must count exactly the trace.
    let before = BlockStat::read(&dev.name()).unwrap();
    replay(dev.path.to_str().unwrap(), &["--reads-only"], dir.path());
    let d = BlockStat::read(&dev.name()).unwrap().since(&before);
    assert_eq!(
        (d.read_ios, d.read_bytes(), d.write_ios),
        (reads, rb, 0),
        "reads-only replay"
    );
    // Everything: writes exact; reads exact but for the guard's look for signatures in the first
    // 160 KiB, the last 128 KiB and a sector at each of LUKS2's further second-header offsets
    // (256 KiB to 4 MiB) before it allows writing (a handful of buffered reads).
    let before = BlockStat::read(&dev.name()).unwrap();
    replay(dev.path.to_str().unwrap(), &[], dir.path());
    let d = BlockStat::read(&dev.name()).unwrap().since(&before);
    assert_eq!(
        (d.write_ios, d.write_bytes()),
        (writes, wb),
        "kernel write counts"
    );
    let guard_reads = d.read_ios - reads;
    assert!(guard_reads <= 16, "{guard_reads} reads beyond the trace's");
    // Readahead may widen those reads; they stay well under 2 MiB.
    assert!(
        d.read_bytes() >= rb && d.read_bytes() - rb <= 2 << 20,
        "{} B beyond the trace",
        d.read_bytes() - rb
    );
}

/// `iolab trace replay` in `dir` with `args`: exit code and everything it printed.
fn replay_cmd(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["trace", "replay"])
        .args(args)
        .current_dir(dir)
        .env("IOLAB_DB", dir.join("results.sqlite"))
        .env("XDG_DATA_HOME", dir) // results saved without --json stay in the temp dir too
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

#[test]
fn preparing_the_target_is_judged_as_a_write_even_when_the_trace_only_reads() {
    let dir = tempfile::tempdir().unwrap();
    // A read-only trace, and a file of the user's that iolab did not create.
    std::fs::write(dir.path().join("reads.csv"), "0,h,0,Read,0,4096,10\n").unwrap();
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(dir.path().join("user.bin"), &data).unwrap();
    for state in ["filled", "empty"] {
        let (code, text) = replay_cmd(
            dir.path(),
            &[
                "reads.csv",
                "user.bin",
                "--target-state",
                state,
                "--no-probe",
            ],
        );
        assert_eq!(code, Some(2), "{state}: {text}");
        assert!(text.contains("was not created by iolab"), "{state}: {text}");
        assert_eq!(std::fs::read(dir.path().join("user.bin")).unwrap(), data);
    }
    // --reads-only does not make filling a read either.
    let (code, text) = replay_cmd(
        dir.path(),
        &[
            "reads.csv",
            "user.bin",
            "--reads-only",
            "--target-state",
            "filled",
            "--no-probe",
        ],
    );
    assert_eq!(code, Some(2), "{text}");
    assert_eq!(std::fs::read(dir.path().join("user.bin")).unwrap(), data);
}

#[test]
fn a_request_longer_than_the_replay_buffer_is_cut_to_it() {
    let dir = tempfile::tempdir().unwrap();
    // 100 MB and 70 MB: both issued as the 64 MiB the replayer holds at most. (An absurd
    // length, 2^64 - 600, is refused by the reader: see iolab-trace's errors test.)
    std::fs::write(
        dir.path().join("big.csv"),
        "0,h,0,Write,0,100000000,10\n1,h,0,Read,0,70000000,10\n",
    )
    .unwrap();
    // On a file longer than the buffer, where the span alone does not cut them.
    let (code, text) = replay_cmd(
        dir.path(),
        &[
            "big.csv",
            "t.bin",
            "--size",
            "128m",
            "--as-fast-as-possible",
            "--json",
            "r.json",
            "--no-probe",
        ],
    );
    assert_eq!(code, Some(0), "{text}");
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    let job = &r["jobs"][0];
    assert_eq!(job["write"]["bytes"], 64u64 << 20, "{job}");
    assert_eq!(job["read"]["bytes"], 64u64 << 20, "{job}");
    assert_eq!(r["replay"]["adjustments"]["sizes_clamped"], 2, "{r}");
    assert_noted(
        &r,
        &text,
        "2 requests longer than the replay's 64.0 MiB request buffer were cut to it",
    );
}

#[test]
fn a_request_larger_than_the_target_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.csv"),
        "0,h,0,Read,0,4096,10\n1,h,0,Write,0,536870912,10\n",
    )
    .unwrap();
    let (code, text) = replay_cmd(dir.path(), &["t.csv", "t.bin", "--size", "256m"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("t.csv:2: a write of 512 MiB is larger than the target (256 MiB)"),
        "{text}"
    );
    assert!(
        !dir.path().join("t.bin").exists(),
        "nothing is written first"
    );
}

#[test]
fn offsets_beyond_the_target_and_merged_volumes_are_counted_and_noted() {
    // A 10 GiB offset on a 400 GiB model would fit: use a 1 TiB one.
    let (r, text) = replay_text_on_a_model(
        "far.csv",
        "0,h,0,Read,0,4096,10\n10000,h,0,Read,1099511627776,4096,10\n20000,h,1,Write,8192,4096,10\n",
        &[],
    );
    let a = &r["replay"]["adjustments"];
    assert_eq!(a["offsets_moved"], 1, "{r}");
    assert_eq!(a["volumes_merged"], 2, "{r}");
    assert_eq!(a["trace_span_bytes"], 1099511627776u64 + 4096, "{r}");
    assert_noted(
        &r,
        &text,
        "the trace reaches 1.00 TiB and the target holds ",
    );
    assert_noted(&r, &text, "1 request was not issued at the trace's offset");
    assert_noted(
        &r,
        &text,
        "the trace's 2 volumes (devices) were replayed onto this one target",
    );
}

#[test]
fn whole_second_timestamps_are_noted_as_bursts() {
    // Tencent CBS: Unix seconds. 30 requests in 3 seconds: 27 share a second with the one before.
    let mut trace = String::new();
    for i in 0..30u64 {
        trace += &format!("{},{},8,0,1\n", 1_538_323_200 + i / 10, i * 64);
    }
    let (r, text) = replay_text_on_a_model("cbs.csv", &trace, &[]);
    let a = &r["replay"]["adjustments"];
    assert_eq!(a["timestamp_step_ns"], 1_000_000_000u64, "{r}");
    assert_eq!(a["requests_at_a_shared_time"], 27, "{r}");
    assert_eq!(a["largest_burst"], 10, "{r}");
    assert_noted(
        &r,
        &text,
        "the trace's timestamps are in steps of 1 s: 27 requests shared their timestamp",
    );
    // As fast as possible there is no timing to lose: counted, not noted.
    let (r, text) = replay_text_on_a_model("cbs.csv", &trace, &["--as-fast-as-possible"]);
    assert!(!text.contains("steps of 1 s"), "{text}");
    assert_eq!(
        r["replay"]["adjustments"]["requests_at_a_shared_time"], 27,
        "{r}"
    );
}

#[test]
fn the_result_names_the_format_and_says_when_no_depth_was_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // fio's iolog has no completion times; MSR has.
    std::fs::write(
        d.join("t.fio"),
        "fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n10 /dev/x read 0 4096\n20 /dev/x write 8192 4096\n",
    )
    .unwrap();
    std::fs::write(
        d.join("t.csv"),
        "1000,h,0,Read,0,4096,10\n2000,h,0,Write,8192,4096,10\n",
    )
    .unwrap();
    let run = |trace: &str, extra: &[&str]| {
        let mut args = vec![trace, "t.bin", "--as-fast-as-possible", "--size", "1m"];
        args.extend(["--json", "r.json", "--no-probe"]);
        args.extend(extra);
        let (code, text) = replay_cmd(d, &args);
        assert_eq!(code, Some(0), "{text}");
        let r: Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("r.json")).unwrap()).unwrap();
        (r, text)
    };
    let (r, text) = run("t.fio", &[]);
    assert_eq!(r["replay"]["format"], "fio3");
    assert_eq!(r["replay"]["queue_depth"], 1);
    let note = "records no completion times, so no queue depth: replayed as fast as possible at QD1; set --qd N";
    // Once: it was said before the replay and again among the result's notes.
    assert_eq!(text.matches(note).count(), 1, "{text}");
    assert!(
        r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains(note)),
        "{r}"
    );
    // Named rather than detected: the same name, not Debug's "Msr"; a recorded depth: no note.
    let (r, text) = run("t.csv", &["--format", "msr"]);
    assert_eq!(r["replay"]["format"], "msr");
    assert!(!text.contains("no queue depth"), "{text}");
    // A depth asked for: no note either.
    let (r, text) = run("t.fio", &["--qd", "4"]);
    assert_eq!(r["replay"]["queue_depth"], 4);
    assert!(!text.contains("no queue depth"), "{text}");
}

/// `--qd 0` was refused as the job's key ("queue_depth: 0 is outside 1–4096"), naming no option
/// of the command: it names `--qd`.
#[test]
fn a_queue_depth_out_of_range_names_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let trace = sample();
    for qd in ["0", "4097"] {
        let (code, text) = replay_cmd(
            dir.path(),
            &[trace.to_str().unwrap(), "sim:ssd750-400@z97", "--qd", qd],
        );
        assert_eq!(code, Some(2), "{text}");
        assert!(text.contains("--qd"), "{text}");
        assert!(!text.contains("queue_depth:"), "{text}");
    }
}

/// Replays `trace` (written to `name` in a temp dir) on the SSD 750 model with `extra` flags,
/// and returns its JSON result and what it printed; the replay must succeed.
fn replay_text_on_a_model(name: &str, trace: &str, extra: &[&str]) -> (Value, String) {
    replay_text_on("sim:ssd750-400@z97", name, trace, extra)
}

/// As [`replay_text_on_a_model`], on `model`.
fn replay_text_on(model: &str, name: &str, trace: &str, extra: &[&str]) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), trace).unwrap();
    let mut args = vec![name, model, "--json", "r.json"];
    args.extend(extra);
    let (code, text) = replay_cmd(dir.path(), &args);
    assert_eq!(code, Some(0), "{text}");
    let json = std::fs::read_to_string(dir.path().join("r.json")).unwrap();
    (serde_json::from_str(&json).unwrap(), text)
}

/// `note` was printed and is in the result's notes.
fn assert_noted(r: &Value, text: &str, note: &str) {
    assert!(text.contains(note), "{text}");
    let notes = r["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n.as_str().unwrap().contains(note)),
        "{r}"
    );
}

#[test]
fn a_request_that_ends_past_64_bits_is_replayed_not_a_panic() {
    // Offset + length overflows a u64: the first pass's sequential check added them.
    let (r, _) = replay_text_on_a_model(
        "far.csv",
        "0,h,0,Read,18446744073709551000,4096,10\n1,h,0,Write,18446744073709551615,4096,10\n",
        &["--as-fast-as-possible"],
    );
    assert_eq!(r["replay"]["planned_ios"], 2, "{r}");
}

#[test]
fn bad_lines_skipped_are_counted_in_the_result() {
    // Two good records around one that is not a read or a write.
    let (r, text) = replay_text_on_a_model(
        "bad.csv",
        "0,h,0,Read,0,4096,10\n1,h,0,Wrote,0,4096,10\n2,h,0,Write,8192,4096,10\n",
        &["--skip-bad"],
    );
    assert_eq!(r["replay"]["planned_ios"], 2, "{r}");
    // Without a word, the result would read as the whole trace replayed.
    assert_noted(&r, &text, "skipped 1 bad line of the trace (--skip-bad)");
}

#[test]
fn records_out_of_order_beyond_the_window_are_counted_in_the_result() {
    // In reverse time order, 2,000 records more than the reorder window holds: those are
    // issued late, with no gap, and the figures are not the trace's.
    let n = iolab_trace::DEFAULT_WINDOW + 2_000;
    let mut trace = String::new();
    for i in 0..n {
        trace += &format!("{},h,0,Read,{},4096,10\n", (n - i) * 10_000, i * 4096);
    }
    let (r, text) = replay_text_on_a_model("rev.csv", &trace, &[]);
    assert_noted(
        &r,
        &text,
        "2000 records were out of time order beyond the reorder window",
    );
}

/// The share of I/Os over 10 ms counts every I/O longer than 10 ms. It was read from the
/// latency histogram, whose bucket holding 10 ms spans 9.961–10.027 ms, so a read of 10.013 ms
/// counted as not over: "10013.0 µs ... 0.00 % of I/Os over 10 ms".
#[test]
fn an_io_just_over_10_ms_counts_as_over_10_ms() {
    // One read at 258 GiB on the disk model: the seek from track 0 and the rotation take
    // 10.013 ms (exact: the histogram keeps the exact minimum and maximum).
    let (r, text) = replay_text_on(
        "sim:hdd-7200@z97",
        "one.csv",
        "0,h,0,Read,277216997376,4096,10\n",
        &["--as-fast-as-possible"],
    );
    let lat = r["jobs"][0]["read"]["lat_ns"]["max"].as_u64().unwrap();
    assert!(
        lat > 10_000_000
            && iolab_core::hist::bucket_of(lat) == iolab_core::hist::bucket_of(10_000_000),
        "the read took {lat} ns, no longer in the bucket of 10 ms: move it to one that is"
    );
    assert_eq!(r["replay"]["pct_over_10ms"], 100.0, "{text}");
    assert!(
        text.contains("100.00 % of I/Os over 10 ms, 0.000 % over 100 ms"),
        "{text}"
    );
}

/// With --reads-only, as fast as possible without --qd, the depth is the reads' own: it was
/// the trace's over reads and writes, so reads recorded one at a time replayed at QD4.
#[test]
fn reads_only_replays_at_the_depth_of_the_reads() {
    // Every 100 µs a read and three writes arrive together; each completes 100 µs later, as
    // the next four arrive (MSR: 100 ns ticks, the response time last). Reads and writes
    // together are 4 deep, the reads alone 1.
    let mut trace = String::new();
    for i in 0..50u64 {
        let t = 1000 + i * 1000;
        trace += &format!("{t},h,0,Read,{},4096,1000\n", i * 4096);
        for k in 0..3 {
            trace += &format!("{t},h,0,Write,{},4096,1000\n", (1000 + i * 3 + k) * 4096);
        }
    }
    let depth = |r: &Value| {
        (
            r["replay"]["queue_depth"].as_u64().unwrap(),
            r["replay"]["recorded_queue_depth"].as_f64().unwrap(),
        )
    };
    let afap = ["--as-fast-as-possible"];
    let (all, _) = replay_text_on_a_model("mixed.csv", &trace, &afap);
    assert_eq!(depth(&all), (4, 4.0), "{all}");
    let (reads, text) = replay_text_on_a_model(
        "mixed.csv",
        &trace,
        &["--as-fast-as-possible", "--reads-only"],
    );
    assert_eq!(depth(&reads), (1, 1.0), "{text}");
    assert_eq!(reads["jobs"][0]["job"]["queue_depth"], 1, "{reads}");
    assert_eq!(reads["jobs"][0]["read"]["ios"], 50, "{reads}");
}
