//! `agentcore run --format pretty` shows each call's activity line ("Reading
//! notes.md") from the arguments as the pipeline will read them, coerced
//! under the tool's schema: arguments a weak model sends as strings ("2" for
//! an integer, a whole call as JSON text) still get their line.

use crate::support::cli;

#[test]
fn activity_lines_come_from_coerced_arguments() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "one\ntwo\nthree\n").unwrap();
    let turn = serde_json::json!({"turn": [
        // An integer sent as a string.
        {"id": "r1", "name": "read", "args": {"file_path": "notes.md", "offset": "2"}},
        // The arguments as JSON text, as OpenAI-style APIs send them.
        {"id": "r2", "name": "read", "args": "{\"file_path\": \"notes.md\", \"limit\": \"1\"}"},
        // Exact arguments, for comparison.
        {"id": "l1", "name": "ls", "args": {"path": "."}}
    ]});
    let output = cli::agentcore_run(dir.path(), "pretty", &[], &format!("{turn}\n"));
    assert!(output.status.success(), "{output:?}");
    let out = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        out.matches("Reading notes.md").count(),
        2,
        "both reads show their activity:\n{out}"
    );
    assert!(out.contains("Listing ."), "{out}");
}
