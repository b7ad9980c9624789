//! Contract deltas: every change between two contracts, classified BREAKING, RISKY, SAFE or
//! COSMETIC (SPEC section 6).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use crate::validation_error::DeltaClass;

use super::model::{ActionContract, Contract, ErrorEntry, FieldContract, Hints, ToolContract};

/// One change between two contracts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delta {
    /// Its classification.
    pub class: DeltaClass,
    /// The tool it concerns (for a renamed tool, the old name).
    pub tool: String,
    /// The action it concerns, `None` for a change to the tool as a whole.
    pub action: Option<String>,
    /// One sentence with the before and after values:
    /// `Field 'currency' became required (before: optional; now: required).`
    pub text: String,
}

/// Every change from one contract to another, highest class first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContractDiff {
    deltas: Vec<Delta>,
    /// The tools whose deltas are named `tool.action` (multi-action tools, in either
    /// contract).
    discriminated: BTreeSet<String>,
}

impl ContractDiff {
    /// The deltas, sorted by class (BREAKING first), then tool, action and text.
    pub fn deltas(&self) -> &[Delta] {
        &self.deltas
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.deltas.is_empty()
    }

    /// The highest class among the deltas, `None` when nothing changed.
    pub fn highest(&self) -> Option<DeltaClass> {
        self.deltas.first().map(|d| d.class)
    }

    /// Whether any delta is BREAKING.
    pub fn has_breaking(&self) -> bool {
        self.highest() == Some(DeltaClass::Breaking)
    }

    /// The scope of `delta` as models name it: `tool.action` for an action of a multi-action
    /// tool, `tool` for a single-function tool's action or a change to the tool as a whole.
    pub fn scope(&self, delta: &Delta) -> String {
        match &delta.action {
            Some(action) if self.discriminated.contains(&delta.tool) => {
                format!("{}.{action}", delta.tool)
            }
            _ => delta.tool.clone(),
        }
    }

    /// The human-readable report: one line per delta, `CLASS scope: text`, highest class
    /// first, each line ending in `\n`; the empty string when nothing changed. Control
    /// characters inside a name or value are written escaped (`\n`), so a line is a delta.
    ///
    /// ```text
    /// BREAKING billing.charge: Field 'currency' became required (before: optional; now: required).
    /// SAFE billing.refund: Optional field 'reason' added (before: absent; now: string).
    /// ```
    pub fn report(&self) -> String {
        let mut out = String::new();
        for delta in &self.deltas {
            out.push_str(delta.class.as_str());
            out.push(' ');
            push_one_line(&mut out, &self.scope(delta));
            out.push_str(": ");
            push_one_line(&mut out, &delta.text);
            out.push('\n');
        }
        out
    }
}

/// Appends `text` with its control characters (a newline in a field name or an enum value)
/// written as Rust escapes (`\n`), so that one delta stays one report line.
fn push_one_line(out: &mut String, text: &str) {
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
}

impl fmt::Display for ContractDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report())
    }
}

/// Every change from `before` (the known-good contract, e.g. a lockfile's) to `after` (the
/// current one), classified.
///
/// A tool (or action) removed while another with an identical entry appears is reported once,
/// as renamed (BREAKING). Classification rules are listed on [`DeltaClass`]; the effective
/// value of an annotation is compared (MCP defaults applied), and a hint that only becomes
/// explicit is SAFE.
pub fn diff(before: &Contract, after: &Contract) -> ContractDiff {
    let mut out = Differ::default();
    let removed: Vec<&String> = before
        .tools
        .keys()
        .filter(|name| !after.tools.contains_key(*name))
        .collect();
    let mut added: Vec<&String> = after
        .tools
        .keys()
        .filter(|name| !before.tools.contains_key(*name))
        .collect();
    for name in removed {
        let old = &before.tools[name];
        let renamed = added
            .iter()
            .position(|new| after.tools[*new] == *old && !old.actions.is_empty());
        match renamed {
            Some(i) => {
                let new = added.remove(i);
                out.push(
                    DeltaClass::Breaking,
                    name,
                    None,
                    format!("Tool renamed (before: '{name}'; now: '{new}')."),
                );
            }
            None => out.push(
                DeltaClass::Breaking,
                name,
                None,
                format!("Tool removed (before: '{name}'; now: absent)."),
            ),
        }
    }
    for name in added {
        out.push(
            DeltaClass::Safe,
            name,
            None,
            format!("Tool added (before: absent; now: '{name}')."),
        );
    }
    for (name, old) in &before.tools {
        if let Some(new) = after.tools.get(name) {
            out.tool(name, old, new);
        }
    }
    let discriminated = before
        .tools
        .iter()
        .chain(&after.tools)
        .filter(|(_, t)| t.discriminator.is_some())
        .map(|(name, _)| name.clone())
        .collect();
    let mut deltas = out.deltas;
    deltas.sort_by(|a, b| {
        (a.class, &a.tool, &a.action, &a.text).cmp(&(b.class, &b.tool, &b.action, &b.text))
    });
    ContractDiff {
        deltas,
        discriminated,
    }
}

#[derive(Default)]
struct Differ {
    deltas: Vec<Delta>,
}

impl Differ {
    fn push(&mut self, class: DeltaClass, tool: &str, action: Option<&str>, text: String) {
        self.deltas.push(Delta {
            class,
            tool: tool.to_owned(),
            action: action.map(str::to_owned),
            text,
        });
    }

    fn tool(&mut self, name: &str, old: &ToolContract, new: &ToolContract) {
        if old.description != new.description {
            self.push(
                DeltaClass::Cosmetic,
                name,
                None,
                format!(
                    "Tool description changed {}.",
                    descriptions(&old.description, &new.description)
                ),
            );
        }
        if old.discriminator != new.discriminator {
            let show = |d: &Option<String>| match d {
                Some(d) => format!("'{d}'"),
                None => "none (a single-function tool)".to_owned(),
            };
            self.push(
                DeltaClass::Breaking,
                name,
                None,
                format!(
                    "Discriminator changed (before: {}; now: {}).",
                    show(&old.discriminator),
                    show(&new.discriminator)
                ),
            );
        }
        let removed: Vec<&String> = old
            .actions
            .keys()
            .filter(|a| !new.actions.contains_key(*a))
            .collect();
        let mut added: Vec<&String> = new
            .actions
            .keys()
            .filter(|a| !old.actions.contains_key(*a))
            .collect();
        for action in removed {
            let entry = &old.actions[action];
            match added.iter().position(|a| new.actions[*a] == *entry) {
                Some(i) => {
                    let now = added.remove(i);
                    self.push(
                        DeltaClass::Breaking,
                        name,
                        Some(action),
                        format!("Action renamed (before: '{action}'; now: '{now}')."),
                    );
                }
                None => self.push(
                    DeltaClass::Breaking,
                    name,
                    Some(action),
                    format!("Action removed (before: '{action}'; now: absent)."),
                ),
            }
        }
        for action in added {
            self.push(
                DeltaClass::Safe,
                name,
                Some(action),
                format!("Action added (before: absent; now: '{action}')."),
            );
        }
        for (action, before) in &old.actions {
            if let Some(after) = new.actions.get(action) {
                self.action(name, action, before, after);
            }
        }
    }

    fn action(&mut self, tool: &str, action: &str, old: &ActionContract, new: &ActionContract) {
        let mut push = |class, text: String| self.push(class, tool, Some(action), text);
        if old.description != new.description {
            push(
                DeltaClass::Cosmetic,
                format!(
                    "Action description changed {}.",
                    descriptions(&old.description, &new.description)
                ),
            );
        }
        hints(&mut push, &old.annotations, &new.annotations);
        errors(&mut push, &old.errors, &new.errors);
        match (&old.output_schema_digest, &new.output_schema_digest) {
            (None, Some(_)) => push(
                DeltaClass::Safe,
                "Output schema declared (before: none; now: declared).".to_owned(),
            ),
            (Some(_), None) => push(
                DeltaClass::Risky,
                "Output schema removed (before: declared; now: none).".to_owned(),
            ),
            (Some(a), Some(b)) if a != b => push(
                DeltaClass::Risky,
                format!(
                    "Output schema changed (before: {}; now: {}).",
                    short(a),
                    short(b)
                ),
            ),
            _ => {}
        }
        let (any, substantive) = fields(&mut push, &old.fields, &new.fields);
        if old.required != new.required && !substantive {
            // `fields` reports every change of a top-level field's `required`; kept for a
            // hand-built contract whose lists disagree.
            push(
                DeltaClass::Risky,
                format!(
                    "Required fields changed (before: {}; now: {}).",
                    list(&old.required),
                    list(&new.required)
                ),
            );
        }
        if old.input_structure_digest != new.input_structure_digest && !substantive {
            push(
                DeltaClass::Risky,
                format!(
                    "Input schema changed beyond its fields (before: {}; now: {}).",
                    short(&old.input_structure_digest),
                    short(&new.input_structure_digest)
                ),
            );
        } else if old.input_schema_digest != new.input_schema_digest && !any {
            push(
                DeltaClass::Cosmetic,
                format!(
                    "Input schema text changed (descriptions or titles) (before: {}; now: {}).",
                    short(&old.input_schema_digest),
                    short(&new.input_schema_digest)
                ),
            );
        }
    }
}

/// The annotation changes. Effective values (MCP defaults applied) decide the class.
fn hints(push: &mut impl FnMut(DeltaClass, String), old: &Hints, new: &Hints) {
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
            push(class, format!("{verb} (before: {before}; now: {now})."));
        } else if ra != rb {
            push(
                DeltaClass::Safe,
                format!(
                    "Hint {name} restated with the same effect (before: {before}; now: {now})."
                ),
            );
        }
    }
}

/// The error-code changes: added RISKY, removed SAFE, flags changed RISKY.
fn errors(push: &mut impl FnMut(DeltaClass, String), old: &[ErrorEntry], new: &[ErrorEntry]) {
    let by_code = |entries: &[ErrorEntry]| -> BTreeMap<String, Vec<ErrorEntry>> {
        let mut map: BTreeMap<String, Vec<ErrorEntry>> = BTreeMap::new();
        for e in entries {
            map.entry(e.code.clone()).or_default().push(e.clone());
        }
        map
    };
    let (old, new) = (by_code(old), by_code(new));
    let show = |entries: &[ErrorEntry]| {
        entries
            .iter()
            .map(|e| {
                format!(
                    "{} {}, {}",
                    e.severity,
                    e.category,
                    if e.retryable {
                        "retryable"
                    } else {
                        "not retryable"
                    }
                )
            })
            .collect::<Vec<_>>()
            .join(" | ")
    };
    for (code, entries) in &old {
        match new.get(code) {
            None => push(
                DeltaClass::Safe,
                format!(
                    "Error code {code} removed (before: {}; now: absent).",
                    show(entries)
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
                push(
                    DeltaClass::Risky,
                    format!(
                        "Error code {code} {what} (before: {}; now: {}).",
                        show(entries),
                        show(now)
                    ),
                )
            }
            Some(_) => {}
        }
    }
    for (code, entries) in new.iter().filter(|(c, _)| !old.contains_key(*c)) {
        push(
            DeltaClass::Risky,
            format!(
                "Error code {code} added (before: absent; now: {}).",
                show(entries)
            ),
        );
    }
}

/// The field changes; returns whether there was any, and whether any is more than cosmetic.
fn fields(
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
                emit(
                    DeltaClass::Breaking,
                    format!(
                        "Field '{path}' removed; it is now rejected as unknown (before: {}; now: absent).",
                        field_summary(before)
                    ),
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
        if after.required {
            emit(
                DeltaClass::Breaking,
                format!(
                    "Required field '{path}' added (before: absent; now: {}).",
                    field_summary(after)
                ),
            );
        } else {
            emit(
                DeltaClass::Safe,
                format!(
                    "Optional field '{path}' added (before: absent; now: {}).",
                    field_summary(after)
                ),
            );
        }
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
    match (old.required, new.required) {
        (false, true) => emit(
            DeltaClass::Breaking,
            format!("Field '{path}' became required (before: optional; now: required)."),
        ),
        (true, false) => emit(
            DeltaClass::Safe,
            format!("Field '{path}' became optional (before: required; now: optional)."),
        ),
        _ => {}
    }
    // `T` becoming `Option<T>` (schemars adds `null` to the types) is one change: the field
    // became optional, SAFE as the issue's table says, not also a RISKY widening.
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
        let widened = accepts_all(&new.types, &old.types);
        emit(
            if widened {
                DeltaClass::Risky
            } else {
                DeltaClass::Breaking
            },
            format!(
                "Type of field '{path}' {} (before: {}; now: {}).",
                if widened { "widened" } else { "changed" },
                types_text(&old.types),
                types_text(&new.types)
            ),
        );
    }
    match (&old.enum_values, &new.enum_values) {
        (Some(a), Some(b)) => {
            let removed: Vec<&String> = a.iter().filter(|v| !b.contains(v)).collect();
            let added: Vec<&String> = b.iter().filter(|v| !a.contains(v)).collect();
            if !removed.is_empty() {
                emit(
                    DeltaClass::Breaking,
                    format!(
                        "Field '{path}' no longer accepts {} (before: {}; now: {}).",
                        values(&removed),
                        values(a),
                        values(b)
                    ),
                );
            }
            if !added.is_empty() {
                emit(
                    DeltaClass::Safe,
                    format!(
                        "Field '{path}' also accepts {} (before: {}; now: {}).",
                        values(&added),
                        values(a),
                        values(b)
                    ),
                );
            }
        }
        (None, Some(b)) => emit(
            DeltaClass::Risky,
            format!(
                "Field '{path}' is now restricted to listed values (before: any value; now: {}).",
                values(b)
            ),
        ),
        (Some(a), None) => emit(
            DeltaClass::Risky,
            format!(
                "Field '{path}' is no longer restricted to listed values (before: {}; now: any value).",
                values(a)
            ),
        ),
        (None, None) => {}
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
        emit(
            DeltaClass::Risky,
            format!(
                "Constraint {key} of field '{path}' {verb} (before: {}; now: {}).",
                show(a),
                show(b)
            ),
        );
    }
}

/// Whether a changed numeric bound is tighter (`Some(true)`), looser (`Some(false)`), or not
/// comparable (`None`: patterns, formats, non-numbers).
fn tightened(key: &str, old: &Value, new: &Value) -> Option<bool> {
    let (a, b) = (old.as_f64()?, new.as_f64()?);
    let lower = matches!(
        key,
        "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties"
    );
    let upper = matches!(
        key,
        "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties"
    );
    if lower {
        Some(b > a)
    } else if upper {
        Some(b < a)
    } else {
        None
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

fn list<S: AsRef<str>>(values: &[S]) -> String {
    values
        .iter()
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `(before: …; now: …)` for a changed description: each in single quotes on one line
/// (whitespace runs as one space), `none` when empty. A description longer than 60 characters
/// is cut to a window (`...` marks a cut) that starts early enough to show where the two
/// differ, so two long descriptions never read the same; a change of whitespace only says so.
fn descriptions(old: &str, new: &str) -> String {
    const WIDTH: usize = 60;
    const LEAD: usize = 20;
    let one_line = |text: &str| -> Vec<char> {
        text.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .collect()
    };
    let (a, b) = (one_line(old), one_line(new));
    if a == b {
        let shown = quote(&a, 0, WIDTH);
        return format!("in whitespace only (before: {shown}; now: {shown})");
    }
    let first_difference = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    // Start at the beginning unless the difference would fall outside the window.
    let start = if first_difference + LEAD < WIDTH {
        0
    } else {
        first_difference - LEAD
    };
    format!(
        "(before: {}; now: {})",
        quote(&a, start, WIDTH),
        quote(&b, start, WIDTH)
    )
}

/// `chars[start..]` in single quotes, at most `width` characters of it (`...` included),
/// `...` marking a cut at either end; `none` when empty.
fn quote(chars: &[char], start: usize, width: usize) -> String {
    if chars.is_empty() {
        return "none".to_owned();
    }
    let start = start.min(chars.len());
    // The whole rest when it fits, else `width - 3` characters and `...`.
    let end = if chars.len() - start <= width {
        chars.len()
    } else {
        start + width - 3
    };
    let mut out = String::from("'");
    if start > 0 {
        out.push_str("...");
    }
    out.extend(&chars[start..end]);
    if end < chars.len() {
        out.push_str("...");
    }
    out.push('\'');
    out
}

/// A digest shortened for a report line: `sha256:` and 12 hex digits.
fn short(digest: &str) -> String {
    digest.chars().take(7 + 12).collect()
}
