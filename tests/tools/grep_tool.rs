//! grep through the pipeline: the three output layouts, every parameter,
//! walk rules, cuts and caps, and clear errors.

use std::path::Path;
use std::sync::Arc;

use agentcore::TypedTool;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::grep::GrepTool;
use agentcore::{
    Call, CallContext, CancelReason, EventSink, GatedArgs, InterruptBehavior, Outcome, Pipeline,
    ToolRegistry, ToolResult,
};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::files::{age, write};

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(r, ".gitignore", "ignored/\n");
    write(
        r,
        "src/main.rs",
        "use std::io;\n\nfn main() {\n    let needle = 1;\n    println!(\"{needle}\");\n}\n",
    );
    write(r, "src/lib.rs", "pub fn needle() {}\n// NEEDLE in caps\n");
    write(r, "docs/guide.md", "a needle in the docs\n");
    write(r, ".hidden/notes.txt", "hidden needle\n");
    write(r, "ignored/skip.rs", "needle ignored\n");
    write(r, ".git/config", "needle in vcs\n");
    write(r, "data.bin", b"needle\0\x01\x02binary");
    age(r, "src/main.rs", 10);
    age(r, "src/lib.rs", 20);
    age(r, "docs/guide.md", 30);
    age(r, ".hidden/notes.txt", 40);
    dir
}

async fn grep(root: &Path, args: Value) -> ToolResult {
    let ws = Workspace::new(root).unwrap();
    let registry = ToolRegistry::new()
        .with(GrepTool::new(ws).into_dyn())
        .unwrap();
    Pipeline::builder()
        .registry(Arc::new(registry))
        .build()
        .service()
        .oneshot(Call::new("g1", "grep", args))
        .await
        .unwrap()
}

async fn ok(root: &Path, args: Value) -> String {
    let r = grep(root, args).await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    r.text()
}

#[tokio::test]
async fn files_mode_lists_newest_first_with_hidden_and_without_ignored_vcs_binary() {
    let dir = tree();
    assert_eq!(
        ok(dir.path(), json!({"pattern": "needle"})).await,
        "Found 4 files\nsrc/main.rs\nsrc/lib.rs\ndocs/guide.md\n.hidden/notes.txt"
    );
}

#[tokio::test]
async fn content_mode_shows_path_line_text_in_path_order() {
    let dir = tree();
    assert_eq!(
        ok(
            dir.path(),
            json!({"pattern": "needle", "output_mode": "content"})
        )
        .await,
        ".hidden/notes.txt:1:hidden needle
docs/guide.md:1:a needle in the docs
src/lib.rs:1:pub fn needle() {}
src/main.rs:4:    let needle = 1;
src/main.rs:5:    println!(\"{needle}\");"
    );
    assert_eq!(
        ok(
            dir.path(),
            json!({"pattern": "needle", "output_mode": "content", "-n": false, "path": "src/lib.rs"})
        )
        .await,
        "src/lib.rs:pub fn needle() {}"
    );
}

#[tokio::test]
async fn context_lines_use_dashes_and_groups_are_separated() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "a\nfoo\nb\nc\nd\nfoo\n");
    write(dir.path(), "b.txt", "x\nfoo\ny\n");
    let text = ok(
        dir.path(),
        json!({"pattern": "foo", "output_mode": "content", "-C": 1}),
    )
    .await;
    assert_eq!(
        text,
        "a.txt-1-a\na.txt:2:foo\na.txt-3-b\n--\na.txt-5-d\na.txt:6:foo\n--\nb.txt-1-x\nb.txt:2:foo\nb.txt-3-y"
    );
    let text = ok(
        dir.path(),
        json!({"pattern": "foo", "output_mode": "content", "-A": 1, "path": "b.txt"}),
    )
    .await;
    assert_eq!(text, "b.txt:2:foo\nb.txt-3-y");
    let text = ok(
        dir.path(),
        json!({"pattern": "foo", "output_mode": "content", "-B": 1, "-n": false, "path": "b.txt"}),
    )
    .await;
    assert_eq!(text, "b.txt-x\nb.txt:foo");
}

#[tokio::test]
async fn count_mode_lists_counts_then_the_total() {
    let dir = tree();
    assert_eq!(
        ok(
            dir.path(),
            json!({"pattern": "needle", "output_mode": "count"})
        )
        .await,
        ".hidden/notes.txt:1\ndocs/guide.md:1\nsrc/lib.rs:1\nsrc/main.rs:2\nTotal: 5 matching lines in 4 files"
    );
}

#[tokio::test]
async fn case_insensitive_glob_and_type_filters() {
    let dir = tree();
    assert_eq!(
        ok(
            dir.path(),
            json!({"pattern": "needle in", "-i": true, "output_mode": "content"})
        )
        .await,
        "docs/guide.md:1:a needle in the docs\nsrc/lib.rs:2:// NEEDLE in caps"
    );
    assert_eq!(
        ok(dir.path(), json!({"pattern": "needle", "glob": "*.md"})).await,
        "Found 1 file\ndocs/guide.md"
    );
    assert_eq!(
        ok(dir.path(), json!({"pattern": "needle", "type": "rust"})).await,
        "Found 2 files\nsrc/main.rs\nsrc/lib.rs"
    );
    let r = grep(dir.path(), json!({"pattern": "x", "type": "nosuchtype"})).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert!(
        r.text().starts_with("Unknown file type \"nosuchtype\""),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn multiline_patterns_span_lines() {
    let dir = tree();
    assert_eq!(
        ok(
            dir.path(),
            json!({"pattern": "fn main.*let needle", "multiline": true, "output_mode": "content"})
        )
        .await,
        "src/main.rs:3:fn main() {\nsrc/main.rs:4:    let needle = 1;"
    );
    assert_eq!(
        ok(dir.path(), json!({"pattern": "fn main.*let needle"})).await,
        "No matches found"
    );
}

#[tokio::test]
async fn head_limit_and_offset_page_through_output_lines() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (1..=400).map(|i| format!("hit {i}\n")).collect();
    write(dir.path(), "many.txt", body);
    let text = ok(
        dir.path(),
        json!({"pattern": "hit", "output_mode": "content"}),
    )
    .await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 251);
    assert_eq!(lines[249], "many.txt:250:hit 250");
    assert_eq!(
        lines[250],
        // The search stops once the window is filled (issue 33): the total
        // is not counted.
        "(Results are truncated: showing lines 1–250 of more than 250. Use offset 250 to see more, or narrow the pattern, path or glob.)"
    );
    let text = ok(
        dir.path(),
        json!({"pattern": "hit", "output_mode": "content", "offset": 398, "head_limit": 10}),
    )
    .await;
    assert_eq!(text, "many.txt:399:hit 399\nmany.txt:400:hit 400");
    let text = ok(
        dir.path(),
        json!({"pattern": "hit", "output_mode": "content", "head_limit": 0}),
    )
    .await;
    assert_eq!(text.lines().count(), 400);
    let text = ok(
        dir.path(),
        json!({"pattern": "hit", "head_limit": 1, "offset": 1}),
    )
    .await;
    // Paging past the only file shows the header alone.
    assert_eq!(text, "Found 1 file");
}

#[tokio::test]
async fn long_lines_are_cut_and_the_result_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "wide.txt",
        format!("match {}\n", "x".repeat(1000)),
    );
    let text = ok(
        dir.path(),
        json!({"pattern": "match", "output_mode": "content"}),
    )
    .await;
    assert_eq!(
        text,
        format!("wide.txt:1:match {} [… truncated]", "x".repeat(494))
    );
    let body: String = (0..2000)
        .map(|i| format!("match {i} {}\n", "y".repeat(100)))
        .collect();
    write(dir.path(), "big.txt", body);
    let text = ok(
        dir.path(),
        json!({"pattern": "match", "output_mode": "content", "path": "big.txt", "head_limit": 0}),
    )
    .await;
    let (body, note) = text.rsplit_once('\n').unwrap();
    assert!(body.chars().count() <= 30_000);
    assert!(
        note.starts_with("(Output truncated at 30,000 characters: "),
        "{note}"
    );
    assert!(
        note.ends_with("Use head_limit and offset to page, or narrow the pattern, path or glob.)")
    );
}

#[tokio::test]
async fn bad_regex_and_paths_outside_are_clear_errors() {
    let dir = tree();
    let r = grep(dir.path(), json!({"pattern": "fn main("})).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert!(
        r.text()
            .starts_with("Invalid regular expression \"fn main(\": "),
        "{}",
        r.text()
    );
    let r = grep(dir.path(), json!({"pattern": "x", "path": "/etc"})).await;
    assert_eq!(r.text(), "path \"/etc\" is outside the workspace");
    assert_eq!(
        ok(dir.path(), json!({"pattern": "zzz_nothing"})).await,
        "No matches found"
    );
}

#[tokio::test]
async fn a_cancelled_call_stops_the_search() {
    let dir = tree();
    let tool = GrepTool::new(Workspace::new(dir.path()).unwrap()).into_dyn();
    let cx = CallContext::for_test("c1", EventSink::noop());
    cx.cancellation().cancel(CancelReason::Abort);
    let err = tool
        .execute(GatedArgs::for_test(json!({"pattern": "needle"})), &cx)
        .await
        .unwrap_err();
    assert!(err.cancelled);
}

#[test]
fn metadata_matches_the_tools_table() {
    let dir = tempfile::tempdir().unwrap();
    let tool = GrepTool::new(Workspace::new(dir.path()).unwrap()).into_dyn();
    let args = json!({"pattern": "TODO"});
    assert_eq!(tool.name(), "grep");
    assert_eq!(tool.label(), Some("Search Content"));
    assert!(tool.read_only(&args));
    assert_eq!(tool.concurrency_safe(&args), Some(true));
    assert_eq!(tool.interrupt_behavior(&args), InterruptBehavior::Cancel);
    assert_eq!(tool.activity(&args).as_deref(), Some("Searching for TODO"));
    let schema = tool.schema();
    assert_eq!(schema["additionalProperties"], json!(false));
    let props = schema["properties"].as_object().unwrap();
    for name in [
        "pattern",
        "path",
        "glob",
        "type",
        "output_mode",
        "-i",
        "-n",
        "-A",
        "-B",
        "-C",
        "multiline",
        "head_limit",
        "offset",
    ] {
        assert!(props[name]["description"].is_string(), "{name}");
    }
}

/// Issue 25, item 12(a): the description and the refusal suggested `rs`,
/// which ripgrep calls `rust`. Ripgrep's names and aliases work (`rust`,
/// `md` and `markdown`, `py` and `python`), and so does a file extension
/// that one type owns (`rs`); the refusal names the real types.
#[tokio::test]
async fn file_types_take_ripgreps_names_aliases_and_extensions() {
    let dir = tree();
    for name in ["rust", "rs", ".rs"] {
        assert_eq!(
            ok(dir.path(), json!({"pattern": "needle", "type": name})).await,
            "Found 2 files\nsrc/main.rs\nsrc/lib.rs",
            "{name}"
        );
    }
    for name in ["md", "markdown"] {
        assert_eq!(
            ok(dir.path(), json!({"pattern": "needle", "type": name})).await,
            "Found 1 file\ndocs/guide.md",
            "{name}"
        );
    }
    let r = grep(dir.path(), json!({"pattern": "x", "type": "nosuchtype"})).await;
    assert_eq!(r.outcome, Outcome::Failed);
    assert!(
        r.text().contains("type such as rust, py, js") && !r.text().contains("type such as rs"),
        "{}",
        r.text()
    );
    // Count mode counts lines, as `rg -c` does, and says so.
    std::fs::write(dir.path().join("two.txt"), "needle needle\n").unwrap();
    let text = ok(
        dir.path(),
        json!({"pattern": "needle", "output_mode": "count", "path": "two.txt"}),
    )
    .await;
    assert_eq!(text, "two.txt:1\nTotal: 1 matching line in 1 file");
}
