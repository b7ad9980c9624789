//! The property shared by `tests/billing_arbitrary.rs` (proptest) and the `dispatch_billing`
//! fuzz target (`fuzz/`, which includes this file by path): any arguments object sent to the
//! billing tool is answered, without a panic, and every envelope in the answer is well-formed.

use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::sync::Once;
use std::task::{Context, Poll, Waker};

use fusion::{RequestContext, Tool, ToolExt, ToolResponse};
use serde_json::{Map, Value};

/// Calls `tool` with `arguments` in-process. The billing actions are synchronous, so the call is
/// ready within a few polls; one that is not is reported as a hang.
pub fn call(tool: impl Tool, arguments: Map<String, Value>) -> Result<ToolResponse, String> {
    let mut future = pin!(tool.call(arguments, RequestContext::new()));
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1000 {
        if let Poll::Ready(response) = future.as_mut().poll(&mut cx) {
            return Ok(response);
        }
    }
    Err("the call is still pending after 1000 polls".to_owned())
}

/// Checks that `xml` is one well-formed XML 1.0 element: a `<tool_error>` or a
/// `<validation_error>`.
pub fn check_envelope(xml: &str) -> Result<(), String> {
    let doc =
        roxmltree::Document::parse(xml).map_err(|e| format!("not well-formed: {e}\n{xml}"))?;
    match doc.root_element().tag_name().name() {
        "tool_error" | "validation_error" => Ok(()),
        other => Err(format!("unexpected root element <{other}>\n{xml}")),
    }
}

thread_local! {
    /// Set by the panic hook [`watch_panics`] installs when a panic starts on this thread.
    static PANICKED: Cell<bool> = const { Cell::new(false) };
}

/// Installs (once) a panic hook that marks the panicking thread, then runs the hook that was
/// there before (libFuzzer's, which aborts; or the default one, which prints). A panic inside
/// the call is caught by the call machinery and answered as a well-formed `INTERNAL_ERROR`
/// envelope, so without this the proptest twin would never see one.
fn watch_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICKED.with(|p| p.set(true));
            previous(info);
        }));
    });
}

/// The property: the call answers without a panic (not even one the call machinery catches
/// and answers as `INTERNAL_ERROR`), and every envelope of the answer (the error, or each
/// warning next to a success) is well-formed.
pub fn check_call(tool: impl Tool, arguments: Map<String, Value>) -> Result<(), String> {
    watch_panics();
    PANICKED.with(|p| p.set(false));
    let response = call(tool, arguments)?;
    if PANICKED.with(|p| p.replace(false)) {
        return Err("a panic inside the call (answered as INTERNAL_ERROR)".to_owned());
    }
    let texts = response.content_texts();
    let envelopes = if response.payload().is_some() {
        &texts[1..]
    } else {
        &texts[..]
    };
    envelopes.iter().try_for_each(|xml| check_envelope(xml))
}
