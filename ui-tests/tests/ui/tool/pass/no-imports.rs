//! The attribute used by its path, with no `use` of fusion, serde or schemars beyond the
//! user's own derives.

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Greeting {
    name: String,
}

struct Greeter;

/// Greets people.
#[fusion::tool]
impl Greeter {
    /// Says hello.
    #[action(read_only)]
    fn hello(&self, args: Greeting) -> String {
        format!("Hello, {}!", args.name)
    }
}

/// Says goodbye.
#[fusion::tool]
async fn goodbye(args: Greeting) -> String {
    format!("Goodbye, {}!", args.name)
}

fn main() {
    use fusion::Tool as _;
    assert_eq!(Greeter.definition().name, "greeter");
    assert_eq!(Goodbye.definition().name, "goodbye");
}
