//! Cache hints the host gives the driver and the model: starting to load a cache line before
//! it is needed hides a miss behind other work (a verifier's claim word, a model's mapping
//! entry over a large span). The instruction needs `unsafe`, which lives in the engine's `sys`;
//! this crate only carries the engine's function to where the hint is given, and without one
//! ([`CacheHint::NONE`]) nothing is hinted and nothing else changes.

/// A function that starts loading the cache line at an address. Giving a hint never changes
/// what a program computes, only how soon memory is at hand.
#[derive(Clone, Copy)]
pub struct CacheHint {
    /// Must accept any address (it may not dereference it): a prefetch never faults.
    load: fn(*const u8),
}

impl CacheHint {
    /// No hints.
    pub const NONE: CacheHint = CacheHint { load: ignore };

    /// Hints with `load`, which starts loading the line at any address it is given and never
    /// reads through it (the prefetch instruction).
    pub const fn new(load: fn(*const u8)) -> Self {
        CacheHint { load }
    }

    /// Starts loading `item`'s cache line.
    #[inline]
    pub fn prefetch<T>(self, item: &T) {
        (self.load)((item as *const T).cast::<u8>());
    }
}

impl Default for CacheHint {
    fn default() -> Self {
        CacheHint::NONE
    }
}

impl std::fmt::Debug for CacheHint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CacheHint")
    }
}

fn ignore(_: *const u8) {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        static SEEN: Cell<usize> = const { Cell::new(0) };
    }

    fn record(addr: *const u8) {
        SEEN.with(|s| s.set(addr as usize));
    }

    #[test]
    fn a_hint_passes_the_items_address_and_none_does_nothing() {
        let item = [7u64; 4];
        CacheHint::NONE.prefetch(&item[2]);
        assert_eq!(SEEN.with(Cell::get), 0);
        CacheHint::new(record).prefetch(&item[2]);
        assert_eq!(SEEN.with(Cell::get), &item[2] as *const u64 as usize);
        assert_eq!(item, [7; 4]);
    }
}
