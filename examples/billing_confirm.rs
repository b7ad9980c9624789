//! `--demo`, the confirmation steps: `refund` asks the user through MCP elicitation. A client
//! that cannot ask gets CONFIRMATION_UNAVAILABLE (the model cannot confirm for the user); a
//! client that can ask shows the question to its user (here, one who says yes).

use fusion::server::{Exposition, Server};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde_json::json;

use super::{call_and_show, heading, request};

/// The two paths of a confirmation, as steps `number` and `number + 1`.
pub(crate) async fn run(server: Server, exposition: Exposition, number: u32) -> anyhow::Result<()> {
    let refund = json!({"invoice_id": "inv_0002", "amount_cents": 100});
    let (tool, arguments) = request(exposition, "refund", refund.clone())
        .expect("refund has a request in both expositions");

    heading(
        number,
        "A destructive action asks the user first; this client cannot ask, so it is not done",
    );
    let client = server.clone().serve_in_process(()).await?;
    call_and_show(&client, "", &tool, arguments.clone()).await?;
    client.cancel().await?;

    heading(
        number + 1,
        "The same refund from a client that can ask its user (MCP elicitation)",
    );
    let client = server.serve_in_process(UserWhoAgrees).await?;
    call_and_show(&client, "", &tool, arguments).await?;
    client.cancel().await?;
    Ok(())
}

/// A client that declares elicitation and whose user agrees to every question.
struct UserWhoAgrees;

impl ClientHandler for UserWhoAgrees {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.capabilities =
            serde_json::from_value::<ClientCapabilities>(json!({"elicitation": {"form": {}}}))
                .expect("a valid capability object");
        config.client_info = Implementation::new("fusion-billing-demo", env!("CARGO_PKG_VERSION"));
        config
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            println!("the client asks its user: {message} The user answers: yes");
        }
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true})))
    }
}
