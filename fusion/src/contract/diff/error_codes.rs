//! Error-code changes of an action: a code added is RISKY, a code removed SAFE, changed flags
//! RISKY; and the scopes it requires, which decide whether a call is refused: a scope added is
//! BREAKING, a scope removed SAFE.

use std::collections::BTreeMap;

use crate::contract::ErrorEntry;
use crate::envelope::validation_error::DeltaClass;

use super::text::change;

/// The error-code changes: added RISKY, removed SAFE, flags changed RISKY.
pub(super) fn errors(
    push: &mut impl FnMut(DeltaClass, String),
    old: &[ErrorEntry],
    new: &[ErrorEntry],
) {
    let by_code = |entries: &[ErrorEntry]| -> BTreeMap<String, Vec<ErrorEntry>> {
        let mut map: BTreeMap<String, Vec<ErrorEntry>> = BTreeMap::new();
        for e in entries {
            map.entry(e.code.clone()).or_default().push(e.clone());
        }
        map
    };
    let (old, new) = (by_code(old), by_code(new));
    let show = |entries: &[ErrorEntry]| {
        let flags = |e: &ErrorEntry| {
            let retry = if e.retryable {
                "retryable"
            } else {
                "not retryable"
            };
            format!("{} {}, {retry}", e.severity, e.category)
        };
        entries.iter().map(flags).collect::<Vec<_>>().join(" | ")
    };
    for (code, entries) in &old {
        match new.get(code) {
            None => push(
                DeltaClass::Safe,
                change(
                    format!("Error code {code} removed"),
                    show(entries),
                    "absent",
                ),
            ),
            Some(now) if now != entries => {
                // The one flag client code branches on, named when it is all that changed.
                let what = match (entries.as_slice(), now.as_slice()) {
                    // Same code, severity and category, so the entries differ in `retryable`.
                    ([before], [after])
                        if (&before.severity, &before.category)
                            == (&after.severity, &after.category) =>
                    {
                        if after.retryable {
                            "became retryable"
                        } else {
                            "is no longer retryable"
                        }
                    }
                    _ => "changed",
                };
                let what = format!("Error code {code} {what}");
                push(DeltaClass::Risky, change(what, show(entries), show(now)))
            }
            Some(_) => {}
        }
    }
    for (code, entries) in new.iter().filter(|(c, _)| !old.contains_key(*c)) {
        let what = format!("Error code {code} added");
        push(DeltaClass::Risky, change(what, "absent", show(entries)));
    }
}

/// The required-scope changes: a scope added is BREAKING (a caller whose credentials worked
/// before, without it, is now refused `FORBIDDEN`, like a new required field refuses calls that
/// were valid), a scope removed SAFE (every call that passed still passes).
pub(super) fn scopes(push: &mut impl FnMut(DeltaClass, String), old: &[String], new: &[String]) {
    let show = |list: &[String]| {
        if list.is_empty() {
            "none".to_owned()
        } else {
            list.iter()
                .map(|s| format!("'{s}'"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    for scope in new.iter().filter(|s| !old.contains(s)) {
        let what = format!("Scope '{scope}' now required");
        push(DeltaClass::Breaking, change(what, show(old), show(new)));
    }
    for scope in old.iter().filter(|s| !new.contains(s)) {
        let what = format!("Scope '{scope}' no longer required");
        push(DeltaClass::Safe, change(what, show(old), show(new)));
    }
}
