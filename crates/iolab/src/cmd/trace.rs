//! `iolab trace …`: analyse, synthesise and convert block I/O traces (logic in `iolab-trace`).

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::output::{self, Rules};
use anyhow::Context;
use clap::{Args, Subcommand};
use iolab_trace::{
    analyze, open_path, open_reader, writer, AnalyzeOptions, Event, Format, Profile, ReadOptions,
    Reorder, Retime, Synth, SynthOptions, TraceRecord, WriteOptions,
};

/// Arguments of `iolab trace`.
#[derive(Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    command: TraceCommand,
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Summarise a trace: counts, volumes, size and queue-depth breakdowns, sequential share,
    /// distributions, footprint and skew, per device.
    Analyze(AnalyzeArgs),
    /// Generate a trace from a profile (built-in: destroyer, heavy, light; or a TOML file).
    Synth(SynthArgs),
    /// Convert a trace from one format to another.
    Convert(ConvertArgs),
    /// Print the detected format of a trace and the accepted format names.
    Detect(InputArgs),
    /// Replay a trace on a file or block device: timestamp-faithful (scaled, idle gaps capped)
    /// or as fast as possible at the recorded queue depth, with storage-bench metrics.
    Replay(Box<super::replay::ReplayArgs>),
}

/// How to read the input trace.
#[derive(Args)]
pub(crate) struct InputArgs {
    /// Trace file ('-' for standard input).
    pub(crate) file: PathBuf,
    /// Input format (default: detected): blkparse, blktrace, msr, spc, fio2, fio3, alibaba,
    /// tencent, systor, disksim (classic DiskSim ASCII, times in ms), mqsim (the same columns,
    /// times in ns; DiskSim ASCII is never detected, as the unit cannot be told).
    #[arg(long, value_parser = parse_format)]
    pub(crate) format: Option<Format>,
    /// Count malformed lines and go on instead of stopping at the first.
    #[arg(long)]
    skip_bad: bool,
    /// blkparse/blktrace: the event that makes a request: Q (queued), D (issued; paired with
    /// completions, gives queue depth) or C (completed).
    #[arg(long, default_value = "D", value_parser = parse_event)]
    event: Event,
    /// SPC/UMass: bytes per LBA.
    #[arg(long, default_value_t = 512)]
    spc_block_bytes: u64,
}

impl InputArgs {
    fn options(&self) -> ReadOptions {
        ReadOptions {
            format: self.format,
            skip_bad: self.skip_bad,
            event: self.event,
            spc_block_bytes: self.spc_block_bytes,
        }
    }

    pub(crate) fn open(&self) -> anyhow::Result<iolab_trace::TraceReader> {
        let opts = self.options();
        if self.file.as_os_str() == "-" {
            return Ok(open_reader("<stdin>", io::stdin(), &opts)?);
        }
        Ok(open_path(&self.file, &opts)?)
    }
}

#[derive(Args)]
struct AnalyzeArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write a self-contained HTML page with charts to FILE.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Records held to put unsorted input in time order (0 trusts the file order); convert's
    /// --sort-window, with the same default.
    #[arg(long, alias = "sort-window", default_value_t = iolab_trace::DEFAULT_WINDOW)]
    reorder_window: usize,
    /// Allow replacing an existing --html file that iolab did not write.
    #[arg(long)]
    overwrite: bool,
}

/// How to write an output trace.
#[derive(Args)]
struct OutputArgs {
    /// Output file ('-' for standard output).
    #[arg(short, long, default_value = "-")]
    output: PathBuf,
    /// blkparse/blktrace output: the event written (D also writes completions).
    #[arg(long = "out-event", default_value = "D", value_parser = parse_event)]
    out_event: Event,
    /// blktrace output: big-endian records.
    #[arg(long)]
    big_endian: bool,
    /// MSR output: host name column.
    #[arg(long, default_value = "iolab")]
    hostname: String,
    /// Allow replacing an existing file that iolab did not write.
    #[arg(long)]
    overwrite: bool,
}

impl OutputArgs {
    fn options(&self, spc_block_bytes: u64) -> WriteOptions {
        WriteOptions {
            event: self.out_event,
            big_endian: self.big_endian,
            hostname: self.hostname.clone(),
            spc_block_bytes,
        }
    }

    /// Checks the output under the output rules (see [`crate::output`]), `inputs` being what
    /// the command reads: before anything is read or written.
    fn check(&self, inputs: &[&Path]) -> anyhow::Result<output::Destination> {
        output::check("-o", &self.output, &Rules::new(inputs, self.overwrite))
    }

    /// Opens the checked output: its name for messages, the writer, and the output to commit
    /// once the writer has finished.
    fn sink(
        &self,
        dest: &output::Destination,
    ) -> anyhow::Result<(String, Box<dyn Write>, output::Pending)> {
        let name = match dest {
            output::Destination::Stdout => "<stdout>".to_string(),
            _ => self.output.display().to_string(),
        };
        let (sink, pending) =
            output::open(dest).with_context(|| format!("cannot create {name}"))?;
        Ok((name, sink, pending))
    }
}

#[derive(Args)]
struct SynthArgs {
    /// Profile: destroyer, heavy, light, or a TOML file (see crates/iolab-trace/profiles/).
    #[arg(long, default_value = "destroyer")]
    profile: String,
    /// Multiplies the profile's counts and volumes.
    #[arg(long, default_value_t = 0.01)]
    scale: f64,
    /// Total requests (overrides --scale).
    #[arg(long)]
    requests: Option<u64>,
    /// Random seed (same seed, same trace).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Time of the first request in ns, on the output format's clock (for MSR, FILETIME
    /// × 100: 12816638529551466300 is February 2007, like the real traces).
    #[arg(long, default_value_t = 0)]
    start_ns: u64,
    /// Output format.
    #[arg(long, default_value = "msr", value_parser = parse_format)]
    format: Format,
    /// Print the plan (targets against what the breakdown allows) as JSON on standard error.
    #[arg(long)]
    plan: bool,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args)]
struct ConvertArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Output format.
    #[arg(long, value_parser = parse_format)]
    to: Format,
    /// Put records in time order through a window of this many records (0: keep file order).
    /// The same default as analyze's and replay's, so the three read a trace in one order.
    #[arg(long, alias = "reorder-window", default_value_t = iolab_trace::DEFAULT_WINDOW)]
    sort_window: usize,
    #[command(flatten)]
    output: OutputArgs,
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s).map_err(|e| e.to_string())
}

fn parse_event(s: &str) -> Result<Event, String> {
    Event::from_name(s).ok_or_else(|| format!("event must be Q, D or C, not '{s}'"))
}

/// Runs `iolab trace`.
pub fn run(args: TraceArgs) -> anyhow::Result<i32> {
    match args.command {
        TraceCommand::Analyze(a) => run_analyze(a),
        TraceCommand::Synth(a) => run_synth(a),
        TraceCommand::Convert(a) => run_convert(a),
        TraceCommand::Replay(a) => {
            if crate::mpi::coordinated("trace replay", &a.mpi)? {
                return crate::mpi::replay(&a);
            }
            super::replay::run(*a)
        }
        TraceCommand::Detect(a) => {
            let r = a.open()?;
            // The format alone on standard output, for scripts; the compression beside it.
            println!("{}", r.format());
            if let Some(c) = r.compression() {
                say!("{}-compressed: decompressed as it is read", c.name());
            }
            Ok(0)
        }
    }
}

fn run_analyze(a: AnalyzeArgs) -> anyhow::Result<i32> {
    let rules = Rules::new(&[&a.input.file], a.overwrite);
    if let Some(path) = &a.html {
        output::check("--html", path, &rules)?;
    }
    let mut reader = a.input.open()?;
    let name = a.input.file.display().to_string();
    let format = reader.format().to_string();
    let opts = AnalyzeOptions {
        reorder_window: a.reorder_window,
    };
    let mut report = analyze(reader.by_ref(), &name, &format, &opts)?;
    report.bad_records = reader.bad_records();
    if let Some(path) = &a.html {
        let html = iolab_trace::analyze::html::render(&report);
        output::write("--html", path, &rules, html.as_bytes())?;
    }
    let mut out = io::stdout().lock();
    if a.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        // The trace's name is input: its control bytes are shown as escapes.
        let text = iolab_trace::analyze::text::render(&report);
        write!(
            out,
            "{}",
            iolab_core::text::escape_control_keep_lines(&text)
        )?;
    }
    Ok(0)
}

fn run_synth(a: SynthArgs) -> anyhow::Result<i32> {
    let profile = Profile::load(&a.profile)?;
    let opts = SynthOptions {
        scale: a.scale,
        requests: a.requests,
        seed: a.seed,
        start_ns: a.start_ns,
        ..SynthOptions::default()
    };
    // A profile read from a file (not a built-in name) is an input the output must not replace.
    let profile_file = Path::new(&a.profile);
    let inputs: &[&Path] = if profile_file.is_file() {
        &[profile_file]
    } else {
        &[]
    };
    let dest = a.output.check(inputs)?;
    let synth = Synth::new(&profile, &opts)?;
    let plan = synth.plan();
    if a.plan {
        say!("{}", serde_json::to_string_pretty(plan)?);
    }
    if let Some(target) = plan.target_avg_qd {
        if (plan.planned_avg_qd - target).abs() > 0.05 * target {
            say!(
                "warning: the trace's mean queue depth is {:.2} against the profile's {target}: \
                 its QD breakdown leaves too few of these {} requests past depth 32 to carry \
                 the rest (a run there needs a request per depth it climbs, up to {})",
                plan.planned_avg_qd,
                plan.requests,
                iolab_trace::synth::MAX_OPEN_WINDOW
            );
        }
    }
    let (name, sink, pending) = a.output.sink(&dest)?;
    let mut w = writer(a.format, &name, sink, &a.output.options(512));
    for r in synth {
        w.write(&r)?;
    }
    w.finish()?;
    drop(w);
    pending
        .commit()
        .with_context(|| format!("writing {name}"))?;
    Ok(0)
}

fn run_convert(a: ConvertArgs) -> anyhow::Result<i32> {
    // Before the output is created: an output over the input would destroy it.
    let dest = a.output.check(&[&a.input.file])?;
    let mut reader = a.input.open()?;
    let (name, sink, pending) = a.output.sink(&dest)?;
    let mut w = writer(
        a.to,
        &name,
        sink,
        &a.output.options(a.input.spc_block_bytes),
    );
    let mut late = 0;
    // Each record keeps its date between calendar clocks (MSR's FILETIME since 1601, Unix time
    // since 1970). A calendar time written where the format counts from the trace's start
    // would be a wait of centuries (MSR's 2007 FILETIME as a first fio wait was 406 years):
    // those count from the first record instead.
    let mut retime = Retime::new(reader.format(), a.to);
    // Likewise a dev_t (8,16 is 8388624) written where a format counts disks from 0: devices
    // are numbered in the order they appear.
    let mut devices: Option<Vec<u32>> =
        (reader.format().dev_t_devices() && !a.to.dev_t_devices()).then(Vec::new);
    let mut put = |mut r: TraceRecord| -> anyhow::Result<()> {
        retime.apply(&mut r);
        if let Some(seen) = &mut devices {
            r.device = match seen.iter().position(|&d| d == r.device) {
                Some(i) => i as u32,
                None => {
                    seen.push(r.device);
                    seen.len() as u32 - 1
                }
            };
        }
        w.write(&r)?;
        Ok(())
    };
    if a.sort_window > 0 {
        let mut sorted = Reorder::new(reader.by_ref(), a.sort_window);
        for r in sorted.by_ref() {
            put(r?)?;
        }
        late = sorted.late();
    } else {
        for r in reader.by_ref() {
            put(r?)?;
        }
    }
    w.finish()?;
    let skipped = w.skipped();
    drop(w);
    pending
        .commit()
        .with_context(|| format!("writing {name}"))?;
    for warning in retime.warnings() {
        say!("warning: {warning}");
    }
    if reader.bad_records() > 0 {
        say!("skipped {} bad lines", reader.bad_records());
    }
    if skipped > 0 {
        say!(
            "left out {skipped} records that {} cannot express (trims or flushes)",
            a.to
        );
    }
    if late > 0 {
        say!("{late} records stayed out of time order; raise --sort-window");
    }
    Ok(0)
}
