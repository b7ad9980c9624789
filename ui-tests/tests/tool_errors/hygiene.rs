//! The expansion compiles lint-clean next to user items that shadow the prelude.

#![deny(warnings)]
#![allow(dead_code)] // the shadowing items exist only to be in scope

use super::Billing;

struct Result;
struct Ok;
struct Some;
struct None;
struct String;
struct Vec;
struct Box;
struct Option;
struct From;
struct Into;
// A constant named like a field: a generated `Missing { id, .. }` pattern would match
// against it instead of binding the field. (`__fusion_*` names are the expansion's own.)
#[allow(non_upper_case_globals)]
const id: u8 = 0;

#[derive(Debug, fusion::ToolErrors)]
#[tool_error(tool = Billing, category = "not_found")]
enum ShadowedError {
    #[tool_error(NOT_FOUND, recovery = "Look for {id} again", actions(list_invoices))]
    Missing {
        #[detail]
        id: u32,
        #[retry_after]
        after: u64,
    },
    #[tool_error(internal)]
    Broken(std::io::Error),
}

impl std::fmt::Display for ShadowedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("shadowed")
    }
}

#[test]
fn expansion_ignores_shadowing_items() {
    let err = fusion::ToolError::from(ShadowedError::Missing { id: 3, after: 1 });
    assert_eq!(
        err.recovery(),
        ::core::option::Option::Some("Look for 3 again")
    );
    let err = fusion::ToolError::from(ShadowedError::Broken(std::io::Error::other("x")));
    assert_eq!(*err.code(), fusion::ErrorCode::InternalError);
}
