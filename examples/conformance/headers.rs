//! The conformance tool whose argument also travels in an HTTP header: `region`, annotated
//! `x-mcp-header` (MCP 2026-07-28, "Custom Headers from Tool Parameters", SEP-2243), which a
//! Streamable HTTP client sends as `Mcp-Param-Region` and the server checks against the body
//! (the `http-custom-header-server-validation` scenario).

use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct RegionArgs {
    /// The region to run in; also sent as the `Mcp-Param-Region` header.
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
}

/// Echoes the region its call was routed by
///
/// Its input schema is published as written: the Gemini API would refuse the `x-mcp-header`
/// keyword, which the portable schema keeps too.
#[fusion::tool(input_schema = "as_written")]
pub(crate) fn test_header_param(args: RegionArgs) -> String {
    format!("Region: {}", args.region)
}
