//! Reading a `<tool_error>`: its sections into a [`ToolError`], the older comma-separated
//! `<available_actions>` and the spellings of `<retry_after>` included.

use crate::envelope::code::Severity;
use crate::envelope::error::ToolError;

use super::reader::{Open, Parser, element, set_once};
use super::{ParseError, ParseErrorKind};

impl<'a> Parser<'a> {
    pub(super) fn tool_error(&mut self) -> Result<ToolError, ParseError> {
        let root = self.root()?;
        let code = self.required(&root, "tool_error", "code")?;
        let severity = match self.attribute(&root, "severity")? {
            None => Severity::Error,
            Some(s) => s
                .parse()
                .map_err(|_| self.error(ParseErrorKind::Severity(s)))?,
        };
        let mut message = None;
        let mut recovery = None;
        let mut actions = Vec::new();
        let mut details = Vec::new();
        let mut retry_after = None;
        if !root.empty {
            while let Some(open) = self.child("tool_error")? {
                match open.name() {
                    "message" => set_once(self, &mut message, "message", &open)?,
                    "recovery" => set_once(self, &mut recovery, "recovery", &open)?,
                    "available_actions" => self.available_actions(&open, &mut actions)?,
                    "details" => self.details(&open, &mut details)?,
                    "retry_after" => {
                        if retry_after.is_some() {
                            return Err(self.error(ParseErrorKind::Duplicate("retry_after")));
                        }
                        let text = self.text(&open)?;
                        retry_after = Some(
                            parse_seconds(&text)
                                .ok_or_else(|| self.error(ParseErrorKind::RetryAfter(text)))?,
                        );
                    }
                    _ => self.skip(&open)?,
                }
            }
        }
        Ok(ToolError::new(code, message.unwrap_or_default())
            .severity(severity)
            .suggest(recovery.unwrap_or_default())
            .actions(actions)
            .with_details(details)
            .retry_after(retry_after.unwrap_or(0)))
    }

    /// `<action>` children, or the older comma-separated text, or both.
    fn available_actions(
        &mut self,
        open: &Open<'a>,
        actions: &mut Vec<String>,
    ) -> Result<(), ParseError> {
        if open.empty {
            return Ok(());
        }
        let mut list = String::new();
        loop {
            match Open::of(self.next()?) {
                Ok(action) if action.name() == "action" => actions.push(self.text(&action)?),
                Ok(other) => {
                    return Err(self.error(ParseErrorKind::Unexpected {
                        found: element(other.name()),
                        expected: "<action> or </available_actions>".into(),
                    }));
                }
                Err(event) => {
                    if self.text_event(event, &mut list, "available_actions", "<action>")? {
                        break;
                    }
                }
            }
        }
        // The older form: `<available_actions>a, b</available_actions>`.
        actions.extend(
            list.split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(str::to_owned),
        );
        Ok(())
    }

    fn details(
        &mut self,
        open: &Open<'a>,
        details: &mut Vec<(String, String)>,
    ) -> Result<(), ParseError> {
        if open.empty {
            return Ok(());
        }
        while let Some(detail) = self.child("details")? {
            if detail.name() != "detail" {
                return Err(self.error(ParseErrorKind::Unexpected {
                    found: element(detail.name()),
                    expected: "<detail> or </details>".into(),
                }));
            }
            let key = self.required(&detail, "detail", "key")?;
            let value = self.text(&detail)?;
            details.push((key, value));
        }
        Ok(())
    }
}

/// `30 seconds`, `1 second`, `30s`, `30` (surrounding whitespace allowed) → 30.
fn parse_seconds(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let number = text[..digits].parse().ok()?;
    let unit = text[digits..].trim_start();
    ["", "s", "second", "seconds"]
        .iter()
        .any(|u| unit.eq_ignore_ascii_case(u))
        .then_some(number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds() {
        for (text, secs) in [
            ("30 seconds", Some(30)),
            (" 1 second ", Some(1)),
            ("5s", Some(5)),
            ("7", Some(7)),
            ("30 SECONDS", Some(30)),
            ("", None),
            ("soon", None),
            ("3 minutes", None),
            ("-1 seconds", None),
            ("99999999999999999999999 seconds", None),
        ] {
            assert_eq!(parse_seconds(text), secs, "{text:?}");
        }
    }
}
