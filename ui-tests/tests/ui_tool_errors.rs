//! Compile-fail and compile-pass cases of `#[derive(ToolErrors)]`: one mistake per file under
//! `ui/tool_errors/fail/`, expansions that must compile under `ui/tool_errors/pass/`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/tool_errors/fail/*.rs");
    t.pass("tests/ui/tool_errors/pass/*.rs");
}
