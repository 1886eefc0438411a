//! fio's `fsync`, `fdatasync`, `end_fsync` and `fsync_on_close` onto iolab's `sync` key: every
//! N writes (per thread, as fio's per clone) the writes in flight complete and the target is
//! synced (fsync or fdatasync), and once more at the end; the result counts them.

use super::translate::Tr;
use iolab_core::sync::SyncPolicy;

/// Translates the sync options for a job that `writes`.
pub(super) fn sync(tr: &mut Tr, writes: bool) {
    let fsync = tr.number::<u64>("fsync").filter(|&n| n > 0);
    let fdatasync = tr.number::<u64>("fdatasync").filter(|&n| n > 0);
    let at_end = tr.flag("end_fsync") || tr.flag("fsync_on_close");
    if fsync.is_some() && fdatasync.is_some() {
        tr.problem(
            "fdatasync",
            "fsync and fdatasync both every N writes; iolab issues one kind: keep one",
        );
        return;
    }
    if !writes {
        for key in ["fsync", "fdatasync", "end_fsync", "fsync_on_close"] {
            tr.note(key, "no effect: the job does not write");
        }
        return;
    }
    if fsync.is_none() && fdatasync.is_none() && !at_end {
        return;
    }
    let policy = SyncPolicy {
        every_writes: fsync.or(fdatasync),
        data_only: fdatasync.is_some(),
        at_end,
    };
    let from = match (fsync, fdatasync) {
        (Some(_), _) => "fsync",
        (_, Some(_)) => "fdatasync",
        _ if tr.o.get("end_fsync").is_some() => "end_fsync",
        _ => "fsync_on_close",
    };
    if policy.every_writes.is_some() {
        tr.note(
            from,
            "the writes in flight complete before each sync and none is issued during it",
        );
    }
    tr.job.spec.sync = Some(policy);
    tr.from("sync", from);
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{problems, translate};
    use iolab_core::sync::SyncPolicy;

    #[test]
    fn fio_syncs_become_a_sync_policy() {
        let j = &translate("[w]\nrw=randwrite\nsize=1m\nfsync=32\nend_fsync=1\n")[0];
        assert_eq!(problems(j), "");
        assert_eq!(
            j.spec.sync,
            Some(SyncPolicy {
                every_writes: Some(32),
                data_only: false,
                at_end: true
            })
        );
        j.spec.validate().unwrap();
        let j = &translate("[w]\nrw=write\nsize=1m\nfdatasync=8\n")[0];
        let s = j.spec.sync.as_ref().unwrap();
        assert_eq!(
            (s.every_writes, s.data_only, s.at_end),
            (Some(8), true, false)
        );
        let j = &translate("[w]\nrw=write\nsize=1m\nfsync_on_close=1\n")[0];
        assert_eq!(j.spec.sync.as_ref().map(|s| s.at_end), Some(true));
        let j = &translate("[r]\nrw=read\nsize=1m\nfsync=4\n")[0];
        assert!(j.spec.sync.is_none() && j.problems.is_empty());
        let j = &translate("[w]\nrw=write\nsize=1m\nfsync=4\nfdatasync=4\n")[0];
        assert!(problems(j).starts_with("fdatasync=4:"), "{}", problems(j));
    }
}
