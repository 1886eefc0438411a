//! trimcheck's verdict from what the device returns where the block was.

use serde::{Deserialize, Serialize};

/// trimcheck's three answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// The block reads back as all 0x00 or all 0xFF: it was discarded.
    Working,
    /// The block is still there (or not trimmed yet).
    NotWorking,
    /// Something else is there: the drive returns non-deterministic data after TRIM, or the
    /// space was reused.
    Indeterminate,
}

impl Verdict {
    /// `WORKING`, `NOT WORKING`, `INDETERMINATE`.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Working => "WORKING",
            Verdict::NotWorking => "NOT WORKING",
            Verdict::Indeterminate => "INDETERMINATE",
        }
    }
}

/// What the read-back looked like.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Readback {
    /// Byte for byte the block written.
    Original,
    /// All zero bytes.
    Zeroes,
    /// All 0xFF bytes.
    Ones,
    /// Anything else.
    Other,
}

/// Compares the bytes read with the block written.
pub(crate) fn classify(read: &[u8], written: &[u8]) -> (Readback, Verdict) {
    if read == written {
        (Readback::Original, Verdict::NotWorking)
    } else if read.iter().all(|&b| b == 0) {
        (Readback::Zeroes, Verdict::Working)
    } else if read.iter().all(|&b| b == 0xff) {
        (Readback::Ones, Verdict::Working)
    } else {
        (Readback::Other, Verdict::Indeterminate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_answers() {
        let block = [7u8, 1, 2, 3];
        assert_eq!(classify(&block, &block).1, Verdict::NotWorking);
        assert_eq!(
            classify(&[0; 4], &block),
            (Readback::Zeroes, Verdict::Working)
        );
        assert_eq!(
            classify(&[0xff; 4], &block),
            (Readback::Ones, Verdict::Working)
        );
        assert_eq!(classify(&[7, 1, 2, 4], &block).1, Verdict::Indeterminate);
    }
}
