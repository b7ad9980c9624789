//! Contract deltas: every change between two contracts, classified BREAKING, RISKY, SAFE or
//! COSMETIC.

mod error_codes;
mod fields;
mod hints;
mod text;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::envelope::validation_error::DeltaClass;
use crate::model::exposition::Exposition;

use super::model::{ActionContract, Contract, ToolContract};

use error_codes::{errors, scopes};
use fields::fields;
use hints::hints;
use text::{change, descriptions, short, titles};

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
        let action = (delta.action.as_deref()).filter(|_| self.discriminated.contains(&delta.tool));
        Exposition::Grouped.action_name(&delta.tool, action)
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
    let renamable = |tool: &ToolContract| !tool.actions.is_empty();
    for (class, name, text) in membership("Tool", &before.tools, &after.tools, renamable) {
        out.push(class, name, None, text);
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

/// The entries of `old` missing from `new` (BREAKING: renamed when a `renamable` entry
/// reappears identical under a new key, else removed) and the entries new in `new` (SAFE), as
/// `(class, key, text)`; `kind` is `Tool` or `Action`.
fn membership<'a, V: PartialEq>(
    kind: &str,
    old: &'a BTreeMap<String, V>,
    new: &'a BTreeMap<String, V>,
    renamable: impl Fn(&V) -> bool,
) -> Vec<(DeltaClass, &'a str, String)> {
    let mut added: Vec<&String> = new.keys().filter(|k| !old.contains_key(*k)).collect();
    let mut out = Vec::new();
    for (name, entry) in old.iter().filter(|(k, _)| !new.contains_key(*k)) {
        let renamed = (added.iter())
            .position(|k| new[*k] == *entry && renamable(entry))
            .map(|i| added.remove(i));
        let text = match renamed {
            Some(now) => format!("{kind} renamed (before: '{name}'; now: '{now}')."),
            None => format!("{kind} removed (before: '{name}'; now: absent)."),
        };
        out.push((DeltaClass::Breaking, name.as_str(), text));
    }
    for name in added {
        let text = format!("{kind} added (before: absent; now: '{name}').");
        out.push((DeltaClass::Safe, name.as_str(), text));
    }
    out
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
        if old.title != new.title {
            let text = format!("Tool title changed {}.", titles(&old.title, &new.title));
            self.push(DeltaClass::Cosmetic, name, None, text);
        }
        if old.description != new.description {
            let text = descriptions(&old.description, &new.description);
            let text = format!("Tool description changed {text}.");
            self.push(DeltaClass::Cosmetic, name, None, text);
        }
        if old.discriminator != new.discriminator {
            let show = |d: &Option<String>| match d {
                Some(d) => format!("'{d}'"),
                None => "none (a single-action tool)".to_owned(),
            };
            // A single-action tool that gained an action: its callers never name one.
            let consequence = match (&old.discriminator, &new.discriminator) {
                (None, Some(d)) => format!(
                    " Every call must now name its action in '{d}'; calls written for the \
                     single action are refused MISSING_DISCRIMINATOR. To add actions without \
                     this, declare the discriminator while the tool has one action."
                ),
                _ => String::new(),
            };
            let (before, now) = (show(&old.discriminator), show(&new.discriminator));
            let text = change("Discriminator changed", before, now) + &consequence;
            self.push(DeltaClass::Breaking, name, None, text);
        }
        for (class, action, text) in membership("Action", &old.actions, &new.actions, |_| true) {
            self.push(class, name, Some(action), text);
        }
        for (action, before) in &old.actions {
            if let Some(after) = new.actions.get(action) {
                self.action(name, action, before, after);
            }
        }
    }

    fn action(&mut self, tool: &str, action: &str, old: &ActionContract, new: &ActionContract) {
        let mut push = |class, text: String| self.push(class, tool, Some(action), text);
        if old.title != new.title {
            let text = format!("Action title changed {}.", titles(&old.title, &new.title));
            push(DeltaClass::Cosmetic, text);
        }
        if old.description != new.description {
            let text = descriptions(&old.description, &new.description);
            push(
                DeltaClass::Cosmetic,
                format!("Action description changed {text}."),
            );
        }
        hints(&mut push, &old.annotations, &new.annotations);
        errors(&mut push, &old.errors, &new.errors);
        scopes(&mut push, &old.scopes, &new.scopes);
        // On, each costs a caller written for the old contract (off, each is SAFE):
        let flags = [
            // a task-capable client gets a task to poll instead of the result (MCP Tasks
            // extension: such a client must accept either);
            ("May run as a task", old.task, new.task, DeltaClass::Risky),
            // a client without the Tasks extension is refused from now on (`-32021`);
            (
                "Runs only as a task",
                old.task_required,
                new.task_required,
                DeltaClass::Breaking,
            ),
            // a call that sent an array as a JSON string and went through is refused.
            (
                "Arguments taken only as sent",
                old.strict_json,
                new.strict_json,
                DeltaClass::Risky,
            ),
        ];
        for (what, before, now, on) in flags {
            match (before, now) {
                (false, true) => push(on, change(what, "no", "yes")),
                (true, false) => push(DeltaClass::Safe, change(what, "yes", "no")),
                _ => {}
            }
        }
        result_fit(&mut push, old, new);
        match (&old.output_schema_digest, &new.output_schema_digest) {
            (None, Some(_)) => push(
                DeltaClass::Safe,
                change("Output schema declared", "none", "declared"),
            ),
            (Some(_), None) => push(
                DeltaClass::Risky,
                change("Output schema removed", "declared", "none"),
            ),
            (Some(a), Some(b)) if a != b => push(
                DeltaClass::Risky,
                change("Output schema changed", short(a), short(b)),
            ),
            _ => {}
        }
        let (any, substantive) = fields(&mut push, &old.fields, &new.fields);
        if old.required != new.required && !substantive {
            // `fields` reports every change of a top-level field's `required`; kept for a
            // hand-built contract whose lists disagree.
            let (before, now) = (old.required.join(", "), new.required.join(", "));
            push(
                DeltaClass::Risky,
                change("Required fields changed", before, now),
            );
        }
        if old.input_structure_digest != new.input_structure_digest && !substantive {
            let what = "Input schema changed beyond its fields";
            let (before, now) = (&old.input_structure_digest, &new.input_structure_digest);
            push(DeltaClass::Risky, change(what, short(before), short(now)));
        } else if old.input_schema_digest != new.input_schema_digest && !any {
            let what = "Input schema text changed (descriptions or titles)";
            let (before, now) = (&old.input_schema_digest, &new.input_schema_digest);
            push(
                DeltaClass::Cosmetic,
                change(what, short(before), short(now)),
            );
        }
    }
}

/// The result limit, list and paging: a limit added or lowered may cut a result that came
/// whole, a list moved or paging removed changes what a cut result is (RISKY); a limit raised
/// or removed, paging added, only returns more (SAFE).
fn result_fit(
    push: &mut impl FnMut(DeltaClass, String),
    old: &ActionContract,
    new: &ActionContract,
) {
    let bytes = |limit: Option<usize>| limit.map_or("none".to_owned(), |b| format!("{b} bytes"));
    let (a, b) = (old.max_result_bytes, new.max_result_bytes);
    if a != b {
        let (class, what) = match (a, b) {
            (None, Some(_)) => (DeltaClass::Risky, "Result limit"),
            (Some(a), Some(b)) if b < a => (DeltaClass::Risky, "Result limit lowered"),
            _ => (DeltaClass::Safe, "Result limit"),
        };
        push(class, change(what, bytes(a), bytes(b)));
    }
    if old.items != new.items {
        let path = |items: &Option<String>| items.clone().unwrap_or_else(|| "none".to_owned());
        push(
            DeltaClass::Risky,
            change("Result list", path(&old.items), path(&new.items)),
        );
    }
    let page = |page: &Option<crate::Paging>| {
        page.as_ref().map_or("none".to_owned(), |p| {
            format!("offset '{}', limit '{}'", p.offset, p.limit)
        })
    };
    if old.page != new.page {
        let class = match new.page {
            None => DeltaClass::Risky,
            Some(_) => DeltaClass::Safe,
        };
        push(class, change("Paging", page(&old.page), page(&new.page)));
    }
}
