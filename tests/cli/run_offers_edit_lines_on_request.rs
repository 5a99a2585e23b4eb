//! `agentcore run --tools default,edit_lines`: the default tools and
//! `edit_lines`, with `read` showing each line's anchor; an `edit_lines`
//! call with read's anchors changes the file. Without `edit_lines`, `read`
//! shows plain line numbers.

use agentcore::tools::edit_lines::anchor::line_hash;
use serde_json::json;

use crate::support::cli::{agentcore_run, end, events, text, turn, workspace};

#[test]
fn edit_lines_changes_a_file_by_reads_anchors() {
    let dir = workspace();
    let beta = format!("2:{}", line_hash(b"beta"));
    let input = [
        turn(&[("r", "read", json!({"file_path": "a.txt"}))]),
        turn(&[(
            "e",
            "edit_lines",
            json!({"file_path": "a.txt", "operations": [
                {"op": "replace", "start": beta, "text": "BETA"},
                {"op": "insert_after", "anchor": "0:", "text": "top"},
            ]}),
        )]),
    ]
    .concat();
    let output = agentcore_run(
        dir.path(),
        "jsonl",
        &["--tools", "default,edit_lines", "--mode", "accept-edits"],
        &input,
    );
    let events = events(&output);
    let read = text(end(&events, "r"));
    assert_eq!(
        read,
        format!(
            "     1:{}\talpha\n     2:{}\tbeta",
            line_hash(b"alpha"),
            line_hash(b"beta")
        )
    );
    let edited = end(&events, "e");
    assert_eq!(edited["outcome"], "success", "{edited}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "top\nalpha\nBETA\n"
    );
}

#[test]
fn without_edit_lines_read_shows_plain_numbers_and_edit_lines_is_unknown() {
    let dir = workspace();
    let input = [
        turn(&[("r", "read", json!({"file_path": "a.txt"}))]),
        turn(&[(
            "e",
            "edit_lines",
            json!({"file_path": "a.txt", "operations": [{"op": "delete", "start": "1:abc"}]}),
        )]),
    ]
    .concat();
    let output = agentcore_run(dir.path(), "jsonl", &["--mode", "accept-edits"], &input);
    let events = events(&output);
    assert_eq!(text(end(&events, "r")), "     1\talpha\n     2\tbeta");
    assert_ne!(end(&events, "e")["outcome"], "success");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "alpha\nbeta\n"
    );
}
