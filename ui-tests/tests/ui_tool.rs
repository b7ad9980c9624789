//! Compile-fail and compile-pass cases of `#[fusion::tool]`: one mistake per file under
//! `tests/ui/tool/fail/`, named after the mistake; `.stderr` files are generated with
//! `TRYBUILD=overwrite` and reviewed.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/tool/fail/*.rs");
    cases.pass("tests/ui/tool/pass/*.rs");
}
