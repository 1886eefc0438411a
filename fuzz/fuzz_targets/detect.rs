//! Fuzzes format detection and whatever reader it picks.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    iolab_trace_fuzz::drain(None, data);
});
