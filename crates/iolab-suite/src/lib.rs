//! The reviewers' methods as data. A suite (`suites/*.toml`, or a user's file) is phases of
//! preparation and steps; a step is a job or a sweep of jobs, maybe looped until steady state;
//! scores are computed from the results. Nothing here performs I/O or renders: an
//! [`run::Executor`] runs each job (on a real target or a model) and the report crate draws.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod plan;
pub mod run;
pub mod score;
pub mod spec;

use iolab_core::job::BufferedHint;
pub use run::{run_suite, Executor, SkipOrFail, SuiteRun};
pub use spec::{SuiteError, SuiteSpec};

/// The built-in suites: name and TOML text.
pub const BUILTIN: &[(&str, &str)] = &[
    ("cdm", include_str!("../../../suites/cdm.toml")),
    ("atto", include_str!("../../../suites/atto.toml")),
    ("asssd", include_str!("../../../suites/asssd.toml")),
    (
        "anandtech2015",
        include_str!("../../../suites/anandtech2015.toml"),
    ),
    ("xbit2011", include_str!("../../../suites/xbit2011.toml")),
    ("snia-pts", include_str!("../../../suites/snia-pts.toml")),
    ("filecopy", include_str!("../../../suites/filecopy.toml")),
];

/// A built-in suite by name, or a suite file by path.
pub fn load(name_or_path: &str) -> Result<SuiteSpec, SuiteError> {
    load_for(name_or_path, BufferedHint::Key)
}

/// [`load`], for a target whose refusals of an unaligned block size suggest what `hint` says.
pub fn load_for(name_or_path: &str, hint: BufferedHint) -> Result<SuiteSpec, SuiteError> {
    if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
        return SuiteSpec::parse_for(text, &format!("built-in suite {name}"), hint);
    }
    let text = std::fs::read_to_string(name_or_path).map_err(|e| SuiteError {
        origin: name_or_path.to_string(),
        place: "file".into(),
        message: format!(
            "{e}; give a suite file or a built-in name ({})",
            BUILTIN
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })?;
    SuiteSpec::parse_for(&text, name_or_path, hint)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_builtin_suite_parses() {
        for (name, _) in super::BUILTIN {
            let s = super::load(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&s.name, name);
            assert!(s.steps().count() > 0);
        }
    }

    #[test]
    fn bad_suites_name_the_file_step_and_key() {
        let cases = [
            ("name='x'\ntitle='x'\n[[phase]]\nname='p'\n[[phase.step]]\nname='s'\njob={blocksize='4k'}\n", "blocksize"),
            ("name='x'\ntitle='x'\n[[phase]]\nname='p'\n[[phase.step]]\nname='s'\njob={queue_depth=0}\n", "step 's', key job.queue_depth"),
            ("name='x'\ntitle='x'\n[[phase]]\nname='p'\n[[phase.step]]\nname='s'\nsweep=[{key='qd',values=[1]}]\n", "unknown sweep key 'qd'"),
            ("name='x'\ntitle='x'\n[[phase]]\nname='p'\n[[phase.step]]\nname='s'\n[[score]]\nname='a'\nrule='mean'\nstep='t'\nmetric='read_iops'\n", "no step named 't'"),
            ("name='x'\ntitle='x'\n[[phase]]\nname='p'\n[[phase.step]]\nname='s'\n[[score]]\nname='a'\nrule='mean'\nstep='s'\nmetric='iops'\n", "unknown metric 'iops'"),
            // A file is one I/O of the step's result, and an I/O is at most 1 GiB.
            ("name='x'\ntitle='x'\n[[phase]]\nname='p'\n[[phase.step]]\nname='s'\nfiles={set='big',op='create',count=1,file_size='2g'}\n", "key files.file_size: files of 2g each"),
        ];
        for (text, hint) in cases {
            let e = super::SuiteSpec::parse(text, "my.toml")
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("my.toml: ") && e.contains(hint),
                "{hint}: {e}"
            );
        }
    }

    /// A one-phase suite: `prepare` (a TOML inline table, or empty), a step named 's' with
    /// `step` lines after its job, and `rest` after the phase (scores).
    fn suite_text(prepare: &str, step: &str, rest: &str) -> String {
        let prepare = if prepare.is_empty() {
            String::new()
        } else {
            format!("prepare = {prepare}\n")
        };
        format!(
            "name = 'x'\ntitle = 'x'\n[[phase]]\nname = 'p'\n{prepare}[[phase.step]]\n\
             name = 's'\njob = {{ access = 'randrw', block_size = '4k', duration_s = 10, \
             size = '64m' }}\n{step}\n{rest}"
        )
    }

    /// Each case: the suite text and what its error must say besides the file.
    fn assert_refused(cases: &[(String, &str)]) {
        for (text, hint) in cases {
            match super::SuiteSpec::parse(text, "my.toml") {
                Ok(_) => panic!("accepted, expected '{hint}':\n{text}"),
                Err(e) => {
                    let e = e.to_string();
                    assert!(
                        e.starts_with("my.toml: ") && e.contains(hint),
                        "{hint}: {e}"
                    );
                }
            }
        }
    }

    #[test]
    fn sweep_values_of_the_wrong_type_are_refused_not_truncated() {
        let sweep = |values: &str| suite_text("", &format!("sweep = [{values}]"), "");
        assert_refused(&[
            (
                sweep("{ key = 'queue_depth', values = [1.9, 2] }"),
                "step 's', key sweep.queue_depth: 1.9 is not a value for queue_depth",
            ),
            (
                sweep("{ key = 'threads', values = [1.5] }"),
                "key sweep.threads: 1.5 is not a value for threads",
            ),
            (
                sweep("{ key = 'block_size', values = [4096.7, '4k'] }"),
                "key sweep.block_size: 4096.7 is not a block size",
            ),
            (
                sweep("{ key = 'queue_depth', values = [-1] }"),
                "key sweep.queue_depth: -1 is not a value",
            ),
            (
                sweep("{ key = 'read_pct', values = ['50'] }"),
                "key sweep.read_pct: \"50\" is not a value",
            ),
        ]);
        // Whole numbers, sizes and fractional read shares stay welcome.
        let ok = sweep(
            "{ key = 'queue_depth', values = [1, 32] }, { key = 'block_size', values = [4096, '1m'] }, \
             { key = 'read_pct', values = [62.5] }",
        );
        super::SuiteSpec::parse(&ok, "my.toml").unwrap();
    }

    #[test]
    fn every_sweep_point_is_checked_before_anything_runs() {
        let sweep = |values: &str| suite_text("", &format!("sweep = [{values}]"), "");
        assert_refused(&[
            (
                sweep("{ key = 'queue_depth', values = [1, 0] }"),
                "step 's', key sweep.queue_depth: 0 is outside 1–4096 (at the sweep point queue_depth = 0)",
            ),
            (
                sweep("{ key = 'read_pct', values = [150] }"),
                "key sweep.read_pct: 150 is outside 0–100",
            ),
            (
                sweep("{ key = 'threads', values = [2, 0] }"),
                "key sweep.threads: 0 is outside 1–1024",
            ),
            (
                sweep("{ key = 'block_size', values = ['4k', 0] }"),
                "key sweep.block_size: a block size of 0 bytes",
            ),
            (
                sweep("{ key = 'block_size', values = ['3000'] }"),
                "key sweep.block_size: 3000 bytes is not a multiple of 512",
            ),
            // The second sweep's point, not only the first's.
            (
                sweep("{ key = 'read_pct', values = [0, 100] }, { key = 'queue_depth', values = [1, 5000] }"),
                "key sweep.queue_depth: 5000 is outside",
            ),
            (
                sweep("{ key = 'queue_depth', values = [1, 2] }, { key = 'queue_depth', values = [4] }"),
                "key sweep.queue_depth: queue_depth is swept twice",
            ),
        ]);
    }

    #[test]
    fn every_job_of_a_suite_has_its_own_name() {
        let two_steps = |first: &str, second: &str| {
            format!(
                "name = 'x'\ntitle = 'x'\n[[phase]]\nname = 'p'\n[[phase.step]]\nname = 'a'\n\
                 job = {{ duration_s = 1 }}\n{first}\n[[phase.step]]\nname = 'a QD2'\n\
                 job = {{ duration_s = 1 }}\n{second}\n"
            )
        };
        let sweep = |values: &str| suite_text("", &format!("sweep = [{values}]"), "");
        assert_refused(&[
            // Two jobs named 's QD1' ran, and results and reports told them apart by name.
            (
                sweep("{ key = 'queue_depth', values = [1, 1] }"),
                "step 's', key sweep.queue_depth: 1 is given twice; each value runs once",
            ),
            (
                sweep("{ key = 'block_size', values = ['4k', 4096] }"),
                "key sweep.block_size: 4k is given twice",
            ),
            (
                two_steps("sweep = [{ key = 'queue_depth', values = [1, 2] }]", ""),
                "step 'a QD2', key name: its job would be named 'a QD2', as is the job of \
                 step 'a' at queue_depth = 2; rename one of the steps",
            ),
            // A step named "" ran a job named "", which results and reports cannot tell apart.
            (
                suite_text("", "", "").replace("name = 's'", "name = ' '"),
                "step ' ', key name: a step needs a name",
            ),
            // A job's own name was replaced by the step's without a word.
            (
                suite_text("", "", "").replace("duration_s = 10", "duration_s = 10, name = 'mine'"),
                "step 's', key job.name: a suite names each job by its step and sweep point; \
                 remove it, or rename the step",
            ),
            (
                suite_text("", "", "").replace("[[phase]]", "[job]\nname = 'mine'\n[[phase]]"),
                "key job.name: a suite names each job by its step and sweep point",
            ),
        ]);
    }

    #[test]
    fn preparation_values_are_checked() {
        let prep = |p: &str| suite_text(p, "", "");
        assert_refused(&[
            (
                prep("{ fill_passes = 1, fill_block_size = 'banana' }"),
                "phase 'p', key prepare.fill_block_size: 'banana' is not a size",
            ),
            (
                prep("{ fill_passes = 1, fill_block_size = '0' }"),
                "phase 'p', key prepare.fill_block_size: the fill job: a block size of 0 bytes",
            ),
            (
                prep("{ fill_passes = 1, fill_size = 'lots' }"),
                "phase 'p', key prepare.fill_size: 'lots' is not a size",
            ),
            // 4294967295 passes (a typo) ran on, a pass over the whole target each.
            (
                prep("{ fill_passes = 4294967295 }"),
                "phase 'p', key prepare.fill_passes: 4294967295 passes; at most 100 (SNIA PTS writes 2)",
            ),
            (
                prep("{ idle_s = inf }"),
                "phase 'p', key prepare.idle_s: inf must be zero or more",
            ),
            (
                prep("{ idle_s = -5 }"),
                "key prepare.idle_s: -5 must be zero or more",
            ),
            (
                prep("{ idle_s = nan }"),
                "key prepare.idle_s: NaN must be zero or more",
            ),
            (
                prep("{ idle_s = 1e30 }"),
                "key prepare.idle_s: 1000000000000000000000000000000 must be zero or more seconds, at most 86400 (a day)",
            ),
            (
                suite_text("", "io_limit_spans = -1", ""),
                "step 's', key io_limit_spans: -1 must be a positive number",
            ),
            (
                suite_text("", "io_limit_spans = 0", ""),
                "key io_limit_spans: 0 must be a positive number",
            ),
            (
                suite_text("", "io_limit_spans = nan", ""),
                "key io_limit_spans: NaN must be a positive number",
            ),
        ]);
    }

    #[test]
    fn a_tracked_job_is_one_job_the_sweep_runs() {
        let track = |sweep: &str, track: &str| {
            suite_text(
                "",
                &format!("sweep = [{sweep}]\nsteady_state = {{ metric = 'write_iops', track = [{track}] }}"),
                "",
            )
        };
        let mix = "{ key = 'read_pct', values = [100, 0] }";
        assert_refused(&[
            (
                track(mix, "{ key = 'read_pct', values = [50] }"),
                "key steady_state.track: step 's' does not run read_pct = 50; its sweep offers 100, 0",
            ),
            (
                track(mix, "{ key = 'read_pct', values = [0, 100] }"),
                "track names one job, so one value of read_pct; the sweep offers 100, 0",
            ),
            (
                track(
                    "{ key = 'read_pct', values = [100, 0] }, { key = 'block_size', values = ['4k', '8k'] }",
                    "{ key = 'read_pct', values = [0] }",
                ),
                "track gives no value of block_size",
            ),
            (track(mix, ""), "track gives no value of read_pct"),
        ]);
        let ok = track(mix, "{ key = 'read_pct', values = [0] }");
        super::SuiteSpec::parse(&ok, "my.toml").unwrap();
    }

    #[test]
    fn a_steady_state_loop_has_a_bounded_number_of_rounds() {
        // A million rounds of a 10 ms job ran on for ten minutes and 1.7 GB before it was
        // killed: every round's job is kept in the result.
        let ss = |keys: &str| {
            suite_text(
                "",
                &format!("steady_state = {{ metric = 'write_iops'{keys} }}"),
                "",
            )
        };
        assert_refused(&[
            (
                ss(", window = 1000000, max_rounds = 1000000"),
                "step 's', key steady_state.max_rounds: 1000000 rounds; at most 1000 (SNIA PTS runs 25)",
            ),
            (
                ss(", window = 1, max_rounds = 5"),
                "key steady_state: need window ≥ 2 and max_rounds ≥ window",
            ),
        ]);
        super::SuiteSpec::parse(&ss(", max_rounds = 1000"), "my.toml").unwrap();
    }

    #[test]
    fn scores_that_would_pick_nothing_are_refused() {
        let score = |lines: &str| {
            suite_text(
                "",
                "sweep = [{ key = 'queue_depth', values = [1, 2] }]",
                &format!("[[score]]\nname = 'x'\n{lines}"),
            )
        };
        assert_refused(&[
            (
                score("step = 's'\nrule = 'mean'\nmetric = 'read_iops'\nwhere = [{ key = 'queue_depth', values = [64] }]"),
                "score 'x', key where: step 's' does not run queue_depth = 64; its sweep offers 1, 2",
            ),
            (
                score("step = 's'\nrule = 'mean'\nmetric = 'read_iops'\nwhere = [{ key = 'threads', values = [1] }]"),
                "score 'x', key where: step 's' does not sweep threads; it sweeps queue_depth",
            ),
            (
                score("rule = 'weighted'\nterms = [{ step = 's', metric = 'write_iops', weight = nan }]"),
                "score 'x', key terms.weight: NaN is not a weight",
            ),
            (
                score("rule = 'weighted'\nterms = [{ step = 's', metric = 'write_iops', weight = 1, where = [{ key = 'queue_depth', values = [3] }] }]"),
                "key terms.where: step 's' does not run queue_depth = 3",
            ),
            // The step measures 10 s per job: a 400 s window would be the whole run.
            (
                score("step = 's'\nrule = 'last_seconds'\nmetric = 'read_iops'\nseconds = 400"),
                "score 'x', key seconds: 400 s is longer than step 's' measures (10 s per job)",
            ),
            (
                score("step = 's'\nrule = 'last_seconds'\nmetric = 'read_iops'\nseconds = inf"),
                "key seconds: last_seconds needs a finite number",
            ),
            // Keys a rule does not read.
            (
                score("rule = 'weighted'\nstep = 's'\nterms = [{ step = 's', metric = 'read_iops', weight = 1 }]"),
                "key step: rule weighted does not read step",
            ),
            (
                score("step = 's'\nrule = 'mean'\nmetric = 'read_iops'\nseconds = 5"),
                "score 'x', key seconds: rule mean does not read seconds; remove it",
            ),
            (
                score("step = 's'\nrule = 'mean'\nmetric = 'read_iops'\nterms = [{ step = 's', metric = 'read_iops', weight = 1 }]"),
                "key terms: rule mean does not read terms",
            ),
            (
                score("step = 's'\nrule = 'last_seconds'\nmetric = 'read_iops'\nseconds = 5\nwhere = [{ key = 'queue_depth', values = [1] }]"),
                "key where: rule last_seconds does not read where",
            ),
        ]);
        super::SuiteSpec::parse(
            &score("step = 's'\nrule = 'last_seconds'\nmetric = 'read_iops'\nseconds = 10"),
            "my.toml",
        )
        .unwrap();
    }

    #[test]
    fn suites_without_steps_and_unknown_charts_are_refused() {
        assert_refused(&[
            (
                "name = 'x'\ntitle = 'x'\nphase = []\n".to_string(),
                "key phase: the suite has no steps",
            ),
            (
                format!("{}[[phase]]\nname = 'empty'\n", suite_text("", "", "")),
                "phase 'empty', key step: this phase neither prepares nor has steps",
            ),
            (
                suite_text("", "chart = 'pie-in-the-sky'", ""),
                "step 's', key chart: unknown chart 'pie-in-the-sky'; use one of qd-lines",
            ),
        ]);
        // A phase that only prepares the next one's steps is how the built-in suites purge.
        let text = suite_text("", "", "").replace(
            "[[phase]]",
            "[[phase]]\nname = 'prepare'\nprepare = { purge = true }\n[[phase]]",
        );
        super::SuiteSpec::parse(&text, "my.toml").unwrap();
    }
}
