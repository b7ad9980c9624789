//! One `tracing` span per tool call, and the caller's trace continued through OpenTelemetry.
//! This module has no items: it documents what fusion records.
//!
//! Every call a server or a tester runs is inside a span named `tool_call` (target
//! `fusion::call`, level `INFO`) with these fields:
//!
//! | field | value |
//! |---|---|
//! | `tool` | the tool's name (`billing`) |
//! | `action` | the action, once routing found it (`charge`); empty when routing failed |
//! | `outcome` | `ok`, `error` (a tool error of severity error or critical), `warning` (a tool error of severity warning) or `invalid` (the arguments were rejected) |
//! | `code` | the error code (`NOT_FOUND`, `VALIDATION_ERROR`); empty on success |
//! | `category` | the error category (`not_found`, `validation`); empty on success |
//! | `latency_ms` | wall time of the call in milliseconds, validation to response |
//!
//! Everything a call logs (an internal error's cause and id, a guard's refusal) is inside
//! the span, so a formatting subscriber prints the tool and action next to it. To get one
//! line per call, let the subscriber report span closes (`tracing_subscriber::fmt()
//! .with_span_events(FmtSpan::CLOSE)`), or export the spans with `tracing-opentelemetry`.
//!
//! With the cargo feature `opentelemetry`, a call whose `_meta` carries a W3C Trace Context
//! (`traceparent`, and optionally `tracestate`; W3C Trace Context, section 3) continues that
//! trace: the span's OpenTelemetry parent is the caller's span, extracted with the text map
//! propagator installed globally
//! (`opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new())`). Without
//! a propagator installed, or without `traceparent`, the span starts a trace of its own.

use std::time::Instant;

use tracing::Span;
use tracing::field::Empty;

use crate::model::response::ToolResponse;

/// The span of one call of `tool`. Its `action` and outcome fields are recorded later.
pub(crate) fn call_span(tool: &str) -> Span {
    tracing::info_span!(
        target: "fusion::call",
        "tool_call",
        tool,
        action = Empty,
        outcome = Empty,
        code = Empty,
        category = Empty,
        latency_ms = Empty,
    )
}

/// Records the routed action on `span`.
pub(crate) fn record_action(span: &Span, action: &str) {
    span.record("action", action);
}

/// Records how the call ended on `span`: outcome, code, category and latency since `started`.
pub(crate) fn record_response(span: &Span, response: &ToolResponse, started: Instant) {
    let latency_ms = started.elapsed().as_secs_f64() * 1e3;
    span.record("latency_ms", latency_ms);
    if let Some(error) = response.tool_error() {
        let outcome = if error.is_error() { "error" } else { "warning" };
        span.record("outcome", outcome);
        span.record("code", error.code().as_str());
        span.record("category", error.error_category().as_str());
    } else if response.validation_error().is_some() {
        span.record("outcome", "invalid");
        span.record("code", "VALIDATION_ERROR");
        span.record("category", "validation");
    } else {
        span.record("outcome", "ok");
    }
}

/// Makes the caller's trace, carried in the request's `_meta` as W3C Trace Context, the
/// parent of `span`.
#[cfg(feature = "opentelemetry")]
pub(crate) fn continue_trace(span: &Span, meta: &serde_json::Map<String, serde_json::Value>) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    if !meta.contains_key("traceparent") {
        return;
    }
    let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&MetaCarrier(meta))
    });
    // Fails only when no OpenTelemetry layer is installed: then there is no trace to join.
    let _ = span.set_parent(parent);
}

/// The request's `_meta` as an OpenTelemetry text map: its string values by key.
#[cfg(feature = "opentelemetry")]
struct MetaCarrier<'a>(&'a serde_json::Map<String, serde_json::Value>);

#[cfg(feature = "opentelemetry")]
impl opentelemetry::propagation::Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)?.as_str()
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}
