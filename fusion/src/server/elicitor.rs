//! The elicitor and the sampler of a call: how
//! [`RequestContext::confirm`](crate::RequestContext::confirm) and
//! [`RequestContext::elicit`](crate::RequestContext::elicit) reach the user through the client
//! (MCP `elicitation/create`, form mode), and how
//! [`RequestContext::sample`](crate::RequestContext::sample) reaches its model
//! (`sampling/createMessage`), and how [`RequestContext::list_roots`](crate::RequestContext::list_roots)
//! lists the client's roots (`roots/list`): for clients of the 2025 revisions, which take
//! server-to-client requests.

use std::sync::Arc;

use rmcp::model::{ClientCapabilities, ElicitRequestParams, ElicitationAction};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Map, Value, json};

use crate::model::context::{Elicited, Elicitor, RootsLister, Sampler};

/// The elicitor for a client that declared it can elicit in form mode (`elicitation` with
/// `form`, or with neither mode: the 2025-06-18 form); `None` otherwise.
pub(super) fn for_peer(peer: &Peer<RoleServer>) -> Option<Elicitor> {
    let info = peer
        .peer_info()
        .filter(|info| info.protocol_version.has_initialize())?;
    if !elicits_forms(&info.capabilities) {
        return None;
    }
    let peer = peer.clone();
    Some(Arc::new(move |message, schema| {
        let peer = peer.clone();
        Box::pin(async move { ask(&peer, message, schema).await })
    }))
}

/// Whether a client declaring `capabilities` can show a form: `elicitation` with `form`, or
/// with neither mode (the 2025-06-18 form).
pub(super) fn elicits_forms(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .elicitation
        .as_ref()
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The sampler for a client that declared the `sampling` capability; `None` otherwise. Revisions
/// without `initialize` (2026-07-28 on) forbid server-to-client requests: such a client cannot
/// be asked, whatever it declares (nor elicit, above).
#[allow(
    deprecated,
    reason = "sampling is deprecated from the 2026-07-28 revision on; 2025 clients still use it"
)]
pub(super) fn sampler_for_peer(peer: &Peer<RoleServer>) -> Option<Sampler> {
    let info = peer
        .peer_info()
        .filter(|info| info.protocol_version.has_initialize())?;
    info.capabilities.sampling.as_ref()?;
    let peer = peer.clone();
    Some(Arc::new(move |request| {
        let peer = peer.clone();
        Box::pin(async move {
            let answer = peer.create_message(request).await;
            answer.map_err(|error| error.to_string())
        })
    }))
}

/// The roots lister for a client of the 2025 revisions that declared the `roots` capability;
/// `None` otherwise (a 2026-07-28 client is asked through the call's round).
#[allow(
    deprecated,
    reason = "roots are deprecated from the 2026-07-28 revision on; 2025 clients still offer them"
)]
pub(super) fn roots_for_peer(peer: &Peer<RoleServer>) -> Option<RootsLister> {
    let info = peer
        .peer_info()
        .filter(|info| info.protocol_version.has_initialize())?;
    info.capabilities.roots.as_ref()?;
    let peer = peer.clone();
    Some(Arc::new(move || {
        let peer = peer.clone();
        Box::pin(async move {
            let answer = peer.list_roots().await;
            answer
                .map(|listed| listed.roots)
                .map_err(|error| error.to_string())
        })
    }))
}

async fn ask(peer: &Peer<RoleServer>, message: String, schema: Map<String, Value>) -> Elicited {
    let params = json!({"mode": "form", "message": message, "requestedSchema": schema});
    let params: ElicitRequestParams = match serde_json::from_value(params) {
        Ok(params) => params,
        Err(error) => return Elicited::Failed(format!("the form cannot be elicited: {error}")),
    };
    match peer.create_elicitation(params).await {
        Ok(result) => match result.action {
            ElicitationAction::Accept => match result.content {
                Some(Value::Object(content)) => Elicited::Accepted(content),
                _ => Elicited::Accepted(Map::new()),
            },
            ElicitationAction::Decline => Elicited::Declined,
            // A later revision's action: not an acceptance.
            _ => Elicited::Cancelled,
        },
        Err(error) => Elicited::Failed(error.to_string()),
    }
}
