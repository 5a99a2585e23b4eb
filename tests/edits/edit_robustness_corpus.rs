//! The edit robustness corpus (`tests/edit_corpus/*.json`): each case is a
//! file, an edit as a model sent it, and the expected file or the expected
//! refusal code, drawn from the failure classes reported in the field
//! (trailing spaces, tabs vs spaces, CRLF files, mixed indentation,
//! non-breaking spaces, smart quotes, a snippet at the wrong indentation
//! level, near-identical functions, look-alikes that match two places).
//!
//! Every case must pass with the tiers (what the `edit` tool does), and no
//! edit may ever land at a wrong place, with the tiers or with exact
//! matching only. The test prints how many land with exact matching only
//! and with the tiers (`cargo test --test edits edit_robustness_corpus --
//! --nocapture`).
//!
//! A case: `{"class", "file", "old_string", "new_string", "replace_all"?,
//! "encoding"?: "utf-8" | "utf-8-bom" | "utf-16le", "expect": FILE |
//! "refusal": CODE}`. The file and the expected file are text; the encoding
//! says how both are stored.

use std::collections::BTreeMap;
use std::path::Path;

use agentcore::tools::edit::{EditError, edit_bytes, edit_bytes_tiered};
use serde_json::Value;

struct Case {
    name: String,
    class: String,
    bytes: Vec<u8>,
    old: String,
    new: String,
    replace_all: bool,
    want: Result<Vec<u8>, i64>,
}

fn encode(text: &str, encoding: &str) -> Vec<u8> {
    match encoding {
        "utf-8" => text.as_bytes().to_vec(),
        "utf-8-bom" => [b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat(),
        "utf-16le" => {
            let mut out = vec![0xFF, 0xFE];
            for unit in text.encode_utf16() {
                out.extend_from_slice(&unit.to_le_bytes());
            }
            out
        }
        other => panic!("unknown encoding {other}"),
    }
}

fn load() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/edit_corpus");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let s = |k: &str| {
                v[k].as_str()
                    .unwrap_or_else(|| panic!("{}: {k}", path.display()))
            };
            let encoding = v["encoding"].as_str().unwrap_or("utf-8");
            let want = match v.get("refusal") {
                Some(code) => Err(code.as_i64().unwrap()),
                None => Ok(encode(s("expect"), encoding)),
            };
            Case {
                name: path.file_stem().unwrap().to_string_lossy().into_owned(),
                class: s("class").to_owned(),
                bytes: encode(s("file"), encoding),
                old: s("old_string").to_owned(),
                new: s("new_string").to_owned(),
                replace_all: v["replace_all"].as_bool().unwrap_or(false),
                want,
            }
        })
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// The expected file was written.
    Landed,
    /// The expected refusal.
    RefusedAsExpected,
    /// A refusal where an edit (or another refusal) was expected.
    Missed,
    /// An edit that wrote something other than the expected file.
    WrongPlace,
    /// An edit where a refusal was expected (exact matching only: a
    /// whitespace-only `old_string` was applied before code 9).
    NotRefused,
}

fn judge(got: Result<Vec<u8>, EditError>, want: &Result<Vec<u8>, i64>) -> Verdict {
    match (got, want) {
        (Ok(out), Ok(want)) if &out == want => Verdict::Landed,
        (Ok(_), Ok(_)) => Verdict::WrongPlace,
        (Ok(_), Err(_)) => Verdict::NotRefused,
        (Err(e), Err(code)) if i64::from(e.code()) == *code => Verdict::RefusedAsExpected,
        (Err(_), _) => Verdict::Missed,
    }
}

#[test]
fn every_case_lands_or_is_refused_as_expected_and_none_at_a_wrong_place() {
    let cases = load();
    assert!(cases.len() >= 60, "the corpus has {} cases", cases.len());
    let mut exact: BTreeMap<&str, usize> = BTreeMap::new();
    let mut tiered: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_class: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for case in &cases {
        let e = judge(
            edit_bytes(&case.bytes, &case.old, &case.new, case.replace_all),
            &case.want,
        );
        let t = judge(
            edit_bytes_tiered(&case.bytes, &case.old, &case.new, case.replace_all)
                .map(|(bytes, _)| bytes),
            &case.want,
        );
        *exact.entry(label(e)).or_default() += 1;
        *tiered.entry(label(t)).or_default() += 1;
        let row = by_class.entry(&case.class).or_default();
        row.0 += 1;
        row.1 += usize::from(e == Verdict::Landed);
        row.2 += usize::from(t == Verdict::Landed);
        if e == Verdict::WrongPlace {
            failures.push(format!("{}: exact matching wrote a wrong file", case.name));
        }
        if !matches!(t, Verdict::Landed | Verdict::RefusedAsExpected) {
            failures.push(format!("{}: {t:?} with the tiers", case.name));
        }
    }
    println!("edit robustness corpus: {} cases", cases.len());
    println!("  exact matching only: {exact:?}");
    println!("  with the tiers:      {tiered:?}");
    println!("  landed per class (cases, exact only, tiered):");
    for (class, (n, e, t)) in &by_class {
        println!("    {class}: {n}, {e}, {t}");
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(tiered.get("wrong place"), None);
    assert_eq!(exact.get("wrong place"), None);
}

fn label(v: Verdict) -> &'static str {
    match v {
        Verdict::Landed => "landed",
        Verdict::RefusedAsExpected => "refused as expected",
        Verdict::Missed => "missed",
        Verdict::WrongPlace => "wrong place",
        Verdict::NotRefused => "not refused",
    }
}
