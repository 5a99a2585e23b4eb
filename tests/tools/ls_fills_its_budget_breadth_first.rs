//! Issue 13 item 16, the ls half: a root with `src/` of 5,000 files and
//! four files beside it listed only `src/…`. ls now fills its 1,000-entry
//! budget breadth first, so the listed directory's own entries always
//! appear, and the last line says how many deeper entries were left out.

use std::fs;
use std::path::Path;

use agentcore::TypedTool;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::ls::LsTool;
use agentcore::{CallContext, EventSink, GatedArgs};
use serde_json::{Value, json};

use crate::support::text_of;

async fn ls(root: &Path, args: Value) -> String {
    let tool = LsTool::new(Workspace::new(root).unwrap()).into_dyn();
    let cx = CallContext::for_test("l1", EventSink::noop());
    let out = tool.execute(GatedArgs::for_test(args), &cx).await.unwrap();
    text_of(&out.content)
}

#[tokio::test]
async fn a_huge_first_subdirectory_does_not_hide_the_files_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    fs::create_dir(r.join("src")).unwrap();
    for i in 0..5000 {
        fs::write(r.join(format!("src/f{i:04}.rs")), "").unwrap();
    }
    for name in ["Cargo.toml", "README.md", "build.rs", "zz.txt"] {
        fs::write(r.join(name), "").unwrap();
    }
    let text = ls(r, json!({"path": "."})).await;
    let lines: Vec<&str> = text.lines().collect();
    // The root line, 1,000 entries, the note.
    assert_eq!(lines.len(), 1002, "{text}");
    assert_eq!(lines[0], "- ./");
    assert_eq!(lines[1], "  - src/");
    assert_eq!(lines[2], "    - f0000.rs");
    // 1,000 − 5 root entries = 995 files of src shown.
    assert_eq!(lines[996], "    - f0994.rs");
    assert_eq!(
        &lines[997..1001],
        [
            "  - Cargo.toml",
            "  - README.md",
            "  - build.rs",
            "  - zz.txt"
        ]
    );
    assert_eq!(
        lines[1001],
        "(Results are truncated: showing 1000 of 5005 entries; 4005 entries at depth 2 or deeper (the listed directory's own entries are depth 1) are not shown. List a subdirectory, add ignore patterns, or use glob to narrow the listing.)"
    );
}

#[tokio::test]
async fn every_level_is_complete_before_the_next_one_starts() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    // depth 1: a/, b/, c.txt; depth 2: 601 in a/, 600 in b/; depth 3: a/deep/x.txt
    for d in ["a", "b"] {
        fs::create_dir(r.join(d)).unwrap();
        for i in 0..600 {
            fs::write(r.join(format!("{d}/{i:03}.txt")), "").unwrap();
        }
    }
    fs::create_dir_all(r.join("a/deep")).unwrap();
    fs::write(r.join("a/deep/x.txt"), "").unwrap();
    fs::write(r.join("c.txt"), "").unwrap();
    let text = ls(r, json!({"path": "."})).await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1002);
    // Depth 1 whole, then depth 2 in print order: a/'s 601 entries, then
    // the first 396 of b/; nothing of depth 3 (a/deep/ itself is depth 2).
    assert!(lines.contains(&"  - c.txt"));
    assert!(lines.contains(&"    - deep/"));
    assert!(!lines.contains(&"      - x.txt"));
    assert!(lines.contains(&"    - 395.txt"));
    let b_files = lines
        .iter()
        .skip_while(|l| **l != "  - b/")
        .skip(1)
        .take_while(|l| l.starts_with("    - "))
        .count();
    assert_eq!(b_files, 396);
    // The walk stops at depth 3's first directory change once more than
    // 1,000 entries are counted (issue 33): a/deep/'s x.txt is not read,
    // and the counts say "at least".
    assert!(
        lines[1001].starts_with(
            "(Results are truncated: showing 1000 of at least 1204 entries; at least 204 entries at depth 2 or deeper"
        ),
        "{}",
        lines[1001]
    );
}

#[tokio::test]
async fn a_listing_within_the_budget_is_whole_and_has_no_note() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    fs::create_dir_all(r.join("src/deep/er")).unwrap();
    fs::write(r.join("src/deep/er/x.rs"), "").unwrap();
    fs::write(r.join("a.txt"), "").unwrap();
    assert_eq!(
        ls(r, json!({"path": "."})).await,
        "- ./\n  - src/\n    - deep/\n      - er/\n        - x.rs\n  - a.txt"
    );
}
