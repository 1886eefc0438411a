//! `iolab`: the command-line front door. Only argument parsing and wiring live here; every piece
//! of logic belongs to a library crate.

#![forbid(unsafe_code)]

use clap::{CommandFactory, Parser, Subcommand};

/// `eprintln!` that never panics: with standard error closed (`iolab run … 2>&1 | head -2`)
/// `eprintln!` panics at its first line, and a run says "recorded as run …" before it writes
/// its JSON result, which was then lost. Every message of the front door goes through here.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cmd;
mod concurrent;
mod fio_out;
mod fiojob;
mod jobfile;
mod leftover;
mod mpi;
mod output;
mod session;
mod subject;

/// A storage lab: measure drives, run reviewers' methods, model hardware you do not have.
#[derive(Parser)]
#[command(name = "iolab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// CrystalDiskMark's tests in under a minute (default: a 1 GiB test file here, removed after).
    Quick(cmd::quick::QuickArgs),
    /// Run any workload: a job file (TOML) and/or flags, on a file or block device.
    Run(Box<cmd::run::RunArgs>),
    /// Run a reviewer's method: cdm, atto, asssd, anandtech2015, xbit2011, snia-pts, or a file.
    Suite(cmd::suite::SuiteArgs),
    /// Re-render saved JSON results as terminal tables and an HTML report; several overlay.
    Report(cmd::report::ReportArgs),
    /// The results store: list, show, compare and export recorded runs.
    Results(cmd::results::ResultsArgs),
    /// The drive and host-path model: list its catalog, explain a setup, calibrate. Any
    /// command measures a model given a target `sim:DRIVE@PLATFORM[/PORT]`.
    Sim(cmd::sim::SimArgs),
    /// Block traces: analyze, synthesise, convert and replay.
    Trace(cmd::trace::TraceArgs),
    /// Show the host path from a file or device to the CPU, with link speeds and ceilings.
    Probe(cmd::probe::ProbeArgs),
    /// Check that TRIM reaches the device under a filesystem path (trimcheck's method).
    Trimcheck(cmd::probe::TrimcheckArgs),
    /// Shell completions: `iolab completions bash > ~/.local/share/bash-completion/completions/iolab`.
    Completions(cmd::docs::CompletionsArgs),
    /// The man page (roff): `iolab man > iolab.1`, or one page per command with --dir DIR.
    Man(cmd::docs::ManArgs),
    /// Check what a run wrote with --verify: after a crash, with its --verify-journal.
    Verify(cmd::verify::VerifyArgs),
}

fn main() {
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Report(_)
            | Command::Results(_)
            | Command::Sim(_)
            | Command::Probe(_)
            | Command::Completions(_)
            | Command::Man(_)
    ) {
        iolab_engine::sys::exit_quietly_on_closed_pipe();
    }
    let result = match cli.command {
        Command::Quick(args) => cmd::quick::run(args),
        Command::Run(args) => mpi::run(*args),
        Command::Suite(args) => cmd::suite::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Results(args) => cmd::results::run(args),
        Command::Sim(args) => cmd::sim::run(args),
        Command::Trace(args) => cmd::trace::run(args),
        Command::Probe(args) => cmd::probe::run_probe(args),
        Command::Trimcheck(args) => cmd::probe::run_trimcheck(args),
        Command::Completions(args) => cmd::docs::completions(args, Cli::command()),
        Command::Man(args) => cmd::docs::man(args, Cli::command()),
        Command::Verify(args) => cmd::verify::run(args),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            // Messages quote input (a trace line, a file name, a job name): its control bytes
            // are shown as escapes, never sent to the terminal.
            let message = format!("{err:#}");
            say!(
                "Error: {}",
                iolab_core::text::escape_control_keep_lines(&message)
            );
            // An error after Ctrl-C (a test file's writing stopped) ends as an interrupt does.
            let interrupted =
                iolab_engine::sys::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed);
            std::process::exit(if interrupted {
                session::EXIT_INTERRUPTED
            } else {
                2
            });
        }
    }
}
