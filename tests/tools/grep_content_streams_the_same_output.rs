//! grep's content mode keeps only a bounded prefix of each file's lines
//! during the walk and lays out its window in path order, searching a file
//! again when the window reaches lines it did not keep. The output must be
//! what laying out every line would give: this compares it, for windows
//! deep inside files far larger than the budgets, with and without
//! context, with a reference built here from ripgrep's rules (context
//! groups joined by `--`, `--` between files, a separator at either edge
//! of the window dropped, the page note, the 30,000-character cap).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use agentcore::TypedTool;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::grep::{GrepTool, MAX_OUTPUT_CHARS};
use agentcore::{CallContext, EventSink, GatedArgs};
use serde_json::{Value, json};

/// Lines per file: each file is far over the tool's 256 KiB keep budget.
const LINES: usize = 30_000;

/// File `f`'s line `n` (1-based); lines with `n % every == 0` match `hit`.
fn line(f: usize, n: usize, every: usize) -> String {
    if n.is_multiple_of(every) {
        format!("hit {f}/{n} {}", "x".repeat(n % 7))
    } else {
        format!("row {f}/{n}")
    }
}

fn make(root: &Path, files: usize, every: usize) {
    for f in 0..files {
        let body: String = (1..=LINES).map(|n| line(f, n, every) + "\n").collect();
        fs::write(root.join(format!("f{f}.txt")), body).unwrap();
    }
}

/// Every output line laid out, as the tool laid them out before it
/// streamed.
fn all_lines(files: usize, every: usize, context: usize) -> Vec<String> {
    let mut out = Vec::new();
    for f in 0..files {
        if context > 0 && f > 0 {
            out.push("--".to_owned());
        }
        let shown: BTreeSet<usize> = (1..=LINES)
            .filter(|n| n.is_multiple_of(every))
            .flat_map(|m| m.saturating_sub(context).max(1)..=(m + context).min(LINES))
            .collect();
        let mut last = None;
        for n in shown {
            if context > 0 && last.is_some_and(|l| n > l + 1) {
                out.push("--".to_owned());
            }
            last = Some(n);
            let sep = if n.is_multiple_of(every) { ':' } else { '-' };
            out.push(format!("f{f}.txt{sep}{n}{sep}{}", line(f, n, every)));
        }
    }
    out
}

/// The window, its note and the cap, as the tool always did them.
fn reference(lines: Vec<String>, offset: usize, limit: Option<usize>) -> String {
    let total = lines.len();
    let end = limit.map_or(total, |n| (offset + n).min(total));
    let start = offset.min(end);
    let mut window: Vec<String> = lines[start..end].to_vec();
    if window.first().is_some_and(|l| l == "--") {
        window.remove(0);
    }
    if window.last().is_some_and(|l| l == "--") {
        window.pop();
    }
    if end < total {
        // With a head_limit the search stops once the window is filled,
        // so the total is not known (issue 33).
        let of = match limit {
            Some(_) => format!("more than {end}"),
            None => total.to_string(),
        };
        window.push(format!(
            "(Results are truncated: showing lines {}–{end} of {of}. Use offset {end} to see more, or narrow the pattern, path or glob.)",
            start + 1
        ));
    }
    let out = window.join("\n");
    let Some((limit, _)) = out.char_indices().nth(MAX_OUTPUT_CHARS) else {
        return out;
    };
    let cut = out[..limit].rfind('\n').unwrap_or(0);
    let omitted = out[cut..].lines().filter(|l| !l.is_empty()).count();
    format!(
        "{}\n(Output truncated at 30,000 characters: {omitted} more lines not shown. Use head_limit and offset to page, or narrow the pattern, path or glob.)",
        &out[..cut]
    )
}

async fn grep(root: &Path, args: Value) -> String {
    let tool = GrepTool::new(Workspace::new(root).unwrap()).into_dyn();
    let cx = CallContext::for_test("grep", EventSink::noop());
    let out = tool
        .execute(GatedArgs::for_test(args.clone()), &cx)
        .await
        .unwrap_or_else(|e| panic!("{args}: {e:?}"));
    out.content[0].as_text().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn windows_deep_in_large_files_match_the_whole_layout() {
    let dir = tempfile::tempdir().unwrap();
    let (files, every) = (3, 5);
    make(dir.path(), files, every);
    for context in [0, 1, 2] {
        let all = all_lines(files, every, context);
        let total = all.len();
        let mut windows = vec![
            (0, None),
            (0, Some(250)),
            (9_000, Some(40)),
            (total / 2, None),
            (total - 5, Some(100)),
            (total, Some(10)),
            (total + 7, None),
        ];
        // Windows starting and ending on the separators between files and
        // between context groups.
        for (i, l) in all.iter().enumerate().filter(|(_, l)| *l == "--").take(3) {
            let _ = l;
            windows.push((i, Some(3)));
            windows.push((i.saturating_sub(2), Some(3)));
        }
        if let Some(between) = (context > 0).then(|| all_lines(1, every, context).len()) {
            windows.push((between, Some(1)));
            windows.push((between - 1, Some(2)));
            windows.push((between, None));
        }
        for (offset, limit) in windows {
            let mut args = json!({
                "pattern": "^hit",
                "output_mode": "content",
                "offset": offset,
                "head_limit": limit.unwrap_or(0),
            });
            if context > 0 {
                args["-C"] = json!(context);
            }
            let expected = reference(all.clone(), offset, limit);
            let got = grep(dir.path(), args.clone()).await;
            assert!(
                got == expected,
                "{args}:\n--- got (end)\n{}\n--- expected (end)\n{}",
                tail(&got),
                tail(&expected)
            );
        }
    }
}

fn tail(s: &str) -> &str {
    let at = s.len().saturating_sub(600);
    let mut at = at;
    while !s.is_char_boundary(at) {
        at += 1;
    }
    &s[at..]
}
