//! Cutting a job's bytes into its threads' shares, in whole granules.

/// Greatest common divisor (0 with anything gives the other).
pub(super) fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Part `index` of `parts` of `total` bytes cut in whole `granule`s, the parts adding up to
/// every whole granule of it (the first ones one granule larger where they do not divide).
pub fn byte_share(total: u64, granule: u64, parts: u32, index: u32) -> u64 {
    let (units, parts) = (total / granule, parts.max(1) as u64);
    (units / parts + u64::from((index as u64) < units % parts)) * granule
}

/// Where part `index` of [`byte_share`]'s parts begins: the sum of the parts before it.
pub fn byte_share_start(total: u64, granule: u64, parts: u32, index: u32) -> u64 {
    let (units, parts, i) = (total / granule, parts.max(1) as u64, index as u64);
    (i * (units / parts) + i.min(units % parts)) * granule
}
