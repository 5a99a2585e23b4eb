//! Issue 25 item 11 (d): overlapping occurrences are places of their own
//! when uniqueness is judged: `end\nend` is twice in `end\nend\nend`, so an
//! edit without replace_all is ambiguous (code 5) and nothing is written;
//! with replace_all the earlier of two overlapping places is replaced.

use agentcore::tools::edit::{EditError, apply_edit, apply_edit_tiered};
use agentcore::{Outcome, ToolResult};
use serde_json::json;

use crate::support::files::Env;

fn ambiguous(r: &ToolResult, n: usize) {
    assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
    assert_eq!(r.error_code, Some(5), "{}", r.text());
    assert!(
        r.text().starts_with(&format!("Found {n} matches")),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn the_issues_end_end_is_two_places() {
    let env = Env::new();
    env.put("a.rb", "end\nend\nend\n");
    env.read("a.rb").await;
    ambiguous(&env.edit("a.rb", "end\nend", "done").await, 2);
    assert_eq!(env.bytes("a.rb"), b"end\nend\nend\n");
    // multi_edit and its own refusal.
    let r = env
        .call(
            "multi_edit",
            json!({"file_path": "a.rb", "edits": [{"old_string": "end\nend", "new_string": "x"}]}),
        )
        .await;
    assert_eq!(r.error_code, Some(5), "{}", r.text());
    assert_eq!(env.bytes("a.rb"), b"end\nend\nend\n");
}

#[test]
fn variants() {
    assert_eq!(
        apply_edit("aaa", "aa", "b", false),
        Err(EditError::Ambiguous(2))
    );
    assert_eq!(apply_edit("abab", "abab", "x", false).unwrap(), "x");
    assert_eq!(
        apply_edit("ababab", "abab", "x", false),
        Err(EditError::Ambiguous(2))
    );
    // replace_all is the plain replacement: the later overlapping place stays.
    assert_eq!(apply_edit("aaa", "aa", "b", true).unwrap(), "ba");
    assert_eq!(
        apply_edit("end\nend\nend", "end\nend", "x", true).unwrap(),
        "x\nend"
    );
    // The tolerant tiers count overlaps too.
    let e = apply_edit_tiered("} \n} \n} \n", "}\n}\n", "x\n", false).unwrap_err();
    assert!(matches!(e, EditError::AmbiguousTolerant(2, _)), "{e:?}");
    // Look-alikes: folded text with overlapping places.
    let e = apply_edit_tiered("\u{2018}a\u{2018}a\u{2018}", "'a'", "b", false).unwrap_err();
    assert!(matches!(e, EditError::AmbiguousTolerant(2, _)), "{e:?}");
}
