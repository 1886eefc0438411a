//! The translation of a job file's text, for the tests of the option modules.

use super::ini;
use super::translate::{job, Context, FioJob};
use std::path::Path;

/// Every job of `text` (as `j.fio`), translated for a 1 GiB target given on the command line.
pub fn translate(text: &str) -> Vec<FioJob> {
    let size = |_: Option<&str>| Some(1u64 << 30);
    let ctx = Context {
        target_size: &size,
        cli_target: true,
    };
    let sections = ini::parse(text, Path::new("j.fio"), &|_| None).unwrap();
    let mut global = Vec::new();
    let mut out = Vec::new();
    for s in sections {
        if s.is_global() {
            global.extend(s.opts);
        } else {
            let mut all = global.clone();
            all.extend(s.opts);
            out.push(job(&s.name, s.at, &all, &ctx));
        }
    }
    out
}

/// The problems of `j`, as `option: why` lines.
pub fn problems(j: &FioJob) -> String {
    j.problems
        .iter()
        .map(|p| format!("{}: {}\n", p.option, p.why))
        .collect()
}
