//! The `<tool_error>` envelope writer, byte-exact: lines joined with `\n`, no trailing
//! newline; `code` then `severity` on the opening tag; then `<message>` (always),
//! `<recovery>` (when not empty), `<available_actions>` (one `  <action>` line each),
//! `<details>` (one `  <detail key="…">` line each, in insertion order) and `<retry_after>`
//! (`N seconds`, when at least one second), each only when set.

use crate::envelope::xml::{push_attr, push_text};

use super::ToolError;

impl ToolError {
    /// The `<tool_error>` envelope, byte-exact: lines joined with `\n`, no trailing newline;
    /// `code` then `severity`; `<message>` always, then `<recovery>`, `<available_actions>`,
    /// `<details>` and `<retry_after>` (`N seconds`), each only when set. Text escapes `&`,
    /// `<` and the `>` of `]]>`; attribute values escape all five special characters;
    /// characters XML 1.0 forbids become U+FFFD.
    pub fn to_xml(&self) -> String {
        let mut out = String::with_capacity(self.unescaped_len());
        self.write_xml(&mut out);
        out
    }

    /// About the envelope's length, for one allocation in the common case: the strings as
    /// they are and the fixed text around them (escaping may grow it).
    fn unescaped_len(&self) -> usize {
        let e = &*self.0;
        let lists: usize = e.actions.iter().map(|a| a.len() + 20).sum::<usize>()
            + e.details
                .iter()
                .map(|(k, v)| k.len() + v.len() + 28)
                .sum::<usize>();
        256 + e.code.as_str().len() + e.message.len() + e.recovery.len() + lists
    }

    /// Appends the envelope to `out`, for callers that reuse a buffer.
    pub fn write_xml(&self, out: &mut String) {
        let e = &*self.0;
        out.push_str("<tool_error code=\"");
        push_attr(out, e.code.as_str());
        out.push_str("\" severity=\"");
        out.push_str(e.severity.as_str());
        out.push_str("\">\n<message>");
        push_text(out, &e.message);
        out.push_str("</message>\n");
        if !e.recovery.is_empty() {
            out.push_str("<recovery>");
            push_text(out, &e.recovery);
            out.push_str("</recovery>\n");
        }
        if !e.actions.is_empty() {
            out.push_str("<available_actions>\n");
            for action in &e.actions {
                out.push_str("  <action>");
                push_text(out, action);
                out.push_str("</action>\n");
            }
            out.push_str("</available_actions>\n");
        }
        if !e.details.is_empty() {
            out.push_str("<details>\n");
            for (key, value) in &e.details {
                out.push_str("  <detail key=\"");
                push_attr(out, key);
                out.push_str("\">");
                push_text(out, value);
                out.push_str("</detail>\n");
            }
            out.push_str("</details>\n");
        }
        if e.retry_after > 0 {
            out.push_str("<retry_after>");
            out.push_str(itoa::Buffer::new().format(e.retry_after));
            out.push_str(" seconds</retry_after>\n");
        }
        out.push_str("</tool_error>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::code::Severity;

    #[test]
    fn every_section_in_order() {
        let e = ToolError::new("ALREADY_PAID", "Paid <already> & done")
            .critical()
            .suggest("Check ]]> first")
            .actions(["billing.list_invoices", "billing.refund"])
            .detail("invoice\"Id", "inv_1")
            .detail("paidAt", "2026-01-01")
            .retry_after(30);
        assert_eq!(
            e.to_xml(),
            "<tool_error code=\"ALREADY_PAID\" severity=\"critical\">\n\
             <message>Paid &lt;already> &amp; done</message>\n\
             <recovery>Check ]]&gt; first</recovery>\n\
             <available_actions>\n  <action>billing.list_invoices</action>\n  <action>billing.refund</action>\n</available_actions>\n\
             <details>\n  <detail key=\"invoice&quot;Id\">inv_1</detail>\n  <detail key=\"paidAt\">2026-01-01</detail>\n</details>\n\
             <retry_after>30 seconds</retry_after>\n\
             </tool_error>"
        );
    }

    #[test]
    fn only_the_message_is_always_there() {
        let e = ToolError::new("X", "").severity(Severity::Warning);
        assert_eq!(
            e.to_xml(),
            "<tool_error code=\"X\" severity=\"warning\">\n<message></message>\n</tool_error>"
        );
    }

    #[test]
    fn delays_are_written_in_decimal() {
        for n in [1u64, 9, 10, 30, 12345, u64::MAX] {
            let xml = ToolError::new("X", "").retry_after(n).to_xml();
            assert!(xml.contains(&format!("<retry_after>{n} seconds</retry_after>")));
        }
    }

    #[test]
    fn write_xml_appends() {
        let e = ToolError::not_found("gone");
        let mut buf = String::from("prefix:");
        e.write_xml(&mut buf);
        assert_eq!(buf, format!("prefix:{}", e.to_xml()));
    }
}
