//! Shared body of the fuzz targets: read everything, in every mode, then analyse it.

use iolab_trace::{analyze, open_bytes, AnalyzeOptions, Event, Format, ReadOptions};

/// Reads `data` as `format` (or detected) with and without `skip_bad`, for each blktrace
/// event, and analyses the records. Errors are expected; panics are bugs.
pub fn drain(format: Option<&str>, data: &[u8]) {
    let format = format.map(|f| Format::from_name(f).expect("fuzz target names a known format"));
    for skip_bad in [false, true] {
        for event in [Event::Q, Event::D, Event::C] {
            let opts = ReadOptions {
                format,
                skip_bad,
                event,
                spc_block_bytes: 512,
            };
            if let Ok(r) = open_bytes("fuzz", data.to_vec(), &opts) {
                let _ = analyze(
                    r.take(100_000),
                    "fuzz",
                    "fuzz",
                    &AnalyzeOptions { reorder_window: 64 },
                );
            }
            if !matches!(format, Some(Format::Blkparse | Format::Blktrace) | None) {
                break; // the event only matters to blkparse and blktrace
            }
        }
    }
}

/// The decompressing reader's target: `data` read with detection (decompressing first, when
/// its magic bytes say so) and as MSR (so the decoder runs to the end even when what it yields
/// is no trace), with and without `skip_bad`, then analysed.
pub fn drain_decompress(data: &[u8]) {
    for format in [None, Some(Format::Msr)] {
        for skip_bad in [false, true] {
            let opts = ReadOptions {
                format,
                skip_bad,
                ..ReadOptions::default()
            };
            if let Ok(r) = open_bytes("fuzz", data.to_vec(), &opts) {
                let _ = analyze(
                    r.take(100_000),
                    "fuzz",
                    "fuzz",
                    &AnalyzeOptions { reorder_window: 64 },
                );
            }
        }
    }
}
