//! Schema errors another error at the same path says better: a wrong type where an `enum` or
//! `const` lists the allowed values.

use std::collections::HashSet;
use std::hash::Hash;

/// For each error (its instance path and its keyword, as `jsonschema` names it), whether it is
/// worth a line. A value outside an `enum` (or `const`) of one type also fails the `type`
/// check: the enum's line lists the allowed values, so the type line would only repeat it less
/// helpfully. Linear: an array of a million items outside an enum gives a million errors of
/// each keyword.
pub(crate) fn worth_reporting<P: Eq + Hash>(errors: &[(P, &str)]) -> Vec<bool> {
    let listed: HashSet<&P> = errors
        .iter()
        .filter(|(_, keyword)| matches!(*keyword, "enum" | "const"))
        .map(|(path, _)| path)
        .collect();
    errors
        .iter()
        .map(|(path, keyword)| *keyword != "type" || !listed.contains(&path))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::hash::Hasher;

    use super::*;

    thread_local! {
        static COMPARISONS: Cell<usize> = const { Cell::new(0) };
    }

    /// An instance path that counts how often it is compared.
    #[derive(Debug, Eq)]
    struct Counted(usize);

    impl PartialEq for Counted {
        fn eq(&self, other: &Counted) -> bool {
            COMPARISONS.with(|c| c.set(c.get() + 1));
            self.0 == other.0
        }
    }

    impl Hash for Counted {
        fn hash<H: Hasher>(&self, state: &mut H) {
            self.0.hash(state);
        }
    }

    #[test]
    fn a_type_error_is_dropped_only_where_an_enum_lists_the_values() {
        let errors = [
            ("/a", "enum"),
            ("/a", "type"),
            ("/b", "type"),
            ("/b", "minimum"),
            ("/c", "type"),
            ("/c", "enum"),
            ("/c", "const"),
        ];
        assert_eq!(
            worth_reporting(&errors),
            [true, false, true, true, false, true, true]
        );
    }

    /// An array of 20,000 items outside an enum of strings gives an enum error and a type
    /// error per item: telling them apart takes a few comparisons per error, not one per pair
    /// (200 million).
    #[test]
    fn telling_the_type_errors_apart_compares_each_path_a_few_times_not_every_pair() {
        const ITEMS: usize = 20_000;
        let errors: Vec<(Counted, &str)> = (0..ITEMS)
            .flat_map(|i| [(Counted(i), "enum"), (Counted(i), "type")])
            .collect();
        COMPARISONS.with(|c| c.set(0));
        let reported = worth_reporting(&errors);
        let comparisons = COMPARISONS.with(Cell::get);
        assert_eq!(reported.iter().filter(|r| **r).count(), ITEMS);
        assert!(
            comparisons <= 4 * errors.len(),
            "{comparisons} comparisons for {} errors",
            errors.len()
        );
    }
}
