//! Field changes: removed, added, retyped, constrained, described; a field's children are
//! reported with it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::contract::FieldContract;
use crate::envelope::validation_error::DeltaClass;

use super::text::{change, descriptions};

/// The field changes; returns whether there was any, and whether any is more than cosmetic.
pub(super) fn fields(
    push: &mut impl FnMut(DeltaClass, String),
    old: &BTreeMap<String, FieldContract>,
    new: &BTreeMap<String, FieldContract>,
) -> (bool, bool) {
    let mut any = false;
    let mut substantive = false;
    let mut emit = |class: DeltaClass, text: String| {
        any = true;
        substantive |= class != DeltaClass::Cosmetic;
        push(class, text);
    };
    for (path, before) in old {
        let Some(after) = new.get(path) else {
            // A removed field's children are reported with it.
            if !is_child_of_any(path, old.keys().filter(|p| !new.contains_key(*p))) {
                let what = format!("Field '{path}' removed; it is now rejected as unknown");
                emit(
                    DeltaClass::Breaking,
                    change(what, field_summary(before), "absent"),
                );
            }
            continue;
        };
        field(&mut emit, path, before, after);
    }
    for (path, after) in new.iter().filter(|(p, _)| !old.contains_key(*p)) {
        if is_child_of_any(path, new.keys().filter(|p| !old.contains_key(*p))) {
            continue;
        }
        let (class, kind) = match after.required {
            true => (DeltaClass::Breaking, "Required"),
            false => (DeltaClass::Safe, "Optional"),
        };
        let what = format!("{kind} field '{path}' added");
        emit(class, change(what, "absent", field_summary(after)));
    }
    (any, substantive)
}

/// Whether `path` is nested in one of `parents` (`a.b` in `a`, `a[].b` in `a`).
fn is_child_of_any<'a>(path: &str, parents: impl Iterator<Item = &'a String>) -> bool {
    parents
        .filter(|p| p.as_str() != path)
        .any(|p| path.starts_with(&format!("{p}.")) || path.starts_with(&format!("{p}[].")))
}

fn field(
    emit: &mut impl FnMut(DeltaClass, String),
    path: &str,
    old: &FieldContract,
    new: &FieldContract,
) {
    if old.description != new.description {
        emit(
            DeltaClass::Cosmetic,
            format!(
                "Description of field '{path}' changed {}.",
                descriptions(&old.description, &new.description)
            ),
        );
    }
    if old.required != new.required {
        let (class, before, now) = match new.required {
            true => (DeltaClass::Breaking, "optional", "required"),
            false => (DeltaClass::Safe, "required", "optional"),
        };
        let what = format!("Field '{path}' became {now}");
        emit(class, change(what, before, now));
    }
    // `T` becoming `Option<T>` (schemars adds `null` to the types) is one change: the field
    // became optional, SAFE as the classification table says, not also a RISKY widening.
    let only_null_added = old.required
        && !new.required
        && !old.types.is_empty()
        && !old.types.iter().any(|t| t == "null")
        && new
            .types
            .iter()
            .filter(|t| *t != "null")
            .eq(old.types.iter())
        && new.types.len() == old.types.len() + 1;
    if old.types != new.types && !only_null_added {
        let (class, verb) = match accepts_all(&new.types, &old.types) {
            true => (DeltaClass::Risky, "widened"),
            false => (DeltaClass::Breaking, "changed"),
        };
        let (before, now) = (types_text(&old.types), types_text(&new.types));
        emit(
            class,
            change(format!("Type of field '{path}' {verb}"), before, now),
        );
    }
    match (&old.enum_values, &new.enum_values) {
        (Some(a), Some(b)) => {
            let removed: Vec<&String> = a.iter().filter(|v| !b.contains(v)).collect();
            let added: Vec<&String> = b.iter().filter(|v| !a.contains(v)).collect();
            for (class, verb, list) in [
                (DeltaClass::Breaking, "no longer accepts", removed),
                (DeltaClass::Safe, "also accepts", added),
            ] {
                if !list.is_empty() {
                    let what = format!("Field '{path}' {verb} {}", values(&list));
                    emit(class, change(what, values(a), values(b)));
                }
            }
        }
        (None, None) => {}
        (a, b) => {
            let show =
                |list: &Option<Vec<String>>| list.as_deref().map_or("any value".into(), values);
            let verb = if a.is_none() {
                "is now"
            } else {
                "is no longer"
            };
            let what = format!("Field '{path}' {verb} restricted to listed values");
            emit(DeltaClass::Risky, change(what, show(a), show(b)));
        }
    }
    let keys: BTreeSet<&String> = old
        .constraints
        .keys()
        .chain(new.constraints.keys())
        .collect();
    for key in keys {
        let (a, b) = (old.constraints.get(key), new.constraints.get(key));
        if a == b {
            continue;
        }
        let verb = match (a, b) {
            (None, Some(_)) => "added",
            (Some(_), None) => "removed",
            (Some(a), Some(b)) => match tightened(key, a, b) {
                Some(true) => "tightened",
                Some(false) => "loosened",
                None => "changed",
            },
            (None, None) => continue,
        };
        let show = |v: Option<&Value>| v.map_or_else(|| "none".to_owned(), Value::to_string);
        let what = format!("Constraint {key} of field '{path}' {verb}");
        emit(DeltaClass::Risky, change(what, show(a), show(b)));
    }
}

/// Whether a changed numeric bound is tighter (`Some(true)`), looser (`Some(false)`), or not
/// comparable (`None`: patterns, formats, non-numbers).
fn tightened(key: &str, old: &Value, new: &Value) -> Option<bool> {
    let (a, b) = (old.as_f64()?, new.as_f64()?);
    match key {
        "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties" => Some(b > a),
        "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties" => Some(b < a),
        _ => None,
    }
}

/// Whether a field of types `new` accepts every value a field of types `old` accepted (an
/// empty list accepts anything; `number` covers `integer`).
fn accepts_all(new: &[String], old: &[String]) -> bool {
    if new.is_empty() {
        return true;
    }
    if old.is_empty() {
        return false;
    }
    old.iter()
        .all(|t| new.contains(t) || (t == "integer" && new.iter().any(|n| n == "number")))
}

fn types_text(types: &[String]) -> String {
    if types.is_empty() {
        "any type".to_owned()
    } else {
        types.join(" or ")
    }
}

fn field_summary(field: &FieldContract) -> String {
    let mut out = types_text(&field.types);
    if let Some(allowed) = &field.enum_values {
        out.push_str(" in ");
        out.push_str(&values(allowed));
    }
    out
}

/// Enum values as validation lines show them: strings in single quotes (`'EUR'`), other
/// values as JSON.
fn values<S: AsRef<str>>(values: &[S]) -> String {
    values
        .iter()
        .map(|v| match serde_json::from_str::<Value>(v.as_ref()) {
            Ok(Value::String(s)) => format!("'{s}'"),
            _ => v.as_ref().to_owned(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
