//! Annotation changes: the effective value of each hint (MCP defaults applied) decides the class.

use crate::contract::Hints;
use crate::envelope::validation_error::DeltaClass;

use super::text::change;

/// The annotation changes. Effective values (MCP defaults applied) decide the class.
pub(super) fn hints(push: &mut impl FnMut(DeltaClass, String), old: &Hints, new: &Hints) {
    let show = |raw: Option<bool>, effective: bool| match raw {
        Some(v) => v.to_string(),
        None => format!("{effective} (MCP default)"),
    };
    type Rule = (
        &'static str,
        fn(&Hints) -> Option<bool>,
        fn(&Hints) -> bool,
        DeltaClass, // becoming true
        DeltaClass, // becoming false
    );
    let rules: [Rule; 4] = [
        (
            "read-only",
            |h| h.read_only,
            Hints::is_read_only,
            DeltaClass::Safe,
            DeltaClass::Breaking,
        ),
        (
            "destructive",
            |h| h.destructive,
            Hints::is_destructive,
            DeltaClass::Breaking,
            DeltaClass::Safe,
        ),
        (
            "idempotent",
            |h| h.idempotent,
            Hints::is_idempotent,
            DeltaClass::Risky,
            DeltaClass::Risky,
        ),
        (
            "open-world",
            |h| h.open_world,
            Hints::is_open_world,
            DeltaClass::Risky,
            DeltaClass::Risky,
        ),
    ];
    for (name, raw, effective, to_true, to_false) in rules {
        let (a, b) = (effective(old), effective(new));
        let (ra, rb) = (raw(old), raw(new));
        // Destructiveness is moot for a read-only action (MCP): say so instead of a default.
        let shown = |h: &Hints, raw: Option<bool>, effective: bool| {
            if name == "destructive" && h.is_read_only() {
                "false (read-only)".to_owned()
            } else {
                show(raw, effective)
            }
        };
        let before = shown(old, ra, a);
        let now = shown(new, rb, b);
        if a != b {
            let (class, verb) = match (name, b) {
                ("read-only", true) => (to_true, "Action became read-only".to_owned()),
                ("read-only", false) => (to_false, "Action is no longer read-only".to_owned()),
                ("destructive", true) => (to_true, "Action became destructive".to_owned()),
                ("destructive", false) => (to_false, "Action is no longer destructive".to_owned()),
                (_, true) => (to_true, format!("Hint {name} changed")),
                (_, false) => (to_false, format!("Hint {name} changed")),
            };
            push(class, change(verb, before, now));
        } else if ra != rb {
            let what = format!("Hint {name} restated with the same effect");
            push(DeltaClass::Safe, change(what, before, now));
        }
    }
}
