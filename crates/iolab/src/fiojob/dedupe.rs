//! fio's `dedupe_mode`, `dedupe_working_set_percentage` and `dedupe_global` onto iolab's
//! `dedupe_set` key. fio's `repeat` mode (the default) is iolab's `dedupe_pct` alone: a
//! duplicate repeats a recent block. `working_set` makes duplicates repeat blocks of a fixed
//! set of that share of the span; `dedupe_global` shares one set among every job that sets it.

use super::translate::Tr;
use iolab_core::data::DedupeSet;

/// fio's default working set, percent of the span.
const FIO_DEFAULT_SET_PCT: f64 = 5.0;

/// Translates the dedupe mode options (after `dedupe_percentage`).
pub(super) fn dedupe(tr: &mut Tr) {
    let mode = tr.o.value("dedupe_mode").map(str::to_string);
    let global = tr.flag("dedupe_global");
    if tr.job.spec.dedupe_pct.is_none() {
        for key in [
            "dedupe_mode",
            "dedupe_working_set_percentage",
            "dedupe_global",
        ] {
            tr.note(key, "no effect without dedupe_percentage");
        }
        return;
    }
    match mode.as_deref().unwrap_or("repeat") {
        "repeat" => {
            tr.note(
                "dedupe_working_set_percentage",
                "no effect: dedupe_mode is repeat",
            );
            if global {
                tr.problem(
                    "dedupe_global",
                    "iolab shares a working set of blocks among jobs, not their recent \
                     writes: add dedupe_mode=working_set",
                );
            }
        }
        "working_set" => {
            let share_pct = tr
                .number::<f64>("dedupe_working_set_percentage")
                .unwrap_or(FIO_DEFAULT_SET_PCT);
            let set = DedupeSet { share_pct, global };
            if let Err(e) = set.check() {
                tr.problem("dedupe_working_set_percentage", e);
                return;
            }
            tr.job.spec.dedupe_set = Some(set);
            tr.from("dedupe_set", "dedupe_mode");
        }
        other => {
            let other = other.to_string();
            tr.problem(
                "dedupe_mode",
                format!("'{other}' is not repeat or working_set"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{problems, translate};
    use iolab_core::data::DedupeSet;

    #[test]
    fn fio_working_sets_become_a_dedupe_set() {
        let j = &translate(
            "[a]\nrw=write\nsize=100m\ndedupe_mode=working_set\ndedupe_global=1\n\
             dedupe_percentage=50\ndedupe_working_set_percentage=50\n",
        )[0];
        assert_eq!(problems(j), "");
        assert_eq!(j.spec.dedupe_pct, Some(50.0));
        assert_eq!(
            j.spec.dedupe_set,
            Some(DedupeSet {
                share_pct: 50.0,
                global: true
            })
        );
        j.spec.validate().unwrap();
        let j =
            &translate("[a]\nrw=write\nsize=1m\ndedupe_mode=working_set\ndedupe_percentage=10\n")
                [0];
        assert_eq!(j.spec.dedupe_set.as_ref().map(|d| d.share_pct), Some(5.0));
        let j = &translate("[a]\nrw=write\nsize=1m\ndedupe_percentage=10\ndedupe_global=1\n")[0];
        assert!(
            problems(j).starts_with("dedupe_global=1:"),
            "{}",
            problems(j)
        );
        let j = &translate("[a]\nrw=write\nsize=1m\ndedupe_percentage=10\ndedupe_mode=x\n")[0];
        assert!(problems(j).starts_with("dedupe_mode=x:"), "{}", problems(j));
    }
}
