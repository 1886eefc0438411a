//! Which CrystalDiskMark test a job is (`iolab quick`'s and the cdm suite's): the row of the
//! grid it fills (`SEQ1M Q8T1`), whether the test is read by MB/s (sequential) or by IOPS
//! (random), and which column(s) of the row its figures fill. Whoever creates such a job says
//! so in [`JobResult::test`]; the terminal table, the HTML grid and the store read it from
//! there instead of taking the job's name apart.
//!
//! Results written before the field existed carry the test only in the job's name
//! (`SEQ1M Q8T1 read`); [`tests_of`] falls back to reading it from there, in this one place.

use crate::job::Access;
use crate::result::JobResult;
use serde::{Deserialize, Serialize};

/// How a CrystalDiskMark test walks the span, and so which figure it is read by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestAccess {
    /// Sequential (`SEQ…`): read by MB/s.
    Seq,
    /// Random (`RND…`): read by IOPS.
    Rnd,
}

/// Which column(s) of its row a test's figures fill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestDirection {
    /// The read column.
    Read,
    /// The write column.
    Write,
    /// Both: a mixed test's reads fill the read column, its writes the write column.
    Mix,
}

/// One CrystalDiskMark test a job runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuickTest {
    /// The test's row, as CrystalDiskMark names it: `SEQ1M Q8T1`, `RND4K Q1T1 R70/W30`.
    pub label: String,
    /// Sequential or random.
    pub access: TestAccess,
    /// Read, write or mixed.
    pub direction: TestDirection,
}

impl QuickTest {
    /// The test `label` run with `access`; `None` for an access no CrystalDiskMark test uses
    /// (the TRIMs).
    pub fn of_access(label: &str, access: Access) -> Option<QuickTest> {
        let (walk, direction) = match access {
            Access::Read => (TestAccess::Seq, TestDirection::Read),
            Access::Write => (TestAccess::Seq, TestDirection::Write),
            Access::Rw => (TestAccess::Seq, TestDirection::Mix),
            Access::RandRead => (TestAccess::Rnd, TestDirection::Read),
            Access::RandWrite => (TestAccess::Rnd, TestDirection::Write),
            Access::RandRw => (TestAccess::Rnd, TestDirection::Mix),
            Access::Trim | Access::RandTrim | Access::TrimWrite | Access::RandTrimWrite => {
                return None
            }
        };
        Some(QuickTest {
            label: label.to_string(),
            access: walk,
            direction,
        })
    }

    /// The test a job's name spelt out before results carried it: `LABEL read`, `LABEL write`
    /// or `LABEL mix`, sequential where the label starts with `SEQ`. Any other name is no test
    /// (the cdm suite's mixed step, named by its mix alone, was not one of the grid's).
    pub fn from_legacy_name(name: &str) -> Option<QuickTest> {
        let (label, last) = name.rsplit_once(' ')?;
        let direction = match last {
            "read" => TestDirection::Read,
            "write" => TestDirection::Write,
            "mix" => TestDirection::Mix,
            _ => return None,
        };
        let access = if label.starts_with("SEQ") {
            TestAccess::Seq
        } else {
            TestAccess::Rnd
        };
        Some(QuickTest {
            label: label.to_string(),
            access,
            direction,
        })
    }

    /// Whether the test's figures fill the read column (`read`) or the write column.
    pub fn fills(&self, read: bool) -> bool {
        match self.direction {
            TestDirection::Mix => true,
            TestDirection::Read => read,
            TestDirection::Write => !read,
        }
    }
}

/// The CrystalDiskMark tests among `jobs`, in run order, each with its job. A result in which
/// no job carries its test was written before [`JobResult::test`] existed: its tests are read
/// from the jobs' names.
pub fn tests_of(jobs: &[JobResult]) -> Vec<(QuickTest, &JobResult)> {
    if jobs.iter().any(|j| j.test.is_some()) {
        jobs.iter()
            .filter_map(|j| Some((j.test.clone()?, j)))
            .collect()
    } else {
        jobs.iter()
            .filter_map(|j| Some((QuickTest::from_legacy_name(&j.name)?, j)))
            .collect()
    }
}

/// One row of the grid: a test's label and how it is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GridRow {
    /// The test's label.
    pub label: String,
    /// Sequential (MB/s) or random (IOPS).
    pub access: TestAccess,
}

/// The grid's rows over several results' jobs: each test once, in first-seen order.
pub fn grid_rows<'a>(results: impl IntoIterator<Item = &'a [JobResult]>) -> Vec<GridRow> {
    let mut rows: Vec<GridRow> = Vec::new();
    for jobs in results {
        for (t, _) in tests_of(jobs) {
            if !rows.iter().any(|r| r.label == t.label) {
                rows.push(GridRow {
                    label: t.label,
                    access: t.access,
                });
            }
        }
    }
    rows
}

/// The job whose figures fill the read (`read`) or the write column of test `label`.
pub fn cell<'a>(jobs: &'a [JobResult], label: &str, read: bool) -> Option<&'a JobResult> {
    tests_of(jobs)
        .into_iter()
        .find(|(t, _)| t.label == label && t.fills(read))
        .map(|(_, j)| j)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::JobSpec;

    fn job(name: &str, test: Option<QuickTest>) -> JobResult {
        let mut j = JobResult::unmeasured(JobSpec::default().validate().unwrap());
        j.name = name.into();
        j.test = test;
        j
    }

    #[test]
    fn a_test_follows_its_access() {
        let t = QuickTest::of_access("SEQ1M Q8T1", Access::Read).unwrap();
        assert_eq!(
            (t.access, t.direction),
            (TestAccess::Seq, TestDirection::Read)
        );
        assert!(t.fills(true) && !t.fills(false));
        let t = QuickTest::of_access("RND4K Q1T1 R70/W30", Access::RandRw).unwrap();
        assert_eq!(
            (t.access, t.direction),
            (TestAccess::Rnd, TestDirection::Mix)
        );
        assert!(t.fills(true) && t.fills(false));
        assert_eq!(QuickTest::of_access("x", Access::Trim), None);
    }

    #[test]
    fn names_of_results_written_before_the_field_still_give_their_tests() {
        for (name, label, access, direction) in [
            (
                "SEQ1M Q8T1 read",
                "SEQ1M Q8T1",
                TestAccess::Seq,
                TestDirection::Read,
            ),
            (
                "RND4K Q32T16 write",
                "RND4K Q32T16",
                TestAccess::Rnd,
                TestDirection::Write,
            ),
            (
                "RND4K Q1T1 R70/W30 mix",
                "RND4K Q1T1 R70/W30",
                TestAccess::Rnd,
                TestDirection::Mix,
            ),
        ] {
            let t = QuickTest::from_legacy_name(name).unwrap();
            assert_eq!(t.label, label);
            assert_eq!((t.access, t.direction), (access, direction));
        }
        // The cdm suite's mixed step and a one-word name are no test of the grid.
        assert_eq!(QuickTest::from_legacy_name("RND4K Q1T1 R70/W30"), None);
        assert_eq!(QuickTest::from_legacy_name("read"), None);
    }

    #[test]
    fn typed_tests_win_over_names_and_cells_find_their_jobs() {
        let typed = |l: &str, a| QuickTest::of_access(l, a);
        // A result with typed tests reads no name: a job named like a test but without one
        // (the cdm suite's fill) is none.
        let jobs = vec![
            job("fill read", None),
            job("first", typed("SEQ1M Q1T1", Access::Read)),
            job("second", typed("SEQ1M Q1T1", Access::Write)),
            job("third", typed("RND4K Q1T1", Access::RandRead)),
        ];
        let rows = grid_rows([jobs.as_slice()]);
        let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["SEQ1M Q1T1", "RND4K Q1T1"]);
        assert_eq!(rows[1].access, TestAccess::Rnd);
        assert_eq!(cell(&jobs, "SEQ1M Q1T1", false).unwrap().name, "second");
        assert!(cell(&jobs, "RND4K Q1T1", false).is_none());
        // Without any typed test, the names speak.
        let old = vec![job("fill read", None), job("SEQ1M Q1T1 write", None)];
        let rows = grid_rows([old.as_slice()]);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            cell(&old, "SEQ1M Q1T1", false).unwrap().name,
            "SEQ1M Q1T1 write"
        );
    }
}
