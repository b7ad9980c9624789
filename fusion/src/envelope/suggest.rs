//! "Did you mean": the known name closest to a misspelt one, for unknown actions, tools and
//! fields alike ([`did_you_mean`]), and the compile-time rule for a misspelt action method
//! ([`typo_distance`]).

/// The name in `known` closest to `name`, when it is close enough to be a typo:
///
/// 1. the same name up to case, `_` and `-` (`customerId` for `customer_id`, `REFUND` for
///    `refund`);
/// 2. one edit away once folded that way, both names at least two characters long (a letter
///    added, dropped, changed or two swapped: `zp` for `zip`);
/// 3. a Jaro-Winkler similarity of at least 0.8 between the folded names (the threshold
///    darling uses for its "did you mean");
/// 4. else a known name that contains `name` (folded, not empty): `inv` for `list_invoices`;
/// 5. else a known name of at least two characters that is one of the words of `name` (split
///    at `_`, `-` and lower-to-upper case changes, folded): `id` for `invoce_id` or
///    `invoiceId`. This is what catches a hallucinated field next to an action of one or two
///    fields, whose short names are too far from anything by similarity.
///
/// Earlier rules win over later ones; within a rule the higher similarity wins, and ties go to
/// the first in `known`.
pub(crate) fn did_you_mean<'k>(
    name: &str,
    known: impl IntoIterator<Item = &'k str>,
) -> Option<&'k str> {
    let folded = fold(name);
    let words = words(name);
    let mut best: Option<(&'k str, f64)> = None;
    for candidate in known {
        let other = fold(candidate);
        let similarity = strsim::jaro_winkler(&folded, &other);
        // Scores of the rules above: exact 3, one edit 2, similar 0.8..=1, contained below 0.8.
        let score = if other == folded {
            3.0
        } else if folded.len().min(other.len()) >= 2
            && strsim::damerau_levenshtein(&folded, &other) <= 1
        {
            2.0
        } else if similarity >= 0.8 {
            similarity
        } else if !folded.is_empty() && other.contains(&folded) {
            // Below 0.8 here: after every similar name, ordered by similarity among themselves.
            similarity
        } else if other.len() >= 2 && words.contains(&other) {
            // Below 0 here: after every name containing the one sent.
            similarity - 1.0
        } else {
            continue;
        };
        if best.is_none_or(|(_, b)| score > b) {
            best = Some((candidate, score));
        }
    }
    best.map(|(candidate, _)| candidate)
}

/// The words of `name`, folded: split at `_`, `-` and where a lowercase letter or digit is
/// followed by an uppercase one (`invoiceId` → `invoice`, `id`).
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        let boundary = c == '_' || c == '-' || (c.is_uppercase() && previous_lower);
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        if c != '_' && c != '-' {
            word.extend(c.to_lowercase());
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// `name` lowercased, without `_` and `-`.
fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// How far `wanted` is from the action method `method` when it is close enough to be a typo:
/// at most two edits, or at most a third of the longer name. Generated code compares method
/// names at compile time (`#[derive(ToolErrors)]` reads `actions(Billing::list_invoces)`,
/// `#[fusion::tool]` knows the methods; they meet only in a constant), so this is a `const
/// fn`, which [`did_you_mean`]'s `strsim` similarities cannot be.
pub(crate) const fn typo_distance(wanted: &str, method: &str) -> Option<usize> {
    let distance = edit_distance(wanted.as_bytes(), method.as_bytes());
    let longest = if wanted.len() > method.len() {
        wanted.len()
    } else {
        method.len()
    };
    if distance <= 2 || distance * 3 <= longest {
        Some(distance)
    } else {
        None
    }
}

/// Whether two byte strings are equal, in a `const fn`.
pub(crate) const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Levenshtein distance over bytes, for names of at most 64 bytes (longer: `usize::MAX`).
const fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    const MAX: usize = 64;
    if a.len() > MAX || b.len() > MAX {
        return usize::MAX;
    }
    let mut row = [0usize; MAX + 1];
    let mut j = 0;
    while j <= b.len() {
        row[j] = j;
        j += 1;
    }
    let mut i = 1;
    while i <= a.len() {
        let mut diagonal = row[0];
        row[0] = i;
        let mut j = 1;
        while j <= b.len() {
            let above = row[j];
            let cost = if a[i - 1] == b[j - 1] { 0 } else { 1 };
            let mut best = diagonal + cost;
            if above + 1 < best {
                best = above + 1;
            }
            if row[j - 1] + 1 < best {
                best = row[j - 1] + 1;
            }
            row[j] = best;
            diagonal = above;
            j += 1;
        }
        i += 1;
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_follows_its_rules_in_order() {
        let cases: &[(&str, &[&str], Option<&str>)] = &[
            // Case, `_` and `-` are folded.
            (
                "customerId",
                &["amount", "currency", "customer_id"],
                Some("customer_id"),
            ),
            (
                "CUSTOMER-ID",
                &["amount", "currency", "customer_id"],
                Some("customer_id"),
            ),
            ("REFUND", &["list_invoices", "refund"], Some("refund")),
            // One edit is a typo; one-letter names are never one edit from anything.
            ("amout", &["amount", "currency"], Some("amount")),
            ("zp", &["city", "zip"], Some("zip")),
            ("zpi", &["city", "zip"], Some("zip")),
            ("x", &["y"], None),
            // Similar names are typos.
            (
                "list_invoce",
                &["list_invoices", "refund"],
                Some("list_invoices"),
            ),
            ("xyzzy", &["list_invoices", "refund"], None),
            ("zzz", &["amount", "currency"], None),
            // A known name containing the name is suggested after every typo.
            ("inv", &["refund", "list_invoices"], Some("list_invoices")),
            ("inv", &["list_invoices", "inb"], Some("inb")),
            ("", &["refund"], None),
            // A known name that is a word of the name (a one-field action: the hallucinated
            // field ends in the real one) comes after all others; not a word: nothing.
            ("invoce_id", &["id"], Some("id")),
            ("invoiceId", &["id"], Some("id")),
            ("customer-email", &["email", "id"], Some("email")),
            ("invoce_id", &["id", "invoice_id"], Some("invoice_id")),
            ("extra", &["id"], None),
            ("a_b", &["b"], None),
            // The closest wins and ties go to the first.
            ("refund", &["refunds", "refund"], Some("refund")),
            ("ab", &["abc", "abd"], Some("abc")),
            ("anything", &[], None),
        ];
        for &(name, known, expected) in cases {
            let found = did_you_mean(name, known.iter().copied());
            assert_eq!(found, expected, "{name:?} among {known:?}");
        }
    }

    #[test]
    fn typos_of_action_methods_are_found_at_compile_time() {
        const CLOSE: Option<usize> = typo_distance("list_invoices", "list_invoce");
        assert_eq!(CLOSE, Some(2));
        assert_eq!(typo_distance("refund", "list_invoices"), None);
        assert_eq!(typo_distance("a", "b"), Some(1));
        assert!(bytes_eq(b"refund", b"refund") && !bytes_eq(b"refund", b"refunds"));
    }
}
