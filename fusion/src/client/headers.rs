//! The `Mcp-Param-*` headers of a call (MCP 2026-07-28 over Streamable HTTP, SEP-2243): a
//! server refusing a call for its headers (`-32020`) gets the tools listed again and the call
//! once more.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientRequest, ErrorCode, ListToolsRequest,
    PaginatedRequestParams, ServerResult,
};
use rmcp::service::ServiceError;

use super::call::Client;
use super::error::CallError;

/// The most pages of `tools/list` read to refresh the schemas (a server paging forever stops
/// here).
const MAX_PAGES: usize = 100;

impl Client {
    /// One `tools/call`, sent once more after listing the tools when the server refuses its
    /// headers.
    ///
    /// Corrects rmcp's Streamable HTTP client, which mirrors the arguments of `x-mcp-header`
    /// annotated parameters into `Mcp-Param-*` headers only from the input schemas of the last
    /// `tools/list` its transport carried: a call made before any listing (a client made with
    /// [`Client::new`]), or after the tool's schema changed, goes without them or with stale
    /// ones, and the server refuses it with `-32020` (`HEADER_MISMATCH`, HTTP 400) before
    /// running anything. The tools are then listed again, every page and past rmcp's response
    /// cache so that the transport reads them, and the call is sent a second time; a second
    /// refusal is the caller's.
    pub(super) async fn call_tool_fitted(
        &self,
        params: &CallToolRequestParams,
    ) -> Result<CallToolResponse, CallError> {
        match self.call_tool_once(params.clone()).await {
            Err(CallError::Protocol(ServiceError::McpError(error)))
                if error.code == ErrorCode::HEADER_MISMATCH =>
            {
                self.relist_tools().await?;
                self.call_tool_once(params.clone()).await
            }
            outcome => outcome,
        }
    }

    /// Every page of `tools/list`, sent over the transport (never answered from rmcp's cache).
    async fn relist_tools(&self) -> Result<(), CallError> {
        let peer = &self.inner().peer;
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
            let ServerResult::ListToolsResult(page) = peer
                .send_request(request)
                .await
                .map_err(CallError::Protocol)?
            else {
                return Err(CallError::Protocol(ServiceError::UnexpectedResponse));
            };
            cursor = page.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
        Ok(())
    }
}
