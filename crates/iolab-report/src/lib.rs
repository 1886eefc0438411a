//! Renderers of iolab's one result schema ([`iolab_core::result::RunResult`]). Every renderer is
//! a pure function from a result to text: nothing here measures, reads a clock or does I/O, so a
//! saved JSON result renders exactly as the live run did.
//!
//! The exception is [`store`], the SQLite results store, which reads and writes its database
//! file; [`store_tables`] renders what it returns.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod compare;
pub mod csv;
pub mod fio;
pub mod html;
pub mod labels;
pub mod store;
pub mod store_tables;
pub mod svg;
pub mod terminal;
