//! Results that fit: a success whose payload text is over the result limit in force is cut
//! to the first items of its list that fit, with a `RESULT_TRUNCATED` warning naming the
//! call that fetches the rest, or refused with a `RESULT_TRUNCATED` error saying how large it
//! was. A payload within the limit is left as it is, its size the only thing looked at.

use serde_json::{Map, Value};

use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;
use crate::model::definition::ActionDefinition;
use crate::model::response::ToolResponse;
use crate::model::result_fit::ResultLimit;

/// What fitting one call's result needs: the limit in force, the action called, and the
/// arguments as sent when the action pages (the next call is built from them).
pub(crate) struct Fitting<'a> {
    pub(crate) limit: ResultLimit,
    pub(crate) action: &'a ActionDefinition,
    pub(crate) discriminator: Option<&'a str>,
    pub(crate) arguments: Option<Map<String, Value>>,
}

/// `response` fitted to `fitting`'s limit: unchanged when it is not a success or its payload
/// is within the limit.
pub(crate) fn fit(response: ToolResponse, fitting: &Fitting<'_>) -> ToolResponse {
    let max = fitting.limit.max_bytes();
    let size = match response.payload() {
        Some(payload) if payload.len() > max => payload.len(),
        _ => return response,
    };
    let parsed = response
        .payload()
        .and_then(|payload| serde_json::from_str::<Value>(payload).ok());
    let Some(mut value) = parsed else {
        return response.replaced_by(too_large(size, fitting));
    };
    let path = fitting.action.result.items.as_deref();
    let Some(items) = list_at(&mut value, path) else {
        return response.replaced_by(too_large(size, fitting));
    };
    let all = std::mem::take(items);
    let total = all.len();
    // The payload with an empty list, then each item and the comma before it.
    let base = serde_json::to_string(&value).map_or(usize::MAX, |text| text.len());
    let mut used = base;
    let mut kept = 0;
    for (index, item) in all.iter().enumerate() {
        let item_size = serde_json::to_string(item).map_or(usize::MAX, |text| text.len());
        let next = used
            .saturating_add(item_size)
            .saturating_add(usize::from(index > 0));
        if next > max {
            break;
        }
        used = next;
        kept += 1;
    }
    if kept == 0 || kept == total {
        // Nothing fits, or the list is not what makes the result large: no page helps.
        return response.replaced_by(too_large(size, fitting));
    }
    let mut all = all;
    all.truncate(kept);
    if let Some(items) = list_at(&mut value, path) {
        *items = all;
    }
    let Ok(text) = serde_json::to_string(&value) else {
        return response.replaced_by(too_large(size, fitting));
    };
    let warning = truncated(kept, total, fitting);
    response
        .with_payload(text, Some(value))
        .with_warning(warning)
}

/// The list of the payload: the value itself, or the array at the dotted `path` of fields.
fn list_at<'v>(value: &'v mut Value, path: Option<&str>) -> Option<&'v mut Vec<Value>> {
    let mut at = value;
    for field in path.into_iter().flat_map(|path| path.split('.')) {
        at = at.as_object_mut()?.get_mut(field)?;
    }
    at.as_array_mut()
}

/// The warning next to a cut list: how many items came back of how many, and the next call.
fn truncated(kept: usize, total: usize, fitting: &Fitting<'_>) -> ToolError {
    let limit = fitting.limit;
    let message = format!(
        "The result was cut to fit the limit of {} {}: {kept} of {total} items were returned.",
        limit.amount(),
        limit.unit()
    );
    let recovery = match next_call(kept, fitting) {
        Some(arguments) => format!("Call again with {arguments} for the next items."),
        None => narrow(fitting),
    };
    ToolError::new(ErrorCode::ResultTruncated, message)
        .suggest(recovery)
        .detail("returned", kept)
        .detail("total", total)
        .warning()
}

/// The error for a result over the limit that cannot be cut to a page.
fn too_large(size: usize, fitting: &Fitting<'_>) -> ToolError {
    let limit = fitting.limit;
    let message = format!(
        "The result was {} {}, over the limit of {} {}; it was not returned.",
        limit.measure(size),
        limit.unit(),
        limit.amount(),
        limit.unit()
    );
    ToolError::new(ErrorCode::ResultTruncated, message).suggest(narrow(fitting))
}

/// The arguments of the call that fetches the items after the `kept` returned: the arguments
/// as sent, the offset moved past them. The limit is kept as sent: a page cut again says so
/// again, and a page that comes whole is the last.
fn next_call(kept: usize, fitting: &Fitting<'_>) -> Option<String> {
    let page = fitting.action.result.page.as_ref()?;
    let mut arguments = fitting.arguments.clone()?;
    let offset = arguments
        .get(&page.offset)
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let kept = kept as u64;
    arguments.insert(
        page.offset.clone(),
        Value::from(offset.saturating_add(kept)),
    );
    serde_json::to_string(&arguments).ok()
}

/// The recovery that narrows the query: the action's filter fields, named from its schema
/// (its properties but the discriminator and the paging arguments).
fn narrow(fitting: &Fitting<'_>) -> String {
    let page = fitting.action.result.page.as_ref();
    let skipped = |name: &str| {
        Some(name) == fitting.discriminator
            || page.is_some_and(|page| name == page.offset || name == page.limit)
    };
    let fields: Vec<String> = (fitting.action.input_schema.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| {
            (properties.keys())
                .filter(|name| !skipped(name))
                .map(|name| format!("'{name}'"))
                .collect()
        })
        .unwrap_or_default();
    match fields.as_slice() {
        [] => "Ask for less: this action's result cannot be fetched in parts.".to_owned(),
        [one] => format!("Narrow the query with {one} so the result is smaller."),
        [rest @ .., last] => format!(
            "Narrow the query with {} or {last} so the result is smaller.",
            rest.join(", ")
        ),
    }
}
