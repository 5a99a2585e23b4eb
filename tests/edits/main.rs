//! edit, multi_edit, apply_patch and edit_lines: their laws, the robustness corpus,
//! tolerant matching, encodings and line endings.
//!
//! One test binary; each module is a former `tests/NAME.rs` (run one with
//! `cargo test --test edits NAME`). What the binaries share is in
//! tests/support/.

#[path = "../support/mod.rs"]
mod support;

mod apply_patch_accepts_padded_headers;
mod apply_patch_cancelled_midway_reports_cancelled;
mod apply_patch_lands_all_or_nothing;
mod edit_laws;
mod edit_lines_equals_changes_by_index;
mod edit_lines_follows_the_ledger_and_explains_bad_input;
mod edit_lines_keeps_encodings_and_line_endings;
mod edit_lines_refuses_stale_and_ambiguous_anchors;
mod edit_reads_once_and_still_refuses_lost_updates;
mod edit_robustness_corpus;
mod edit_tiers_laws;
mod edit_tolerant_matching;
mod edit_tool;
mod edits_count_overlapping_places;
mod edits_end_lines_as_the_file_does;
mod edits_forgive_inner_runs_and_escaped_text;
mod edits_reindent_to_the_files_structure;
mod legacy_encodings_round_trip;
mod multi_edit_is_all_or_nothing;
mod utf32_files_are_decoded_never_misread;
