//! fio's steady-state stop (`steadystate`/`ss`, `ss_dur`, `ss_ramp`,
//! `steadystate_check_interval`) onto iolab's `steady_stop` key: the job's IOPS, bandwidth or
//! mean latency is sampled every interval, and the job ends once the last `ss_dur` of samples
//! is steady by the criterion (`iops:10%`, `bw_slope:1%`, `lat:5%`, …).

use super::translate::Tr;
use iolab_core::steady_stop::{Criterion, SteadyStop};

/// fio's default criterion, where only the duration is given.
const FIO_DEFAULT: &str = "iops_slope:0.01%";

/// Translates the steady-state options.
pub(super) fn steady(tr: &mut Tr) {
    let criterion = tr.o.value("steadystate").map(str::to_string);
    let window = tr.seconds("steadystate_duration", 1.0).filter(|&d| d > 0.0);
    let Some(window_s) = window else {
        // fio's default duration is 0, which turns the detection off.
        for key in [
            "steadystate",
            "steadystate_ramp_time",
            "steadystate_check_interval",
        ] {
            tr.note(
                key,
                "no effect without ss_dur (fio's default of 0 turns it off)",
            );
        }
        return;
    };
    let criterion = criterion.unwrap_or_else(|| FIO_DEFAULT.to_string());
    if let Err(e) = criterion.parse::<Criterion>() {
        tr.problem("steadystate", e);
        return;
    }
    let stop = SteadyStop {
        criterion,
        window_s,
        ramp_s: tr
            .seconds("steadystate_ramp_time", 1.0)
            .filter(|&r| r > 0.0),
        interval_s: tr.seconds("steadystate_check_interval", 1.0),
    };
    if let Err(e) = stop.check() {
        tr.problem("steadystate_duration", e);
        return;
    }
    let interval = stop.interval();
    if ((window_s / interval).round() * interval - window_s).abs() > 1e-9 {
        tr.problem(
            "steadystate_duration",
            format!("{window_s} s is not a whole number of check intervals ({interval} s)"),
        );
        return;
    }
    if tr.job.spec.threads.unwrap_or(1) > 1 {
        tr.note(
            "steadystate",
            "judged on the job's threads together (fio's group_reporting); without it fio \
             judges each clone on its own",
        );
    }
    tr.job.spec.steady_stop = Some(stop);
    tr.from("steady_stop", "steadystate");
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{problems, translate};

    #[test]
    fn fio_steady_state_options_become_a_steady_stop() {
        let j = &translate(
            "[w]\nrw=write\nsize=1m\ntime_based\nruntime=5m\nss=iops:10%\nss_dur=30s\n\
             ss_ramp=10s\n",
        )[0];
        assert_eq!(problems(j), "");
        let s = j.spec.steady_stop.as_ref().unwrap();
        assert_eq!(
            (s.criterion.as_str(), s.window_s, s.ramp_s, s.interval()),
            ("iops:10%", 30.0, Some(10.0), 1.0)
        );
        assert_eq!(j.places["steady_stop"].to_string(), "j.fio:6");
        j.spec.validate().unwrap();
        // The long names, fio's latency criterion, a check interval and plain seconds.
        let j = &translate(
            "[r]\nrw=randread\nsize=1m\nsteadystate=lat:5%\nsteadystate_duration=300\n\
             steadystate_ramp_time=60\nsteadystate_check_interval=10\n",
        )[0];
        let s = j.spec.steady_stop.as_ref().unwrap();
        assert_eq!((s.window_s, s.interval_s), (300.0, Some(10.0)));
        // Only a duration: fio's default criterion.
        let j = &translate("[r]\nsize=1m\nss_dur=20\n")[0];
        assert_eq!(
            j.spec.steady_stop.as_ref().unwrap().criterion,
            "iops_slope:0.01%"
        );
        // No duration: off, as in fio, and said.
        let j = &translate("[r]\nsize=1m\nss=bw:5%\n")[0];
        assert!(j.spec.steady_stop.is_none());
        assert!(j
            .notes
            .iter()
            .any(|n| n.contains("no effect without ss_dur")));
    }

    #[test]
    fn bad_steady_state_options_are_refused_by_name() {
        let j = &translate("[r]\nsize=1m\nss=clat:5%\nss_dur=20\n")[0];
        assert!(
            problems(j).starts_with("ss=clat:5%: 'clat' is not"),
            "{}",
            problems(j)
        );
        let j = &translate("[r]\nsize=1m\nss_dur=15\nsteadystate_check_interval=10\n")[0];
        assert!(
            problems(j).contains("whole number of check intervals"),
            "{}",
            problems(j)
        );
    }
}
