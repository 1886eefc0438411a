//! Page-aligned I/O buffers, as O_DIRECT needs, in one contiguous region (which io_uring
//! registers once as a single fixed buffer — cheaper in the kernel than one per slot).

/// Alignment of every slot: a page, which satisfies any logical block size up to 4 KiB.
pub const ALIGN: usize = 4096;

/// `slots` buffers of `slot_bytes` each (rounded up to [`ALIGN`]), contiguous and aligned.
#[derive(Debug, Default)]
pub struct SlotBuffers {
    storage: Vec<u8>,
    start: usize,
    slot_bytes: usize,
    slots: usize,
}

impl SlotBuffers {
    /// Allocates the region (zeroed). Safe code: over-allocate by one page and start at the
    /// first aligned byte. The `Vec` is never resized, so the region never moves.
    pub fn new(slots: usize, slot_bytes: usize) -> Self {
        let slot_bytes = slot_bytes.div_ceil(ALIGN).max(1) * ALIGN;
        let storage = vec![0u8; slots * slot_bytes + ALIGN];
        let addr = storage.as_ptr() as usize;
        let start = (ALIGN - addr % ALIGN) % ALIGN;
        SlotBuffers {
            storage,
            start,
            slot_bytes,
            slots,
        }
    }

    /// Bytes per slot.
    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    /// The whole region.
    pub fn region_mut(&mut self) -> &mut [u8] {
        let len = self.slots * self.slot_bytes;
        &mut self.storage[self.start..self.start + len]
    }

    /// Slot `tag`.
    #[inline]
    pub fn slot_mut(&mut self, tag: u32) -> &mut [u8] {
        let at = self.start + tag as usize * self.slot_bytes;
        &mut self.storage[at..at + self.slot_bytes]
    }

    /// Slot `tag`, read-only.
    #[inline]
    pub fn slot(&self, tag: u32) -> &[u8] {
        let at = self.start + tag as usize * self.slot_bytes;
        &self.storage[at..at + self.slot_bytes]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let mut b = SlotBuffers::new(3, 5000);
        assert_eq!(b.slot_bytes(), 8192);
        for t in 0..3 {
            let s = b.slot_mut(t);
            assert_eq!(s.as_ptr() as usize % ALIGN, 0);
            s.fill(t as u8 + 1);
        }
        assert!(b.slot(1).iter().all(|&x| x == 2));
    }
}
