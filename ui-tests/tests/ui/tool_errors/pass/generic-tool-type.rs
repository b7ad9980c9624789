pub struct Gen<S>(S);

/// A generic tool.
#[fusion::tool]
impl<S: Send + Sync + 'static> Gen<S> {
    /// Gets.
    #[action]
    pub fn get(&self) {}
}

/// Its error, naming one instantiation as the tool.
#[derive(Debug, fusion::ToolErrors)]
#[tool_error(tool = "Gen<u8>")]
pub enum GenError {
    /// Not there.
    #[tool_error(NOT_FOUND, actions(get))]
    Missing,
}

impl std::fmt::Display for GenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("missing")
    }
}

fn main() {
    let error = fusion::ToolError::from(GenError::Missing);
    // A tool of one action is called by its own name.
    assert!(error.to_xml().contains("<action>gen</action>"));
}
