//! fio's `zonemode=zbd` as iolab's emulated zones (`zoned`): `zonesize`, `max_open_zones`,
//! `zone_reset_threshold`, `zone_reset_frequency`, `read_beyond_wp`; and fio's `z` size unit
//! (a number of zones), which `size`, `offset` and `offset_increment` take.

use super::translate::Tr;
use iolab_core::size::ByteSize;
use iolab_core::zbd::Zoned;

/// `zonemode=zbd`: zones with write pointers on the target, which iolab, as fio on a file or a
/// block device that is not zoned, emulates (zones that start empty).
pub(super) fn zbd(tr: &mut Tr) {
    let Some(zone_size) = tr.size("zonesize") else {
        tr.problem(
            "zonemode",
            "zonemode=zbd on a target that is not zoned needs zonesize, the size of the zones \
             to emulate (as fio does)",
        );
        return;
    };
    let max_open = tr.number::<u32>("max_open_zones").unwrap_or(0);
    let threshold = tr.number::<f64>("zone_reset_threshold");
    let frequency = tr
        .number::<f64>("zone_reset_frequency")
        .filter(|&f| f > 0.0);
    if frequency.is_none() {
        tr.note(
            "zone_reset_threshold",
            "no effect without zone_reset_frequency",
        );
    }
    let read_beyond_wp = tr.flag("read_beyond_wp");
    if tr.size("zoneskip").is_some_and(|s| s > 0) {
        tr.problem(
            "zoneskip",
            "skipping zones between sequential runs is not supported with zonemode=zbd",
        );
    }
    tr.note("zonerange", "no effect with zonemode=zbd");
    if let Some(n) = tr.number::<u32>("job_max_open_zones").filter(|&n| n > 0) {
        if max_open == 0 || n < max_open {
            tr.problem(
                "job_max_open_zones",
                format!(
                    "{n} open zones for this job alone: iolab limits the open zones of the \
                     target only (max_open_zones)"
                ),
            );
        }
    }
    let spec = &mut tr.job.spec;
    spec.zoned = Some(Zoned {
        zone_size: ByteSize(zone_size),
        max_open,
        reset_threshold: frequency.map(|_| threshold.unwrap_or(0.0)),
        reset_frequency: frequency,
        read_beyond_wp,
    });
    let reads_only = matches!(
        spec.access,
        Some(iolab_core::job::Access::Read | iolab_core::job::Access::RandRead)
    );
    tr.from("zoned", "zonemode");
    tr.note(
        "zonemode",
        "zones emulated as fio does on a target that is not zoned: each starts empty; the \
         threads of a span share them; a zone clipped by the span ends with it",
    );
    if reads_only && !read_beyond_wp {
        let why = "the emulated zones start empty and reads stay below their write pointers \
                   (read_beyond_wp=0, fio's default), so the job has nothing to read and ends \
                   at once, as fio's does; read_beyond_wp=1 reads the zones";
        if tr.o.get("read_beyond_wp").is_some() {
            tr.note("read_beyond_wp", why);
        } else {
            tr.note("zonemode", why);
        }
    }
}

/// `N z` in `key`: N zones of `zonesize`.
pub(super) fn zones(tr: &mut Tr, key: &str, count: &str) -> Option<u64> {
    let Ok(n) = count.trim().parse::<u64>() else {
        tr.problem(key, format!("'{count}z' is not a whole number of zones"));
        return None;
    };
    match tr.size("zonesize") {
        Some(zone) => Some(n * zone),
        None => {
            tr.problem(
                key,
                "a size in zones (z) needs zonesize, the size of one zone",
            );
            None
        }
    }
}
