//! A content fingerprint for "nothing changed" checks.

use std::hash::Hasher;
use std::io::Read;
use std::path::Path;

/// A 128-bit fingerprint of every byte of a file or block device, read with plain buffered
/// `std` I/O (through the page cache).
///
/// Two SipHash streams (std's `DefaultHasher`, one of them seeded), plus the length. Not
/// cryptographic, and stable only within one build (std may change the algorithm): compare
/// values taken by the same test run, do not store them.
pub fn checksum(path: &Path) -> std::io::Result<u128> {
    let mut f = std::fs::File::open(path)?;
    let mut a = std::collections::hash_map::DefaultHasher::new();
    let mut b = std::collections::hash_map::DefaultHasher::new();
    b.write_u64(0x9e37_79b9_7f4a_7c15);
    let mut buf = vec![0u8; 1 << 20];
    let mut len: u64 = 0;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        a.write(&buf[..n]);
        b.write(&buf[..n]);
        len += n as u64;
    }
    a.write_u64(len);
    b.write_u64(len);
    Ok(((a.finish() as u128) << 64) | b.finish() as u128)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_content_same_sum_and_one_byte_matters() {
        let dir = tempfile::tempdir().unwrap();
        let (p, q) = (dir.path().join("p"), dir.path().join("q"));
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        std::fs::write(&q, &data).unwrap();
        assert_eq!(checksum(&p).unwrap(), checksum(&q).unwrap());
        let mut changed = data.clone();
        changed[2_500_000] ^= 1;
        std::fs::write(&q, &changed).unwrap();
        assert_ne!(checksum(&p).unwrap(), checksum(&q).unwrap());
        // Trailing zeroes count (the length is hashed).
        std::fs::write(&p, [0u8; 10]).unwrap();
        std::fs::write(&q, [0u8; 11]).unwrap();
        assert_ne!(checksum(&p).unwrap(), checksum(&q).unwrap());
        assert!(checksum(&dir.path().join("missing")).is_err());
    }
}
