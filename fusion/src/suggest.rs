//! "Did you mean": the known name closest to a misspelt one, for unknown actions, tools and
//! fields alike.

/// The name in `known` closest to `name`, when it is close enough to be a typo:
///
/// 1. the same name up to case, `_` and `-` (`customerId` for `customer_id`, `REFUND` for
///    `refund`);
/// 2. one edit away once folded that way, both names at least two characters long (a letter
///    added, dropped, changed or two swapped: `zp` for `zip`);
/// 3. a Jaro-Winkler similarity of at least 0.8 between the folded names (the threshold
///    darling uses for its "did you mean");
/// 4. else a known name that contains `name` (folded, not empty): `inv` for `list_invoices`.
///
/// Earlier rules win over later ones; within a rule the higher similarity wins, and ties go to
/// the first in `known`.
pub(crate) fn did_you_mean<'k>(
    name: &str,
    known: impl IntoIterator<Item = &'k str>,
) -> Option<&'k str> {
    let folded = fold(name);
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
        } else {
            continue;
        };
        if best.is_none_or(|(_, b)| score > b) {
            best = Some((candidate, score));
        }
    }
    best.map(|(candidate, _)| candidate)
}

/// `name` lowercased, without `_` and `-`.
fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_underscores_and_dashes_are_folded() {
        let known = ["amount", "currency", "customer_id"];
        assert_eq!(did_you_mean("customerId", known), Some("customer_id"));
        assert_eq!(did_you_mean("CUSTOMER-ID", known), Some("customer_id"));
        assert_eq!(
            did_you_mean("REFUND", ["list_invoices", "refund"]),
            Some("refund")
        );
    }

    #[test]
    fn one_edit_is_a_typo() {
        assert_eq!(
            did_you_mean("amout", ["amount", "currency"]),
            Some("amount")
        );
        assert_eq!(did_you_mean("zp", ["city", "zip"]), Some("zip"));
        assert_eq!(did_you_mean("zpi", ["city", "zip"]), Some("zip"));
        // One-letter names are never one edit from anything.
        assert_eq!(did_you_mean("x", ["y"]), None);
    }

    #[test]
    fn similar_names_are_typos() {
        let known = ["list_invoices", "refund"];
        assert_eq!(did_you_mean("list_invoce", known), Some("list_invoices"));
        assert_eq!(did_you_mean("xyzzy", known), None);
        assert_eq!(did_you_mean("zzz", ["amount", "currency"]), None);
    }

    #[test]
    fn a_known_name_containing_the_name_is_suggested_last() {
        assert_eq!(
            did_you_mean("inv", ["refund", "list_invoices"]),
            Some("list_invoices")
        );
        // A typo wins over a name that merely contains the one sent.
        assert_eq!(did_you_mean("inv", ["list_invoices", "inb"]), Some("inb"));
        assert_eq!(did_you_mean("", ["refund"]), None);
    }

    #[test]
    fn the_closest_wins_and_ties_go_to_the_first() {
        assert_eq!(
            did_you_mean("refund", ["refunds", "refund"]),
            Some("refund")
        );
        assert_eq!(did_you_mean("ab", ["abc", "abd"]), Some("abc"));
        assert_eq!(did_you_mean("anything", []), None);
    }
}
