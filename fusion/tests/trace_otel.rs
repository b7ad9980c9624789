//! With the `opentelemetry` feature, a call whose `_meta` carries W3C Trace Context continues
//! the caller's trace.
#![cfg(feature = "opentelemetry")]

use fusion::RequestContext;
use fusion::testing::Tester;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

/// Says hello.
#[fusion::tool]
async fn hello() -> String {
    "hello".to_owned()
}

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

/// Runs one call with `meta` under an OpenTelemetry layer; returns the exported spans.
async fn exported(meta: serde_json::Value) -> Vec<opentelemetry_sdk::trace::SpanData> {
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let _default = tracing::subscriber::set_default(subscriber);
    let context = RequestContext::new().with_meta(meta.as_object().unwrap().clone());
    Tester::new()
        .tool(Hello)
        .call_with("hello", json!({}), context)
        .await
        .assert_success();
    provider.force_flush().unwrap();
    exporter.get_finished_spans().unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn a_traceparent_in_meta_makes_the_call_a_child_of_the_callers_span() {
    let traceparent = format!("00-{TRACE_ID}-{PARENT_ID}-01");
    let spans = exported(json!({"traceparent": traceparent})).await;
    let call = spans
        .iter()
        .find(|span| span.name == "tool_call")
        .expect("the call's span is exported");
    assert_eq!(call.span_context.trace_id().to_string(), TRACE_ID);
    assert_eq!(call.parent_span_id.to_string(), PARENT_ID);
}

#[tokio::test(flavor = "current_thread")]
async fn without_a_traceparent_the_call_starts_a_trace_of_its_own() {
    let spans = exported(json!({})).await;
    let call = spans
        .iter()
        .find(|span| span.name == "tool_call")
        .expect("the call's span is exported");
    assert_ne!(call.span_context.trace_id().to_string(), TRACE_ID);
    assert_eq!(
        call.parent_span_id,
        opentelemetry::trace::SpanId::INVALID,
        "a root span"
    );
}
