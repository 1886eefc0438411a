//! Transparent decompression of traces by their magic bytes.
//!
//! SNIA IOTTA, Alibaba, Tencent and SYSTOR distribute their traces gzip-, bzip2-, zstd- or
//! xz-compressed; people pipe them in the same way. The first bytes of the input say which
//! (never the file name, so standard input works too), and the decoder streams: memory stays
//! that of the decoder's window, whatever the size of the trace.

use std::io::{self, BufReader, Read};

/// A compression the readers undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// gzip (`1f 8b`), also several members one after another as `cat a.gz b.gz` makes.
    Gzip,
    /// bzip2 (`BZh1`…`BZh9`), also several streams one after another (as pbzip2 writes).
    Bzip2,
    /// Zstandard (`28 b5 2f fd`), several frames included.
    Zstd,
    /// xz (`fd 37 7a 58 5a 00`), several streams included.
    Xz,
}

impl Compression {
    /// The tool's name, as in messages ("gzip-compressed").
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
        }
    }

    /// The command that checks such a file, for the message about a damaged one.
    fn test_command(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip -t",
            Compression::Bzip2 => "bzip2 -t",
            Compression::Zstd => "zstd -t",
            Compression::Xz => "xz -t",
        }
    }
}

/// Bytes needed to recognise every magic number here.
pub(crate) const MAGIC_LEN: usize = 6;

/// The compression whose magic number `head` starts with, if any.
pub fn detect_compression(head: &[u8]) -> Option<Compression> {
    if head.starts_with(&[0x1f, 0x8b]) {
        Some(Compression::Gzip)
    } else if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
        Some(Compression::Bzip2)
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some(Compression::Zstd)
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        Some(Compression::Xz)
    } else {
        None
    }
}

/// Containers and compressions that are not undone here, by magic number, with what to do.
/// They would otherwise be reported as "cannot tell the trace format" with binary garbage.
pub(crate) fn unsupported_container(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"PK\x03\x04") {
        Some("a zip archive; extract the trace first (unzip FILE)")
    } else if head.starts_with(b"7z\xbc\xaf\x27\x1c") {
        Some("a 7-Zip archive; extract the trace first (7z x FILE)")
    } else if head.starts_with(&[0x04, 0x22, 0x4d, 0x18]) {
        Some("lz4-compressed; decompress it first (lz4 -d FILE) or pipe it in (lz4 -dc FILE | iolab …)")
    } else if head.starts_with(&[0x1f, 0x9d]) || head.starts_with(&[0x1f, 0xa0]) {
        Some("compress(1)/LZH-compressed (.Z); decompress it first (gzip -dc FILE | iolab … -)")
    } else if head.len() >= 262 && &head[257..262] == b"ustar" {
        Some("a tar archive; extract the trace first (tar -xf FILE), then name the trace file")
    } else {
        None
    }
}

/// Reads the first bytes without losing them: as many as `want`, fewer only at the end of the
/// input (a pipe may hand over its first bytes in pieces).
pub(crate) fn read_head<R: Read>(input: &mut R, want: usize) -> io::Result<Vec<u8>> {
    let mut head = vec![0u8; want];
    let mut got = 0;
    while got < want {
        match input.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(got);
    Ok(head)
}

/// The input with its compression (if its magic number says it has one) undone, and which
/// compression that was.
pub(crate) fn decompressing<R: Read + Send + 'static>(
    mut input: R,
) -> io::Result<(Option<Compression>, Box<dyn Read + Send>)> {
    let head = read_head(&mut input, MAGIC_LEN)?;
    let compression = detect_compression(&head);
    // What was read to tell is read again, then the rest.
    let whole = io::Cursor::new(head).chain(input);
    let Some(c) = compression else {
        return Ok((None, Box::new(whole)));
    };
    let buffered = BufReader::with_capacity(1 << 16, whole);
    let decoder: Box<dyn Read + Send> = match c {
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(buffered)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(buffered)?),
        #[cfg(feature = "xz")]
        Compression::Xz => Box::new(liblzma::bufread::XzDecoder::new_multi_decoder(buffered)),
        #[cfg(not(feature = "xz"))]
        Compression::Xz => {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the input is xz-compressed and this build reads no xz (iolab-trace's `xz` \
                 feature); decompress it first with xz -d",
            ))
        }
    };
    let decompressed = Decompressed {
        inner: decoder,
        compression: c,
    };
    Ok((Some(c), Box::new(Pipelined::spawn(decompressed))))
}

/// Bytes handed from the decompressing thread at a time, and how many such chunks may wait:
/// memory stays under 1 MiB whatever the trace's size.
const PIPE_CHUNK: usize = 1 << 18;
const PIPE_DEPTH: usize = 3;

/// Decompression on its own thread, ahead of the parser: inflating costs about half what
/// parsing does, and run in turn with it, a gzip trace was analysed at 0.65× the speed of the
/// plain file; side by side the two overlap (see bench/trace_analyze.sh). The thread ends when
/// the input does, at the first error (handed on), or when the reader is dropped.
struct Pipelined {
    chunks: std::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    pos: usize,
    done: bool,
}

impl Pipelined {
    fn spawn<R: Read + Send + 'static>(mut inner: R) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel(PIPE_DEPTH);
        std::thread::spawn(move || loop {
            let mut chunk = vec![0u8; PIPE_CHUNK];
            let mut got = 0;
            let mut failed = None;
            while got < chunk.len() {
                match inner.read(&mut chunk[got..]) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            chunk.truncate(got);
            let end = got == 0 || failed.is_some();
            // What came before an error is handed on first, so records before it are read.
            if got > 0 && tx.send(Ok(chunk)).is_err() {
                return; // the reader is gone
            }
            if let Some(e) = failed {
                let _ = tx.send(Err(e));
            }
            if end {
                return;
            }
        });
        Pipelined {
            chunks: rx,
            current: Vec::new(),
            pos: 0,
            done: false,
        }
    }
}

impl Read for Pipelined {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.current.len() {
            if self.done {
                return Ok(0);
            }
            match self.chunks.recv() {
                Ok(Ok(chunk)) => {
                    self.current = chunk;
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                // The thread ended after the last chunk.
                Err(_) => self.done = true,
            }
        }
        let n = buf.len().min(self.current.len() - self.pos);
        buf[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// A decoder whose errors say that the compressed data is damaged or cut short, and how to
/// check it, rather than only the decoder's words ("corrupt deflate stream").
struct Decompressed {
    inner: Box<dyn Read + Send>,
    compression: Compression,
}

impl Read for Decompressed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::Interrupted {
                return e;
            }
            let c = self.compression;
            let what = if e.kind() == io::ErrorKind::UnexpectedEof {
                "ends before its end (truncated?)"
            } else {
                "is damaged"
            };
            io::Error::new(
                e.kind(),
                format!(
                    "the {}-compressed data {what}: {e}; check the file with `{}`",
                    c.name(),
                    c.test_command()
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const TEXT: &[u8] = b"line one\nline two\n";

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn all(data: Vec<u8>) -> io::Result<(Option<Compression>, Vec<u8>)> {
        let (c, mut r) = decompressing(io::Cursor::new(data))?;
        let mut out = Vec::new();
        r.read_to_end(&mut out)?;
        Ok((c, out))
    }

    #[test]
    fn plain_input_passes_through_whole() {
        assert_eq!(all(TEXT.to_vec()).unwrap(), (None, TEXT.to_vec()));
        assert_eq!(all(b"ab".to_vec()).unwrap(), (None, b"ab".to_vec()));
        assert_eq!(all(Vec::new()).unwrap(), (None, Vec::new()));
    }

    #[test]
    fn each_compression_is_undone_by_its_magic_number() {
        let gz = gzip(TEXT);
        let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        bz.write_all(TEXT).unwrap();
        let bz = bz.finish().unwrap();
        let zst = zstd::encode_all(TEXT, 3).unwrap();
        let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 1);
        xz.write_all(TEXT).unwrap();
        let xz = xz.finish().unwrap();
        for (data, c) in [
            (gz, Compression::Gzip),
            (bz, Compression::Bzip2),
            (zst, Compression::Zstd),
            (xz, Compression::Xz),
        ] {
            assert_eq!(all(data).unwrap(), (Some(c), TEXT.to_vec()), "{c:?}");
        }
    }

    #[test]
    fn concatenated_gzip_members_are_all_read() {
        let mut two = gzip(b"a\n");
        two.extend(gzip(b"b\n"));
        assert_eq!(all(two).unwrap().1, b"a\nb\n");
    }

    #[test]
    fn a_truncated_gzip_file_is_an_error_that_says_so() {
        let gz = gzip(&TEXT.repeat(100));
        let cut = gz[..gz.len() / 2].to_vec();
        let e = all(cut).unwrap_err().to_string();
        assert!(e.contains("gzip-compressed data"), "{e}");
        assert!(e.contains("gzip -t"), "{e}");
    }
}
