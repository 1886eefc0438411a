//! fio's `fill_device` (`fill_fs`): write until the device or filesystem is full. iolab's
//! nearest is a job over the whole target, which on a block device is exactly that (its end
//! is where it is full); a regular file is written to the size it has, not grown until its
//! filesystem runs out of room, which is said.

use super::translate::Tr;

/// Translates `fill_device` or `fill_fs` (after the span and budget).
pub(super) fn fill_device(tr: &mut Tr) {
    let Some(key) = ["fill_device", "fill_fs"]
        .into_iter()
        .find(|k| tr.o.get(k).is_some())
    else {
        return;
    };
    if !tr.flag(key) {
        return;
    }
    if tr.o.get("size").is_some() || tr.o.get("io_size").is_some() {
        tr.note(
            "size",
            format!("no effect with {key}: the job writes the whole target"),
        );
    }
    tr.job.spec.size = None;
    tr.job.spec.io_limit = None;
    tr.job.places.remove("size");
    tr.job.places.remove("io_limit");
    tr.note(
        key,
        "the job writes the whole target: a block device to its end; a file to the size it \
         has (iolab does not grow a file until its filesystem is full)",
    );
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{problems, translate};

    #[test]
    fn fill_device_writes_the_whole_target() {
        let j = &translate("[w]\nrw=write\nbs=64k\nsize=1m\nfill_device=1\n")[0];
        assert_eq!(problems(j), "");
        assert_eq!((j.spec.size, j.spec.io_limit), (None, None));
        assert!(j.notes.iter().any(|n| n.starts_with("fill_device=1")));
        let j = &translate("[w]\nrw=write\nsize=1m\nfill_fs=0\n")[0];
        assert!(j.spec.size.is_some());
    }
}
