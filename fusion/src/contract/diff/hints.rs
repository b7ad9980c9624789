//! Annotation changes: the effective value of each hint (MCP defaults applied) decides the class.

use crate::contract::Hints;
use crate::envelope::validation_error::DeltaClass;

use super::text::change;

/// One hint: its name, its declared and effective values, and the class and words of a change
/// to `true`, then to `false`.
type Rule = (
    &'static str,
    fn(&Hints) -> Option<bool>,
    fn(&Hints) -> bool,
    [(DeltaClass, Option<&'static str>); 2],
);

/// The hints. A hint without words of its own says `Hint {name} changed`.
const RULES: [Rule; 4] = [
    (
        "read-only",
        |h| h.read_only,
        Hints::is_read_only,
        [
            (DeltaClass::Safe, Some("Action became read-only")),
            (DeltaClass::Breaking, Some("Action is no longer read-only")),
        ],
    ),
    (
        "destructive",
        |h| h.destructive,
        Hints::is_destructive,
        [
            (DeltaClass::Breaking, Some("Action became destructive")),
            (DeltaClass::Safe, Some("Action is no longer destructive")),
        ],
    ),
    (
        "idempotent",
        |h| h.idempotent,
        Hints::is_idempotent,
        [(DeltaClass::Risky, None), (DeltaClass::Risky, None)],
    ),
    (
        "open-world",
        |h| h.open_world,
        Hints::is_open_world,
        [(DeltaClass::Risky, None), (DeltaClass::Risky, None)],
    ),
];

/// The annotation changes. Effective values (MCP defaults applied) decide the class.
pub(super) fn hints(push: &mut impl FnMut(DeltaClass, String), old: &Hints, new: &Hints) {
    for (name, raw, effective, [to_true, to_false]) in RULES {
        // Destructiveness is moot for a read-only action (MCP): say so instead of a default.
        let shown = |h: &Hints| match raw(h) {
            _ if name == "destructive" && h.is_read_only() => "false (read-only)".to_owned(),
            Some(v) => v.to_string(),
            None => format!("{} (MCP default)", effective(h)),
        };
        let (before, now) = (shown(old), shown(new));
        if effective(old) != effective(new) {
            let (class, words) = if effective(new) { to_true } else { to_false };
            let what = words.map_or_else(|| format!("Hint {name} changed"), str::to_owned);
            push(class, change(what, before, now));
        } else if raw(old) != raw(new) {
            let what = format!("Hint {name} restated with the same effect");
            push(DeltaClass::Safe, change(what, before, now));
        }
    }
}
