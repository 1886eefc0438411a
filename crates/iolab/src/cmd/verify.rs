//! `iolab verify TARGET [--journal FILE]`: checks what an earlier run wrote with verify — after
//! a crash, a power cut or a reboot — and the run flags that journal verified writes.

use crate::output::{self, Rules};
use crate::session;
use anyhow::{bail, Result};
use clap::Args;
use iolab_core::result::VerifySummary;
use iolab_core::size::ByteSize;
use iolab_engine::sys::INTERRUPTED;
use iolab_engine::verify::{verify_by_stamps, verify_with_journal, TargetCheck};
use iolab_verify::journal::JournalWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Failures printed on the terminal (the JSON keeps up to 100).
const SHOWN_FAILURES: usize = 20;

/// `iolab run`'s journal flags.
#[derive(Args, Clone, Debug, Default)]
pub struct JournalFlags {
    /// Journal every verified write and every flush of the target in FILE, durable as the run
    /// goes, for `iolab verify TARGET --journal FILE` after a crash (vdbench's journal).
    /// Implies --verify end for jobs that do not verify.
    #[arg(long, value_name = "FILE")]
    pub verify_journal: Option<PathBuf>,
    /// How often the journal flushes the target and itself (fdatasync of both): writes
    /// acknowledged before a flush must survive a crash [default: 1s].
    #[arg(long, value_name = "DURATION", value_parser = iolab_core::time::parse_seconds)]
    pub verify_flush: Option<f64>,
    /// On a model (sim:…): cut the power this long into each job, in virtual time, and count
    /// the acknowledged writes the drive loses (implies --verify end).
    #[arg(long, value_name = "DURATION", value_parser = iolab_core::time::parse_seconds)]
    pub power_loss_at: Option<f64>,
}

impl JournalFlags {
    /// Opens the journal (through the output policy) for a run on `target`.
    pub fn open(&self, rules: &Rules) -> Result<Option<Arc<JournalWriter>>> {
        let Some(path) = &self.verify_journal else {
            if self.verify_flush.is_some() {
                bail!("--verify-flush sets how often --verify-journal flushes; give both");
            }
            return Ok(None);
        };
        let every = self.verify_flush.unwrap_or(1.0);
        if !(every > 0.0 && every <= 3600.0) {
            bail!("--verify-flush {every}: give a time from 1ms to 1h");
        }
        let file = output::create_in_place("--verify-journal", path, rules)?;
        let run_id = iolab_verify::verifier::process_run_id();
        let j = JournalWriter::new(file, run_id, Duration::from_secs_f64(every))
            .map_err(|e| anyhow::anyhow!("--verify-journal {}: {e}", path.display()))?;
        Ok(Some(Arc::new(j)))
    }
}

/// Arguments of `iolab verify`.
#[derive(Args, Clone, Debug)]
pub struct VerifyArgs {
    /// The file or block device an earlier run wrote with --verify.
    pub target: PathBuf,
    /// The journal that run wrote (--verify-journal): says which acknowledged writes were lost.
    /// Without it, the blocks' own stamps are checked (corruption, misplaced and torn blocks;
    /// not lost writes).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Without a journal: start of the range to scan [default: 0].
    #[arg(long)]
    pub offset: Option<ByteSize>,
    /// Without a journal: length of the range to scan [default: to the end].
    #[arg(long)]
    pub size: Option<ByteSize>,
    /// Also write the findings as JSON (the result schema's verify summary).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Allow replacing an existing --json file that iolab did not write.
    #[arg(long)]
    pub overwrite: bool,
}

/// Runs `iolab verify`; exit code 0 when nothing that had to survive was lost, 3 otherwise.
pub fn run(args: VerifyArgs) -> Result<i32> {
    let mut inputs: Vec<&Path> = vec![&args.target];
    if let Some(j) = &args.journal {
        inputs.push(j);
    }
    let rules = Rules::new(&inputs, args.overwrite);
    if let Some(p) = &args.json {
        output::check("--json", p, &rules)?;
    }
    iolab_engine::sys::install_interrupt_handler();
    let (found, mode) = match &args.journal {
        Some(journal) => {
            if args.offset.is_some() || args.size.is_some() {
                bail!("--offset and --size scan without a journal; the journal says what to check");
            }
            let c = verify_with_journal(&args.target, journal, Some(&INTERRUPTED))
                .map_err(anyhow::Error::msg)?;
            (c, "journal")
        }
        None => {
            let size = iolab_engine::verify::target_size(&args.target)
                .map_err(|e| anyhow::anyhow!("{}: {e}", args.target.display()))?;
            let lo = args.offset.map_or(0, |b| b.0);
            let hi = args.size.map_or(size, |b| lo.saturating_add(b.0)).min(size);
            if lo % 512 != 0 || hi % 512 != 0 || lo >= hi {
                bail!(
                    "scan {lo}..{hi} of {}: give an offset and size in whole 512-byte sectors \
                     within its {size} bytes",
                    args.target.display()
                );
            }
            (
                verify_by_stamps(&args.target, lo, hi).map_err(anyhow::Error::msg)?,
                "stamps",
            )
        }
    };
    let mut summary = found.tally.summary(mode);
    summary.journal = args.journal.as_ref().map(|p| p.display().to_string());
    summary.journal_flushes = found.flushes;
    say_target_check(&args.target, &found, &summary);
    if let Some(p) = &args.json {
        let text = serde_json::to_string_pretty(&summary)? + "\n";
        output::write("--json", p, &rules, text.as_bytes())?;
    }
    Ok(if summary.failures > 0 {
        session::EXIT_VERIFY_FAILED
    } else if INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
        session::EXIT_INTERRUPTED
    } else {
        0
    })
}

fn say_target_check(target: &Path, c: &TargetCheck, s: &VerifySummary) {
    let mut out = format!("{}: ", target.display());
    if let Some((acks, flushed)) = c.acks {
        out += &format!(
            "{acks} acknowledged writes in the journal, {flushed} of them before a flush \
             ({} flushes); ",
            c.flushes
        );
    }
    out += &format!(
        "{} blocks ({}) checked",
        s.blocks_checked,
        iolab_core::size::human_size(s.bytes_checked)
    );
    if c.acks.is_none() {
        out += &format!(
            ", {} without stamps not checked (a journal says whether they should hold data)",
            iolab_core::size::human_size(c.unstamped_bytes)
        );
    }
    say!("{out}");
    if c.torn_tail_bytes > 0 {
        say!(
            "note: the journal ends in {} bytes of a record cut short (its writer stopped \
             mid-record); ignored",
            c.torn_tail_bytes
        );
    }
    say_summary(None, s);
}

/// Says what a verify found: the counts, and the first failures.
pub fn say_summary(job: Option<&str>, s: &VerifySummary) {
    let whose = job.map_or(String::new(), |j| format!("job '{j}': "));
    if s.failures == 0 {
        say!(
            "verify: {whose}{} blocks checked, no failures{}",
            s.blocks_checked,
            if s.unflushed_lost > 0 {
                format!(
                    " ({} writes acknowledged after the last flush were lost, which a drive \
                     may do)",
                    s.unflushed_lost
                )
            } else {
                String::new()
            }
        );
    } else {
        let kinds: Vec<String> = [
            ("corrupted", s.corrupted),
            ("misplaced", s.misplaced),
            ("zeros", s.zeros),
            ("torn", s.torn),
            ("stale", s.stale),
            ("foreign", s.foreign),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
        say!(
            "verify FAILED: {whose}{} of {} blocks: {}",
            s.failures,
            s.blocks_checked,
            kinds.join(", ")
        );
        for f in s.first_failures.iter().take(SHOWN_FAILURES) {
            say!(
                "  {} at offset {} ({} bytes; first bad sector at {}): expected {}; found {}",
                f.kind,
                f.offset,
                f.len,
                f.sector_offset,
                f.expected,
                f.found
            );
        }
        if s.failures as usize > SHOWN_FAILURES {
            say!("  … and {} more", s.failures as usize - SHOWN_FAILURES);
        }
    }
    if let Some(p) = &s.problem {
        say!("verify: {whose}incomplete: {p}");
    }
}
