//! The fixed bucket schemes used by analysis and synthesis (so a synthesised trace can be
//! checked bucket by bucket against its profile).

/// IO-size buckets of the AnandTech storage-bench breakdown. The review lists exact sizes
/// (4 KB, 8 KB, …, 128 KB) and folds the rest into sizes "with < 1 % each", so sizes
/// between the listed ones go to `other` and sizes above 128 KiB to `>128K`.
pub const SIZE_LABELS: [&str; 9] = [
    "<4K", "4K", "8K", "16K", "32K", "64K", "128K", ">128K", "other",
];

/// Index into [`SIZE_LABELS`] for a request length in bytes.
pub fn size_bucket(len: u64) -> usize {
    const K: u64 = 1024;
    match len {
        l if l < 4 * K => 0,
        l if l == 4 * K => 1,
        l if l == 8 * K => 2,
        l if l == 16 * K => 3,
        l if l == 32 * K => 4,
        l if l == 64 * K => 5,
        l if l == 128 * K => 6,
        l if l > 128 * K => 7,
        _ => 8,
    }
}

/// Queue-depth buckets of the review's breakdown (depth seen by a request as it arrives,
/// counting itself).
pub const QD_LABELS: [&str; 8] = ["1", "2", "3", "4-5", "6-10", "11-20", "21-32", ">32"];

/// Inclusive depth range of each [`QD_LABELS`] bucket (the last is open-ended).
pub const QD_RANGES: [(u32, u32); 8] = [
    (1, 1),
    (2, 2),
    (3, 3),
    (4, 5),
    (6, 10),
    (11, 20),
    (21, 32),
    (33, u32::MAX),
];

/// Index into [`QD_LABELS`] for a depth ≥ 1.
pub fn qd_bucket(depth: u64) -> usize {
    match depth {
        0 | 1 => 0,
        2 => 1,
        3 => 2,
        4..=5 => 3,
        6..=10 => 4,
        11..=20 => 5,
        21..=32 => 6,
        _ => 7,
    }
}

/// Upper edges (ns, exclusive) of the time histograms (inter-arrival, latency); one more
/// bucket collects everything from the last edge up.
pub const TIME_EDGES_NS: [u64; 8] = [
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
];

/// Labels of the time histogram buckets.
pub const TIME_LABELS: [&str; 9] = [
    "<1us", "1-10us", "10-100us", "0.1-1ms", "1-10ms", "10-100ms", "0.1-1s", "1-10s", ">=10s",
];

/// Index into [`TIME_LABELS`].
pub fn time_bucket(ns: u64) -> usize {
    TIME_EDGES_NS
        .iter()
        .position(|&e| ns < e)
        .unwrap_or(TIME_EDGES_NS.len())
}

/// Power-of-two size histogram: bucket `i` holds lengths in `(2^(i+8), 2^(i+9)]`, the first
/// everything up to 512 B, the last everything above 16 MiB.
pub const LOG2_BUCKETS: usize = 17;

/// Index of the power-of-two size histogram.
pub fn log2_bucket(len: u64) -> usize {
    if len <= 512 {
        return 0;
    }
    let bits = 64 - (len - 1).leading_zeros() as usize; // ceil(log2(len))
    (bits - 9).min(LOG2_BUCKETS - 1)
}

/// Label of a power-of-two size bucket.
pub fn log2_label(i: usize) -> String {
    if i + 1 == LOG2_BUCKETS {
        return ">16M".to_string();
    }
    let bytes = 512u64 << i;
    if bytes >= 1 << 20 {
        format!("<={}M", bytes >> 20)
    } else if bytes >= 1024 {
        format!("<={}K", bytes >> 10)
    } else {
        format!("<={bytes}B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets() {
        assert_eq!(size_bucket(512), 0);
        assert_eq!(size_bucket(4096), 1);
        assert_eq!(size_bucket(12288), 8);
        assert_eq!(size_bucket(131072), 6);
        assert_eq!(size_bucket(262144), 7);
        assert_eq!(qd_bucket(5), 3);
        assert_eq!(qd_bucket(33), 7);
        assert_eq!(log2_bucket(512), 0);
        assert_eq!(log2_bucket(513), 1);
        assert_eq!(log2_bucket(4096), 3);
        assert_eq!(log2_label(3), "<=4K");
        assert_eq!(log2_bucket(u64::MAX), LOG2_BUCKETS - 1);
        assert_eq!(time_bucket(999), 0);
        assert_eq!(time_bucket(u64::MAX), 8);
        for (i, &(lo, hi)) in QD_RANGES.iter().enumerate() {
            assert_eq!(qd_bucket(u64::from(lo)), i);
            if hi != u32::MAX {
                assert_eq!(qd_bucket(u64::from(hi)), i);
            }
        }
    }
}
