//! Bad input: errors name file and line; `skip_bad` counts and goes on.

use iolab_trace::{open_bytes, Format, ReadOptions, TraceError};

#[test]
fn a_bad_line_names_file_and_line() {
    let data = b"1,h,0,Read,0,512,1\n2,h,0,Raed,0,512,1\n3,h,0,Write,0,512,1\n".to_vec();
    let opts = ReadOptions {
        format: Some(Format::Msr),
        ..ReadOptions::default()
    };
    let mut r = open_bytes("x.csv", data.clone(), &opts).unwrap();
    assert!(r.next_record().unwrap().is_some());
    let e = r.next_record().unwrap_err();
    match &e {
        TraceError::BadLine { file, line, .. } => {
            assert_eq!(file, "x.csv");
            assert_eq!(*line, 2);
        }
        other => panic!("unexpected {other:?}"),
    }
    let msg = e.to_string();
    assert!(msg.starts_with("x.csv:2: "), "{msg}");
    assert!(msg.contains("--skip-bad"), "{msg}");

    let opts = ReadOptions {
        skip_bad: true,
        ..opts
    };
    let mut r = open_bytes("x.csv", data, &opts).unwrap();
    let n = r.by_ref().collect::<Result<Vec<_>, _>>().unwrap().len();
    assert_eq!(n, 2);
    assert_eq!(r.bad_records(), 1);
}

#[test]
fn unknown_format_says_how_to_choose() {
    let e = open_bytes("x", b"hello world\n".to_vec(), &ReadOptions::default())
        .err()
        .expect("must fail");
    let msg = e.to_string();
    assert!(msg.contains("--format"), "{msg}");
    let e = open_bytes("x", Vec::new(), &ReadOptions::default())
        .err()
        .expect("must fail");
    assert!(e.to_string().contains("empty"), "{e}");
}

#[test]
fn truncated_blktrace_record_is_reported() {
    let mut data = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/traces/blktrace_viewer_sample.blktrace.0"
    ))
    .expect("testdata/traces/blktrace_viewer_sample.blktrace.0 is in the repository");
    data.truncate(48 * 3 + 20);
    let r = open_bytes("t.bin", data, &ReadOptions::default()).unwrap();
    let res: Result<Vec<_>, _> = r.collect();
    let e = res.unwrap_err().to_string();
    assert!(e.contains("truncated"), "{e}");
}

#[test]
fn fio_file_names_are_bounded() {
    let mut data = b"fio version 3 iolog\n0 ".to_vec();
    data.extend(std::iter::repeat_n(b'a', 5000));
    data.extend_from_slice(b" add\n");
    let r = open_bytes("long.iolog", data, &ReadOptions::default()).unwrap();
    let e = r.collect::<Result<Vec<_>, _>>().unwrap_err().to_string();
    assert!(e.starts_with("long.iolog:2: "), "{e}");
    assert!(e.contains("longer than 4096"), "{e}");
}

#[test]
fn a_file_with_no_line_of_the_format_asked_for_is_refused_not_read_as_empty() {
    let data = b"1,h,0,Read,0,512,1\n2,h,0,Write,0,512,1\n".to_vec();
    let opts = ReadOptions {
        format: Some(Format::Blkparse),
        ..ReadOptions::default()
    };
    let r = open_bytes("x.csv", data, &opts).unwrap();
    let e = r.collect::<Result<Vec<_>, _>>().unwrap_err().to_string();
    assert!(e.contains("none of its 2 lines is a blkparse event"), "{e}");
}

#[test]
fn skip_bad_on_a_file_with_no_valid_line_is_an_error_not_an_empty_trace() {
    let opts = ReadOptions {
        format: Some(Format::Msr),
        skip_bad: true,
        ..ReadOptions::default()
    };
    let r = open_bytes("notes.txt", b"hello\nworld\n".to_vec(), &opts).unwrap();
    let e = r.collect::<Result<Vec<_>, _>>().unwrap_err().to_string();
    assert!(e.starts_with("notes.txt: no valid msr record"), "{e}");
    assert!(e.contains("all 2 lines were bad"), "{e}");
    // An empty file is still an empty trace, and one good line is enough.
    let r = open_bytes("empty.csv", Vec::new(), &opts).unwrap();
    assert_eq!(r.count(), 0);
    let data = b"junk\n1,h,0,Read,0,512,1\n".to_vec();
    let r = open_bytes("x.csv", data, &opts).unwrap();
    assert_eq!(r.collect::<Result<Vec<_>, _>>().unwrap().len(), 1);
}

#[test]
fn an_endless_line_ends_the_read_even_with_skip_bad() {
    // What `trace analyze --format msr /dev/zero` reads: it must end, with an error.
    let opts = ReadOptions {
        format: Some(Format::Msr),
        skip_bad: true,
        ..ReadOptions::default()
    };
    let r = iolab_trace::open_reader("/dev/zero", std::io::repeat(0), &opts).unwrap();
    let e = r.collect::<Result<Vec<_>, _>>().unwrap_err().to_string();
    assert!(e.starts_with("/dev/zero:1: line longer than 16 MiB"), "{e}");
    // --skip-bad would not help, so it is not suggested.
    assert!(!e.contains("--skip-bad") && e.contains("--format"), "{e}");
}

#[test]
fn control_bytes_of_the_input_are_escaped_in_messages() {
    let opts = ReadOptions {
        format: Some(Format::Msr),
        ..ReadOptions::default()
    };
    let data = b"1,h,0,\x1b]0;pwned\x07,0,512,1\n".to_vec();
    let r = open_bytes("t\x1b[2J.csv", data, &opts).unwrap();
    let e = r.collect::<Result<Vec<_>, _>>().unwrap_err().to_string();
    assert!(!e.chars().any(|c| c.is_control()), "{e:?}");
    assert!(e.starts_with("t\\x1b[2J.csv:1: "), "{e}");
    assert!(e.contains("\\x1b]0;pwned\\x07"), "{e}");
}

#[test]
fn a_read_or_write_longer_than_any_block_request_is_refused_with_its_line() {
    let opts = ReadOptions {
        format: Some(Format::Msr),
        ..ReadOptions::default()
    };
    let data = b"1,h,0,Read,0,4096,1\n2,h,0,Read,0,18446744073709551615,1\n".to_vec();
    let r = open_bytes("t.csv", data, &opts).unwrap();
    let e = r.collect::<Result<Vec<_>, _>>().unwrap_err().to_string();
    assert!(
        e.starts_with("t.csv:2: a read of 18446744073709551615 bytes is longer than any block request (at most 1 GiB here)"),
        "{e}"
    );
    // 1 GiB itself is taken; a trim of a whole device is not held to it.
    let data = b"fio version 3 iolog\n0 d add\n0 d open\n1 d read 0 1073741824\n2 d trim 0 4000000000000\n".to_vec();
    let r = open_bytes("t.log", data, &ReadOptions::default()).unwrap();
    assert_eq!(r.collect::<Result<Vec<_>, _>>().unwrap().len(), 2);
}
