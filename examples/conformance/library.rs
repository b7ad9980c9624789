//! The conformance server's prompts, resources, resource template, subscriptions, completions
//! and logging level: an rmcp handler beside fusion's tools (`Server::handler`).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, ImageContent, InputRequiredResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams, Prompt,
    PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Reference, Resource, ResourceContents, ResourceTemplate, Role,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext as RmcpContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};

use super::IMAGE_PNG;

/// The suite's prompts, resources, resource template, subscriptions and completions.
#[derive(Clone, Default)]
pub(crate) struct Library {
    subscriptions: Arc<Mutex<BTreeSet<String>>>,
}

impl ServerHandler for Library {
    fn get_info(&self) -> ServerConfig {
        #[allow(
            deprecated,
            reason = "the 2025-06-18 logging capability the suite checks for"
        )]
        let capabilities = ServerCapabilities::builder()
            .enable_prompts()
            // `test_trigger_prompt_change` tells clients (`Server::list_changes`).
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_completions()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
    }

    #[allow(deprecated, reason = "MCP logging (2025-06-18), which the suite tests")]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RmcpContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RmcpContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new("test://static-text", "Static Text Resource")
                .with_description("A static text resource for testing")
                .with_mime_type("text/plain"),
            Resource::new("test://static-binary", "Static Binary Resource")
                .with_description("A static binary/blob resource for testing")
                .with_mime_type("image/png"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RmcpContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("test://template/{id}/data", "Dynamic Resource")
                .with_description("A dynamic resource with parameter substitution")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RmcpContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" => ResourceContents::TextResourceContents {
                uri: uri.into(),
                mime_type: Some("text/plain".into()),
                text: "This is the content of the static text resource.".into(),
                meta: None,
            },
            "test://static-binary" => ResourceContents::BlobResourceContents {
                uri: uri.into(),
                mime_type: Some("image/png".into()),
                blob: IMAGE_PNG.into(),
                meta: None,
            },
            _ => {
                let id = uri
                    .strip_prefix("test://template/")
                    .and_then(|rest| rest.strip_suffix("/data"));
                let Some(id) = id else {
                    return Err(ErrorData::resource_not_found(
                        format!("Resource not found: {uri}"),
                        Some(serde_json::json!({ "uri": uri })),
                    ));
                };
                let data = serde_json::json!({
                    "id": id, "templateTest": true, "data": format!("Data for ID: {id}")
                });
                ResourceContents::TextResourceContents {
                    uri: uri.into(),
                    mime_type: Some("application/json".into()),
                    text: data.to_string(),
                    meta: None,
                }
            }
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RmcpContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        lock(&self.subscriptions).insert(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RmcpContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        lock(&self.subscriptions).remove(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RmcpContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let arguments = vec![
            PromptArgument::new("arg1")
                .with_description("First test argument")
                .with_required(true),
            PromptArgument::new("arg2")
                .with_description("Second test argument")
                .with_required(false),
        ];
        Ok(ListPromptsResult::with_all_items(vec![
            Prompt::new(
                "test_simple_prompt",
                Some("A simple test prompt with no arguments"),
                None,
            ),
            Prompt::new(
                "test_prompt_with_arguments",
                Some("A test prompt that accepts arguments"),
                Some(arguments),
            ),
            Prompt::new(
                "test_prompt_with_embedded_resource",
                Some("A test prompt that includes an embedded resource"),
                None,
            ),
            Prompt::new(
                "test_prompt_with_image",
                Some("A test prompt that includes an image"),
                None,
            ),
            Prompt::new(
                "test_input_required_result_prompt",
                Some("A test prompt that asks the user for its context first (SEP-2322)"),
                None,
            ),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RmcpContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let text = |text: &str| PromptMessage::new_text(Role::User, text);
        let messages = match request.name.as_str() {
            "test_simple_prompt" => vec![text("This is a simple test prompt.")],
            "test_prompt_with_arguments" => {
                let arguments = request.arguments.unwrap_or_default();
                let argument = |name: &str| {
                    let value = arguments.get(name).and_then(|value| value.as_str());
                    value.unwrap_or_default().to_owned()
                };
                vec![text(&format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    argument("arg1"),
                    argument("arg2")
                ))]
            }
            "test_prompt_with_embedded_resource" => vec![
                text("Here is a resource:"),
                PromptMessage::new_resource(
                    Role::User,
                    "test://static-text".into(),
                    Some("text/plain".into()),
                    Some("Resource content for prompt".into()),
                    None,
                    None,
                    None,
                ),
            ],
            "test_prompt_with_image" => vec![
                text("Here is an image:"),
                PromptMessage::new(
                    Role::User,
                    ContentBlock::Image(ImageContent::new(IMAGE_PNG, "image/png")),
                ),
            ],
            // rmcp's prompts have no rounds of their own: the input request by hand.
            "test_input_required_result_prompt" => {
                let answer = request.input_responses.as_ref();
                let answer = answer.and_then(|answers| answers.get("user_context"));
                let Some(context) = answer.and_then(|answer| answer["content"]["context"].as_str())
                else {
                    let requests = serde_json::from_value(serde_json::json!({"user_context": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "What context should the prompt use?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"context": {"type": "string"}},
                                "required": ["context"]
                            }
                        }
                    }}));
                    let requests =
                        requests.map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                    return Ok(InputRequiredResult::from_input_requests(requests).into());
                };
                vec![text(&format!("Prompt with context: {context}"))]
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("Unknown prompt: {other}"),
                    None,
                ));
            }
        };
        Ok(GetPromptResult::new(messages).into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RmcpContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let values: &[&str] = match (&request.r#ref, request.argument.name.as_str()) {
            (Reference::Resource(_), "id") => &["1", "2", "3"],
            (Reference::Prompt(_), "arg1" | "arg2") => &["paris", "park", "party"],
            _ => &[],
        };
        let prefix = request.argument.value.as_str();
        let values = (values.iter())
            .filter(|value| value.starts_with(prefix))
            .map(|value| (*value).to_owned())
            .collect();
        let completion =
            CompletionInfo::new(values).map_err(|error| ErrorData::internal_error(error, None))?;
        Ok(CompleteResult::new(completion))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
