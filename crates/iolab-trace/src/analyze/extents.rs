//! Per-extent state for footprint and skew: an open-addressing table whose slots hold key
//! and value in one 64-byte cache line.
//!
//! Random requests over a large footprint make every lookup a cache miss; a general hash
//! map touches two lines per lookup (control bytes, then the bucket), this table one.

/// Blocks per extent tracked by the bitmap (1 MiB / 4 KiB).
pub(crate) const BLOCKS: usize = 256;

/// State of one extent.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
pub(crate) struct Slot {
    /// `device << 64 | (extent + 1)`; 0 marks an empty slot.
    key: u128,
    /// Data requests whose first byte is in this extent.
    pub(crate) ios: u64,
    /// Touched 4 KiB blocks.
    pub(crate) blocks: [u64; BLOCKS / 64],
}

/// Extent table keyed by (device, extent index).
pub(crate) struct ExtentTable {
    slots: Vec<Slot>,
    len: usize,
}

impl Default for ExtentTable {
    fn default() -> Self {
        ExtentTable {
            slots: vec![Slot::default(); 1024],
            len: 0,
        }
    }
}

fn key_of(device: u32, extent: u64) -> u128 {
    (u128::from(device) << 64) | (u128::from(extent) + 1)
}

fn hash(key: u128) -> u64 {
    let x = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
    // Fibonacci hashing; the caller takes the high bits.
    x.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl ExtentTable {
    /// The slot of (device, extent), created empty if absent.
    #[cfg(test)]
    pub(crate) fn get_or_insert(&mut self, device: u32, extent: u64) -> &mut Slot {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let key = key_of(device, extent);
        let i = self.find(key);
        if self.slots[i].key == 0 {
            self.slots[i].key = key;
            self.len += 1;
        }
        &mut self.slots[i]
    }

    /// Merges a batch of updates `(device, extent, ios, blocks)`.
    ///
    /// The home slots of the whole batch are read first: those loads are independent, so
    /// the processor overlaps their cache misses instead of waiting for each in turn (a
    /// safe-code prefetch); the updates that follow then find their lines in cache.
    pub(crate) fn merge_batch(&mut self, batch: &[(u32, u64, Slot)]) {
        while (self.len + batch.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let shift = 64 - self.slots.len().trailing_zeros();
        let mut sink = 0u64;
        for (dev, ext, _) in batch {
            let i = (hash(key_of(*dev, *ext)) >> shift) as usize & mask;
            sink ^= self.slots[i].key as u64;
        }
        std::hint::black_box(sink);
        for (dev, ext, u) in batch {
            let key = key_of(*dev, *ext);
            let i = self.find(key);
            let s = &mut self.slots[i];
            if s.key == 0 {
                s.key = key;
                self.len += 1;
            }
            s.ios += u.ios;
            for (w, b) in s.blocks.iter_mut().zip(u.blocks) {
                *w |= b;
            }
        }
    }

    /// Index of the slot holding `key`, or of the empty slot where it belongs.
    fn find(&self, key: u128) -> usize {
        let mask = self.slots.len() - 1;
        let shift = 64 - self.slots.len().trailing_zeros();
        let mut i = (hash(key) >> shift) as usize & mask;
        loop {
            let k = self.slots[i].key;
            if k == key || k == 0 {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let bigger = vec![Slot::default(); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        for s in old.into_iter().filter(|s| s.key != 0) {
            let i = self.find(s.key);
            self.slots[i] = s;
        }
    }

    /// Every occupied slot with its device.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, &Slot)> {
        self.slots
            .iter()
            .filter(|s| s.key != 0)
            .map(|s| ((s.key >> 64) as u32, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_finds_and_grows() {
        let mut t = ExtentTable::default();
        for e in 0..5000u64 {
            t.get_or_insert((e % 3) as u32, e).ios += 1;
        }
        for e in 0..5000u64 {
            t.get_or_insert((e % 3) as u32, e).ios += 1;
        }
        assert_eq!(t.iter().count(), 5000);
        assert!(t.iter().all(|(_, s)| s.ios == 2));
        t.get_or_insert(u32::MAX, u64::MAX - 1).ios = 7;
        assert!(t.iter().any(|(d, s)| d == u32::MAX && s.ios == 7));
    }
}
