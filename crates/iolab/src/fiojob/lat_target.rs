//! fio's latency-target mode (`latency_target`, `latency_window`, `latency_percentile`) onto
//! iolab's `latency_target` key: the deepest queue, up to `iodepth`, at which the given share
//! of I/Os completes within the target, searched window by window; the job's figures are one
//! last window at the depth found.

use super::translate::Tr;
use iolab_core::lat_target::LatencyTarget;

/// Translates the latency-target options.
pub(super) fn latency_target(tr: &mut Tr) {
    // fio's times here are in microseconds unless a unit says otherwise.
    let target = tr.seconds("latency_target", 1e-6).filter(|&t| t > 0.0);
    let Some(target_s) = target else {
        for key in ["latency_window", "latency_percentile", "latency_run"] {
            tr.note(key, "no effect without latency_target");
        }
        return;
    };
    if tr.flag("latency_run") {
        tr.problem(
            "latency_run",
            "iolab finds the depth and measures at it; it does not keep adjusting the depth \
             for the rest of the job",
        );
        return;
    }
    let Some(window_s) = tr.seconds("latency_window", 1e-6).filter(|&w| w > 0.0) else {
        tr.problem(
            "latency_target",
            "needs latency_window, how long each depth is tried",
        );
        return;
    };
    let t = LatencyTarget {
        target_us: target_s * 1e6,
        window_s,
        percentile: tr.number::<f64>("latency_percentile"),
    };
    if let Err(e) = t.check() {
        let key = if e.starts_with("percentile") {
            "latency_percentile"
        } else {
            "latency_window"
        };
        tr.problem(key, e);
        return;
    }
    if tr.job.spec.queue_depth.unwrap_or(1) <= 1 {
        tr.note(
            "latency_target",
            "iodepth is 1, so one I/O in flight is the only depth to try",
        );
    }
    tr.job.spec.latency_target = Some(t);
    tr.from("latency_target", "latency_target");
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{problems, translate};

    #[test]
    fn fio_latency_profile_becomes_a_latency_target() {
        let j = &translate(
            "[d]\nrw=randread\nbs=4k\nsize=1m\nioengine=libaio\niodepth=128\n\
             latency_target=500000\nlatency_window=5000000\nlatency_percentile=99.9\n",
        )[0];
        assert_eq!(problems(j), "");
        let t = j.spec.latency_target.as_ref().unwrap();
        assert_eq!(
            (t.target_us, t.window_s, t.percentile),
            (500000.0, 5.0, Some(99.9))
        );
        assert_eq!(j.places["latency_target"].to_string(), "j.fio:7");
        j.spec.validate().unwrap();
        let j = &translate("[d]\nsize=1m\nlatency_target=2ms\nlatency_window=1s\n")[0];
        let t = j.spec.latency_target.as_ref().unwrap();
        assert_eq!((t.target_us, t.window_s, t.percentile), (2000.0, 1.0, None));
    }

    #[test]
    fn what_the_mode_cannot_do_is_refused_by_name() {
        let j = &translate("[d]\nsize=1m\nlatency_target=2ms\n")[0];
        assert!(
            problems(j).contains("needs latency_window"),
            "{}",
            problems(j)
        );
        let j =
            &translate("[d]\nsize=1m\nlatency_target=2ms\nlatency_window=1s\nlatency_run=1\n")[0];
        assert!(problems(j).starts_with("latency_run=1:"), "{}", problems(j));
        let j = &translate(
            "[d]\nsize=1m\nlatency_target=2ms\nlatency_window=1s\nlatency_percentile=0\n",
        )[0];
        assert!(
            problems(j).starts_with("latency_percentile=0:"),
            "{}",
            problems(j)
        );
        let j = &translate("[d]\nsize=1m\nlatency_window=1s\n")[0];
        assert!(j.spec.latency_target.is_none() && j.problems.is_empty());
    }
}
