//! fio's `ignore_error`: errors (per reads, writes, verify) that do not stop a job. iolab's
//! `continue_on_error` goes on after every error and counts each by errno, so with fio's
//! `continue_on_error` set the list asks for nothing more; without it, going on after only the
//! listed errors is not something iolab does.

use super::translate::Tr;

/// Translates `ignore_error` (after `continue_on_error`).
pub(super) fn ignore_error(tr: &mut Tr) {
    let Some(list) = tr.o.value("ignore_error").map(str::to_string) else {
        return;
    };
    if list.split([',', ':']).all(|e| e.trim().is_empty()) {
        return;
    }
    if tr.job.spec.continue_on_error == Some(true) {
        tr.note(
            "ignore_error",
            "iolab goes on after every error (continue_on_error) and counts each by errno, \
             these too",
        );
    } else {
        tr.problem(
            "ignore_error",
            "iolab goes on after errors only with continue_on_error, which goes on after \
             every error, not only the listed ones: add continue_on_error=all",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{problems, translate};

    #[test]
    fn ignored_errors_need_continue_on_error() {
        let j = &translate(
            "[w]\nrw=randwrite\nsize=1m\ncontinue_on_error=write\nignore_error=,ENOSPC\n",
        )[0];
        assert_eq!(problems(j), "");
        assert_eq!(j.spec.continue_on_error, Some(true));
        assert!(j
            .notes
            .iter()
            .any(|n| n.starts_with("ignore_error=,ENOSPC")));
        let j = &translate("[w]\nrw=randwrite\nsize=1m\nignore_error=EIO\n")[0];
        assert!(
            problems(j).starts_with("ignore_error=EIO: iolab goes on"),
            "{}",
            problems(j)
        );
    }
}
