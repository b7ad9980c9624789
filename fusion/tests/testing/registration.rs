//! Registration: a flat name claimed twice and a tool registered twice are refused.

use fusion::testing::Tester;

use super::support::{Foo, FooBar};

#[test]
#[should_panic(expected = "the name `foo_bar_baz` of tool `foo_bar` is already taken")]
fn a_flat_name_claimed_twice_is_refused_like_a_server_does() {
    let _ = Tester::new().tool(Foo).tool(FooBar);
}

#[test]
#[should_panic(expected = "the name `foo` of tool `foo` is already taken")]
fn a_tool_registered_twice_is_refused() {
    let _ = Tester::new().tool(Foo).tool(Foo);
}
