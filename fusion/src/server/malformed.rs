//! Answers to malformed requests: params that do not fit a standard method, and messages the
//! JSON-RPC parser rejects (not an object, too deep, too long), with the request id found by a
//! shallow scan so the client can match the answer to its request. Shared by the stdio and the
//! Streamable HTTP transports, so both answer the same message the same way.

use rmcp::model::{
    CallToolResult, ErrorCode as RpcCode, ErrorData, RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde_json::Value;

use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;
use crate::model::response::ToolResponse;
use crate::schema::type_name;
use crate::validation::{DEFAULT_MAX_DEPTH, sent_value};

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

/// The reply to a message the JSON-RPC parser rejected: a JSON-RPC error, or for a
/// `tools/call` whose JSON the parser refuses though the grammar allows it (see
/// [`unreadable_call`]), a tool result carrying a `VALIDATION_ERROR` envelope.
#[derive(Debug)]
pub(super) enum Answer {
    /// A JSON-RPC error, with the request's id when one was found.
    Error(Option<RequestId>, ErrorData),
    /// A `tools/call` result: the envelope the model reads.
    Envelope(RequestId, CallToolResult),
}

impl Answer {
    /// The reply as a JSON-RPC message. JSON-RPC 2.0 (section 5) requires the `id` member even
    /// when the request's id could not be read: it is then `null`, which rmcp's type leaves out.
    pub(super) fn to_json(&self) -> Value {
        let message = match self {
            Answer::Error(id, error) => ServerJsonRpcMessage::error(error.clone(), id.clone()),
            Answer::Envelope(id, result) => ServerJsonRpcMessage::response(
                ServerResult::CallToolResult(result.clone()),
                id.clone(),
            ),
        };
        let mut value = serde_json::to_value(message).unwrap_or(Value::Null);
        if let Value::Object(object) = &mut value {
            object.entry("id").or_insert(Value::Null);
        }
        value
    }

    /// The request id the answer carries, if any.
    pub(super) fn id(&self) -> Option<&RequestId> {
        match self {
            Answer::Error(id, _) => id.as_ref(),
            Answer::Envelope(id, _) => Some(id),
        }
    }

    /// What the answer says, for logs.
    pub(super) fn message(&self) -> &str {
        match self {
            Answer::Error(_, error) => &error.message,
            Answer::Envelope(..) => "VALIDATION_ERROR envelope",
        }
    }
}

/// The answer to a message the JSON-RPC parser rejected, with the request id when one can be
/// found; `None` when nothing should be answered (a notification or a response: JSON-RPC
/// never answers those). `unit` names the message in the answer's text: `line` (stdio),
/// `body` (HTTP).
pub(super) fn answer_unparsable(
    line: &[u8],
    error: &serde_json::Error,
    unit: &str,
) -> Option<Answer> {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(message)) => {
            // JSON-RPC never answers a notification (no `id`) or a response.
            let is_response = message.contains_key("result") || message.contains_key("error");
            if !message.contains_key("id") || (is_response && !message.contains_key("method")) {
                return None;
            }
            let id = message.get("id").and_then(request_id);
            if message.get("jsonrpc") != Some(&Value::from("2.0")) {
                return Some(Answer::Error(
                    id,
                    invalid("a JSON-RPC 2.0 message needs \"jsonrpc\": \"2.0\"."),
                ));
            }
            let Some(id) = id else {
                return Some(Answer::Error(
                    None,
                    invalid("'id' must be a string or an integer."),
                ));
            };
            let answer = match message.get("method") {
                Some(Value::String(method)) => {
                    explain_custom_request(method, message.get("params"))
                }
                _ => invalid("'method' must be a string naming the method."),
            };
            Some(Answer::Error(Some(id), answer))
        }
        Ok(other) => Some(Answer::Error(
            None,
            invalid(&format!(
                "a JSON-RPC message is an object; this {unit} is {}.",
                a_type(&other)
            )),
        )),
        Err(_) => {
            let id = scan_top_level(line, "id").and_then(|v| request_id(&v));
            // JSON text is UTF-8 (RFC 8259, section 8.1); serde_json's message for a stray byte
            // reads like a bad escape, so look at the bytes first.
            let refusal = if std::str::from_utf8(line).is_err() {
                Some(Refusal::NotUtf8)
            } else {
                Refusal::of(error)
            };
            if let (Some(id), Some(refusal)) = (&id, refusal)
                && scan_top_level(line, "method") == Some(Value::from("tools/call"))
            {
                let result = ToolResponse::from(unreadable_call(refusal)).into();
                return Some(Answer::Envelope(id.clone(), result));
            }
            let parse_error = |what: &str| {
                ErrorData::parse_error(format!("Parse error: the {unit} {what}."), None)
            };
            let answer = match refusal {
                Some(Refusal::TooDeep) => invalid("the message nests deeper than 128 levels."),
                Some(Refusal::NumberOutOfRange) => {
                    parse_error("holds a number beyond the range of a 64-bit float")
                }
                Some(Refusal::LoneSurrogate) => parse_error(
                    "holds a string with an unpaired UTF-16 surrogate escape (like \\ud800)",
                ),
                Some(Refusal::NotUtf8) => {
                    parse_error("is not valid UTF-8 (JSON text is UTF-8: RFC 8259, section 8.1)")
                }
                None => parse_error("is not valid JSON"),
            };
            Some(Answer::Error(id, answer))
        }
    }
}

/// Why a message that reads as a `tools/call` could not be parsed: JSON the grammar (RFC 8259)
/// allows but serde_json refuses (nesting past its recursion limit of 128 levels, numbers
/// beyond `f64`, escapes of unpaired UTF-16 surrogates), or bytes that are not UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    TooDeep,
    NumberOutOfRange,
    LoneSurrogate,
    NotUtf8,
}

impl Refusal {
    fn of(error: &serde_json::Error) -> Option<Refusal> {
        // serde_json exposes these only through its messages (`Category` says `Syntax`).
        let text = error.to_string();
        if text.starts_with("recursion limit exceeded") {
            Some(Refusal::TooDeep)
        } else if text.starts_with("number out of range") {
            Some(Refusal::NumberOutOfRange)
        } else if text.starts_with("lone leading surrogate")
            || text.starts_with("invalid unicode code point")
            || text.starts_with("unexpected end of hex escape")
        {
            Some(Refusal::LoneSurrogate)
        } else {
            None
        }
    }
}

/// The deepest nesting of objects and arrays a `tools/call`'s arguments can have (the arguments
/// object is level 1), on stdio and HTTP alike: serde_json reads JSON at most 127 levels deep
/// (its recursion limit, 128), and the arguments object is level 3 of the message
/// (`{"params": {"arguments": {…}}}`).
///
/// Deeper arguments never reach the server's limits or the tool: the call is answered with a
/// `VALIDATION_ERROR` envelope saying so. A [`Server::max_argument_depth`](super::Server::max_argument_depth)
/// above this value therefore acts as this value.
pub const MAX_READABLE_ARGUMENT_DEPTH: usize = 125;

/// The `VALIDATION_ERROR` for a `tools/call` whose JSON the parser refuses, so the model reads
/// what to change, as it does for arguments over a configured limit. The tool is not called
/// (nor looked up: the name sits inside the part that could not be read).
fn unreadable_call(refusal: Refusal) -> ToolError {
    match refusal {
        Refusal::TooDeep => ToolError::new(
            ErrorCode::ValidationError,
            format!(
                "The arguments are nested deeper than {MAX_READABLE_ARGUMENT_DEPTH} levels of \
                 objects and arrays, more than this server reads."
            ),
        )
        // The tool's own limit is lower unless it allows more: name the default, not this one.
        .suggest(format!(
            "Send arguments nested at most {DEFAULT_MAX_DEPTH} levels deep, unless the tool allows \
             more (never more than {MAX_READABLE_ARGUMENT_DEPTH}): flatten the deepest values."
        )),
        Refusal::NumberOutOfRange => ToolError::new(
            ErrorCode::ValidationError,
            "The call holds a number beyond the range of a 64-bit float (like 1E400).",
        )
        .suggest("Send numbers within ±1.7976931348623157E308, or large values as strings."),
        Refusal::LoneSurrogate => ToolError::new(
            ErrorCode::ValidationError,
            "The call holds a string with an unpaired UTF-16 surrogate escape (like \\ud800), \
             which is no Unicode character.",
        )
        .suggest(
            "Escape characters beyond U+FFFF as a surrogate pair (\\ud83d\\ude00) or send them \
             as UTF-8; drop unpaired surrogates.",
        ),
        Refusal::NotUtf8 => ToolError::new(
            ErrorCode::ValidationError,
            "The call holds bytes that are not valid UTF-8.",
        )
        .suggest("Send the arguments as UTF-8 text (JSON text is UTF-8: RFC 8259, section 8.1)."),
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
        invalid(&format!(
            "the message is {bytes} bytes; the limit is {limit} bytes."
        )),
    )
}

/// A `-32600` invalid request error saying `what`.
fn invalid(what: &str) -> ErrorData {
    ErrorData::invalid_request(format!("Invalid request: {what}"), None)
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
    fn the_readable_argument_depth_is_what_the_parser_reads() {
        let call = |levels: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{{"v":{}{}}}}}}}"#,
                "[".repeat(levels - 1),
                "]".repeat(levels - 1)
            )
        };
        type Message = rmcp::service::RxJsonRpcMessage<rmcp::RoleServer>;
        let read = |levels| serde_json::from_str::<Message>(&call(levels));
        // Arguments `{"v": [[…]]}`: the object is level 1, each array one more.
        assert!(read(MAX_READABLE_ARGUMENT_DEPTH).is_ok());
        let error = read(MAX_READABLE_ARGUMENT_DEPTH + 1).unwrap_err();
        assert_eq!(Refusal::of(&error), Some(Refusal::TooDeep), "{error}");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_named_as_such() {
        let mut call = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":{"v":""#.to_vec();
        call.extend_from_slice(b"\xff\"}}}");
        let error = serde_json::from_slice::<Value>(&call).unwrap_err();
        let Some(Answer::Envelope(id, _)) = answer_unparsable(&call, &error, "body") else {
            panic!("a tools/call gets an envelope");
        };
        assert_eq!(id, RequestId::Number(4));
        let mut other = br#"{"jsonrpc":"2.0","id":5,"method":"ping","x":""#.to_vec();
        other.extend_from_slice(b"\xff\"}");
        let error = serde_json::from_slice::<Value>(&other).unwrap_err();
        let Some(Answer::Error(_, error)) = answer_unparsable(&other, &error, "body") else {
            panic!("another method gets a JSON-RPC error");
        };
        assert!(
            error.message.contains("not valid UTF-8"),
            "{}",
            error.message
        );
    }

    #[test]
    fn a_message_without_jsonrpc_is_an_invalid_request_naming_it() {
        let line = br#"{"id":3,"method":"tools/list"}"#;
        let error =
            serde_json::from_slice::<rmcp::service::RxJsonRpcMessage<rmcp::RoleServer>>(line)
                .unwrap_err();
        let Some(Answer::Error(id, error)) = answer_unparsable(line, &error, "body") else {
            panic!("an error answer");
        };
        assert_eq!(id, Some(RequestId::Number(3)));
        assert_eq!(error.code, RpcCode::INVALID_REQUEST);
        assert!(
            error.message.contains("\"jsonrpc\": \"2.0\""),
            "{}",
            error.message
        );
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
