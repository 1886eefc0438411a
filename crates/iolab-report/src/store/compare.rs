//! Runs side by side: read from the store, lined up by core ([`iolab_core::metrics::align`]).

use super::*;
use iolab_core::metrics::{align, RunFigures, StepFigures};

impl Store {
    /// Runs side by side: one row per job label and metric (and per score), one value per
    /// run. Jobs are matched by name; a name that repeats within a run is told apart by its
    /// round or its occurrence.
    pub fn compare(&self, ids: &[i64]) -> Result<Comparison> {
        let details = ids
            .iter()
            .map(|&id| self.show(id))
            .collect::<Result<Vec<RunDetail>>>()?;
        let figures: Vec<RunFigures> = details
            .iter()
            .map(|d| RunFigures {
                steps: d
                    .steps
                    .iter()
                    .map(|s| StepFigures {
                        label: &s.label,
                        round: s.round,
                        workload: s.job.as_ref().map(|j| j.to_string()),
                        metrics: &s.metrics,
                    })
                    .collect(),
                scores: d
                    .scores
                    .iter()
                    .map(|s| (format!("{} ({})", s.name, s.unit), s.value))
                    .collect(),
            })
            .collect();
        let aligned = align(&figures);
        Ok(Comparison {
            runs: details.into_iter().map(|d| d.summary).collect(),
            sides: Vec::new(),
            rows: aligned
                .rows
                .into_iter()
                .map(|r| ComparedRow {
                    label: r.label,
                    metric: r.metric,
                    values: r.values,
                    ..ComparedRow::default()
                })
                .collect(),
            differing: aligned.differing,
        })
    }
}
