//! File-set operations through the filesystem, as X-bit's FC-Test times them: create a set of
//! files, read it, copy it within its tree ("near") and to a second tree ("far").
//!
//! Buffered I/O, as a file manager does; each operation ends with its files synced, and files
//! are dropped from the page cache before they are read, so the figures are the drive's (via
//! the filesystem), not memory's. Copies move bytes through a buffer rather than
//! `copy_file_range`, which a copy-on-write filesystem would answer by sharing extents.
//! Each file counts as one I/O whose latency is the time that file took.

use crate::runner::job_result;
use crate::sys;
use iolab_core::data::DataGenerator;
use iolab_core::job::{Access, DataKind, Direction, JobSpec};
use iolab_core::result::{CpuResult, JobResult};
use iolab_core::size::ByteSize;
use iolab_core::stats::RunStats;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Files per directory of a set's tree.
const FILES_PER_DIR: u32 = 100;
/// Transfer size of the buffered reads and writes.
const CHUNK: usize = 1 << 20;

/// A set of equal files.
#[derive(Clone, Debug, PartialEq)]
pub struct FileSet {
    /// Name (a directory name under the root).
    pub name: String,
    /// How many files.
    pub count: u32,
    /// Bytes per file.
    pub file_bytes: u64,
}

/// What to do with a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOp {
    /// Write every file.
    Create,
    /// Read every file.
    Read,
    /// Copy the set to a sibling tree on the same filesystem.
    CopyNear,
    /// Copy the set to a second tree (`far`).
    CopyFar,
}

impl std::str::FromStr for FileOp {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "create" => FileOp::Create,
            "read" => FileOp::Read,
            "copy-near" => FileOp::CopyNear,
            "copy-far" => FileOp::CopyFar,
            other => {
                return Err(format!(
                    "unknown file operation '{other}': use create, read, copy-near or copy-far"
                ))
            }
        })
    }
}

fn tree(root: &Path, name: &str, part: &str) -> PathBuf {
    root.join(name).join(part)
}

fn file_path(dir: &Path, i: u32) -> PathBuf {
    dir.join(format!("d{:03}", i / FILES_PER_DIR))
        .join(format!("f{:05}.bin", i % FILES_PER_DIR))
}

fn write_file(
    path: &Path,
    bytes: u64,
    mut fill: impl FnMut(&mut [u8]) -> io::Result<usize>,
    buf: &mut [u8],
) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let mut f = File::create(path)?;
    let mut left = bytes;
    while left > 0 {
        let n = (left as usize).min(buf.len());
        let got = fill(&mut buf[..n])?;
        if got == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "source ended early",
            ));
        }
        f.write_all(&buf[..got])?;
        left -= got as u64;
    }
    f.sync_all()?;
    sys::drop_cached_pages(&f);
    Ok(())
}

/// Runs `op` on `set` under `root` (`far` is the second tree's root for copies) and returns
/// its result: bytes and time, with one "I/O" per file (FC-Test times whole files), so the
/// job's block size is the file size and its IOPS are files per second.
pub fn run_file_op(
    root: &Path,
    far: &Path,
    set: &FileSet,
    op: FileOp,
    seed: u64,
) -> io::Result<JobResult> {
    let src = tree(root, &set.name, "src");
    let mut stats = RunStats::new(crate::runner::SERIES_INTERVAL_NS);
    let mut buf = vec![0u8; CHUNK];
    let mut data = DataGenerator::with(DataKind::Random, 0.0, 0.0, seed);
    let cpu_before = sys::cpu_reading();
    let start = Instant::now();
    for i in 0..set.count {
        let t0 = Instant::now();
        let path = file_path(&src, i);
        match op {
            FileOp::Create => {
                write_file(
                    &path,
                    set.file_bytes,
                    |b| {
                        data.fill(b);
                        Ok(b.len())
                    },
                    &mut buf,
                )?;
            }
            FileOp::Read => {
                let mut f = File::open(&path)?;
                sys::drop_cached_pages(&f);
                while f.read(&mut buf)? > 0 {}
            }
            FileOp::CopyNear | FileOp::CopyFar => {
                let dst_root = if op == FileOp::CopyNear {
                    tree(root, &set.name, "copy")
                } else {
                    tree(far, &set.name, "copy")
                };
                let mut from = File::open(&path)?;
                sys::drop_cached_pages(&from);
                let mut chunk = vec![0u8; CHUNK];
                write_file(
                    &file_path(&dst_root, i),
                    set.file_bytes,
                    |b| from.read(b),
                    &mut chunk,
                )?;
            }
        }
        let at = start.elapsed().as_nanos() as u64;
        let took = t0.elapsed().as_nanos() as u64;
        if op != FileOp::Create {
            stats.record(Direction::Read, set.file_bytes, took, at);
        }
        if op != FileOp::Read {
            stats.record(Direction::Write, set.file_bytes, took, at);
        }
    }
    let measured = start.elapsed().as_nanos() as u64;
    let cpu_after = sys::cpu_reading();
    let access = match op {
        FileOp::Create => Access::Write,
        FileOp::Read => Access::Read,
        _ => Access::Rw,
    };
    let job = JobSpec {
        name: Some(format!("{} {op:?}", set.name)),
        access: Some(access),
        read_pct: (access == Access::Rw).then_some(50.0),
        block_size: Some(ByteSize(set.file_bytes)),
        direct: Some(false),
        ..JobSpec::default()
    }
    .validate()
    .map_err(|e| io::Error::other(e.to_string()))?;
    Ok(job_result(
        &job,
        &stats,
        measured,
        0,
        false,
        None,
        CpuResult::between(cpu_before, cpu_after),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_read_and_copy_a_small_set() {
        let dir = tempfile::tempdir().unwrap();
        let far = dir.path().join("far");
        let set = FileSet {
            name: "small".into(),
            count: 150,
            file_bytes: 10_000,
        };
        for op in [
            FileOp::Create,
            FileOp::Read,
            FileOp::CopyNear,
            FileOp::CopyFar,
        ] {
            let r = run_file_op(dir.path(), &far, &set, op, 1).unwrap();
            let moved = r.read.bytes.max(r.write.bytes);
            assert_eq!(moved, 150 * 10_000, "{op:?}");
            assert!(r.measured_ns > 0);
            // One I/O per file: the job says so, so I/Os times its block size is the bytes.
            assert_eq!(r.read.ios.max(r.write.ios), 150, "{op:?}");
            assert_eq!(r.job.block_sizes[0].bytes, 10_000, "{op:?}");
        }
        let original = fs::read(file_path(&tree(dir.path(), "small", "src"), 149)).unwrap();
        let near = fs::read(file_path(&tree(dir.path(), "small", "copy"), 149)).unwrap();
        let far_copy = fs::read(file_path(&tree(&far, "small", "copy"), 149)).unwrap();
        assert_eq!(original.len(), 10_000);
        assert_eq!(original, near);
        assert_eq!(original, far_copy);
    }
}
