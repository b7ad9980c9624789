//! Reading a `<validation_error>` into a [`ValidationError`].

use crate::envelope::validation_error::{DeltaClass, FieldProblem, ScopedDelta, ValidationError};

use super::reader::{Parser, element, set_once};
use super::{ParseError, ParseErrorKind};

impl<'a> Parser<'a> {
    /// The action, the fields (in the order sent) and the deltas of the contract awareness
    /// section. A delta of a class this client does not know is skipped, like an unknown
    /// section. The recovery line is read but not kept: a [`ValidationError`] always renders
    /// the fixed one.
    pub(super) fn validation(&mut self) -> Result<ValidationError, ParseError> {
        let root = self.root()?;
        let mut error = ValidationError::new(self.required(&root, "validation_error", "action")?);
        let mut problems = Vec::new();
        let mut deltas = Vec::new();
        let mut recovery = None;
        if !root.empty {
            while let Some(open) = self.child("validation_error")? {
                match open.name() {
                    "field" => {
                        let name = self.required(&open, "field", "name")?;
                        let text = self.text(&open)?;
                        problems.push(FieldProblem::new(name, text));
                    }
                    "contract_awareness" => {
                        if open.empty {
                            continue;
                        }
                        while let Some(delta) = self.child("contract_awareness")? {
                            if delta.name() != "delta" {
                                return Err(self.error(ParseErrorKind::Unexpected {
                                    found: element(delta.name()),
                                    expected: "<delta> or </contract_awareness>".into(),
                                }));
                            }
                            let class = self.required(&delta, "delta", "severity")?;
                            let scope = self.attribute(&delta, "scope")?.unwrap_or_default();
                            let text = self.text(&delta)?;
                            if let Ok(class) = class.parse::<DeltaClass>() {
                                deltas.push(ScopedDelta { class, scope, text });
                            }
                        }
                    }
                    // Read once (a second one is an error, as for any single section).
                    "recovery" => set_once(self, &mut recovery, "recovery", &open)?,
                    _ => self.skip(&open)?,
                }
            }
        }
        error.extend_as_sent(problems);
        Ok(error.with_contract_awareness(deltas))
    }
}
