struct TwoFactor;

// MCP and Anthropic accept it; Gemini wants a letter or `_` first.
#[fusion::tool(name = "2fa")]
impl TwoFactor {
    /// Sends a code.
    #[action]
    fn send(&self) {}
}

fn main() {}
