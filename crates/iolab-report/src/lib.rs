//! Renderers of iolab's one result schema ([`iolab_core::result::RunResult`]). Every renderer is
//! a pure function from a result to text: nothing here measures, reads a clock or does I/O, so a
//! saved JSON result renders exactly as the live run did.
#![deny(missing_docs)]

pub mod terminal;
