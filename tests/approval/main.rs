//! The approval engine: its decisions, an approver bound late, and the
//! permission of its own to run unconfined.
//!
//! One test binary; each module is a former `tests/NAME.rs` (run one with
//! `cargo test --test approval NAME`). What the binaries share is in
//! tests/support/.

#[path = "../support/mod.rs"]
mod support;

mod approval_asks_a_late_bound_approver_in_time;
mod approval_decisions;
mod running_unconfined_needs_its_own_permission;
