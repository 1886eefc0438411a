//! `iolab trace` end to end: conversions keep each record's time, text traces are read
//! whatever their header's case or byte-order mark, and detection waits for a whole line.

use std::path::Path;
use std::process::Output;

mod common;
use common::{iolab, text};

fn ok(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(0), "{}", text(o));
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn convert(dir: &Path, file: &str, to: &str) -> String {
    ok(&iolab(&["trace", "convert", file, "--to", to], dir))
}

#[test]
fn converting_between_calendar_clocks_keeps_each_records_date() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // FILETIME 128166385295514663 is 2007-02-22 17:22:09.5514663 UTC, Unix 1172164929.5514663
    // (it was written as 12816638529551466 µs: the year 2376).
    std::fs::write(
        d.join("m.csv"),
        "128166385295514663,hm,0,Write,9056014336,2048,2833\n",
    )
    .unwrap();
    assert_eq!(
        convert(d, "m.csv", "alibaba"),
        "0,W,9056014336,2048,1172164929551466\n"
    );
    assert_eq!(
        convert(d, "m.csv", "tencent"),
        "1172164929,17687528,4,1,0\n"
    );
    let systor = convert(d, "m.csv", "systor");
    assert_eq!(
        systor.lines().nth(1).unwrap(),
        "1172164929.551466300,0.000283300,W,0,9056014336,2048"
    );
    // And back: the same FILETIME.
    std::fs::write(d.join("s.csv"), &systor).unwrap();
    assert_eq!(
        convert(d, "s.csv", "msr"),
        "128166385295514663,iolab,0,Write,9056014336,2048,2833\n"
    );
}

#[test]
fn a_record_earlier_than_the_first_is_warned_of_when_its_time_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("m.csv"),
        "128166385295514663,hm,0,Write,0,4096,10\n\
         128166385295514000,hm,0,Read,4096,4096,10\n\
         128166385295524663,hm,0,Read,8192,4096,10\n",
    )
    .unwrap();
    // In file order (--sort-window 0), the second record's time is lost.
    let out = iolab(
        &[
            "trace",
            "convert",
            "m.csv",
            "--to",
            "fio3",
            "--sort-window",
            "0",
        ],
        d,
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        err.contains("1 records were earlier than the first record and were written at time 0")
            && err.contains("--sort-window"),
        "{err}"
    );
    // By default they are put in order through the window analyze and replay use, and nothing
    // is lost: convert and analyze read a trace in one order.
    let out = iolab(&["trace", "convert", "m.csv", "--to", "fio3"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(out.stderr.is_empty(), "{}", text(&out));
    let fio = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        fio.contains("0 /dev/iolab0 read 4096 4096\n66 /dev/iolab0 write 0 4096\n"),
        "{fio}"
    );
}

#[test]
fn a_first_line_that_arrives_in_pieces_on_standard_input_is_detected() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let mut child = common::iolab_cmd(&["trace", "detect", "-"], dir.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"1000,h,0,Re").unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    stdin.write_all(b"ad,0,4096,10\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(ok(&out), "msr\n");
}

/// The MSR sample, gzip-compressed.
fn gzipped_sample() -> Vec<u8> {
    use std::io::Write;
    let msr =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces/msr_hm_0_first1000.csv");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&std::fs::read(msr).unwrap()).unwrap();
    e.finish().unwrap()
}

#[test]
fn a_gzip_trace_is_analysed_from_a_file_and_from_standard_input() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let gz = gzipped_sample();
    std::fs::write(d.join("hm_0.csv.gz"), &gz).unwrap();
    let out = ok(&iolab(&["trace", "analyze", "hm_0.csv.gz"], d));
    assert!(out.starts_with("trace hm_0.csv.gz (msr)"), "{out}");
    assert!(out.contains("requests                 1000"), "{out}");
    let detected = iolab(&["trace", "detect", "hm_0.csv.gz"], d);
    assert_eq!(ok(&detected), "msr\n");
    assert!(
        text(&detected).contains("gzip-compressed: decompressed as it is read"),
        "{}",
        text(&detected)
    );
    let mut child = common::iolab_cmd(&["trace", "analyze", "-"], d)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&gz).unwrap();
    let piped = child.wait_with_output().unwrap();
    assert!(
        ok(&piped).contains("requests                 1000"),
        "{}",
        text(&piped)
    );
    // Cut short: an error that says so, not the records before the cut as the whole trace.
    std::fs::write(d.join("cut.gz"), &gz[..gz.len() / 2]).unwrap();
    let out = iolab(&["trace", "analyze", "cut.gz"], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("cut.gz: the gzip-compressed data ends before its end (truncated?)"),
        "{}",
        text(&out)
    );
}

#[test]
fn bad_input_is_refused_with_its_control_bytes_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("notes.txt"), "hello \x1b[2J\nworld\n").unwrap();
    // --skip-bad with no valid line: an error, not 0 requests.
    let out = iolab(
        &[
            "trace",
            "analyze",
            "notes.txt",
            "--format",
            "msr",
            "--skip-bad",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("notes.txt: no valid msr record: all 2 lines were bad"),
        "{}",
        text(&out)
    );
    // Detection quotes the first line with its ESC shown, not sent to the terminal.
    let out = iolab(&["trace", "analyze", "notes.txt"], d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("the first line 'hello \\x1b[2J'"),
        "{}",
        text(&out)
    );
    assert!(!out.stderr.contains(&0x1b), "{}", text(&out));
}
