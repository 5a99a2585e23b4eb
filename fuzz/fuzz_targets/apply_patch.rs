//! Arbitrary patch text and file text through apply_patch's parser and
//! applier: neither panics; placing hunks gives the same answer every time;
//! a successful application changes the file's line count by exactly the
//! added minus the removed lines; a hunk of context only changes nothing.
//! A second patch is built from a window of the file's own lines (removed,
//! with context around them, replaced by fuzzed lines), so that the deep
//! paths (a place found, the tiers, re-indentation) are reached too: when
//! the window's lines are unique in the file, it applies and the lines
//! outside the window are kept exactly.

#![no_main]

use agentcore::tools::apply_patch::{FileOp, Hunk, Line, apply_hunks, parse};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    text: &'a str,
    patch: &'a str,
    start: u8,
    len: u8,
    context: u8,
    added: Vec<&'a str>,
}

fn lines(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

fn check(text: &str, hunks: &[Hunk]) {
    let first = apply_hunks(text, hunks);
    let second = apply_hunks(text, hunks);
    assert_eq!(first, second, "placing hunks is deterministic");
    let Ok(patched) = first else {
        return;
    };
    assert_eq!(patched.tiers.len(), hunks.len());
    let (mut added, mut removed) = (0usize, 0usize);
    for hunk in hunks {
        for line in &hunk.lines {
            match line {
                Line::Add(_) => added += 1,
                Line::Remove(_) => removed += 1,
                Line::Context(_) => {}
            }
        }
    }
    assert_eq!(
        lines(&patched.text) + removed,
        lines(text) + added,
        "lines change by the added minus the removed"
    );
    if added == 0 && removed == 0 {
        assert_eq!(patched.text, text, "context only changes nothing");
    }
}

fuzz_target!(|input: Input<'_>| {
    // Arbitrary patch text.
    if let Ok(patch) = parse(input.patch) {
        assert!(!patch.ops.is_empty());
        for op in &patch.ops {
            if let FileOp::Update { hunks, .. } = op {
                check(input.text, hunks);
            }
        }
    }

    // A patch made from the file's own lines.
    let file: Vec<&str> = input.text.split('\n').collect();
    if input.text.contains('\r') || file.len() < 2 {
        return;
    }
    // The last piece is what follows the last newline.
    let whole = &file[..file.len() - 1];
    if whole.is_empty() {
        return;
    }
    let start = usize::from(input.start) % whole.len();
    let len = (usize::from(input.len) % 4 + 1).min(whole.len() - start);
    let ctx = usize::from(input.context) % 3;
    let before = start.saturating_sub(ctx);
    let after = (start + len + ctx).min(whole.len());
    let added: Vec<String> = input
        .added
        .iter()
        .take(4)
        .map(|a| a.replace(['\n', '\r'], ""))
        .collect();
    let mut body = String::from("*** Begin Patch\n*** Update File: f\n@@\n");
    for line in &whole[before..start] {
        body.push_str(&format!(" {line}\n"));
    }
    for line in &whole[start..start + len] {
        body.push_str(&format!("-{line}\n"));
    }
    for line in &added {
        body.push_str(&format!("+{line}\n"));
    }
    for line in &whole[start + len..after] {
        body.push_str(&format!(" {line}\n"));
    }
    body.push_str("*** End Patch\n");
    let Ok(patch) = parse(&body) else {
        // Lines starting with `*** Add File: ` and the like end a hunk.
        return;
    };
    let Some(FileOp::Update { hunks, .. }) = patch.ops.first() else {
        return;
    };
    check(input.text, hunks);
    let quoted: String = whole[before..after]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    // Line starts where the window's lines are, overlapping ones too; a
    // last line without a newline is a line like any other.
    let lined = format!("{}\n", input.text);
    let exact_places = std::iter::once(0)
        .chain(lined.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| lined[i..].starts_with(&quoted))
        .count();
    if exact_places == 1 && hunks.len() == 1 {
        let patched = apply_hunks(input.text, hunks).expect("a unique window applies");
        let mut want = String::new();
        for line in &whole[..start] {
            want.push_str(line);
            want.push('\n');
        }
        for line in &added {
            want.push_str(line);
            want.push('\n');
        }
        for line in &whole[start + len..] {
            want.push_str(line);
            want.push('\n');
        }
        want.push_str(file[file.len() - 1]);
        assert_eq!(patched.text, want, "only the window changed");
    }
}
);
