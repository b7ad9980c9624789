//! Answers to malformed requests: params that do not fit a standard method, and lines the
//! JSON-RPC parser rejects (not an object, too deep, too long), with the request id found by a
//! shallow scan so the client can match the answer to its request.

use rmcp::model::{ErrorCode as RpcCode, ErrorData, RequestId};
use serde_json::Value;

use crate::schema::type_name;
use crate::validation::sent_value;

/// The requests of the MCP specification (and rmcp's extensions) a client may send.
const STANDARD_REQUESTS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/directory/read",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

/// The JSON-RPC error for a request rmcp could only parse as a custom request: `-32602` with
/// what is wrong for a standard method whose params do not fit, `-32601` otherwise.
pub(super) fn explain_custom_request(method: &str, params: Option<&Value>) -> ErrorData {
    if STANDARD_REQUESTS.contains(&method) {
        ErrorData::invalid_params(explain_params(method, params), None)
    } else {
        ErrorData::new(
            RpcCode::METHOD_NOT_FOUND,
            format!(
                "Method not found: {}",
                sent_value(&Value::String(method.to_owned()))
            ),
            None,
        )
    }
}

/// What is wrong with the params of a standard request, most specific first.
fn explain_params(method: &str, params: Option<&Value>) -> String {
    if method != "tools/call" {
        return format!("The params of '{method}' do not match the MCP schema.");
    }
    let Some(Value::Object(params)) = params else {
        return "'tools/call' needs params: an object with 'name' (the tool to call) and \
                'arguments' (an object)."
            .to_owned();
    };
    match params.get("name") {
        Some(Value::String(_)) => {}
        None | Some(Value::Null) => {
            return "'tools/call' needs params.name, the name of the tool to call.".to_owned();
        }
        Some(other) => {
            return format!(
                "params.name of 'tools/call' must be a string naming the tool; you sent {} ({}).",
                a_type(other),
                sent_value(other)
            );
        }
    }
    match params.get("arguments") {
        None | Some(Value::Null | Value::Object(_)) => {
            "The params of 'tools/call' do not match the MCP schema.".to_owned()
        }
        Some(other) => format!(
            "params.arguments of 'tools/call' must be a JSON object of named arguments; you sent {} ({}).",
            a_type(other),
            sent_value(other)
        ),
    }
}

/// The answer to a line the JSON-RPC parser rejected, with the request id when one can be
/// found; `None` when nothing should be answered (a notification or a response: JSON-RPC
/// never answers those).
pub(super) fn answer_unparsable(
    line: &[u8],
    error: &serde_json::Error,
) -> Option<(Option<RequestId>, ErrorData)> {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(message)) => {
            // JSON-RPC never answers a notification (no `id`) or a response.
            let is_response = message.contains_key("result") || message.contains_key("error");
            if !message.contains_key("id") || (is_response && !message.contains_key("method")) {
                return None;
            }
            let Some(id) = message.get("id").and_then(request_id) else {
                return Some((
                    None,
                    ErrorData::invalid_request(
                        "Invalid request: 'id' must be a string or an integer.",
                        None,
                    ),
                ));
            };
            let answer = match message.get("method") {
                Some(Value::String(method)) => {
                    explain_custom_request(method, message.get("params"))
                }
                _ => ErrorData::invalid_request(
                    "Invalid request: 'method' must be a string naming the method.",
                    None,
                ),
            };
            Some((Some(id), answer))
        }
        Ok(other) => Some((
            None,
            ErrorData::invalid_request(
                format!(
                    "Invalid request: a JSON-RPC message is an object; this line is {}.",
                    a_type(&other)
                ),
                None,
            ),
        )),
        Err(_) => {
            let id = scan_top_level(line, "id").and_then(|v| request_id(&v));
            let answer = if error.to_string().starts_with("recursion limit exceeded") {
                ErrorData::invalid_request(
                    "Invalid request: the message nests deeper than 128 levels.",
                    None,
                )
            } else {
                ErrorData::parse_error("Parse error: the line is not valid JSON.", None)
            };
            Some((id, answer))
        }
    }
}

/// The answer to a line longer than the transport accepts; `prefix` is its beginning.
pub(super) fn answer_oversized(
    prefix: &[u8],
    bytes: usize,
    limit: usize,
) -> (Option<RequestId>, ErrorData) {
    let id = scan_top_level(prefix, "id").and_then(|v| request_id(&v));
    (
        id,
        ErrorData::invalid_request(
            format!("Invalid request: the message is {bytes} bytes; the limit is {limit} bytes."),
            None,
        ),
    )
}

/// The JSON type of a value with its article: `an array`, `a string`.
fn a_type(value: &Value) -> String {
    let name = type_name(value);
    match name {
        "array" | "object" => format!("an {name}"),
        _ => format!("a {name}"),
    }
}

fn request_id(value: &Value) -> Option<RequestId> {
    match value {
        Value::String(_) => serde_json::from_value(value.clone()).ok(),
        Value::Number(n) if n.is_i64() || n.is_u64() => serde_json::from_value(value.clone()).ok(),
        _ => None,
    }
}

/// The scalar value of member `key` of the top-level object of `bytes`, found without parsing
/// the rest: works on text too deep, too long or cut short for a JSON parser. Only strings,
/// numbers and `null` are returned.
pub(super) fn scan_top_level(bytes: &[u8], key: &str) -> Option<Value> {
    let mut depth = 0usize;
    let mut expect_key = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i)?;
                if depth == 1 && expect_key {
                    expect_key = false;
                    let mut j = skip_space(bytes, end + 1);
                    if bytes.get(j) == Some(&b':') {
                        j = skip_space(bytes, j + 1);
                        let name: Option<String> = serde_json::from_slice(&bytes[i..=end]).ok();
                        if name.as_deref() == Some(key) {
                            return scalar_at(bytes, j);
                        }
                    }
                    i = j;
                    continue;
                }
                i = end + 1;
                continue;
            }
            b'{' => {
                depth += 1;
                expect_key = depth == 1;
            }
            b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expect_key = true,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the quote closing the string that opens at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

fn scalar_at(bytes: &[u8], i: usize) -> Option<Value> {
    let end = match bytes.get(i)? {
        b'"' => string_end(bytes, i)? + 1,
        b'-' | b'0'..=b'9' => {
            let mut j = i;
            while bytes
                .get(j)
                .is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
            {
                j += 1;
            }
            j
        }
        b'n' if bytes[i..].starts_with(b"null") => i + 4,
        _ => return None,
    };
    serde_json::from_slice(&bytes[i..end]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scan_finds_top_level_members_only() {
        let line =
            br#"{"params":{"id":1,"x":[{"id":2}]},"method":"tools/call", "id" : "a\"b","z":1}"#;
        assert_eq!(scan_top_level(line, "id"), Some(json!("a\"b")));
        assert_eq!(scan_top_level(line, "method"), Some(json!("tools/call")));
        assert_eq!(scan_top_level(line, "nope"), None);
        let deep = format!(r#"{{"jsonrpc":"2.0","id":7,"params":{}"#, "[".repeat(500));
        assert_eq!(scan_top_level(deep.as_bytes(), "id"), Some(json!(7)));
        assert_eq!(scan_top_level(b"[1,2]", "id"), None);
    }

    #[test]
    fn tools_call_params_are_explained() {
        let explain = |params: Value| explain_custom_request("tools/call", Some(&params)).message;
        assert_eq!(
            explain(json!({"arguments": {}})),
            "'tools/call' needs params.name, the name of the tool to call."
        );
        assert_eq!(
            explain(json!({"name": "add", "arguments": [1, 2]})),
            "params.arguments of 'tools/call' must be a JSON object of named arguments; you sent an array (array(2))."
        );
        let unknown = explain_custom_request("tools/frobnicate", None);
        assert_eq!(unknown.code, RpcCode::METHOD_NOT_FOUND);
    }
}
