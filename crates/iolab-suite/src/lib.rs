//! The reviewers' methods as data. A suite (`suites/*.toml`, or a user's file) is phases of
//! preparation and steps; a step is a job or a sweep of jobs, maybe looped until steady state;
//! scores are computed from the results. Nothing here performs I/O or renders: an
//! [`run::Executor`] runs each job (on a real target or a model) and the report crate draws.
#![deny(missing_docs)]

pub mod plan;
pub mod run;
pub mod score;
pub mod spec;

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
    if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
        return SuiteSpec::parse(text, &format!("built-in suite {name}"));
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
    SuiteSpec::parse(&text, name_or_path)
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
}
