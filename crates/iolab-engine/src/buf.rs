//! Page-aligned I/O buffers, as O_DIRECT needs, in one contiguous region (which io_uring
//! registers once as a single fixed buffer — cheaper in the kernel than one per slot).

/// Alignment of every slot: a page, which satisfies any logical block size up to 4 KiB.
pub const ALIGN: usize = 4096;

/// A transparent huge page on x86-64 and most arm64 kernels.
pub const HUGE_PAGE: usize = 2 << 20;

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
    /// first aligned byte. The `Vec` is never resized, so the region never moves. Panics where
    /// memory runs out; engines preparing a job's buffers use [`try_new`](Self::try_new).
    pub fn new(slots: usize, slot_bytes: usize) -> Self {
        Self::try_new(slots, slot_bytes).expect("I/O buffers")
    }

    /// Like [`new`](Self::new), but a region the machine cannot give (a huge block size times a
    /// deep queue) is an `OutOfMemory` error saying what was asked, not an abort.
    pub fn try_new(slots: usize, slot_bytes: usize) -> std::io::Result<Self> {
        Self::aligned(slots, slot_bytes, ALIGN, false)
    }

    /// Like [`new`](Self::new), on transparent huge pages where the kernel grants them: the
    /// region is rounded up to whole 2 MiB pages. For blocking engines with large blocks: each
    /// O_DIRECT I/O pins its buffer's pages and releases them after, page by page on 4 KiB
    /// pages (a fifth of the CPU of a 128 KiB read from zram), once on a huge page.
    /// Fails as [`try_new`](Self::try_new) does.
    pub fn on_huge_pages(slots: usize, slot_bytes: usize) -> std::io::Result<Self> {
        Self::aligned(slots, slot_bytes, HUGE_PAGE, true)
    }

    /// `slots` page-rounded slots starting at a multiple of `align`, with room to round the
    /// region up to a multiple of `align`; `huge` advises huge pages for the region before its
    /// pages are first touched (zeroing them), so that the kernel backs them so at once.
    fn aligned(slots: usize, slot_bytes: usize, align: usize, huge: bool) -> std::io::Result<Self> {
        let slot_bytes = slot_bytes.div_ceil(ALIGN).max(1) * ALIGN;
        let too_much = |detail: String| {
            std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!(
                    "cannot allocate the I/O buffers: {slots} in flight × {slot_bytes} bytes \
                     per block is {detail}; lower the block size or the queue depth"
                ),
            )
        };
        let len = slots
            .checked_mul(slot_bytes)
            .and_then(|n| n.checked_next_multiple_of(align))
            .and_then(|n| n.checked_add(align))
            .ok_or_else(|| too_much("more than this machine can address".into()))?;
        // Reserved first, so a failure is an error to report rather than an abort.
        let mut storage: Vec<u8> = Vec::new();
        storage
            .try_reserve_exact(len)
            .map_err(|_| too_much(format!("{len} bytes, more than the memory available")))?;
        let addr = storage.as_ptr() as usize;
        let start = (align - addr % align) % align;
        if huge {
            let region = (slots * slot_bytes).next_multiple_of(HUGE_PAGE);
            crate::sys::advise_huge_pages(&mut storage.spare_capacity_mut()[start..start + region]);
        }
        storage.resize(len, 0);
        Ok(SlotBuffers {
            storage,
            start,
            slot_bytes,
            slots,
        })
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

    #[test]
    fn huge_page_slots_start_on_a_huge_page() {
        let mut b = SlotBuffers::on_huge_pages(2, 128 << 10).unwrap();
        assert_eq!(b.slot_bytes(), 128 << 10);
        assert_eq!(b.slot_mut(0).as_ptr() as usize % HUGE_PAGE, 0);
        b.slot_mut(1).fill(7);
        assert!(b.slot(1).iter().all(|&x| x == 7) && b.slot(0).iter().all(|&x| x == 0));
    }

    #[test]
    fn a_region_too_large_is_an_error_not_an_abort() {
        // 64 MiB blocks × 2^40 in flight: more than any machine's memory (and address space).
        for slots in [1usize << 40, usize::MAX / 4096] {
            let e = SlotBuffers::try_new(slots, 64 << 20).unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::OutOfMemory);
            assert!(e.to_string().contains("lower the block size"), "{e}");
        }
        // 2^35 bytes (32 GiB) per slot × 4096: 128 TiB, over the address space of a process.
        let e = SlotBuffers::try_new(4096, 1 << 35).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::OutOfMemory, "{e}");
    }
}
