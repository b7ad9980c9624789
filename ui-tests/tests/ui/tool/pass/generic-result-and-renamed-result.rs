//! Results the macro cannot read by name: one whose success and error types are the impl's
//! type parameters, and `Result` imported under another name. Both are fallible outputs, and
//! their error types' contracts reach the definition.

#![deny(warnings)]

use std::result::Result as Outcome;

use fusion::{Tool as _, ToolError, ToolErrors};

/// Where a catalog's items come from.
pub trait Source: Send + Sync + 'static {
    /// An item.
    type Item: serde::Serialize + 'static;
    /// Why an item is missing.
    type Error: ToolErrors;

    /// The first item.
    fn first(&self) -> Outcome<Self::Item, Self::Error>;
}

#[derive(Debug, ToolErrors)]
pub enum ShelfError {
    #[tool_error(NOT_FOUND)]
    Empty,
}

impl std::fmt::Display for ShelfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the shelf is empty")
    }
}

pub struct Shelf;

impl Source for Shelf {
    type Item = u32;
    type Error = ShelfError;

    fn first(&self) -> Outcome<u32, ShelfError> {
        Err(ShelfError::Empty)
    }
}

pub struct Catalog<S> {
    source: S,
}

/// A catalog.
#[fusion::tool]
impl<S: Source> Catalog<S> {
    /// The first item, with the source's own success and error types.
    #[action]
    fn first(&self) -> Result<S::Item, S::Error> {
        self.source.first()
    }

    /// The number of items, through the renamed import.
    #[action]
    fn count(&self) -> Outcome<u32, ToolError> {
        Ok(1)
    }
}

fn main() {
    let definition = Catalog { source: Shelf }.definition();
    assert_eq!(definition.actions[0].errors, ShelfError::error_contracts());
    assert_eq!(definition.actions[0].errors.len(), 1);
    assert!(definition.actions[1].errors.is_empty());
}
