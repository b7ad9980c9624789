//! `fusion::client::parse_envelope`: the inverse of rendering (golden vectors and arbitrary
//! values), the older layouts other servers write, and garbage (a clear error, never a panic).
//! One test binary: the helpers are here, the tests grouped by topic in `client_parse/`.

#[path = "client_parse/vectors.rs"]
mod vectors;

#[path = "client_parse/older_layouts.rs"]
mod older_layouts;

#[path = "client_parse/garbage.rs"]
mod garbage;

#[path = "client_parse/round_trip.rs"]
mod round_trip;

#[path = "client_parse/flags.rs"]
mod flags;

#[path = "client_parse/forbidden_characters.rs"]
mod forbidden_characters;

use fusion::client::{Envelope, parse_envelope};
use fusion::{ToolError, ValidationError};
use serde_json::Value;

pub(crate) fn parse_tool_error(xml: &str) -> ToolError {
    match parse_envelope(xml) {
        Ok(Envelope::ToolError(e)) => e,
        other => panic!("not a tool error: {other:?}\n{xml}"),
    }
}

pub(crate) fn parse_validation(xml: &str) -> ValidationError {
    match parse_envelope(xml) {
        Ok(Envelope::Validation(v)) => v,
        other => panic!("not a validation envelope: {other:?}\n{xml}"),
    }
}

pub(crate) fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|s| s.as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn pairs(value: &Value) -> Vec<Vec<String>> {
    value
        .as_array()
        .map(|items| items.iter().map(strings).collect())
        .unwrap_or_default()
}
