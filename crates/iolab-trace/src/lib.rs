//! Block I/O traces for iolab: read and write ten formats, analyse a trace the way storage
//! reviews describe theirs, and synthesise a trace from such a description.
//!
//! # Reading
//!
//! Every reader is streaming (memory does not grow with the trace) and yields the common
//! [`TraceRecord`] (ns and bytes, whatever the file's units):
//!
//! ```
//! use iolab_trace::{open_bytes, ReadOptions};
//! let csv = b"128166385295514663,hm,0,Write,9056014336,2048,2833\n".to_vec();
//! let mut reader = open_bytes("sample.csv", csv, &ReadOptions::default()).unwrap();
//! let rec = reader.next_record().unwrap().unwrap();
//! assert_eq!(rec.len_bytes, 2048);
//! assert_eq!(rec.completion_ns, Some(rec.time_ns + 283_300));
//! ```
//!
//! The format is detected from the first bytes unless [`ReadOptions::format`] names it.
//! A malformed line stops the reader with a [`TraceError::BadLine`] naming file and line;
//! with [`ReadOptions::skip_bad`] it is counted ([`TraceReader::bad_records`]) and skipped.
//!
//! # For replay
//!
//! [`replay`] turns the record stream into the requests a replay issues ([`ReplayIo`]:
//! due time or none, read/write, offset and length remapped into the target's span),
//! computes the recorded queue depth for as-fast-as-possible replay, and turns measured
//! latencies into the storage-bench metrics. Its input must be in time order: wrap the
//! reader in [`Reorder`] (bounded memory) or call [`sort_all`] when the format is not
//! sorted (Tencent, SYSTOR, merged blktrace). `completion_ns`, when present, is the
//! recorded service time, useful to compare against the replayed one.
//!
//! # Analysis and synthesis
//!
//! [`analyze()`] produces a [`Report`] (rendered by [`analyze::text::render`] and
//! [`analyze::html::render`], serialisable as JSON); [`Synth`] generates a trace from a
//! [`Profile`] whose analysis reproduces the profile's breakdowns.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod analyze;
mod compress;
mod error;
mod format;
mod formats;
mod lines;
mod parse;
pub mod profile;
mod record;
mod reorder;
pub mod replay;
mod retime;
mod source;
pub mod synth;

pub use analyze::{analyze, AnalyzeOptions, Analyzer, Report};
pub use compress::{detect_compression, Compression};
pub use error::{Result, TraceError};
pub use format::{
    detect, open_bytes, open_path, open_reader, write_to_vec, writer, Event, Format, ReadOptions,
    RecordWriter, TraceReader, WriteOptions, ALL_FORMATS,
};
/// The generator synthesis draws from (SplitMix64: a seed gives the same trace as always).
pub use iolab_core::rng::SplitMix64 as Rng;
pub use profile::Profile;
pub use record::{Op, TraceRecord, MAX_REQUEST_BYTES};
pub use reorder::{sort_all, Reorder, DEFAULT_WINDOW};
pub use replay::{ReplayIo, ReplayOptions};
pub use retime::{Retime, FILETIME_TO_UNIX_S};
pub use source::RecordSource;
pub use synth::{Synth, SynthOptions};
