//! fio's `sprandom` (SanDisk's SPRandom preconditioning), `spr_op` and `spr_num_regions` onto
//! iolab's `sprandom` key, which writes the same order (see `iolab_core::sprandom`).

use super::translate::Tr;
use iolab_core::job::Access;
use iolab_core::sprandom::SpRandom;

/// Translates `sprandom`, `spr_op` and `spr_num_regions`.
pub(super) fn sprandom(tr: &mut Tr) {
    if tr.o.get("sprandom").is_none() || !tr.flag("sprandom") {
        for key in ["spr_op", "spr_num_regions"] {
            tr.note(key, "no effect without sprandom");
        }
        return;
    }
    if tr.job.spec.access != Some(Access::RandWrite) {
        tr.problem(
            "sprandom",
            "SPRandom is a pass of random writes: give rw=randwrite",
        );
        return;
    }
    if tr.job.spec.threads.unwrap_or(1) > 1 {
        tr.problem(
            "numjobs",
            "SPRandom is one job's pass over the device (fio asks for numjobs=1)",
        );
        return;
    }
    let mut spr = SpRandom {
        op: 0.15,
        regions: 100,
    };
    if let Some(op) = tr.number::<f64>("spr_op") {
        spr.op = op;
    }
    if let Some(n) = tr.number::<u32>("spr_num_regions") {
        spr.regions = n;
    }
    if let Err(e) = spr.check() {
        let key = if spr.regions == 0 {
            "spr_num_regions"
        } else {
            "spr_op"
        };
        tr.problem(key, e);
        return;
    }
    // One pass; fio sets io_size to the physical size and ends when its order does.
    tr.job.spec.io_limit = None;
    tr.job.places.remove("io_limit");
    tr.job.spec.random_map = None;
    tr.job.spec.sprandom = Some(spr);
    tr.from("sprandom", "sprandom");
    tr.note(
        "sprandom",
        "iolab writes SPRandom's order (Desnoyers' steady-state model, the same regions and \
         shares); its random order of new blocks is iolab's seeded permutation rather than \
         fio's LFSR",
    );
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{problems, translate};
    use iolab_core::sprandom::SpRandom;

    #[test]
    fn sprandom_becomes_the_sprandom_key() {
        let j = &translate(
            "[p]\nrw=randwrite\nbs=4k\nnorandommap=1\nsprandom=1\nspr_op=0.21\n\
             spr_num_regions=400\n",
        )[0];
        assert_eq!(problems(j), "");
        assert_eq!(
            j.spec.sprandom,
            Some(SpRandom {
                op: 0.21,
                regions: 400
            })
        );
        j.spec.clone().validate().unwrap();
        let j = &translate("[p]\nrw=randwrite\nsprandom=1\n")[0];
        assert_eq!(j.spec.sprandom.as_ref().map(|s| s.regions), Some(100));
        for (text, key) in [
            ("[p]\nrw=randread\nsprandom=1\n", "sprandom"),
            ("[p]\nrw=randwrite\nsprandom=1\nnumjobs=2\n", "numjobs"),
            ("[p]\nrw=randwrite\nsprandom=1\nspr_op=1.5\n", "spr_op"),
            ("[p]\nrw=randwrite\nsprandom=1\nspr_cs=1m\n", "spr_cs"),
        ] {
            let j = &translate(text)[0];
            assert!(problems(j).starts_with(key), "{text}: {}", problems(j));
        }
        let j = &translate("[p]\nrw=randwrite\nsprandom=0\nspr_op=0.2\n")[0];
        assert_eq!(
            (problems(j), j.spec.sprandom.clone()),
            (String::new(), None)
        );
    }
}
