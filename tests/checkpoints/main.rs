//! Checkpoints and rewind: every call that can write is recorded, and a
//! rewind puts the tree back byte for byte without clobbering changes no
//! call made.
//!
//! One test binary (run one with `cargo test --test checkpoints NAME`).
//! What the binaries share is in tests/support/.

#[path = "../support/mod.rs"]
mod support;

mod a_command_is_found_by_the_change_feed;
mod a_diff_shows_what_a_rewind_would_change;
mod edit_lines_is_recorded_and_rewound;
mod every_change_is_recorded_and_rewound;
mod rewind_laws;
mod rewind_never_clobbers_what_no_call_made;
mod the_model_lists_and_rewinds_with_its_tools;
mod the_store_survives_crashes;
