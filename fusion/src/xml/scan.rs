//! The scan that finds the strings needing no escaping (the common case) with a few vector
//! instructions per 16-byte block, and the next byte that needs a look in those that do.

use super::Context;

/// Zero exactly when byte `b` needs a closer look: in an attribute value when `ATTR`, else in
/// element text. That is every byte whose class is not 0 (or is 2 in text), plus tab, LF and CR,
/// which the slow path then copies as they are: excluding them would cost more per block than
/// the rare multi-line string costs. Written as a minimum of differences
/// (`b ^ c` is zero only for `b == c`; `b - 0x1F`, saturating, only for C0 controls) rather than
/// as a chain of comparisons, because a minimum over a 16-byte block is what the compiler turns
/// into a handful of vector instructions (`psubusb`, `pxor`, `pminub`), with no `unsafe` here.
#[inline(always)]
fn look_key<const ATTR: bool>(b: u8) -> u8 {
    // 0xEF: the UTF-8 lead byte of U+FFFE and U+FFFF.
    let text = b
        .saturating_sub(0x1F)
        .min(b ^ b'&')
        .min(b ^ b'<')
        .min(b ^ 0xEF);
    if ATTR {
        text.min(b ^ b'>').min(b ^ b'"').min(b ^ b'\'')
    } else {
        text
    }
}

/// Folds a 16-byte block into `keys`, the running per-lane minimum of [`look_key`]. No early
/// exit and no branch: the strings of an envelope are short, and a straight line of vector
/// instructions costs less than testing after every block.
#[inline(always)]
fn fold_block<const ATTR: bool>(keys: &mut [u8; 16], block: &[u8; 16]) {
    for (key, &b) in keys.iter_mut().zip(block) {
        *key = (*key).min(look_key::<ATTR>(b));
    }
}

/// A byte that never needs a look, to pad short strings to a block.
const FILLER: u8 = b' ';

/// The bytes of a string shorter than 16 bytes, gathered into one block padded with
/// [`FILLER`]: the first and last eight bytes (overlapping) for 8 to 15 bytes, the first and
/// last four for 4 to 7, and the first, middle and last byte for 1 to 3. Each covers every
/// byte of the string, with a few fixed-size loads instead of a byte-by-byte loop. (Built as
/// integers: the compiler assembles those in registers, where copying into an array went
/// through memory byte by byte.)
#[inline(always)]
fn short_block(bytes: &[u8]) -> [u8; 16] {
    const FILL: u64 = u64::from_le_bytes([FILLER; 8]);
    let (low, high) = match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        (Some(first), Some(last)) => (u64::from_le_bytes(*first), u64::from_le_bytes(*last)),
        _ => {
            let low = match (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
                (Some(first), Some(last)) => {
                    u64::from(u32::from_le_bytes(*first))
                        | u64::from(u32::from_le_bytes(*last)) << 32
                }
                _ => match bytes {
                    [] => FILL,
                    [first, .., last] | [first @ last] => u64::from_le_bytes([
                        *first,
                        bytes[bytes.len() / 2],
                        *last,
                        FILLER,
                        FILLER,
                        FILLER,
                        FILLER,
                        FILLER,
                    ]),
                },
            };
            (low, FILL)
        }
    };
    (u128::from(low) | u128::from(high) << 64).to_le_bytes()
}

/// [`is_plain`] for one context. Inlined into each measuring site: out of line, the call and
/// reloading the constant vectors for every string cost more (measured) than the code it adds.
#[inline(always)]
pub(super) fn is_plain_in<const ATTR: bool>(bytes: &[u8]) -> bool {
    let mut keys = [u8::MAX; 16];
    match (bytes.first_chunk::<16>(), bytes.last_chunk::<16>()) {
        // 16 to 32 bytes (most envelope strings): the first and last block, overlapping.
        (Some(first), Some(last)) if bytes.len() <= 32 => {
            fold_block::<ATTR>(&mut keys, first);
            fold_block::<ATTR>(&mut keys, last);
        }
        // 33 to 48 bytes (a recovery sentence): a middle block too, with no loop to set up.
        (Some(first), Some(last)) if bytes.len() <= 48 => {
            let middle: &[u8; 16] = bytes[16..32].try_into().expect("16 bytes");
            fold_block::<ATTR>(&mut keys, first);
            fold_block::<ATTR>(&mut keys, middle);
            fold_block::<ATTR>(&mut keys, last);
        }
        // Whole blocks, then the last 16 bytes (overlapping the last whole block when the
        // length is not a multiple of 16).
        (Some(_), Some(last)) => {
            for block in bytes.chunks_exact(16) {
                let block: &[u8; 16] = block.try_into().expect("chunks of 16 bytes");
                fold_block::<ATTR>(&mut keys, block);
            }
            fold_block::<ATTR>(&mut keys, last);
        }
        _ => fold_block::<ATTR>(&mut keys, &short_block(bytes)),
    }
    !has_look(&keys)
}

/// Whether a block folded into `keys` (see [`fold_block`]) holds a byte that needs a look.
#[inline(always)]
fn has_look(keys: &[u8; 16]) -> bool {
    // `fold` rather than `contains`, which would call `memchr` on the 16 bytes.
    keys.iter().fold(false, |found, &key| found | (key == 0))
}

/// Whether every string of an envelope is plain, found in the walk that sums the strings'
/// lengths, before anything is written: each string's scan ([`is_plain`]) inlined there, and
/// the results combined without a branch.
pub(crate) struct Scan {
    all_plain: bool,
}

impl Scan {
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Scan { all_plain: true }
    }

    /// Checks `s`, to be written in `ctx`.
    #[inline(always)]
    pub(crate) fn add(&mut self, s: &str, ctx: Context) {
        self.all_plain &= is_plain(s.as_bytes(), ctx);
    }

    /// Whether no string added needs escaping.
    #[inline(always)]
    pub(crate) fn all_plain(&self) -> bool {
        self.all_plain
    }
}

/// Whether no byte of `bytes` needs a closer look in `ctx`: the common case, where the string
/// is copied as it is.
#[inline]
pub(super) fn is_plain(bytes: &[u8], ctx: Context) -> bool {
    match ctx {
        Context::Text => is_plain_in::<false>(bytes),
        Context::Attr => is_plain_in::<true>(bytes),
    }
}

/// The index of the first byte of `bytes` at or after `from` that needs a closer look (see
/// [`look_key`]), or `bytes.len()`: whole 16-byte blocks are skipped with the vector test of
/// [`is_plain`], the rest is looked at byte by byte. The slow paths below jump from one such
/// byte to the next, so a long line with one `<` costs a few block tests, not a loop over
/// every byte.
#[inline(always)]
pub(super) fn next_look<const ATTR: bool>(bytes: &[u8], mut from: usize) -> usize {
    while let Some(block) = bytes.get(from..).and_then(<[u8]>::first_chunk::<16>) {
        let mut keys = [u8::MAX; 16];
        fold_block::<ATTR>(&mut keys, block);
        if has_look(&keys) {
            break;
        }
        from += 16;
    }
    while from < bytes.len() && look_key::<ATTR>(bytes[from]) != 0 {
        from += 1;
    }
    from
}
