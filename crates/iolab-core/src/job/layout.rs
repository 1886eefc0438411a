//! Threads in spans of their own, `thread_offset` apart (fio's `offset_increment`): where the
//! spans lie and whether the last one fits the target.

use super::{Job, JobError, MIN_DIRECT_ALIGN};
use crate::size::{format_size, human_size};

impl Job {
    /// [`Job::resolve_span`] for threads `thread_offset` apart: each thread's span is `size`
    /// (by default as much as lets the last thread's span end at the target's end), and the
    /// last thread's span must end within the target.
    pub(super) fn resolve_thread_spans(&mut self, target_bytes: u64) -> Result<(), JobError> {
        let last = u64::from(self.threads.max(1) - 1);
        let last_start = self
            .thread_offset
            .checked_mul(last)
            .and_then(|s| s.checked_add(self.offset_bytes));
        let room = last_start.and_then(|s| target_bytes.checked_sub(s));
        let span = match (self.span_bytes, room) {
            (Some(span), Some(room)) if span <= room => return Ok(()),
            (None, Some(room)) if room >= self.max_block() => {
                return self.set_span(room - room % MIN_DIRECT_ALIGN);
            }
            (span, _) => span,
        };
        let size = span.map_or_else(
            || "at least one block".to_string(),
            |s| format!("size {}", format_size(s)),
        );
        Err(JobError {
            job: self.name.clone(),
            key: "thread_offset",
            message: format!(
                "thread {} of {} starts at offset {} + {last} × {} (fio's offset_increment) = {} \
                 and with {size} runs past the end of the target ({} bytes, {}); lower \
                 thread_offset, size, offset or threads",
                last + 1,
                self.threads,
                format_size(self.offset_bytes),
                format_size(self.thread_offset),
                last_start.map_or_else(|| "more than 2^64 bytes".into(), human_size),
                target_bytes,
                human_size(target_bytes),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::job::JobSpec;

    fn job(text: &str) -> crate::job::Job {
        toml::from_str::<JobSpec>(text).unwrap().validate().unwrap()
    }

    #[test]
    fn each_thread_starts_thread_offset_after_the_one_before() {
        let mut j = job("threads = 3\noffset = \"1m\"\nsize = \"1m\"\nthread_offset = \"10m\"");
        j.resolve_span(64 << 20).unwrap();
        let ranges: Vec<_> = (0..3).map(|i| j.worker_range(i)).collect();
        let mib = 1u64 << 20;
        assert_eq!(
            ranges,
            [(mib, 2 * mib), (11 * mib, 12 * mib), (21 * mib, 22 * mib)]
        );
        assert!(j.separate_ranges());
    }

    #[test]
    fn a_last_span_past_the_end_is_refused_naming_the_sizes() {
        let mut j =
            job("threads = 30\noffset = \"120k\"\nsize = \"64m\"\nthread_offset = \"124g\"");
        let err = j.resolve_span(1 << 40).unwrap_err();
        assert_eq!(err.key, "thread_offset");
        let text = err.to_string();
        for part in ["thread 30 of 30", "offset_increment", "size 64m", "124g"] {
            assert!(text.contains(part), "{part} not in {text}");
        }
        // It fits a target large enough for the last thread's span.
        j.resolve_span(4 << 40).unwrap();
        assert_eq!(j.worker_range(29).0, (120 << 10) + 29 * (124 << 30));
    }

    #[test]
    fn without_size_the_spans_reach_as_far_as_the_last_one_fits() {
        let mut j = job("threads = 2\nthread_offset = \"4m\"");
        j.resolve_span(10 << 20).unwrap();
        assert_eq!(j.worker_range(1), (4 << 20, 10 << 20));
        assert_eq!(j.worker_range(0), (0, 6 << 20));
    }
}
