//! `ToolResponse`: the outcome of one MCP tool call, and its conversion into rmcp's
//! `CallToolResult`.

use serde::Serialize;
use serde_json::{Map, Value};

use rmcp::model::{CallToolResult, ContentBlock, MetaObject};

use crate::envelope::error::ToolError;
use crate::envelope::validation_error::ValidationError;

/// The `_meta` key under which the typed flags travel.
pub const FLAGS_META_KEY: &str = "fusion/error";

/// The `_meta` key listing the arguments a server read from stringified JSON (`["items",
/// "order.lines[0]"]`), on every result of such a call; see
/// [`Server::decode_stringified_arguments`](crate::server::Server::decode_stringified_arguments).
pub const DECODED_META_KEY: &str = "fusion/decoded";

/// The outcome of one tool call, as a model and a client will receive it.
///
/// Converting it into [`rmcp::model::CallToolResult`] gives:
///
/// | outcome | `content` | `isError` | `_meta["fusion/error"]` |
/// |---|---|---|---|
/// | success | the payload text, the [content blocks](ToolResponse::with_content), then one envelope per warning | `false` | the first warning's flags, if any |
/// | [`ToolError`] | the `<tool_error>` envelope, then warnings | by severity | the error's flags |
/// | [`ValidationError`] | the `<validation_error>` envelope | `true` | the validation flags |
///
/// `structuredContent` carries the value given to
/// [`with_structured_content`](ToolResponse::with_structured_content) on a success only. On
/// error results (a [`ToolError`] of any severity, a [`ValidationError`]) it carries the flags
/// when [`flags_in_structured_content`](ToolResponse::flags_in_structured_content) is set, and
/// nothing otherwise: some clients validate `structuredContent` against the tool's
/// `outputSchema` even on errors.
///
/// ```
/// use fusion::{ToolError, ToolResponse};
/// use rmcp::model::CallToolResult;
/// use serde_json::json;
///
/// let response = ToolResponse::json(&json!({"invoices": []}))
///     .with_warning(ToolError::deprecated("Parameter 'limit' is deprecated; use 'page_size'."));
/// let result = CallToolResult::from(response);
/// assert_eq!(result.is_error, Some(false));
/// assert_eq!(result.content.len(), 2);
/// let flags = &result.meta.unwrap().0["fusion/error"];
/// assert_eq!(flags["code"], "DEPRECATED");
/// assert_eq!(flags["isError"], false);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResponse {
    body: Body,
    warnings: Vec<ToolError>,
    // Boxed, like the validation error: a response is moved through every layer of a call's
    // future, so the common case (a success without structured content) is kept narrow.
    structured: Option<Box<Value>>,
    /// Blocks after the payload text on a success: images, audio, embedded resources.
    content: Vec<ContentBlock>,
    flags_in_structured: bool,
    /// The paths of the arguments read from stringified JSON (boxed: most calls have none).
    decoded: Option<Box<[String]>>,
    /// Whether the payload is JSON written from a value ([`ToolResponse::json`], an action's
    /// serialized output): only such a payload is cut to fit a result limit, never text.
    json: bool,
}

/// What a response carries before its warnings: the payload, or an error envelope.
#[derive(Clone, Debug, PartialEq)]
enum Body {
    Success(String),
    Error(ToolError),
    Validation(Box<ValidationError>),
}

impl ToolResponse {
    fn new(body: Body) -> ToolResponse {
        ToolResponse {
            body,
            warnings: Vec::new(),
            structured: None,
            content: Vec::new(),
            flags_in_structured: false,
            decoded: None,
            json: false,
        }
    }

    /// A success whose payload is `text`, verbatim.
    pub fn text(text: impl Into<String>) -> ToolResponse {
        ToolResponse::new(Body::Success(text.into()))
    }

    /// A success whose payload is `value` as compact JSON text. If `value` cannot be
    /// serialized (a map with non-string keys, a failing `Serialize` impl), the response is an
    /// `INTERNAL_ERROR` and the cause is logged.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> ToolResponse {
        match serde_json::to_string(value) {
            Ok(text) => ToolResponse {
                json: true,
                ..ToolResponse::text(text)
            },
            Err(err) => ToolResponse::error(ToolError::from_internal(&err)),
        }
    }

    /// A failed (or, for a warning severity, guided) call carrying `error`'s envelope.
    pub fn error(error: impl Into<ToolError>) -> ToolResponse {
        ToolResponse::new(Body::Error(error.into()))
    }

    /// A call rejected for invalid arguments.
    pub fn validation(error: ValidationError) -> ToolResponse {
        ToolResponse::new(Body::Validation(Box::new(error)))
    }

    /// Adds a warning that rides next to the payload as a further text block. Its severity is
    /// forced to `warning`, so it can never turn a success into a failure.
    pub fn with_warning(mut self, warning: ToolError) -> ToolResponse {
        self.warnings.push(warning.warning());
        self
    }

    /// [`with_warning`](ToolResponse::with_warning), the warning put before the others: its
    /// flags are the ones `_meta["fusion/error"]` carries.
    pub(crate) fn with_leading_warning(mut self, warning: ToolError) -> ToolResponse {
        self.warnings.insert(0, warning.warning());
        self
    }

    /// Sets `structuredContent` (for actions that declare an output schema; MCP specification
    /// 2025-06-18, "Tools", "Structured Content"). It is sent on a success only, and should be
    /// a JSON object conforming to the tool's `outputSchema`; the payload text should carry the
    /// same JSON. A response that is an error ignores it.
    pub fn with_structured_content(mut self, value: Value) -> ToolResponse {
        self.structured = Some(Box::new(value));
        self
    }

    /// Adds a content block after the payload text: an image, audio, an embedded resource or a
    /// resource link (MCP specification 2025-06-18, "Tools", "Tool Result"), in rmcp's
    /// [`ContentBlock`]. Blocks are sent on a success only, in the order added, before the
    /// warnings; a response that is an error ignores them. The payload text should say what
    /// they are, for a model that reads text only.
    ///
    /// ```
    /// use fusion::ToolResponse;
    /// use rmcp::model::{CallToolResult, ContentBlock};
    ///
    /// let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";
    /// let response = ToolResponse::text("The chart, as a PNG.")
    ///     .with_content(ContentBlock::image(png, "image/png"));
    /// let result = CallToolResult::from(response);
    /// assert_eq!(result.content.len(), 2);
    /// assert!(result.content[1].as_image().is_some());
    /// ```
    pub fn with_content(mut self, block: ContentBlock) -> ToolResponse {
        self.content.push(block);
        self
    }

    /// The content blocks added with [`with_content`](ToolResponse::with_content), sent after
    /// the payload text on a success.
    pub fn content(&self) -> &[ContentBlock] {
        &self.content
    }

    /// Records that the arguments at `paths` were read from stringified JSON: they travel in
    /// `_meta["fusion/decoded"]`.
    pub(crate) fn with_decoded(mut self, paths: Vec<String>) -> ToolResponse {
        self.decoded = (!paths.is_empty()).then(|| paths.into_boxed_slice());
        self
    }

    /// The paths of the arguments the server read from stringified JSON before validating
    /// them (`items`, `order.lines[0]`), as `_meta["fusion/decoded"]` lists them; empty when
    /// the arguments were used as sent.
    pub fn decoded_arguments(&self) -> &[String] {
        self.decoded.as_deref().unwrap_or_default()
    }

    /// Copies the flags into `structuredContent` on error results (opt-in server option).
    pub fn flags_in_structured_content(mut self, enabled: bool) -> ToolResponse {
        self.flags_in_structured = enabled;
        self
    }

    /// Renames every action name the model reads for which `f` returns a name: the available
    /// actions of the error and of every warning (see [`ToolError::map_available_actions`]),
    /// and the action of a validation error. The registry
    /// gives each `tool.action` its name in flat exposition this way.
    pub(crate) fn map_action_names(mut self, f: impl Fn(&str) -> Option<String>) -> ToolResponse {
        match self.body {
            Body::Error(error) => self.body = Body::Error(error.map_available_actions(&f)),
            Body::Validation(mut error) => {
                if let Some(renamed) = f(error.action()) {
                    error.set_action(renamed);
                }
                self.body = Body::Validation(error);
            }
            Body::Success(_) => {}
        }
        self.warnings = self
            .warnings
            .into_iter()
            .map(|warning| warning.map_available_actions(&f))
            .collect();
        self
    }

    /// This success with `text` as its payload and `structured` as its structured content
    /// (when it had one): a result cut to fit a size.
    pub(crate) fn with_payload(mut self, text: String, structured: Option<Value>) -> ToolResponse {
        self.body = Body::Success(text);
        if self.structured.is_some() {
            self.structured = structured.map(Box::new);
        }
        self
    }

    /// This response failed with `error` instead, its warnings and `_meta` kept: a result
    /// refused for its size.
    pub(crate) fn replaced_by(mut self, error: ToolError) -> ToolResponse {
        self.body = Body::Error(error);
        self.structured = None;
        self.content = Vec::new();
        self
    }

    /// Replaces the validation error, if the outcome is one.
    pub(crate) fn map_validation(
        mut self,
        f: impl FnOnce(ValidationError) -> ValidationError,
    ) -> ToolResponse {
        if let Body::Validation(error) = self.body {
            self.body = Body::Validation(Box::new(f(*error)));
        }
        self
    }

    /// The MCP `isError` value: `false` for successes and warning-severity errors.
    pub fn is_error(&self) -> bool {
        match &self.body {
            Body::Success(_) => false,
            Body::Error(e) => e.is_error(),
            Body::Validation(_) => true,
        }
    }

    /// The success payload text, if this is a success.
    pub fn payload(&self) -> Option<&str> {
        match &self.body {
            Body::Success(text) => Some(text),
            _ => None,
        }
    }

    /// The success payload text, if it is JSON written from a value (not text given as text).
    pub(crate) fn json_payload(&self) -> Option<&str> {
        self.payload().filter(|_| self.json)
    }

    /// The value set with [`with_structured_content`](ToolResponse::with_structured_content),
    /// if any. It becomes `structuredContent` on a success only.
    pub fn structured_content(&self) -> Option<&Value> {
        self.structured.as_deref()
    }

    /// The error, if the outcome is a [`ToolError`].
    pub fn tool_error(&self) -> Option<&ToolError> {
        match &self.body {
            Body::Error(e) => Some(e),
            _ => None,
        }
    }

    /// The validation error, if the arguments were rejected.
    pub fn validation_error(&self) -> Option<&ValidationError> {
        match &self.body {
            Body::Validation(v) => Some(&**v),
            _ => None,
        }
    }

    /// The warnings riding next to the outcome.
    pub fn warnings(&self) -> &[ToolError] {
        &self.warnings
    }

    /// The flags that travel in `_meta["fusion/error"]`: the error's, else the first
    /// warning's, else `None` for a plain success.
    pub fn flags(&self) -> Option<Value> {
        match &self.body {
            Body::Error(e) => Some(e.flags()),
            Body::Validation(v) => Some(v.flags()),
            Body::Success(_) => self.warnings.first().map(ToolError::flags),
        }
    }

    /// The text blocks of the result, in order: the outcome, then each warning's envelope.
    pub fn content_texts(&self) -> Vec<String> {
        let mut texts = Vec::with_capacity(1 + self.warnings.len());
        texts.push(match &self.body {
            Body::Success(text) => text.clone(),
            Body::Error(e) => e.to_xml(),
            Body::Validation(v) => v.to_xml(),
        });
        texts.extend(self.warnings.iter().map(ToolError::to_xml));
        texts
    }
}

impl From<ToolError> for ToolResponse {
    fn from(error: ToolError) -> ToolResponse {
        ToolResponse::error(error)
    }
}

impl From<ValidationError> for ToolResponse {
    fn from(error: ValidationError) -> ToolResponse {
        ToolResponse::validation(error)
    }
}

impl From<ToolResponse> for CallToolResult {
    fn from(response: ToolResponse) -> CallToolResult {
        let is_error = response.is_error();
        let flags = response.flags();
        if let Body::Error(e) = &response.body
            && e.is_uncategorised()
        {
            tracing::warn!(
                target: "fusion::response",
                code = e.code().as_str(),
                "error code has no category; clients will treat it as `unknown`"
            );
        }
        let succeeded = matches!(response.body, Body::Success(_));
        let mut texts = response.content_texts().into_iter().map(ContentBlock::text);
        let mut blocks: Vec<ContentBlock> = texts.next().into_iter().collect();
        if succeeded {
            blocks.extend(response.content);
        }
        blocks.extend(texts);
        let mut result = if is_error {
            CallToolResult::error(blocks)
        } else {
            CallToolResult::success(blocks)
        };
        result.structured_content = match (response.structured, &flags) {
            (Some(value), _) if succeeded => Some(*value),
            (_, Some(flags)) if !succeeded && response.flags_in_structured => Some(flags.clone()),
            _ => None,
        };
        let decoded = response.decoded.map(|paths| Value::from(paths.into_vec()));
        let mut meta = Map::new();
        meta.extend(flags.map(|flags| (FLAGS_META_KEY.to_owned(), flags)));
        meta.extend(decoded.map(|decoded| (DECODED_META_KEY.to_owned(), decoded)));
        result.meta = (!meta.is_empty()).then_some(MetaObject(meta));
        result
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock};

    use super::ToolResponse;
    use crate::envelope::code::ErrorCode;
    use crate::envelope::error::ToolError;

    /// The text of `block`, which must be a text block.
    fn text(block: &ContentBlock) -> &str {
        &block.as_text().unwrap().text
    }

    #[test]
    fn content_blocks_follow_the_payload_on_a_success_only() {
        let image = ContentBlock::image("aGk=", "image/png");
        let warning = ToolError::deprecated("Use 'page_size'.");
        let success = ToolResponse::text("The chart.")
            .with_content(image.clone())
            .with_warning(warning);
        assert_eq!(success.content(), std::slice::from_ref(&image));
        let result = CallToolResult::from(success);
        let kinds: Vec<_> = (result.content.iter())
            .map(|block| (block.as_text().is_some(), block.as_image().is_some()))
            .collect();
        assert_eq!(kinds, [(true, false), (false, true), (true, false)]);
        assert!(text(&result.content[2]).contains("DEPRECATED"));

        let error = ToolResponse::error(ToolError::new(ErrorCode::NotFound, "No chart."))
            .with_content(image);
        let result = CallToolResult::from(error);
        assert_eq!(result.content.len(), 1);
        assert!(text(&result.content[0]).contains("NOT_FOUND"));
    }
}
