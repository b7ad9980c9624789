//! Results that fit: a success whose payload text is over the result limit in force is cut
//! to the first items of its list that fit, with a `RESULT_TRUNCATED` warning naming the
//! call that fetches the rest, or refused with a `RESULT_TRUNCATED` error saying how large it
//! was. A payload within the limit is left as it is, its size the only thing looked at. Only
//! JSON written from a value is cut; text given as text never is.

use serde_json::{Map, Value};

use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;
use crate::envelope::join_last;
use crate::model::definition::{ActionDefinition, ToolDefinition};
use crate::model::response::ToolResponse;
use crate::model::result_fit::ResultLimit;

/// The longest next call written out whole, in bytes: a longer one names only the paging
/// arguments to change, so that the warning stays small and does not repeat long arguments.
const NEXT_CALL_BYTES: usize = 512;

/// What fitting one call's result needs: the limit in force, the action called, the
/// discriminator when the call named the action with it, and, when the action pages, the
/// arguments as the action read them (stringified JSON decoded where the server does): the
/// next call of a cut list is built from them.
pub(crate) struct Fitting<'a> {
    pub(crate) limit: ResultLimit,
    pub(crate) action: &'a ActionDefinition,
    pub(crate) discriminator: Option<&'a str>,
    pub(crate) arguments: Option<&'a Map<String, Value>>,
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
        .json_payload()
        .and_then(|payload| serde_json::from_str::<Value>(payload).ok());
    let Some(mut value) = parsed else {
        return response.replaced_by(too_large(size, fitting));
    };
    let path = fitting.action.result.items.as_deref();
    let Some(items) = list_at(&mut value, path) else {
        if let Some(path) = path {
            tracing::warn!(
                action = %fitting.action.name,
                items = path,
                "a result over its limit has no array at the action's `items` path: it is refused whole"
            );
        }
        return response.replaced_by(too_large(size, fitting));
    };
    let mut all = std::mem::take(items);
    let total = all.len();
    let size_of =
        |value: &Value| serde_json::to_string(value).map_or(usize::MAX, |text| text.len());
    // The payload with an empty list, then each item and the comma before it.
    let mut used = size_of(&value);
    let kept = (all.iter().enumerate())
        .take_while(|(index, item)| {
            let comma = usize::from(*index > 0);
            used = used.saturating_add(size_of(item)).saturating_add(comma);
            used <= max
        })
        .count();
    if kept == 0 || kept == total {
        // Nothing fits, or the list is not what makes the result large: no page helps.
        return response.replaced_by(too_large(size, fitting));
    }
    all.truncate(kept);
    if let Some(items) = list_at(&mut value, path) {
        *items = all;
    }
    let Ok(text) = serde_json::to_string(&value) else {
        return response.replaced_by(too_large(size, fitting));
    };
    // First among the warnings: that data is missing matters more than how arguments were read.
    let warning = truncated(kept, total, fitting);
    response
        .with_payload(text, Some(value))
        .with_leading_warning(warning)
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
    let recovery = next_call(kept, fitting)
        .or_else(|| narrow(fitting))
        .unwrap_or_else(|| {
            "The other items cannot be fetched: this action takes no arguments to page or narrow \
             its result."
                .to_owned()
        });
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
    let recovery = narrow(fitting).unwrap_or_else(|| {
        "Do not call this action again the same way: it takes no arguments to narrow its result."
            .to_owned()
    });
    ToolError::new(ErrorCode::ResultTruncated, message).suggest(recovery)
}

/// The recovery naming the call that fetches the items after the `kept` returned: the
/// arguments as read with the offset moved past them, and a limit sent reduced by them (the
/// caller asked for that many items from its offset). Written out whole when short, else only
/// the paging arguments to change.
fn next_call(kept: usize, fitting: &Fitting<'_>) -> Option<String> {
    let page = fitting.action.result.page.as_ref()?;
    // As the action read them: a stringified offset is the number it holds.
    let mut arguments = fitting.arguments?.clone();
    let number = |name: &str| arguments.get(name).and_then(Value::as_u64);
    let kept = kept as u64;
    let offset = number(&page.offset).unwrap_or(0).saturating_add(kept);
    let mut paging = Map::new();
    paging.insert(page.offset.clone(), Value::from(offset));
    if let Some(limit) = number(&page.limit).filter(|&limit| limit > kept) {
        paging.insert(page.limit.clone(), Value::from(limit - kept));
    }
    arguments.extend(paging.clone());
    let whole = serde_json::to_string(&arguments).ok()?;
    if whole.len() <= NEXT_CALL_BYTES {
        return Some(format!("Call again with {whole} for the next items."));
    }
    let paging = serde_json::to_string(&paging).ok()?;
    Some(format!(
        "Call again with the same arguments but {paging} for the next items."
    ))
}

/// Why `definition` cannot be fitted: an action whose paging names an argument its input
/// schema does not have (the next call it writes would be refused).
pub(crate) fn check_paging(definition: &ToolDefinition) -> Result<(), String> {
    for action in &definition.actions {
        let Some(page) = &action.result.page else {
            continue;
        };
        let Some(properties) = action
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
        else {
            continue;
        };
        for (role, name) in [("offset", &page.offset), ("limit", &page.limit)] {
            if !properties.contains_key(name) {
                let known: Vec<&str> = properties.keys().map(String::as_str).collect();
                return Err(format!(
                    "tool `{}`, action `{}`: page({role} = \"{name}\") names no argument of \
                     the action (its arguments: {})",
                    definition.name,
                    action.name,
                    known.join(", ")
                ));
            }
        }
    }
    Ok(())
}

/// The recovery that narrows the query: the action's filter fields, named from its schema
/// (its properties but the discriminator and the paging arguments); `None` when it has none.
fn narrow(fitting: &Fitting<'_>) -> Option<String> {
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
    (!fields.is_empty()).then(|| {
        format!(
            "Narrow the query with {} so the result is smaller.",
            join_last(&fields, " or ")
        )
    })
}
