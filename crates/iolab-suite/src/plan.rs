//! From a step to its jobs: the suite's defaults under the step's keys, each sweep point, and
//! the `--scale` factor applied to every duration and size.

use crate::spec::{FilesSpec, PhaseSpec, StepSpec, SuiteError, SuiteSpec, SweepSpec};
use iolab_core::job::{parse_bssplit, Access, JobSpec};
use iolab_core::result::SweepValue;
use iolab_core::size::ByteSize;

/// Scales durations and sizes by `scale`. Sizes stay multiples of 4 KiB and never shrink below
/// what the job needs to stay valid: one largest block (per thread, with zones) for the span,
/// one largest block for a byte limit.
pub fn scale_job(job: &mut JobSpec, scale: f64) {
    let largest = match (&job.block_size, &job.bssplit) {
        (Some(b), _) => b.0,
        (None, Some(split)) => {
            parse_bssplit(split).map_or(4096, |v| v.iter().map(|s| s.bytes).max().unwrap_or(4096))
        }
        (None, None) => 4096,
    };
    let per_zone = if job.zones == Some(true) {
        job.threads.unwrap_or(1).max(1) as u64
    } else {
        1
    };
    let shrink = |b: ByteSize, floor: u64| {
        let scaled = ((b.0 as f64 * scale) as u64) / 4096 * 4096;
        ByteSize(scaled.max(floor).max(4096).min(b.0.max(floor)))
    };
    job.duration_s = job.duration_s.map(|d| d * scale);
    job.ramp_s = job.ramp_s.map(|d| d * scale);
    job.size = job.size.map(|b| shrink(b, largest * per_zone));
    job.offset = job
        .offset
        .map(|o| ByteSize(((o.0 as f64 * scale) as u64) / 4096 * 4096));
    job.io_limit = job.io_limit.map(|b| shrink(b, largest));
    job.ios_limit = job.ios_limit.map(|n| ((n as f64 * scale) as u64).max(1));
}

/// Rounds a byte budget down to whole transfers of the job's one block size (one at least):
/// ATTO's 256 MB in 12, 24 or 48 MiB transfers otherwise ended with a short one, which its
/// IOPS counted as a full transfer.
fn whole_transfers(job: &mut JobSpec) {
    if let (Some(block), Some(limit), None) = (job.block_size, job.io_limit, &job.bssplit) {
        if let Some(n) = limit.0.checked_div(block.0) {
            job.io_limit = Some(ByteSize(n.max(1) * block.0));
        }
    }
}

/// Bytes per file of a file-set step at `scale`: at least 4 KiB, never more than unscaled.
pub fn file_bytes(files: &FilesSpec, scale: f64) -> u64 {
    let bytes = iolab_core::size::parse_size(&files.file_size).unwrap_or(4096);
    ((bytes as f64 * scale) as u64)
        .max(4096)
        .min(bytes.max(4096))
}

/// What a suite's file-set steps leave on disk at `scale`, in whole 4 KiB blocks: the sets they
/// create and their near copies, all in one tree, and the far copies in the other. Nothing is
/// removed before the run ends, and a step run again rewrites its files in place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileSpace {
    /// Bytes in the tree under the target directory.
    pub near: u64,
    /// Bytes in the tree of the far copies.
    pub far: u64,
}

/// The [`FileSpace`] of `suite`'s file-set steps at `scale`.
pub fn file_space(suite: &SuiteSpec, scale: f64) -> FileSpace {
    // Per set and operation, the largest of its steps: files are rewritten, not added.
    let mut written: std::collections::BTreeMap<(&str, &str), u64> = Default::default();
    let steps = suite.phases.iter().flat_map(|p| &p.steps);
    for files in steps.filter_map(|s| s.files.as_ref()) {
        let bytes = file_bytes(files, scale).next_multiple_of(4096) * files.count as u64;
        let slot = written.entry((&files.set, &files.op)).or_default();
        *slot = (*slot).max(bytes);
    }
    let mut space = FileSpace::default();
    for ((_, op), bytes) in written {
        match op {
            "create" | "copy-near" => space.near += bytes,
            "copy-far" => space.far += bytes,
            _ => {}
        }
    }
    space
}

/// One planned job of a step.
#[derive(Clone, Debug)]
pub struct PlannedJob {
    /// The job's keys (scaled, not yet validated against the target).
    pub spec: JobSpec,
    /// The sweep point.
    pub sweep: Vec<SweepValue>,
}

/// The jobs of `step`, in sweep order, scaled; an error names a sweep value that is not one.
pub fn step_jobs(
    suite: &SuiteSpec,
    step: &StepSpec,
    scale: f64,
) -> Result<Vec<PlannedJob>, SuiteError> {
    let mut base = suite.job.clone();
    base.overlay(&step.job);
    let mut points: Vec<Vec<SweepValue>> = vec![Vec::new()];
    for sw in &step.sweep {
        let values = sw
            .numbers()
            .map_err(|m| suite.error(format!("step '{}', key sweep.{}", step.name, sw.key), m))?;
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |&v| {
                    let mut q = p.clone();
                    q.push(SweepValue {
                        key: sw.key.clone(),
                        value: v,
                    });
                    q
                })
            })
            .collect();
    }
    Ok(points
        .into_iter()
        .map(|sweep| {
            let mut spec = base.clone();
            let mut label = Vec::new();
            for sv in &sweep {
                apply_sweep(&mut spec, sv);
                label.push(sweep_label(sv));
            }
            // After the sweep, so the floors see the point's own block size and threads.
            scale_job(&mut spec, scale);
            whole_transfers(&mut spec);
            spec.name = Some(if label.is_empty() {
                step.name.clone()
            } else {
                format!("{} {}", step.name, label.join(" "))
            });
            PlannedJob { spec, sweep }
        })
        .collect())
}

/// How long a suite runs at a scale, from its plan alone: what is said before its first job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanLength {
    /// Jobs and file-set operations, every fill pass, and every round of a steady-state loop
    /// up to its cap.
    pub jobs: u64,
    /// Whether a steady-state loop may end before its cap, so that `jobs` and `seconds` are
    /// the most it runs.
    pub at_most: bool,
    /// Seconds of the jobs given a duration (with their ramp) and of the idle spells.
    pub seconds: f64,
    /// Jobs whose time depends on the target, not on a duration: fills, jobs limited by bytes
    /// or I/Os, file-set operations.
    pub untimed: u64,
}

impl PlanLength {
    /// What a run of suite `name` says before its first job: its jobs and their time, always
    /// (a suite of a few seconds and one of days look alike by name), and from an hour on that
    /// `--scale` shortens it. A model's time is the model's (`modelled`), not the wall clock's.
    pub fn describe(&self, name: &str, modelled: bool) -> String {
        let up_to = if self.at_most { "up to " } else { "" };
        let plural = if self.jobs == 1 { "" } else { "s" };
        let mut text = format!(
            "suite {name} runs {up_to}{} job{plural}",
            grouped(self.jobs)
        );
        let mut asides = Vec::new();
        if self.untimed < self.jobs {
            let of = if modelled { " of modelled time" } else { "" };
            text += &format!(", about {}{of}", about(self.seconds));
            if self.untimed > 0 {
                let (s, take) = if self.untimed == 1 {
                    ("", "takes")
                } else {
                    ("s", "take")
                };
                asides.push(format!(
                    "not counting {} fill, byte-limited or file-set job{s}, which {take} what \
                     the target needs",
                    grouped(self.untimed)
                ));
            }
        } else {
            text += ", each to so many bytes or files: their time depends on the target";
        }
        if self.at_most {
            asides.push("steady-state loops may stop sooner".into());
        }
        if !asides.is_empty() {
            text += &format!(" ({})", asides.join("; "));
        }
        if self.seconds >= 3600.0 {
            text += "; --scale shortens it (--scale 0.1: every duration and size × 0.1)";
        }
        text
    }
}

/// `n` with its thousands grouped: `39,601`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `seconds` as people plan a wait: `45 s`, `12 min`, `2.5 h`, `27 h`, `3.2 days`.
fn about(seconds: f64) -> String {
    match seconds {
        s if s < 90.0 => format!("{s:.0} s"),
        s if s < 90.0 * 60.0 => format!("{:.0} min", s / 60.0),
        s if s < 10.0 * 3600.0 => format!("{:.1} h", s / 3600.0),
        s if s < 72.0 * 3600.0 => format!("{:.0} h", s / 3600.0),
        s => format!("{:.1} days", s / 86400.0),
    }
}

/// The length of `suite` at `scale` (see [`PlanLength`]); an error names a sweep value that is
/// not one.
pub fn plan_length(suite: &SuiteSpec, scale: f64) -> Result<PlanLength, SuiteError> {
    let mut length = PlanLength::default();
    for phase in &suite.phases {
        if let Some(prep) = &phase.prepare {
            length.jobs += u64::from(prep.fill_passes);
            length.untimed += u64::from(prep.fill_passes);
            length.seconds += prep.idle_s * scale;
        }
        for step in &phase.steps {
            if step.files.is_some() {
                length.jobs += 1;
                length.untimed += 1;
                continue;
            }
            let rounds = match &step.steady_state {
                Some(ss) => {
                    length.at_most |= ss.window < ss.max_rounds;
                    u64::from(ss.max_rounds)
                }
                None => 1,
            };
            for job in step_jobs(suite, step, scale)? {
                length.jobs += rounds;
                match job.spec.duration_s {
                    Some(d) => {
                        length.seconds += rounds as f64 * (d + job.spec.ramp_s.unwrap_or(0.0))
                    }
                    None => length.untimed += rounds,
                }
            }
        }
    }
    Ok(length)
}

/// Pass `pass` of a phase's fill: sequential incompressible writes of `fill_block_size`
/// (128 KiB, SNIA's WIPC, by default) over the span the suite's jobs use (CrystalDiskMark's
/// 1 GiB test file), or the whole target when they use all of it (SNIA PTS), scaled as the
/// steps' jobs are so that a scaled run fills what it tests.
pub fn fill_job(
    suite: &SuiteSpec,
    phase: &PhaseSpec,
    pass: u32,
    scale: f64,
) -> Result<JobSpec, SuiteError> {
    let block = phase
        .prepare
        .as_ref()
        .and_then(|p| p.fill_block_size.as_deref())
        .unwrap_or("128k");
    let block_size = block.parse::<ByteSize>().map_err(|e| {
        suite.error(
            format!("phase '{}', key prepare.fill_block_size", phase.name),
            e.to_string(),
        )
    })?;
    let size = match phase.prepare.as_ref().and_then(|p| p.fill_size.as_deref()) {
        Some(text) => Some(text.parse::<ByteSize>().map_err(|e| {
            suite.error(
                format!("phase '{}', key prepare.fill_size", phase.name),
                e.to_string(),
            )
        })?),
        None => suite.job.size,
    };
    let mut spec = JobSpec {
        name: Some(format!("{}: fill pass {pass}", phase.name)),
        access: Some(Access::Write),
        block_size: Some(block_size),
        queue_depth: Some(8),
        offset: suite.job.offset,
        size,
        ..JobSpec::default()
    };
    scale_job(&mut spec, scale);
    Ok(spec)
}

fn apply_sweep(spec: &mut JobSpec, sv: &SweepValue) {
    match sv.key.as_str() {
        "queue_depth" => spec.queue_depth = Some(sv.value as u32),
        "threads" => spec.threads = Some(sv.value as u32),
        "block_size" => {
            spec.block_size = Some(ByteSize(sv.value as u64));
            spec.bssplit = None;
        }
        "read_pct" => spec.read_pct = Some(sv.value),
        _ => unreachable!("validated sweep key"),
    }
}

/// `QD4`, `T2`, `4K`, `R70`: how a sweep point reads in a job name.
pub fn sweep_label(sv: &SweepValue) -> String {
    match sv.key.as_str() {
        "queue_depth" => format!("QD{}", sv.value),
        "threads" => format!("T{}", sv.value),
        "block_size" => size_label(sv.value as u64),
        "read_pct" => format!("R{}", sv.value),
        other => format!("{other}={}", sv.value),
    }
}

/// `512B`, `4K`, `1M` (binary units, as the reviews label transfer sizes).
pub fn size_label(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{}M", bytes >> 20)
    } else if bytes >= 1024 && bytes % 1024 == 0 {
        format!("{}K", bytes >> 10)
    } else {
        format!("{bytes}B")
    }
}

/// Whether a sweep point matches a filter (every filtered key present with an allowed value).
pub fn matches(sweep: &[SweepValue], filter: &[SweepSpec]) -> bool {
    filter.iter().all(|f| {
        let allowed = f.numbers().unwrap_or_default();
        sweep
            .iter()
            .any(|sv| sv.key == f.key && allowed.iter().any(|a| (a - sv.value).abs() < 1e-9))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(text: &str) -> SuiteSpec {
        SuiteSpec::parse(text, "test").unwrap()
    }

    #[test]
    fn the_file_copy_suite_keeps_every_set_and_copy_until_it_ends() {
        let s = crate::load("filecopy").unwrap();
        // One tree's sets: 3 x 533 MiB, 270 x 3650 KiB (912.5 blocks: 913), 2000 x 64 KiB.
        let one_tree = 3 * (533 << 20) + 270 * 913 * 4096 + 2000 * (64 << 10);
        assert_eq!(one_tree, 2_817_449_984u64);
        let space = file_space(&s, 1.0);
        assert_eq!(
            space,
            FileSpace {
                near: 2 * one_tree,
                far: one_tree
            }
        );
        // At 0.001 an ISO file has 558,891 bytes (137 blocks), and the others one block each.
        let small = file_space(&s, 0.001);
        assert_eq!(small.far, (3 * 137 + 270 + 2000) * 4096);
    }

    #[test]
    fn a_file_set_written_twice_takes_its_room_once() {
        let text = "name='x'\ntitle='x'\n[[phase]]\nname='p'\n\
            [[phase.step]]\nname='a'\nfiles={set='s',op='create',count=2,file_size='8k'}\n\
            [[phase.step]]\nname='b'\nfiles={set='s',op='create',count=3,file_size='8k'}\n\
            [[phase.step]]\nname='c'\nfiles={set='s',op='read',count=3,file_size='8k'}\n";
        assert_eq!(
            file_space(&suite(text), 1.0),
            FileSpace {
                near: 3 * 8192,
                far: 0
            }
        );
    }

    #[test]
    fn as_ssd_writes_its_1_gb_test_file_not_the_target() {
        let s = crate::load("asssd").unwrap();
        let prepare = s.phases.iter().find(|p| p.prepare.is_some()).unwrap();
        let fill = fill_job(&s, prepare, 1, 1.0).unwrap();
        assert_eq!(fill.size, Some(ByteSize(1 << 30)));
        assert_eq!(fill.block_size, Some(ByteSize(512 << 10)));
    }

    #[test]
    fn a_suites_length_counts_every_point_round_and_fill() {
        let s = suite(
            r#"name = "t"
title = "t"
[[phase]]
name = "p"
prepare = { fill_passes = 2, idle_s = 60 }
[[phase.step]]
name = "db"
job = { access = "randrw", block_size = "8k", duration_s = 10, ramp_s = 2 }
sweep = [{ key = "read_pct", values = [100, 0] }, { key = "queue_depth", values = [1, 2, 4] }]
[[phase.step]]
name = "ss"
job = { access = "randwrite", block_size = "4k", duration_s = 60 }
sweep = [{ key = "queue_depth", values = [1, 32] }]
steady_state = { metric = "write_iops", track = [{ key = "queue_depth", values = [32] }] }
[[phase.step]]
name = "wsat"
job = { access = "randwrite", block_size = "4k" }
io_limit_spans = 2
"#,
        );
        // 2 fills, 6 sweep points, 2 points × 25 rounds, 1 byte-limited job.
        let length = plan_length(&s, 1.0).unwrap();
        assert_eq!(
            length,
            PlanLength {
                jobs: 2 + 6 + 50 + 1,
                at_most: true,
                seconds: 60.0 + 6.0 * 12.0 + 50.0 * 60.0,
                untimed: 3,
            }
        );
        let said = length.describe("t", false);
        assert_eq!(
            said,
            "suite t runs up to 59 jobs, about 52 min (not counting 3 fill, byte-limited or \
             file-set jobs, which take what the target needs; steady-state loops may stop \
             sooner)"
        );
        // Scaled: every duration and idle spell with it.
        let scaled = plan_length(&s, 0.1).unwrap();
        assert_eq!(scaled.jobs, length.jobs);
        assert!((scaled.seconds - length.seconds * 0.1).abs() < 1e-9);
    }

    #[test]
    fn a_long_suite_says_so_and_that_scale_shortens_it() {
        let length = PlanLength {
            jobs: 39_601,
            at_most: false,
            seconds: 27.0 * 3600.0,
            untimed: 0,
        };
        assert_eq!(
            length.describe("big", false),
            "suite big runs 39,601 jobs, about 27 h; --scale shortens it (--scale 0.1: every \
             duration and size × 0.1)"
        );
        assert!(length
            .describe("big", true)
            .contains("about 27 h of modelled time"));
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
        for (s, said) in [
            (45.0, "45 s"),
            (720.0, "12 min"),
            (9000.0, "2.5 h"),
            (97_200.0, "27 h"),
            (276_480.0, "3.2 days"),
        ] {
            assert_eq!(about(s), said);
        }
        // Every built-in suite has a length at its own scale and says it.
        for name in [
            "cdm",
            "atto",
            "asssd",
            "anandtech2015",
            "xbit2011",
            "snia-pts",
            "filecopy",
        ] {
            let s = crate::load(name).unwrap();
            let length = plan_length(&s, 1.0).unwrap();
            assert!(length.jobs > 0, "{name}");
            let said = length.describe(name, false);
            println!("{said}");
            assert!(said.starts_with(&format!("suite {name} runs ")), "{said}");
        }
    }

    #[test]
    fn sweeps_form_a_nested_product_outermost_first() {
        let s = suite(
            r#"name = "t"
title = "t"
[[phase]]
name = "p"
[[phase.step]]
name = "db"
job = { access = "randrw", block_size = "8k", duration_s = 10 }
sweep = [{ key = "read_pct", values = [100, 0] }, { key = "queue_depth", values = [1, 2, 4] }]
"#,
        );
        let (_, step) = s.steps().next().unwrap();
        let jobs = step_jobs(&s, step, 0.5).unwrap();
        assert_eq!(jobs.len(), 6);
        assert_eq!(jobs[0].spec.name.as_deref(), Some("db R100 QD1"));
        assert_eq!(jobs[3].spec.name.as_deref(), Some("db R0 QD1"));
        assert_eq!(jobs[5].spec.queue_depth, Some(4));
        assert_eq!(jobs[0].spec.duration_s, Some(5.0));
    }

    #[test]
    fn scaling_keeps_sizes_aligned_and_positive() {
        let mut j = JobSpec {
            size: Some(ByteSize(16 << 30)),
            io_limit: Some(ByteSize(10_000)),
            ..JobSpec::default()
        };
        scale_job(&mut j, 0.001);
        assert_eq!(j.size.unwrap().0 % 4096, 0);
        assert_eq!(j.io_limit.unwrap().0, 4096);
        // ATTO's 64 MiB transfer keeps a 64 MiB span; 64 zoned threads keep a block each.
        let mut atto = JobSpec {
            size: Some(ByteSize(256 << 20)),
            block_size: Some(ByteSize(64 << 20)),
            ..JobSpec::default()
        };
        scale_job(&mut atto, 0.001);
        assert_eq!(atto.size.unwrap().0, 64 << 20);
        let mut zoned = JobSpec {
            size: Some(ByteSize(1 << 30)),
            threads: Some(64),
            zones: Some(true),
            ..JobSpec::default()
        };
        scale_job(&mut zoned, 0.0001);
        assert_eq!(zoned.size.unwrap().0, 64 * 4096);
    }

    #[test]
    fn a_byte_budget_holds_whole_transfers() {
        for (block, limit, whole) in [
            (12u64 << 20, 256u64 << 20, 252u64 << 20),
            (48 << 20, 256 << 20, 240 << 20),
            (4096, 256 << 20, 256 << 20),
            (64 << 20, 16 << 20, 64 << 20),
        ] {
            let mut j = JobSpec {
                block_size: Some(ByteSize(block)),
                io_limit: Some(ByteSize(limit)),
                ..JobSpec::default()
            };
            whole_transfers(&mut j);
            assert_eq!(j.io_limit, Some(ByteSize(whole)), "{block} of {limit}");
        }
    }

    #[test]
    fn labels() {
        assert_eq!(size_label(512), "512B");
        assert_eq!(size_label(131072), "128K");
        assert_eq!(size_label(64 << 20), "64M");
    }
}
