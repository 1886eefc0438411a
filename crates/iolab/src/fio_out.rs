//! `--fio-json PATH`: a measuring command's result also written in fio 3.x's JSON layout
//! (`--output-format=json`), for fio's tooling (fio-plot, dashboards, CI scripts), beside
//! iolab's own JSON result, which stays the default and what the results store records.

use crate::cmd::run::SafetyFlags;
use crate::output::{self, Rules};
use anyhow::Result;
use iolab_core::result::RunResult;
use std::path::Path;

/// Refuses, before anything is measured, a `--fio-json` path the result could not be written
/// to: one standard output for two documents, the `--json` file itself, or a file the output
/// rules keep.
pub fn check(flags: &SafetyFlags, rules: &Rules) -> Result<()> {
    let Some(path) = flags.fio_json.as_deref() else {
        return Ok(());
    };
    let stdout = Path::new("-");
    match flags.json.as_deref() {
        Some(json) if json == stdout && path == stdout => anyhow::bail!(
            "--json - and --fio-json - both ask for standard output: give one of them a file"
        ),
        Some(json) if json == path => anyhow::bail!(
            "--fio-json {} is the --json file too: give fio's layout a file of its own",
            path.display()
        ),
        _ => {}
    }
    output::check("--fio-json", path, rules)?;
    Ok(())
}

/// Writes `result` in fio's layout where `--fio-json` says, if it says; tells where.
pub fn save(result: &RunResult, flags: &SafetyFlags, rules: &Rules) -> Result<()> {
    let Some(path) = flags.fio_json.as_deref() else {
        return Ok(());
    };
    let text = iolab_report::fio::export::to_fio_json_text(result);
    output::write("--fio-json", path, rules, text.as_bytes()).map_err(|e| {
        e.context(format!(
            "writing fio's JSON layout to {} (iolab's result is saved; `iolab results export \
             RUN --fio-json -o FILE` writes it from the results store)",
            path.display()
        ))
    })?;
    if path != Path::new("-") {
        say!("fio's JSON layout saved to {}", path.display());
    }
    Ok(())
}
