//! XML escaping for envelopes: the asymmetric text/attribute rules and the XML 1.0 character rule.
//!
//! SPEC section 1, rules 4 and 5. Element text escapes only `&` and `<` (so `Must be > 0` and
//! `"id"` stay readable for the model); attribute values escape all five special characters.
//! Characters XML 1.0 forbids (C0 controls other than tab, LF and CR; U+FFFE; U+FFFF) become
//! U+FFFD. Nothing else changes. Every function here has an exact-length twin so renderers can
//! size their buffer once.

/// Where a string is written, which decides what gets escaped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Context {
    /// Element content: `&` and `<`.
    Text,
    /// Attribute value in double quotes: `&`, `<`, `>`, `"` and `'`.
    Attr,
}

/// Byte classes: 0 = copied as-is, 1 = special in text and attributes, 2 = special in attributes
/// only, 3 = a forbidden C0 control, 4 = a lead byte of U+FFFE/U+FFFF (needs a closer look).
const CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        if b != b'\t' as usize && b != b'\n' as usize && b != b'\r' as usize {
            table[b] = 3;
        }
        b += 1;
    }
    table[b'&' as usize] = 1;
    table[b'<' as usize] = 1;
    table[b'>' as usize] = 2;
    table[b'"' as usize] = 2;
    table[b'\'' as usize] = 2;
    table[0xEF] = 4;
    table
};

const REPLACEMENT: &str = "\u{FFFD}";

/// The replacement for the special byte at `bytes[i]`, and how many input bytes it covers.
/// `None` when the byte is copied as-is in this context.
#[inline]
fn replacement(bytes: &[u8], i: usize, ctx: Context) -> Option<(&'static str, usize)> {
    match CLASS[bytes[i] as usize] {
        0 => None,
        1 | 2 if ctx == Context::Text && bytes[i] != b'&' && bytes[i] != b'<' => None,
        1 | 2 => Some((
            match bytes[i] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&apos;",
            },
            1,
        )),
        3 => Some((REPLACEMENT, 1)),
        // U+FFFE is EF BF BE and U+FFFF is EF BF BF in UTF-8.
        _ => match bytes.get(i + 1..i + 3) {
            Some([0xBF, 0xBE | 0xBF]) => Some((REPLACEMENT, 3)),
            _ => None,
        },
    }
}

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
fn is_plain_in<const ATTR: bool>(bytes: &[u8]) -> bool {
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
fn is_plain(bytes: &[u8], ctx: Context) -> bool {
    match ctx {
        Context::Text => is_plain_in::<false>(bytes),
        Context::Attr => is_plain_in::<true>(bytes),
    }
}

/// The length in bytes of `s` once escaped for `ctx`: its own length when it is plain (a
/// vector scan), else counted byte by byte.
#[inline(always)]
pub(crate) fn measured_len(s: &str, ctx: Context) -> usize {
    if is_plain(s.as_bytes(), ctx) {
        s.len()
    } else {
        escaped_len(s, ctx)
    }
}

/// Writes an envelope into a buffer sized exactly beforehand: with [`measure`] (or with the
/// strings' own lengths when a [`Scan`] found them all plain). It never grows the buffer, and
/// when every string is plain it copies them with no second scan.
///
/// The writer owns the buffer while it writes ([`Writer::finish`] gives it back), and no call
/// it makes out of line takes the buffer's address: the buffer goes to those calls by value and
/// comes back. So the compiler keeps its pointer, length and capacity in registers across the
/// appends, where through a `&mut String` it reloaded the length from memory after every copy.
/// For the same reason every append checks the room itself and grows out of line: the growth
/// inside `push_str` would take the buffer's address, and after the check it is dead code.
pub(crate) struct Writer {
    out: String,
    /// Whether strings are scanned before they are copied: `false` when every string is plain.
    look: bool,
}

/// A string length for sizing an envelope exactly before writing it: [`measured_len`], and
/// `*all_plain` cleared when a string is not plain.
pub(crate) fn measure(all_plain: &mut bool) -> impl FnMut(&str, Context) -> usize + '_ {
    |s, ctx| {
        if is_plain(s.as_bytes(), ctx) {
            s.len()
        } else {
            *all_plain = false;
            escaped_len(s, ctx)
        }
    }
}

impl Writer {
    /// A writer appending to `out`, which has room for the whole envelope; `all_plain` when
    /// no string needs escaping.
    #[inline(always)]
    pub(crate) fn presized(out: String, all_plain: bool) -> Self {
        Writer {
            out,
            look: !all_plain,
        }
    }

    /// The buffer, with the envelope appended.
    #[inline(always)]
    pub(crate) fn finish(self) -> String {
        self.out
    }

    /// Appends text that needs no escaping (fixed envelope text, digits, class names), copied
    /// as it is.
    #[inline(always)]
    pub(crate) fn literal(&mut self, s: &str) {
        if self.out.capacity().wrapping_sub(self.out.len()) < s.len() {
            self.out = push_growing(std::mem::take(&mut self.out), s);
        } else {
            // Room checked above: the growth inside `push_str` is dead code.
            self.out.push_str(s);
        }
    }

    /// Appends an ASCII byte (a digit).
    #[inline(always)]
    pub(crate) fn ascii(&mut self, b: u8) {
        debug_assert!(b.is_ascii());
        if self.out.capacity() == self.out.len() {
            self.out = push_growing(
                std::mem::take(&mut self.out),
                char::from(b).encode_utf8(&mut [0; 4]),
            );
        } else {
            // Room checked above, as in `literal`.
            self.out.push(char::from(b));
        }
    }

    /// Appends `s` escaped as element text.
    #[inline(always)]
    pub(crate) fn text(&mut self, s: &str) {
        self.push(s, Context::Text);
    }

    /// Appends `s` escaped as an attribute value.
    #[inline(always)]
    pub(crate) fn attr(&mut self, s: &str) {
        self.push(s, Context::Attr);
    }

    /// Appends `s` escaped for `ctx`: copied as it is when plain (inlined scan), else through
    /// the out-of-line slow path.
    #[inline(always)]
    fn push(&mut self, s: &str, ctx: Context) {
        if !self.look || is_plain(s.as_bytes(), ctx) {
            self.literal(s);
        } else {
            self.out = push_looked(std::mem::take(&mut self.out), s, ctx);
        }
    }
}

/// Appends `s` to `out`, growing it: the cold side of [`Writer::literal`] and
/// [`Writer::ascii`].
#[cold]
#[inline(never)]
fn push_growing(mut out: String, s: &str) -> String {
    out.push_str(s);
    out
}

/// A string that is not plain, escaped byte by byte (see [`push_escaped`]).
#[inline(never)]
fn push_looked(mut out: String, s: &str, ctx: Context) -> String {
    push_escaped(&mut out, s, ctx);
    out
}

/// The index of the first byte of `bytes` at or after `from` that needs a closer look (see
/// [`look_key`]), or `bytes.len()`: whole 16-byte blocks are skipped with the vector test of
/// [`is_plain`], the rest is looked at byte by byte. The slow paths below jump from one such
/// byte to the next, so a long line with one `<` costs a few block tests, not a loop over
/// every byte.
#[inline(always)]
fn next_look<const ATTR: bool>(bytes: &[u8], mut from: usize) -> usize {
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

/// The length in bytes of `s` once escaped for `ctx`: [`measured_len`] takes the fast path for
/// plain strings before calling this, so it stays out of line.
#[inline(never)]
pub(crate) fn escaped_len(s: &str, ctx: Context) -> usize {
    match ctx {
        Context::Text => escaped_len_in::<false>(s.as_bytes(), ctx),
        Context::Attr => escaped_len_in::<true>(s.as_bytes(), ctx),
    }
}

fn escaped_len_in<const ATTR: bool>(bytes: &[u8], ctx: Context) -> usize {
    let mut len = bytes.len();
    let mut i = next_look::<ATTR>(bytes, 0);
    while i < bytes.len() {
        match replacement(bytes, i, ctx) {
            Some((rep, covered)) => {
                len = len + rep.len() - covered;
                i += covered;
            }
            None => i += 1,
        }
        i = next_look::<ATTR>(bytes, i);
    }
    len
}

/// Appends `s` to `out`, escaped for `ctx`. Runs of ordinary bytes are copied in one piece.
/// [`Writer`] copies plain strings without calling this, so it stays out of line.
#[inline(never)]
pub(crate) fn push_escaped(out: &mut String, s: &str, ctx: Context) {
    match ctx {
        Context::Text => push_escaped_in::<false>(out, s, ctx),
        Context::Attr => push_escaped_in::<true>(out, s, ctx),
    }
}

fn push_escaped_in<const ATTR: bool>(out: &mut String, s: &str, ctx: Context) {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = next_look::<ATTR>(bytes, 0);
    while i < bytes.len() {
        match replacement(bytes, i, ctx) {
            Some((rep, covered)) => {
                // `i` is at a char boundary: special bytes are ASCII or UTF-8 lead bytes.
                out.push_str(&s[start..i]);
                out.push_str(rep);
                i += covered;
                start = i;
            }
            None => i += 1,
        }
        i = next_look::<ATTR>(bytes, i);
    }
    out.push_str(&s[start..]);
}

/// `s` escaped as element text, as a new string.
#[cfg(test)]
pub(crate) fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(escaped_len(s, Context::Text));
    push_escaped(&mut out, s, Context::Text);
    out
}

/// `s` escaped as an attribute value, as a new string.
#[cfg(test)]
pub(crate) fn escape_attr(s: &str) -> String {
    let mut out = String::with_capacity(escaped_len(s, Context::Attr));
    push_escaped(&mut out, s, Context::Attr);
    out
}

/// `s` escaped for `ctx` the slow, obvious way, character by character straight from SPEC
/// section 1: the reference the fast paths are tested against.
#[cfg(test)]
pub(crate) fn reference_escape(s: &str, ctx: Context) -> String {
    let attr = ctx == Context::Attr;
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' if attr => out.push_str("&gt;"),
            '"' if attr => out.push_str("&quot;"),
            '\'' if attr => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            '\u{0}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Whether byte `b` needs a closer look in `ctx`, spelled out byte by byte: what the vector
    /// scan must compute (all C0 controls, special characters, the 0xEF lead byte).
    fn reference_needs_look(b: u8, ctx: Context) -> bool {
        b < 0x20
            || b == b'&'
            || b == b'<'
            || b == 0xEF
            || (ctx == Context::Attr && (b == b'>' || b == b'"' || b == b'\''))
    }

    fn reference_is_plain(s: &str, ctx: Context) -> bool {
        !s.bytes().any(|b| reference_needs_look(b, ctx))
    }

    /// Characters that exercise every branch: all five specials, C0 controls (forbidden and
    /// allowed), U+FFFE and U+FFFF, other characters whose UTF-8 starts with 0xEF, the filler
    /// byte used for padding, and multi-byte characters of every width.
    fn tricky_char() -> impl Strategy<Value = char> {
        prop_oneof![
            prop::sample::select(vec![
                '&', '<', '>', '"', '\'', '\u{0}', '\u{1}', '\u{1F}', '\t', '\n', '\r', ' ',
                '\u{7F}', '\u{FFFE}', '\u{FFFF}', '\u{FFFD}', '\u{F000}', '\u{EFFF}', 'é', '—',
                '🚫',
            ]),
            any::<char>(),
            prop::char::range('a', 'z'),
        ]
    }

    /// Strings of 0 to 64 characters, mostly plain, with tricky characters anywhere.
    fn tricky_string() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::collection::vec(tricky_char(), 0..=64),
            // Mostly plain: a single tricky character at any position of a longer run.
            (0usize..=64, tricky_char(), 0usize..=64).prop_map(|(before, c, after)| {
                vec!['a'; before]
                    .into_iter()
                    .chain([c])
                    .chain(vec!['z'; after])
                    .collect()
            }),
        ]
        .prop_map(|chars| chars.into_iter().collect())
    }

    #[test]
    fn text_escapes_only_ampersand_and_less_than() {
        assert_eq!(
            escape_text(r#"a < b && c > d "q" 's'"#),
            r#"a &lt; b &amp;&amp; c > d "q" 's'"#
        );
    }

    #[test]
    fn attributes_escape_all_five() {
        assert_eq!(escape_attr(r#"A"B<C>&'"#), "A&quot;B&lt;C&gt;&amp;&apos;");
    }

    #[test]
    fn existing_entities_are_escaped_again() {
        assert_eq!(escape_text("&amp;"), "&amp;amp;");
    }

    #[test]
    fn forbidden_characters_become_replacement_char() {
        assert_eq!(
            escape_text("a\u{1}b\u{0}c\td\u{b}e\u{FFFF}z"),
            "a\u{FFFD}b\u{FFFD}c\td\u{FFFD}e\u{FFFD}z"
        );
        assert_eq!(escape_attr("\u{FFFE}\r\n"), "\u{FFFD}\r\n");
        // Other characters whose UTF-8 starts with 0xEF are left alone.
        assert_eq!(
            escape_text("\u{FFFD}\u{F000}\u{FFFC}"),
            "\u{FFFD}\u{F000}\u{FFFC}"
        );
    }

    #[test]
    fn special_bytes_are_found_at_every_position_of_a_word() {
        // Each special byte at each offset around the eight-byte words.
        for special in ["&", "<", "\u{1}", "\u{FFFF}", ">", "\"", "'"] {
            for offset in 0..20 {
                let s = format!("{}{special}{}", "a".repeat(offset), "b".repeat(9));
                let naive_text: String = s
                    .chars()
                    .map(|c| match c {
                        '&' => "&amp;".to_owned(),
                        '<' => "&lt;".to_owned(),
                        '\u{1}' | '\u{FFFF}' => "\u{FFFD}".to_owned(),
                        c => c.to_string(),
                    })
                    .collect();
                assert_eq!(escape_text(&s), naive_text, "{s:?}");
                assert_eq!(escaped_len(&s, Context::Text), naive_text.len());
                let attr = escape_attr(&s);
                assert!(
                    !attr.contains(['>', '"', '\'']) || special == "\u{FFFF}" || special == "\u{1}",
                    "{attr:?}"
                );
                assert_eq!(escaped_len(&s, Context::Attr), attr.len());
            }
        }
    }

    #[test]
    fn escaped_len_matches_output_length() {
        for s in [
            "",
            "plain",
            "<&>\"'",
            "\u{0}\u{FFFE}\u{FFFF}ok",
            "é—请🚫\u{EFFF}",
        ] {
            assert_eq!(escaped_len(s, Context::Text), escape_text(s).len(), "{s:?}");
            assert_eq!(escaped_len(s, Context::Attr), escape_attr(s).len(), "{s:?}");
        }
    }

    #[test]
    fn the_scan_finds_a_special_byte_at_every_position_of_every_length() {
        // Every length up to four blocks, so each of the short cases (1 to 3, 4 to 7, 8 to 15
        // bytes), the two-block case and the loop with its overlapping last block is covered,
        // with the special byte at every position, including both sides of each block
        // boundary.
        let specials: [(u8, bool); 11] = [
            (b'\t', true),
            (b'\n', true),
            (b'\r', true),
            (b'&', true),
            (b'<', true),
            (0x00, true),
            (0x1F, true),
            (0xEF, true),
            (b'>', false),
            (b'"', false),
            (b'\'', false),
        ];
        for len in 0..=64 {
            let plain = vec![b'a'; len];
            assert!(
                is_plain_in::<false>(&plain) && is_plain_in::<true>(&plain),
                "{len}"
            );
            for at in 0..len {
                for (special, in_text) in specials {
                    let mut bytes = plain.clone();
                    bytes[at] = special;
                    assert_eq!(
                        is_plain_in::<false>(&bytes),
                        !in_text,
                        "{len} {at} {special:#x}"
                    );
                    assert!(!is_plain_in::<true>(&bytes), "{len} {at} {special:#x}");
                }
                // Bytes that need no look in either context stay plain wherever they are.
                for ordinary in [b' ', b'%', b'=', b'?', 0x7F, 0xEE, 0xF0, 0xFF] {
                    let mut bytes = plain.clone();
                    bytes[at] = ordinary;
                    assert!(is_plain_in::<false>(&bytes), "{len} {at} {ordinary:#x}");
                    assert!(is_plain_in::<true>(&bytes), "{len} {at} {ordinary:#x}");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn the_scan_agrees_with_a_byte_by_byte_check(s in tricky_string()) {
            for ctx in [Context::Text, Context::Attr] {
                prop_assert_eq!(is_plain(s.as_bytes(), ctx), reference_is_plain(&s, ctx), "{:?}", ctx);
            }
        }

        #[test]
        fn measuring_and_writing_agree_with_the_reference_escaper(s in tricky_string()) {
            for ctx in [Context::Text, Context::Attr] {
                let want = reference_escape(&s, ctx);
                prop_assert_eq!(measured_len(&s, ctx), want.len());
                // Measured exactly first, then written without growing.
                let mut all_plain = true;
                let len = measure(&mut all_plain)(&s, ctx);
                prop_assert_eq!(len, want.len());
                prop_assert_eq!(all_plain, reference_is_plain(&s, ctx));
                // With a prefix already there, as `write_xml` into a reused buffer.
                let mut out = String::with_capacity(2 + len);
                out.push_str("<>");
                let mut writer = Writer::presized(out, all_plain);
                writer.push(&s, ctx);
                let out = writer.finish();
                prop_assert_eq!(&out[2..], &want);
                prop_assert_eq!(out.capacity(), out.len());
            }
        }

        #[test]
        fn one_scan_over_several_strings_agrees_with_each_checked_alone(
            strings in prop::collection::vec((tricky_string(), any::<bool>()), 0..=5),
        ) {
            let mut scan = Scan::new();
            for (s, attr) in &strings {
                scan.add(s, if *attr { Context::Attr } else { Context::Text });
            }
            let want = strings.iter().all(|(s, attr)| {
                reference_is_plain(s, if *attr { Context::Attr } else { Context::Text })
            });
            prop_assert_eq!(scan.all_plain(), want);
        }
    }
}
