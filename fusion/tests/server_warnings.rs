//! The warning a server logs at registration for an output schema that is not an object
//! schema. In a test binary of its own: `tracing` caches, per callsite, whether any subscriber
//! wants its events, and a test on another thread registering the same callsite while this
//! one's subscriber was being set up could cache "nobody" and drop the event (the test lost it
//! about once in 12 runs beside the other server tests).

use fusion::server::{Exposition, Server};

struct Shop;

/// Receipts of the shop.
#[fusion::tool]
impl Shop {
    /// Lists receipt IDs: an array, so no object schema to advertise.
    #[action(output_schema)]
    fn ids(&self) -> Vec<String> {
        vec!["r_1".to_owned()]
    }

    /// Counts receipts; declares no output schema.
    #[action]
    fn count(&self) -> u32 {
        1
    }
}

#[path = "support/captured.rs"]
mod captured;
use captured::Captured;

#[test]
fn a_non_object_output_schema_is_logged_once_at_registration() {
    let log = Captured::default();
    let subscriber = log.builder().finish();
    // Every builder call rebuilds the catalog; the warning comes from registration only.
    tracing::subscriber::with_default(subscriber, || {
        Server::new("shop-server", "1.0.0")
            .tool(Shop)
            .exposition(Exposition::Flat)
            .instructions("Receipts.")
    });
    let log = log.text();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(lines[0].contains("WARN"), "{log}");
    assert!(lines[0].contains("tool=\"shop\" action=\"ids\""), "{log}");
    assert!(
        lines[0].contains("advertised without `outputSchema`"),
        "{log}"
    );
}
