//! What must not compile: stages out of order, forging a gated call, and
//! claiming to be a stage (or a state `Execute` accepts) from outside.

#[test]
fn stage_order_is_checked_by_the_compiler() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
