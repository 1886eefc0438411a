//! fio's `verify` family onto iolab's `verify` key. Both tools stamp what they write and read it
//! back; they differ in how: fio checks one checksum (md5, crc32c, …) per block, by default in a
//! pass after the writes, or every `verify_backlog` writes; iolab stamps each 512-byte sector
//! with a header and its own checksum, and reads back after the job (`end`) or each write as soon as
//! it completes (`inline`); with `do_verify=0` writes are only stamped (`stamp`), and a job that
//! only reads checks what it reads by its stamps (`reads`), as fio's read-only verify pass does.
//! The checksum fio names is replaced by iolab's, which is said.

use super::translate::Tr;
use iolab_core::job::VerifyMode;

/// Checksums fio verifies a block by, each taken as iolab's per-sector checksum.
const CHECKSUMS: &[&str] = &[
    "md5",
    "crc64",
    "crc32",
    "crc32c",
    "crc32c-intel",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
];

/// Translates `verify`, `do_verify`, `verify_backlog` and `verify_pattern` for a job that
/// `writes`, or only reads.
pub(super) fn verify(tr: &mut Tr, writes: bool) {
    let Some(kind) = tr.o.value("verify").map(str::to_string) else {
        for key in ["do_verify", "verify_backlog"] {
            tr.note(key, "no effect without verify");
        }
        if tr.o.get("verify_pattern").is_some() {
            // fio takes verify_pattern alone as verify=pattern.
            tr.problem("verify_pattern", PATTERN_ONLY);
        }
        return;
    };
    if matches!(kind.as_str(), "0" | "none" | "null") {
        tr.note("verify_pattern", "no effect without verify");
        return;
    }
    if kind == "pattern" {
        tr.problem("verify", PATTERN_ONLY);
        return;
    }
    if !CHECKSUMS.contains(&kind.as_str()) {
        tr.problem(
            "verify",
            format!("unknown verify type '{kind}': fio's are md5, crc32c, sha256, xxhash, …"),
        );
        return;
    }
    let do_verify = tr.o.get("do_verify").is_none() || tr.flag("do_verify");
    let mode = if writes {
        write_mode(tr, do_verify)
    } else if do_verify {
        tr.note(
            "verify",
            "each block read is checked by the stamps iolab wrote with it (offset, checksum, \
             whole block), as `iolab verify TARGET` checks: data an earlier job or run wrote \
             with verify; a block without stamps counts as a failure",
        );
        VerifyMode::Reads
    } else {
        tr.note(
            "do_verify",
            "the job only reads and does not check: no effect",
        );
        VerifyMode::Off
    };
    if matches!(
        mode,
        VerifyMode::End | VerifyMode::Inline | VerifyMode::Reads
    ) {
        tr.note(
            "verify",
            format!("checked by iolab's own per-sector stamps and checksums, not by fio's {kind}"),
        );
    }
    if let Some(p) = tr.o.value("verify_pattern").map(str::to_string) {
        pattern(tr, &p, writes);
    }
    tr.job.spec.verify = (mode != VerifyMode::Off).then_some(mode);
    tr.from("verify", "verify");
}

/// Why fio's `verify=pattern` is refused.
const PATTERN_ONLY: &str = "verify=pattern writes the pattern alone and checks it; iolab \
                            checks by the stamps it writes over each sector's head, so give \
                            verify=meta (or a checksum) with the pattern";

/// The mode of a job that writes: read back after the job, as each write completes, or only
/// stamped for a later check.
fn write_mode(tr: &mut Tr, do_verify: bool) -> VerifyMode {
    let backlog = tr.number::<u64>("verify_backlog").unwrap_or(0);
    if !do_verify {
        tr.note(
            "do_verify",
            "writes carry iolab's stamps and are not read back in this job; a later read job \
             with verify, or `iolab verify TARGET`, checks them",
        );
        tr.note("verify_backlog", "no effect with do_verify=0");
        VerifyMode::Stamp
    } else if backlog > 0 {
        tr.note(
            "verify_backlog",
            "iolab reads each write back as soon as it completes (verify = \"inline\"), not \
             every N writes",
        );
        VerifyMode::Inline
    } else {
        VerifyMode::End
    }
}

/// `verify_pattern`: the content of every written block.
fn pattern(tr: &mut Tr, text: &str, writes: bool) {
    if let Err(e) = iolab_core::pattern::parse(text) {
        tr.problem("verify_pattern", e);
        return;
    }
    if !writes {
        tr.note(
            "verify_pattern",
            "a read job checks the stamps and sector checksums, which cover the pattern the \
             writer wrote; the pattern itself is not compared",
        );
        return;
    }
    if tr.job.spec.data.is_some()
        || tr.job.spec.compress_pct.is_some()
        || tr.job.spec.dedupe_pct.is_some()
    {
        tr.problem(
            "verify_pattern",
            "the pattern is every block's content; it cannot be combined with zero_buffers, \
             buffer_compress_percentage or dedupe_percentage",
        );
        return;
    }
    tr.job.spec.pattern = Some(text.trim().to_string());
    tr.from("pattern", "verify_pattern");
    tr.note(
        "verify_pattern",
        "every block repeats the pattern from its start, under iolab's 32-byte stamp at the \
         head of each 512-byte sector (fio's meta header sits at the head of each \
         verify_interval the same way)",
    );
}
