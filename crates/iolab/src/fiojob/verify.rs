//! fio's `verify` family onto iolab's `verify` key. Both tools stamp what they write and read it
//! back; they differ in how: fio checks one checksum (md5, crc32c, …) per block, by default in a
//! pass after the writes, or every `verify_backlog` writes; iolab stamps each 512-byte sector
//! with a header and its own checksum, and reads back after the job (`end`) or each write as soon as
//! it completes (`inline`). The checksum fio names is replaced by iolab's, which is said.

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

/// Translates `verify`, `do_verify` and `verify_backlog` for a job that `writes`.
pub(super) fn verify(tr: &mut Tr, writes: bool) {
    let Some(kind) = tr.o.value("verify").map(str::to_string) else {
        for key in ["do_verify", "verify_backlog"] {
            tr.note(key, "no effect without verify");
        }
        return;
    };
    if matches!(kind.as_str(), "0" | "none" | "null") {
        return;
    }
    if kind == "pattern" {
        tr.problem(
            "verify",
            "iolab stamps each sector with a header and a checksum; it does not write and check \
             a fixed pattern",
        );
        return;
    }
    if !CHECKSUMS.contains(&kind.as_str()) {
        tr.problem(
            "verify",
            format!("unknown verify type '{kind}': fio's are md5, crc32c, sha256, xxhash, …"),
        );
        return;
    }
    if !writes {
        tr.problem(
            "verify",
            "this job only reads; iolab verifies what a job writes. To check what an earlier \
             run wrote, use `iolab verify TARGET`",
        );
        return;
    }
    let do_verify = tr.o.get("do_verify").is_none() || tr.flag("do_verify");
    let backlog = tr.number::<u64>("verify_backlog").unwrap_or(0);
    let mode = if backlog > 0 {
        tr.note(
            "verify_backlog",
            "iolab reads each write back as soon as it completes (verify = \"inline\"), not \
             every N writes",
        );
        VerifyMode::Inline
    } else if do_verify {
        VerifyMode::End
    } else {
        tr.note(
            "do_verify",
            "no pass to check the writes; `iolab verify TARGET` checks them later",
        );
        VerifyMode::Off
    };
    if mode != VerifyMode::Off {
        tr.note(
            "verify",
            format!("checked by iolab's own per-sector stamps and checksums, not by fio's {kind}"),
        );
    }
    tr.job.spec.verify = Some(mode);
    tr.from("verify", "verify");
}
