//! The trace's requests as a driver's request source, for one worker of a replay.

use super::{ReplayArgs, TracePlan, MAX_SLOT_BYTES};
use anyhow::Result;
use iolab_core::job::Direction;
use iolab_core::workload::IoRequest;
use iolab_engine::driver::{Planned, RequestSource, Worker};
use iolab_trace::replay::{Replay, ReplayIo, ReplayOptions, ReplayStats, Timing};
use iolab_trace::{Reorder, TraceReader, DEFAULT_WINDOW};
use std::sync::{Arc, Mutex};

/// A trace as a driver's request source.
pub(crate) struct TraceSource {
    replay: Replay<Reorder<TraceReader>>,
    start_ns: u64,
    /// Whether requests keep the trace's timing (else: as fast as possible).
    paced: bool,
    /// The first bad record, which ends the replay (shared: the source moves to its thread).
    error: Arc<Mutex<Option<String>>>,
    /// The planner's counters (records out of time order after the reorder window, requests
    /// moved, cut or issued at a shared time), shared as `error` and updated as each request
    /// is planned, so an interrupted replay counts them too.
    stats: Arc<Mutex<ReplayStats>>,
}

impl RequestSource for TraceSource {
    fn paced(&self) -> bool {
        self.paced
    }

    fn next_planned(&mut self) -> Option<Planned> {
        let next = self.replay.next();
        if let Ok(mut stats) = self.stats.lock() {
            *stats = self.replay.stats();
        }
        match next? {
            Ok(ReplayIo {
                at_ns,
                write,
                offset,
                len,
            }) => Some(Planned {
                req: IoRequest {
                    dir: if write {
                        Direction::Write
                    } else {
                        Direction::Read
                    },
                    offset,
                    len,
                },
                at_ns: at_ns.map(|a| self.start_ns + a),
            }),
            Err(e) => {
                // A malformed record ends the replay; the error is reported with what ran.
                if let Ok(mut slot) = self.error.lock() {
                    slot.get_or_insert(e.to_string());
                }
                None
            }
        }
    }

    fn start_at(&mut self, t_ns: u64) {
        self.start_ns = t_ns;
    }
}

/// The trace's requests for one worker, over the bytes `offset..offset + span` of the target,
/// with what the replay met on the way (a bad record, the planner's counters).
pub(crate) struct Feed {
    error: Arc<Mutex<Option<String>>>,
    stats: Arc<Mutex<ReplayStats>>,
}

impl Feed {
    /// The feed, and the one worker that issues the trace's requests (the trace is read as
    /// they go).
    pub(crate) fn new(
        args: &ReplayArgs,
        plan: &TracePlan,
        offset: u64,
        span: u64,
        sector: u64,
    ) -> Result<(Feed, Worker<TraceSource>)> {
        let timing = if args.as_fast_as_possible {
            Timing::AsFastAsPossible
        } else {
            Timing::Timestamps {
                scale: args.time_scale,
                idle_cap_ns: (args.idle_cap_ms > 0.0).then_some((args.idle_cap_ms * 1e6) as u64),
            }
        };
        let opts = ReplayOptions {
            timing,
            align: sector.max(4096),
            writes: !args.reads_only,
            max_len: MAX_SLOT_BYTES,
            ..ReplayOptions::new(offset, span)
        };
        let replay = Replay::new(Reorder::new(args.input.open()?, DEFAULT_WINDOW), opts)?;
        let feed = Feed {
            error: Arc::new(Mutex::new(None)),
            stats: Arc::new(Mutex::new(ReplayStats::default())),
        };
        let source = TraceSource {
            replay,
            start_ns: 0,
            paced: !args.as_fast_as_possible,
            error: Arc::clone(&feed.error),
            stats: Arc::clone(&feed.stats),
        };
        let worker = Worker {
            index: 0,
            source,
            data: iolab_core::data::DataGenerator::new(&plan.job, plan.job.seed),
            queue_depth: plan.qd,
            spare_slots: 0,
        };
        Ok((feed, worker))
    }

    /// Marks `j` incomplete when a bad record of the trace ended the replay.
    pub(crate) fn mark_stopped(&self, j: &mut iolab_core::result::JobResult) {
        if let Some(e) = self.error.lock().ok().and_then(|mut e| e.take()) {
            j.complete = false;
            j.stop_reason = Some(format!(
                "the trace stopped the replay: {e} (use --skip-bad to go past bad records)"
            ));
        }
    }

    /// The planner's counters.
    pub(crate) fn stats(&self) -> ReplayStats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }
}
