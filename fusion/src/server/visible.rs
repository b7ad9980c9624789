//! Callers see only what they may call: with [`Server::hide_unauthorized_actions`], each
//! caller's `tools/list` holds only the actions its scopes allow, and a call of a hidden
//! action is answered exactly as a call of an action that does not exist.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleServer;
use rmcp::service::RequestContext as RmcpContext;

use crate::auth::Principal;
use crate::runtime::registry::Registry;
use crate::schema::InputSchemas;

use super::catalog::Catalog;
use super::{Exposition, Server};

/// How many distinct sets of allowed actions keep their catalog; past it the cache starts
/// over. The sets are as many as the distinct combinations of scopes that matter to the
/// tools, not one per caller: a handful in practice.
const VIEWS_KEPT: usize = 64;

/// The setting, and the catalog of each set of allowed actions met so far.
#[derive(Default)]
pub(super) struct Visibility {
    enabled: bool,
    /// By the allowed actions of every tool, flattened in registration then declaration order.
    views: Mutex<HashMap<Vec<bool>, Arc<View>>>,
}

/// What one caller sees: its catalog, and per tool which actions it may call.
pub(super) struct View {
    pub(super) catalog: Catalog,
    allowed: Vec<Vec<bool>>,
}

impl View {
    /// Which actions of tool `tool` (its index) the caller may call, in declaration order.
    pub(super) fn allowed(&self, tool: usize) -> &[bool] {
        self.allowed.get(tool).map_or(&[], Vec::as_slice)
    }
}

impl Clone for Visibility {
    /// The setting; the views are made again for the tools of the copy.
    fn clone(&self) -> Visibility {
        Visibility {
            enabled: self.enabled,
            views: Mutex::default(),
        }
    }
}

impl Visibility {
    /// Forgets the views: the tools, their guards or the exposition changed.
    pub(super) fn forget(&mut self) {
        self.views
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    pub(super) fn enabled(&self) -> bool {
        self.enabled
    }

    /// What `caller` sees of `registry`'s tools in `exposition`; `None` when the setting is
    /// off or the caller may call everything (the server's own catalog then).
    pub(super) fn view(
        &self,
        registry: &Registry,
        exposition: Exposition,
        schemas: InputSchemas,
        caller: Option<&Principal>,
    ) -> Option<Arc<View>> {
        if !self.enabled {
            return None;
        }
        let allowed: Vec<Vec<bool>> = (registry.tools().iter().enumerate())
            .map(|(index, registered)| {
                (registered.definition.actions.iter())
                    .map(|action| registry.allows(index, &action.name, caller))
                    .collect()
            })
            .collect();
        let key: Vec<bool> = allowed.iter().flatten().copied().collect();
        if !key.contains(&false) {
            return None;
        }
        let mut views = self.views.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(view) = views.get(&key) {
            return Some(Arc::clone(view));
        }
        if views.len() >= VIEWS_KEPT {
            views.clear();
        }
        let view = Arc::new(View {
            catalog: Catalog::visible(registry.tools(), exposition, schemas, &allowed),
            allowed,
        });
        views.insert(key, Arc::clone(&view));
        Some(view)
    }
}

impl Server {
    /// Shows each caller only the actions its scopes allow: `tools/list` leaves out the
    /// actions whose scope check the caller's [`Principal`] would fail (a grouped tool's
    /// discriminator `enum`, its fields and its `_meta` entries shrink with them; a tool with
    /// no allowed action is left out), and a call of a hidden action gets the answer a call of
    /// an action that does not exist gets, byte for byte: `UNKNOWN_ACTION` (or
    /// `MISSING_DISCRIMINATOR`) listing the visible actions only, or, for a tool the caller
    /// does not see at all, the unknown-tool answer ([`Server::unknown_tool_as_envelope`])
    /// naming the visible tools only. A caller without a principal (no auth layer, stdio
    /// without [`Server::local_principal`]) sees the actions that require no scope.
    ///
    /// The contract ([`Server::contract`](crate::server::Server), the lockfile) keeps every
    /// action. Clients cache `tools/list` and expect a stable list: a caller granted a scope
    /// later sees new tools only once its client lists them again (MCP
    /// `notifications/tools/list_changed` is not sent per caller). A `tools/list` cache scope
    /// ([`Server::list_cache`]) of [`CacheScope::Public`](super::CacheScope::Public) is
    /// answered as `Private` while this is on, since the lists differ per caller. With
    /// `Server::insufficient_scope_challenge` on as well, the challenge never fires: what a
    /// caller lacks a scope for is hidden, never answered 403. Scope names are not hidden:
    /// the bearer layer's 401 `scope` and the metadata's `scopes_supported` list the scopes
    /// they are given, to anyone. Default: off, every caller sees every tool and a missing
    /// scope is answered `FORBIDDEN`.
    pub fn hide_unauthorized_actions(self, enabled: bool) -> Server {
        self.set(|inner| inner.visible.enabled = enabled)
    }

    /// What the caller of an rmcp request sees; `None`: everything.
    pub(super) fn view_of(&self, context: &RmcpContext<RoleServer>) -> Option<Arc<View>> {
        self.view_for(self.caller_of(context))
    }

    /// What `caller` sees; `None`: everything.
    pub(super) fn view_for(&self, caller: Option<&Principal>) -> Option<Arc<View>> {
        let inner = &self.inner;
        let (exposition, schemas) = (inner.exposition, inner.input_schemas);
        (inner.visible).view(&inner.registry, exposition, schemas, caller)
    }

    /// The principal the call path will see for an rmcp request (see
    /// [`RequestContext::principal`](crate::RequestContext::principal)): the local principal
    /// on a connection this server serves itself, else the HTTP request's.
    fn caller_of<'a>(&'a self, context: &'a RmcpContext<RoleServer>) -> Option<&'a Principal> {
        if let Some(principal) = self.local_caller() {
            return Some(principal);
        }
        #[cfg(feature = "http")]
        if let Some(parts) = context.extensions.get::<http::request::Parts>() {
            return parts.extensions.get::<Principal>();
        }
        let _ = context;
        None
    }
}
