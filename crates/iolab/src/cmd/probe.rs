//! `iolab probe` and `iolab trimcheck`: thin wrappers over `iolab_probe`.

use anyhow::Context;
use iolab_probe::{TrimError, TrimOptions, Verdict};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `iolab probe`.
#[derive(clap::Args)]
pub struct ProbeArgs {
    /// A file, directory or block device (default: the current directory).
    pub target: Option<PathBuf>,
    /// Print the probe as JSON instead of the readable view.
    #[arg(long)]
    pub json: bool,
    /// Print only the one-line summary.
    #[arg(long, conflicts_with = "json")]
    pub summary: bool,
}

/// trimcheck's exit codes, as `iolab trimcheck --help` and README give them.
const TRIMCHECK_EXIT_CODES: &str = "Exit codes: 0 WORKING, 1 NOT WORKING, 3 INDETERMINATE, \
    4 CANNOT CHECK (the method cannot work here; the reason is printed), 2 bad input or another \
    error.";

/// Arguments of `iolab trimcheck`.
#[derive(clap::Args)]
#[command(after_help = TRIMCHECK_EXIT_CODES)]
pub struct TrimcheckArgs {
    /// A directory on the filesystem to check (a file path means its directory). Needs root.
    pub path: PathBuf,
    /// If the block is still there, wait this many seconds and read again (trimcheck suggests 20).
    #[arg(long, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub wait: Option<u64>,
    /// Random padding before and after the test block, MiB (0 to 4096).
    #[arg(long, value_name = "MIB", default_value_t = 32,
          value_parser = clap::value_parser!(u64).range(0..=4096))]
    pub padding_mib: u64,
    /// Do not read the block from the device before deleting it (trimcheck ≥ 0.4 behaviour;
    /// trusts FIEMAP without proof).
    #[arg(long)]
    pub no_verify: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Prints `text`; a closed pipe (`iolab probe | head`) is not an error.
fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// Runs `iolab probe`. Exit code 0 (findings are reported, not failures).
pub fn run_probe(args: ProbeArgs) -> anyhow::Result<i32> {
    let target = args.target.unwrap_or_else(|| PathBuf::from("."));
    // A model spec is not a path: probing it would describe whatever disk holds this directory.
    anyhow::ensure!(
        !crate::subject::is_model(&target),
        "'{0}' is a model, not a file or device; its modelled path and what limits it: \
         iolab sim explain {0}",
        target.display()
    );
    let p =
        iolab_probe::probe(&target).with_context(|| format!("probing '{}'", target.display()))?;
    if target.symlink_metadata().is_err() {
        // The library probes a file-to-be like its directory (results do that); say so here.
        say!(
            "note: '{}' does not exist; probed the nearest existing directory above it",
            target.display()
        );
    }
    if args.json {
        emit(&(serde_json::to_string_pretty(&p)? + "\n"))?;
    } else if args.summary {
        emit(&(p.summary() + "\n"))?;
    } else {
        emit(&p.render_text())?;
    }
    Ok(0)
}

/// Exit codes of `iolab trimcheck`.
const EXIT_WORKING: i32 = 0;
const EXIT_NOT_WORKING: i32 = 1;
const EXIT_INDETERMINATE: i32 = 3;
const EXIT_CANNOT_CHECK: i32 = 4;

/// Runs `iolab trimcheck`. Exit code 0 WORKING, 1 NOT WORKING, 3 INDETERMINATE, 4 when the
/// method cannot work here (with the reason), 2 on other errors.
pub fn run_trimcheck(args: TrimcheckArgs) -> anyhow::Result<i32> {
    anyhow::ensure!(
        !crate::subject::is_model(&args.path),
        "'{}' is a model: trimcheck checks a filesystem on a real drive, and a model has none",
        args.path.display()
    );
    let opts = TrimOptions {
        padding_bytes: args.padding_mib << 20,
        wait: args.wait.map(Duration::from_secs),
        verify_location: !args.no_verify,
        ..TrimOptions::default()
    };
    let report = match iolab_probe::trimcheck(&args.path, &opts) {
        Ok(r) => r,
        Err(e @ (TrimError::Unsupported { .. } | TrimError::Unmappable { .. })) => {
            if args.json {
                let v = serde_json::json!({ "verdict": "CANNOT_CHECK", "reason": e.to_string() });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                println!("CANNOT CHECK: {e}");
            }
            return Ok(EXIT_CANNOT_CHECK);
        }
        Err(e) => return Err(e).context("trimcheck"),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}: {}", report.verdict.label(), report.reason);
        println!(
            "  {} on {}, block of {} B at byte {} of {}",
            report.fs_type,
            report.directory.display(),
            report.block_bytes,
            report.device_offset_bytes,
            report.device.display()
        );
        match (&report.fitrim_trimmed_bytes, &report.fitrim_error) {
            (Some(n), _) => println!("  FITRIM: {n} bytes trimmed"),
            (None, Some(e)) => println!("  FITRIM failed: {e}"),
            _ => {}
        }
        for r in &report.readings {
            println!(
                "  read after {:.1} s: {:?} → {}",
                r.after_s,
                r.readback,
                r.verdict.label()
            );
        }
        for n in &report.notes {
            println!("  note: {n}");
        }
    }
    Ok(match report.verdict {
        Verdict::Working => EXIT_WORKING,
        Verdict::NotWorking => EXIT_NOT_WORKING,
        Verdict::Indeterminate => EXIT_INDETERMINATE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The help's exit codes are the ones returned.
    #[test]
    fn the_documented_exit_codes_are_the_returned_ones() {
        for (code, verdict) in [
            (EXIT_WORKING, "WORKING"),
            (EXIT_NOT_WORKING, "NOT WORKING"),
            (EXIT_INDETERMINATE, "INDETERMINATE"),
            (EXIT_CANNOT_CHECK, "CANNOT CHECK"),
        ] {
            let said = format!("{code} {verdict}");
            assert!(TRIMCHECK_EXIT_CODES.contains(&said), "{said}");
        }
    }
}
