//! Issue 25 item 11 (a): a quote found only after normalising indentation
//! whose lines are indented relative to each other otherwise than the
//! file's is re-indented line by line to the file's structure when that is
//! unambiguous, and refused (code 4, nothing written) when it is not —
//! never landed with the quote's relative indentation. By edit,
//! multi_edit and apply_patch.

use agentcore::Outcome;
use agentcore::tools::edit::{EditError, apply_edit_tiered};
use serde_json::json;

use crate::support::files::{Env, ok};

const FILE: &str = "def f(x):\n    if x:\n        return 1\n    return 0\n";

#[tokio::test]
async fn the_issues_python_edit_keeps_the_body_inside_its_if() {
    let env = Env::new();
    env.put("a.py", FILE);
    env.read("a.py").await;
    let r = env
        .edit("a.py", "if x:\nreturn 1", "if x:\nreturn 10")
        .await;
    assert!(ok(&r).contains("re-indented"), "{}", r.text());
    assert_eq!(
        env.bytes("a.py"),
        b"def f(x):\n    if x:\n        return 10\n    return 0\n"
    );
}

#[test]
fn variants_map_each_line_to_the_files_line() {
    let edit = |old: &str, new: &str| apply_edit_tiered(FILE, old, new, false).map(|e| e.text);
    // A line added after one it stands beside: the indentation of the
    // quoted lines indented as it is, when they agree.
    assert_eq!(
        edit(
            "if x:\nreturn 1\nreturn 0\n",
            "if x:\nreturn 1\nreturn 0\nprint(x)\n"
        ),
        Err(EditError::IndentationUnclear),
        "the quote's lines at 0 are at 4 and 8 in the file: a new line at 0 is a guess"
    );
    // Replaced line for line: each takes its line's indentation.
    assert_eq!(
        edit("if x:\nreturn 1\nreturn 0\n", "if y:\nreturn 2\nreturn 3\n").unwrap(),
        "def f(x):\n    if y:\n        return 2\n    return 3\n"
    );
    // A line indented deeper than the line it replaces keeps the extra.
    assert_eq!(
        edit("if x:\nreturn 1", "if x:\n  return 1 if x else 2").unwrap(),
        "def f(x):\n    if x:\n          return 1 if x else 2\n    return 0\n"
    );
    // A consistent quote (relative indentation as the file's) is shifted
    // as before, and may add lines.
    assert_eq!(
        edit("if x:\n    return 1\n", "if x:\n    log()\n    return 1\n").unwrap(),
        "def f(x):\n    if x:\n        log()\n        return 1\n    return 0\n"
    );
    // Tabs: the file's own indentation is written.
    let tabs = "fn f() {\n\tif a {\n\t\tb();\n\t}\n}\n";
    let out = apply_edit_tiered(tabs, "if a {\nb();\n}", "if a {\nc();\n}", false).unwrap();
    assert_eq!(out.text, "fn f() {\n\tif a {\n\t\tc();\n\t}\n}\n");
}

#[tokio::test]
async fn an_unclear_reindentation_is_code_4_and_writes_nothing() {
    let env = Env::new();
    env.put("a.py", FILE);
    env.read("a.py").await;
    let r = env
        .edit("a.py", "if x:\nreturn 1", "if x:\nreturn 1\nlog()")
        .await;
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert_eq!(r.error_code, Some(4));
    assert!(
        r.text().contains("cannot be re-indented without guessing"),
        "{}",
        r.text()
    );
    assert_eq!(env.bytes("a.py"), FILE.as_bytes());
}

#[tokio::test]
async fn multi_edit_reindents_the_same_way() {
    let env = Env::new();
    env.put("a.py", FILE);
    env.read("a.py").await;
    let r = env
        .call(
            "multi_edit",
            json!({"file_path": "a.py", "edits": [
                {"old_string": "if x:\nreturn 1", "new_string": "if x:\nreturn 10"},
                {"old_string": "return 0", "new_string": "return -1"},
            ]}),
        )
        .await;
    ok(&r);
    assert_eq!(
        env.bytes("a.py"),
        b"def f(x):\n    if x:\n        return 10\n    return -1\n"
    );
}

#[tokio::test]
async fn apply_patch_reindents_added_lines_to_the_line_they_replace() {
    let env = Env::new();
    env.put("a.py", FILE);
    env.read("a.py").await;
    let patch =
        "*** Begin Patch\n*** Update File: a.py\n@@\n if x:\n-return 1\n+return 10\n*** End Patch";
    ok(&env.call("apply_patch", json!({"patch": patch})).await);
    assert_eq!(
        env.bytes("a.py"),
        b"def f(x):\n    if x:\n        return 10\n    return 0\n"
    );
    // And refuses what would be a guess.
    env.put("b.py", FILE);
    env.read("b.py").await;
    let patch =
        "*** Begin Patch\n*** Update File: b.py\n@@\n if x:\n return 1\n+log()\n*** End Patch";
    let r = env.call("apply_patch", json!({"patch": patch})).await;
    assert_eq!(r.error_code, Some(4), "{}", r.text());
    assert_eq!(env.bytes("b.py"), FILE.as_bytes());
}
