//! The law of `edit_lines`: any list of separate operations, each citing
//! lines by the anchors `read` showed, leaves the file as the same changes
//! made by line index to the file's lines, all at once; and a sequence of
//! calls (each after a read) as the same changes made one list after
//! another. Anchors are taken from `read`'s own output, so `read` and
//! `edit_lines` agree on what a line and its hash are.

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::files::{Env, ok};

/// Lines from a small alphabet, so that lines repeat (as `}` and empty
/// lines do in code).
fn file_lines() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(
        prop_oneof![
            Just(String::new()),
            Just("}".to_owned()),
            proptest::string::string_regex("[ab é]{1,6}").unwrap(),
        ],
        0..24,
    )
}

/// One operation drawn blind: its kind, a gap before it, how many lines it
/// covers, and its new lines.
#[derive(Clone, Debug)]
struct Draw {
    kind: u8,
    skip: usize,
    span: usize,
    new: Vec<String>,
}

fn draws() -> impl Strategy<Value = Vec<Draw>> {
    proptest::collection::vec(
        (
            0u8..4,
            0usize..4,
            1usize..4,
            proptest::collection::vec(proptest::string::string_regex("[xy} ]{0,5}").unwrap(), 1..4),
        )
            .prop_map(|(kind, skip, span, new)| Draw {
                kind,
                skip,
                span,
                new,
            }),
        1..6,
    )
}

/// A change by index: at line `.0` (0-based), remove `.1` lines, put `.2`.
type Splice = (usize, usize, Vec<String>);

/// The operations the draws make on a file of `anchors.len()` lines,
/// laid out left to right so that none overlaps another, in a shuffled
/// order; and the same changes as (index, removed, new lines) splices.
fn plan(anchors: &[String], draws: &[Draw], rotate: usize) -> (Vec<Value>, Vec<Splice>) {
    let n = anchors.len();
    let mut ops = Vec::new();
    let mut splices = Vec::new();
    // The next line (0-based) free to use; `gap_used` when an insert took
    // the gap before it.
    let mut pos = 0usize;
    let mut gap_used = false;
    // Whether the line before `pos` was removed by a range (then no
    // insert may be anchored on it).
    let mut after_range = false;
    for d in draws {
        let at = pos + d.skip;
        // Lines joined with \n; one final \n is ignored (and needed when
        // the last new line is empty).
        let mut text = d.new.join("\n");
        if d.new.last().is_some_and(String::is_empty) || d.skip % 2 == 1 {
            text.push('\n');
        }
        match d.kind {
            // replace / delete lines at..at+span
            0 | 1 if at < n => {
                let last = (at + d.span).min(n) - 1;
                let (start, end) = (&anchors[at], &anchors[last]);
                if d.kind == 0 {
                    ops.push(json!({"op": "replace", "start": start, "end": end, "text": text}));
                    splices.push((at, last + 1 - at, d.new.clone()));
                } else {
                    ops.push(json!({"op": "delete", "start": start, "end": end}));
                    splices.push((at, last + 1 - at, Vec::new()));
                }
                pos = last + 1;
                gap_used = false;
                after_range = true;
            }
            // insert_before line at (the gap before it)
            2 if at < n && !(d.skip == 0 && gap_used) => {
                ops.push(json!({"op": "insert_before", "anchor": anchors[at], "text": text}));
                splices.push((at, 0, d.new.clone()));
                // Its anchor line stays: nothing may remove it.
                pos = at + 1;
                gap_used = false;
                after_range = false;
            }
            // insert_after line at-1 (the same gap; "0:" at the top)
            3 if at <= n && !(d.skip == 0 && (gap_used || after_range)) => {
                let anchor = if at == 0 {
                    "0:".to_owned()
                } else {
                    anchors[at - 1].clone()
                };
                ops.push(json!({"op": "insert_after", "anchor": anchor, "text": text}));
                splices.push((at, 0, d.new.clone()));
                pos = at;
                gap_used = true;
                after_range = false;
            }
            _ => {}
        }
    }
    if !ops.is_empty() {
        let k = rotate % ops.len();
        ops.rotate_left(k);
    }
    (ops, splices)
}

/// The splices made by index, last first, on the lines.
fn by_index(lines: &[String], splices: &[Splice]) -> Vec<String> {
    let mut out = lines.to_vec();
    for (at, remove, new) in splices.iter().rev() {
        out.splice(*at..*at + *remove, new.iter().cloned());
    }
    out
}

/// A file without a final newline whose last line is empty is the file
/// with one, a line shorter: the model in its one form.
fn normalize(lines: &mut Vec<String>, final_newline: &mut bool) {
    if !*final_newline && lines.last().is_some_and(String::is_empty) {
        lines.pop();
        *final_newline = true;
    }
}

/// Lines as a file: joined with `\n`, ending in one when `final_newline`
/// and not empty.
fn as_file(lines: &[String], final_newline: bool) -> String {
    let mut text = lines.join("\n");
    if final_newline && !lines.is_empty() {
        text.push('\n');
    }
    text
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn a_call_is_its_changes_made_by_index(
        lines in file_lines(),
        final_newline in any::<bool>(),
        rounds in proptest::collection::vec((draws(), 0usize..5), 1..4),
    ) {
        runtime().block_on(async {
            let env = Env::anchored();
            // An empty file ends its first lines.
            let mut final_newline = final_newline || lines.is_empty();
            let mut expected = lines.clone();
            env.put("f.txt", as_file(&lines, final_newline));
            normalize(&mut expected, &mut final_newline);
            for (draws, rotate) in &rounds {
                let shown = if expected.is_empty() {
                    Vec::new()
                } else {
                    env.read_anchors("f.txt").await
                };
                if expected.is_empty() {
                    env.read("f.txt").await;
                }
                let contents: Vec<String> = shown.iter().map(|(_, t)| t.clone()).collect();
                prop_assert_eq!(&contents, &expected);
                let anchors: Vec<String> = shown.into_iter().map(|(a, _)| a).collect();
                let (ops, splices) = plan(&anchors, draws, *rotate);
                if ops.is_empty() {
                    continue;
                }
                let mut after = by_index(&expected, &splices);
                let mut after_final = final_newline || expected.is_empty();
                normalize(&mut after, &mut after_final);
                let r = env.edit_lines("f.txt", Value::Array(ops.clone())).await;
                if as_file(&after, after_final) == as_file(&expected, final_newline) {
                    // Nothing would change: refused, nothing written.
                    prop_assert_eq!(r.error_code, Some(6), "{}", r.text());
                } else {
                    ok(&r);
                    final_newline = after_final;
                    expected = after;
                }
                let now = String::from_utf8(env.bytes("f.txt")).unwrap();
                prop_assert_eq!(now, as_file(&expected, final_newline), "ops {:?}", ops);
            }
            Ok(())
        })?;
    }
}
