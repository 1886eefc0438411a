//! Compressed traces (as SNIA IOTTA, Alibaba, Tencent and SYSTOR distribute them) read as the
//! plain file does, from a file or a stream; damaged or cut-short ones are errors that say so.

use std::io::Write;

use iolab_trace::{open_bytes, open_reader, Compression, Format, ReadOptions, TraceRecord};

const MSR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/traces/msr_hm_0_first1000.csv"
);

fn plain() -> Vec<u8> {
    std::fs::read(MSR).expect("testdata/traces/msr_hm_0_first1000.csv is in the repository")
}

fn compress(c: Compression, data: &[u8]) -> Vec<u8> {
    match c {
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        Compression::Zstd => zstd::encode_all(data, 3).unwrap(),
        // bzip2 and xz come from the committed corpus (fuzz/corpus/decompress), made by the
        // command-line tools; the crate's encoders are not dev-dependencies.
        Compression::Bzip2 => corpus("msr_first40.csv.bz2"),
        Compression::Xz => corpus("msr_first40.csv.xz"),
    }
}

fn corpus(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/../../fuzz/corpus/decompress/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_else(|e| panic!("fuzz/corpus/decompress/{name}: {e}"))
}

fn read_all(name: &str, data: Vec<u8>) -> Result<(Format, Vec<TraceRecord>), String> {
    let r = open_bytes(name, data, &ReadOptions::default()).map_err(|e| e.to_string())?;
    let format = r.format();
    let recs = r
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    Ok((format, recs))
}

#[test]
fn each_compressed_trace_reads_as_the_plain_one() {
    let data = plain();
    let first40: Vec<u8> = data
        .split_inclusive(|&b| b == b'\n')
        .take(40)
        .flatten()
        .copied()
        .collect();
    let (_, want_all) = read_all("plain.csv", data.clone()).unwrap();
    let (_, want_40) = read_all("plain40.csv", first40).unwrap();
    assert_eq!(want_all.len(), 1000);
    for c in [
        Compression::Gzip,
        Compression::Bzip2,
        Compression::Zstd,
        Compression::Xz,
    ] {
        let packed = compress(c, &data);
        let r = open_bytes("t", packed.clone(), &ReadOptions::default()).unwrap();
        assert_eq!(r.compression(), Some(c));
        let (format, recs) = read_all("t", packed).unwrap();
        assert_eq!(format, Format::Msr, "{c:?}");
        let want = if recs.len() == 40 {
            &want_40
        } else {
            &want_all
        };
        assert_eq!(&recs, want, "{c:?}");
    }
}

#[test]
fn a_compressed_stream_is_read_as_it_arrives() {
    // A reader that hands over one byte at a time, as a slow pipe may.
    struct Trickle(std::io::Cursor<Vec<u8>>);
    impl std::io::Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(1);
            self.0.read(&mut buf[..n])
        }
    }
    let packed = compress(Compression::Gzip, &plain());
    let r = open_reader(
        "<stdin>",
        Trickle(std::io::Cursor::new(packed)),
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(r.format(), Format::Msr);
    assert_eq!(r.count(), 1000);
}

#[test]
fn a_truncated_compressed_trace_is_an_error_naming_the_file_and_the_check() {
    let data = plain();
    for c in [
        Compression::Gzip,
        Compression::Bzip2,
        Compression::Zstd,
        Compression::Xz,
    ] {
        let packed = compress(c, &data);
        let cut = packed[..packed.len() * 2 / 3].to_vec();
        let e = read_all("cut.gz", cut).unwrap_err();
        assert!(e.starts_with("cut.gz: "), "{c:?}: {e}");
        assert!(
            e.contains(&format!("{}-compressed data", c.name())) && e.contains(" -t`"),
            "{c:?}: {e}"
        );
    }
}

#[test]
fn damaged_compressed_data_is_an_error_not_garbage_records() {
    let mut packed = compress(Compression::Gzip, &plain());
    let mid = packed.len() / 2;
    for b in &mut packed[mid..mid + 64] {
        *b ^= 0x5a;
    }
    let e = read_all("bad.gz", packed).unwrap_err();
    assert!(e.contains("gzip-compressed data"), "{e}");
}

#[test]
fn an_archive_is_named_as_such_not_as_an_unknown_first_line() {
    let e = read_all("t.zip", b"PK\x03\x04\x14\x00\x00\x00rest".to_vec()).unwrap_err();
    assert!(e.contains("a zip archive; extract the trace first"), "{e}");
    assert!(!e.contains('\x03'), "{e}");
}

#[test]
fn a_compressed_file_that_is_not_a_trace_says_it_was_decompressed() {
    let e = read_all("x.gz", compress(Compression::Gzip, b"hello\x1b[2J\n")).unwrap_err();
    assert!(e.contains("after undoing its gzip compression"), "{e}");
    assert!(e.contains("hello\\x1b[2J"), "{e}");
    assert!(!e.contains('\x1b'), "{e}");
}

#[test]
fn a_gzip_bomb_of_one_endless_line_is_refused_with_bounded_memory() {
    // 64 MiB of 'x' with no newline compresses to ~64 KiB; the line cap stops it.
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let block = vec![b'x'; 1 << 20];
    for _ in 0..64 {
        e.write_all(&block).unwrap();
    }
    let packed = e.finish().unwrap();
    let opts = ReadOptions {
        format: Some(Format::Msr),
        ..ReadOptions::default()
    };
    let r = open_bytes("bomb.gz", packed, &opts).unwrap();
    let err = r.collect::<Result<Vec<_>, _>>().unwrap_err().to_string();
    assert!(err.starts_with("bomb.gz:1: "), "{err}");
    assert!(err.contains("longer than"), "{err}");
}
