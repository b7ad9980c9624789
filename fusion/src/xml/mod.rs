//! XML escaping for envelopes: the asymmetric text/attribute rules and the XML 1.0 character rule.
//!
//! Element text escapes only `&` and `<` (so `Must be > 0` and `"id"` stay readable for the
//! model); attribute values escape all five special characters. Characters XML 1.0 forbids
//! (its section 2.2, `Char`: C0 controls other than tab, LF and CR; U+FFFE; U+FFFF) become
//! U+FFFD. Nothing else changes. Every function here has an exact-length twin so renderers can
//! size their buffer once.

mod scan;

use scan::{is_plain, next_look};

pub(crate) use scan::Scan;

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

/// `s` escaped for `ctx` the slow, obvious way, character by character from the rules above:
/// the reference the fast paths are tested against.
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
mod tests;
