//! Fuzzes the decompressing reader (gzip, bzip2, zstd, xz by magic bytes): no compressed
//! input, damaged or cut short, may make it (or the reader and analysis after it) panic or
//! read without bound.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    iolab_trace_fuzz::drain_decompress(data);
});
