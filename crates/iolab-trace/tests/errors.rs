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
