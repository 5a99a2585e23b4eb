//! Issue 33 item 4: with a `head_limit`, grep's content and count modes
//! stop searching once the window is filled, walking in path order. What
//! they show must be what the whole search would show in that window,
//! whatever the parallel walk did before it stopped, and the note says
//! "of more than B" instead of a total.

use std::fs;
use std::path::Path;

use agentcore::TypedTool;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::grep::GrepTool;
use agentcore::{CallContext, EventSink, GatedArgs};
use serde_json::{Value, json};

async fn grep(root: &Path, args: Value) -> String {
    let tool = GrepTool::new(Workspace::new(root).unwrap()).into_dyn();
    let cx = CallContext::for_test("grep", EventSink::noop());
    let out = tool
        .execute(GatedArgs::for_test(args.clone()), &cx)
        .await
        .unwrap_or_else(|e| panic!("{args}: {e:?}"));
    out.content[0].as_text().unwrap_or_default().to_owned()
}

/// 12 folders of 3 subfolders of 6 files; file `k` matches `hit` on
/// `k % 4` of its lines (some files none), names chosen so that path order
/// differs from creation order.
fn tree(root: &Path) {
    for d in 0..12 {
        for s in ["b", "a", "c"] {
            let dir = root.join(format!("d{:02}/{s}", 11 - d));
            fs::create_dir_all(&dir).unwrap();
            for f in 0..6 {
                let k = d * 18 + f;
                let body: String = (0..8)
                    .map(|n| {
                        if n < k % 4 {
                            format!("hit {d}{s}{f} line {n}\n")
                        } else {
                            format!("row {n}\n")
                        }
                    })
                    .collect();
                fs::write(dir.join(format!("f{f}.txt")), body).unwrap();
            }
            fs::write(dir.join("a.txt"), "hit first\n").unwrap();
        }
    }
}

/// The lines of a whole search's output, its notes left out.
fn body(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('(') && !l.starts_with("Total:"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_window_shows_what_the_whole_search_shows_there() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let all = body(
        &grep(
            dir.path(),
            json!({"pattern": "hit", "output_mode": "content", "head_limit": 0}),
        )
        .await,
    );
    let total = all.len();
    assert!(total > 300, "{total}");
    for (offset, limit) in [(0, 1), (0, 7), (5, 40), (100, 100), (total - 3, 2)] {
        let args = json!({"pattern": "hit", "output_mode": "content", "offset": offset, "head_limit": limit});
        // The same every time, whatever the threads did.
        let first = grep(dir.path(), args.clone()).await;
        for _ in 0..5 {
            assert_eq!(grep(dir.path(), args.clone()).await, first, "{args}");
        }
        let end = offset + limit;
        let mut expected = all[offset..end].join("\n");
        expected.push_str(&format!(
            "\n(Results are truncated: showing lines {}–{end} of more than {end}. Use offset {end} to see more, or narrow the pattern, path or glob.)",
            offset + 1
        ));
        assert_eq!(first, expected, "{args}");
    }
    // A window reaching the end is the whole search's: the total is known.
    let last = grep(
        dir.path(),
        json!({"pattern": "hit", "output_mode": "content", "offset": total - 2, "head_limit": 5}),
    )
    .await;
    assert_eq!(last, all[total - 2..].join("\n"));
}

#[tokio::test]
async fn with_context_the_window_is_the_same_on_every_run() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let whole = grep(
        dir.path(),
        json!({"pattern": "hit", "output_mode": "content", "-C": 1, "head_limit": 0}),
    )
    .await;
    let args = json!({"pattern": "hit", "output_mode": "content", "-C": 1, "head_limit": 30, "offset": 10});
    let first = grep(dir.path(), args.clone()).await;
    for _ in 0..5 {
        assert_eq!(grep(dir.path(), args.clone()).await, first);
    }
    let whole: Vec<&str> = whole.lines().collect();
    let shown: Vec<&str> = first.lines().collect();
    let (note, lines) = shown.split_last().unwrap();
    // Lines 11–40 of the whole output, a `--` at either edge left out.
    let mut expected: Vec<&str> = whole[10..40].to_vec();
    if expected.first() == Some(&"--") {
        expected.remove(0);
    }
    if expected.last() == Some(&"--") {
        expected.pop();
    }
    assert_eq!(lines, expected.as_slice());
    assert_eq!(
        *note,
        "(Results are truncated: showing lines 11–40 of more than 40. Use offset 40 to see more, or narrow the pattern, path or glob.)"
    );
}

#[tokio::test]
async fn count_mode_stops_at_its_window_of_files_and_says_at_least() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let all = grep(
        dir.path(),
        json!({"pattern": "hit", "output_mode": "count", "head_limit": 0}),
    )
    .await;
    let files = body(&all);
    let text = grep(
        dir.path(),
        json!({"pattern": "hit", "output_mode": "count", "head_limit": 3, "offset": 2}),
    )
    .await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..3],
        files[2..5].iter().map(String::as_str).collect::<Vec<_>>()[..]
    );
    assert_eq!(
        lines[3],
        "(Results are truncated: showing files 3–5 of more than 5. Use offset 5 to see more, or narrow the pattern, path or glob.)"
    );
    // The total is over the files found up to the first past the window.
    let counted: u64 = files[..6]
        .iter()
        .map(|l| l.rsplit(':').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(
        lines[4],
        format!("Total: at least {counted} matching lines in at least 6 files")
    );
}

#[tokio::test]
async fn one_huge_file_stops_at_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let body = "hit\n".repeat(2_000_000);
    fs::write(dir.path().join("big.txt"), body).unwrap();
    let text = grep(
        dir.path(),
        json!({"pattern": "hit", "output_mode": "content", "head_limit": 2}),
    )
    .await;
    assert_eq!(
        text,
        "big.txt:1:hit\nbig.txt:2:hit\n(Results are truncated: showing lines 1–2 of more than 2. Use offset 2 to see more, or narrow the pattern, path or glob.)"
    );
    // The path given is the file itself: the same.
    let text = grep(
        dir.path(),
        json!({"pattern": "hit", "output_mode": "content", "head_limit": 2, "path": "big.txt"}),
    )
    .await;
    assert!(
        text.ends_with(
            "of more than 2. Use offset 2 to see more, or narrow the pattern, path or glob.)"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn a_hard_linked_file_past_the_window_does_not_count() {
    // `z/linked.txt` has a second name outside the searched folder: the
    // whole search withholds it and says so; a window filled before it
    // never reaches it, so says nothing of it, on every run.
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    fs::create_dir_all(r.join("in/a")).unwrap();
    fs::create_dir_all(r.join("in/z")).unwrap();
    fs::write(r.join("in/a/first.txt"), "hit 1\nhit 2\nhit 3\n").unwrap();
    fs::write(r.join("in/z/linked.txt"), "hit linked\n").unwrap();
    fs::hard_link(r.join("in/z/linked.txt"), r.join("outside.txt")).unwrap();
    let whole = grep(
        r,
        json!({"pattern": "hit", "output_mode": "content", "path": "in", "head_limit": 0}),
    )
    .await;
    assert!(
        whole.contains("with several names (hard links) was not searched"),
        "{whole}"
    );
    assert!(!whole.contains("linked.txt"), "{whole}");
    for _ in 0..5 {
        let text = grep(
            r,
            json!({"pattern": "hit", "output_mode": "content", "path": "in", "head_limit": 2}),
        )
        .await;
        assert_eq!(
            text,
            "in/a/first.txt:1:hit 1\nin/a/first.txt:2:hit 2\n(Results are truncated: showing lines 1–2 of more than 2. Use offset 2 to see more, or narrow the pattern, path or glob.)"
        );
    }
    // A window that reaches it waits for the whole walk: withheld, as
    // the whole search does it.
    let text = grep(
        r,
        json!({"pattern": "hit", "output_mode": "content", "path": "in", "head_limit": 10}),
    )
    .await;
    assert_eq!(text, whole);
}
