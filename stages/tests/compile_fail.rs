//! What must not compile: stages out of order, and forging a gated call.

#[test]
fn stage_order_is_checked_by_the_compiler() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
