//! Fuzzes the mqsim reader: no input may make it (or the analysis after it) panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    iolab_trace_fuzz::drain(Some("mqsim"), data);
});
