//! The grep tool finds what `rg --hidden` finds, with the same flags, over a
//! generated tree (gitignore, hidden files, binaries, nesting) and over this
//! repository. Needs the `rg` binary: the tests are ignored by a plain
//! `cargo test`, and run without `rg` they fail saying so (.ci/run installs
//! ripgrep and runs them).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use agentcore::TypedTool;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::grep::GrepTool;
use agentcore::{Call, Outcome, Pipeline, ToolRegistry};
use serde_json::{Value, json};
use tower::ServiceExt;

/// Runs `rg` in `root` with the walk rules the tool uses.
fn rg(root: &Path, flags: &[&str]) -> String {
    let out = Command::new("rg")
        .current_dir(root)
        .args([
            "--hidden",
            "--no-config",
            "--no-ignore-global",
            "--sort",
            "path",
            "--color",
            "never",
            "-g",
            "!.git",
            "-g",
            "!.hg",
            "-g",
            "!.svn",
            "-g",
            "!.jj",
        ])
        .args(flags)
        .output()
        .expect("rg runs");
    assert!(
        out.status.code().is_some_and(|c| c <= 1)
            || String::from_utf8_lossy(&out.stderr).contains("No files were searched"),
        "rg {flags:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn tool(root: &Path, mut args: Value) -> String {
    args["head_limit"] = json!(0);
    let ws = Workspace::new(root).unwrap();
    let registry = ToolRegistry::new()
        .with(GrepTool::new(ws).into_dyn())
        .unwrap();
    let r = Pipeline::builder()
        .registry(Arc::new(registry))
        .build()
        .service()
        .oneshot(Call::new("eq", "grep", args.clone()))
        .await
        .unwrap();
    assert_eq!(r.outcome, Outcome::Success, "{args}: {}", r.text());
    let text = r.text();
    assert!(
        !text.contains("(Output truncated at 30,000 characters"),
        "{args}: pick a pattern with less output"
    );
    text
}

fn lines(s: &str) -> Vec<String> {
    // Lines over 500 characters are cut by the tool; compare a prefix.
    s.lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.chars().take(400).collect())
        .collect()
}

/// (tool arguments, rg flags): the table of flag combinations.
fn table(pattern: &str) -> Vec<(Value, Vec<String>)> {
    let p = pattern.to_owned();
    let v = |flags: &[&str]| -> Vec<String> {
        flags
            .iter()
            .map(|s| s.to_string())
            .chain([p.clone()])
            .collect()
    };
    vec![
        (json!({"pattern": p}), v(&["-l"])),
        (
            json!({"pattern": p, "output_mode": "content", "-C": 2}),
            v(&["-n", "-C", "2"]),
        ),
        (json!({"pattern": p, "output_mode": "content"}), v(&["-n"])),
        (json!({"pattern": p, "output_mode": "count"}), v(&["-c"])),
        (
            json!({"pattern": p, "output_mode": "content", "-i": true}),
            v(&["-n", "-i"]),
        ),
        (
            json!({"pattern": p, "glob": "*.rs"}),
            v(&["-l", "-g", "*.rs"]),
        ),
        (json!({"pattern": p, "type": "md"}), v(&["-l", "-t", "md"])),
    ]
}

async fn assert_same(root: &Path, args: Value, flags: &[String]) {
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mode = args["output_mode"].as_str().unwrap_or("files_with_matches");
    let ours = tool(root, args.clone()).await;
    let theirs = rg(root, &flags);
    if ours == "No matches found" {
        assert_eq!(theirs, "", "{args}");
        return;
    }
    match mode {
        "files_with_matches" => {
            let mut ours = lines(&ours);
            let header = ours.remove(0);
            let ours: BTreeSet<String> = ours.into_iter().collect();
            let theirs: BTreeSet<String> = lines(&theirs).into_iter().collect();
            assert_eq!(
                header,
                format!(
                    "Found {} file{}",
                    theirs.len(),
                    if theirs.len() == 1 { "" } else { "s" }
                )
            );
            assert_eq!(ours, theirs, "{args}");
        }
        "count" => {
            let mut ours = lines(&ours);
            let total = ours.pop().unwrap();
            let theirs = lines(&theirs);
            assert_eq!(ours, theirs, "{args}");
            let sum: u64 = theirs
                .iter()
                .map(|l| l.rsplit_once(':').unwrap().1.parse::<u64>().unwrap())
                .sum();
            assert!(
                total.starts_with(&format!("Total: {sum} matching line")),
                "{total}"
            );
        }
        _ => assert_eq!(lines(&ours), lines(&theirs), "{args}"),
    }
}

fn generated_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    let w = |name: &str, body: &[u8]| {
        let p = r.join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    };
    w(".gitignore", b"*.tmp\nbuild/\n!keep.tmp\n");
    w("sub/.gitignore", b"local_ignored.txt\n");
    w(".ignore", b"from_dot_ignore.txt\n");
    for d in 0..4 {
        for f in 0..6 {
            let mut body = String::new();
            for l in 0..16 {
                match (d + f + l) % 9 {
                    0 => body.push_str(&format!("fn alpha_{l}() {{ // Alpha needle {d}\n")),
                    3 => body.push_str("    let x = NEEDLE;\n"),
                    5 => body.push_str(&format!("  needle at {d}/{f}/{l}\n")),
                    _ => body.push_str(&format!("filler line {l}\n")),
                }
            }
            let ext = ["rs", "md", "txt", "py"][f % 4];
            w(&format!("d{d}/n{}/file{f}.{ext}", d % 3), body.as_bytes());
        }
    }
    w("a.tmp", b"needle in tmp\n");
    w("keep.tmp", b"needle kept by negation\n");
    w("build/out.rs", b"needle in build\n");
    w("sub/local_ignored.txt", b"needle ignored locally\n");
    w("sub/seen.txt", b"needle seen\nend\n");
    w("from_dot_ignore.txt", b"needle\n");
    w(".hidden/secret.rs", b"fn hidden() { needle }\n");
    w(".dotfile", b"needle in dotfile\n");
    w(".git/config", b"needle in git\n");
    w("bin/blob.bin", b"needle\0\x01\x02\x03needle\n");
    w(
        "bin/late.bin",
        &[b"needle\n".repeat(10).as_slice(), b"\0"].concat(),
    );
    w("crlf.txt", b"needle one\r\nother\r\nneedle two\r\n");
    w("multi.md", b"start\nneedle\nmiddle\nfinish needle\n");
    dir
}

#[tokio::test]
#[ignore = "needs rg (ripgrep) on PATH"]
async fn generated_tree_matches_rg_for_every_flag_combination() {
    crate::support::require::require_program("rg");
    let dir = generated_tree();
    for pattern in ["needle", r"fn \w+\(", "Alpha.*needle \\d"] {
        for (args, flags) in table(pattern) {
            assert_same(dir.path(), args, &flags).await;
        }
    }
}

#[tokio::test]
#[ignore = "needs rg (ripgrep) on PATH"]
async fn multiline_matches_rg_with_multiline_dotall() {
    crate::support::require::require_program("rg");
    let dir = generated_tree();
    for pattern in [
        "start.*?middle",
        r"needle\nmiddle",
        r"NEEDLE;\n.*?needle at",
    ] {
        for mode in ["content", "count", "files_with_matches"] {
            let mut flags = vec!["-U", "--multiline-dotall"];
            flags.push(match mode {
                "content" => "-n",
                "count" => "-c",
                _ => "-l",
            });
            let flags: Vec<String> = flags
                .into_iter()
                .map(str::to_owned)
                .chain([pattern.to_owned()])
                .collect();
            let args = json!({"pattern": pattern, "multiline": true, "output_mode": mode});
            assert_same(dir.path(), args, &flags).await;
        }
    }
}

#[tokio::test]
#[ignore = "needs rg (ripgrep) on PATH"]
async fn this_repository_matches_rg() {
    crate::support::require::require_program("rg");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Patterns whose output (with context, in every mode) stays under the
    // tool's 30,000-character bound as the repository grows: `FileReadState`
    // alone passed it once the edit tools multiplied.
    for pattern in ["FileReadState::new", "impl Tool for", "fn resolve_new"] {
        for (args, flags) in table(pattern) {
            assert_same(root, args, &flags).await;
        }
    }
}
