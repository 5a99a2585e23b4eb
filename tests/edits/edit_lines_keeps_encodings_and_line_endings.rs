//! `edit_lines` writes a file back as it found it: CRLF lines stay CRLF
//! (new lines too), a byte-order mark and UTF-16 stay, a file without a
//! final line ending still has none, and in a file of mixed endings new
//! lines take the ending of the line they replace or follow. Bytes outside
//! the changed lines are unchanged. Anchors are read's, whatever the
//! encoding.

use serde_json::json;

use crate::support::files::{Env, ok, utf16le};

/// Reads `name` and replaces its line `n` with `text`, by read's anchor.
async fn replace_line(env: &Env, name: &str, n: usize, text: &str) {
    let shown = env.read_anchors(name).await;
    ok(&env
        .edit_lines(
            name,
            json!([{"op": "replace", "start": shown[n - 1].0, "text": text}]),
        )
        .await);
}

#[tokio::test]
async fn crlf_lines_stay_crlf() {
    let env = Env::anchored();
    env.put("w.txt", "one\r\ntwo\r\nthree\r\n");
    let shown = env.read_anchors("w.txt").await;
    assert_eq!(shown[1].1, "two", "read shows the line without its CR");
    ok(&env
        .edit_lines(
            "w.txt",
            json!([
                {"op": "replace", "start": shown[1].0, "text": "TWO\nTWO'"},
                {"op": "insert_after", "anchor": shown[2].0, "text": "four\r\n"},
            ]),
        )
        .await);
    assert_eq!(
        env.bytes("w.txt"),
        b"one\r\nTWO\r\nTWO'\r\nthree\r\nfour\r\n"
    );
}

#[tokio::test]
async fn utf16_with_its_bom_stays_utf16() {
    let env = Env::anchored();
    env.put("u.txt", utf16le("alpha\r\nbéta\r\ngamma\r\n"));
    let shown = env.read_anchors("u.txt").await;
    assert_eq!(shown[1].1, "béta");
    ok(&env
        .edit_lines(
            "u.txt",
            json!([{"op": "replace", "start": shown[1].0, "text": "βeta ✓"}]),
        )
        .await);
    assert_eq!(env.bytes("u.txt"), utf16le("alpha\r\nβeta ✓\r\ngamma\r\n"));
}

#[tokio::test]
async fn a_utf8_bom_stays() {
    let env = Env::anchored();
    env.put("b.txt", b"\xEF\xBB\xBFx = 1\ny = 2\n");
    replace_line(&env, "b.txt", 2, "y = 3").await;
    assert_eq!(env.bytes("b.txt"), b"\xEF\xBB\xBFx = 1\ny = 3\n");
}

#[tokio::test]
async fn a_missing_final_line_ending_stays_missing() {
    let env = Env::anchored();
    env.put("n.txt", "a\nb");
    let shown = env.read_anchors("n.txt").await;
    ok(&env
        .edit_lines(
            "n.txt",
            json!([{"op": "insert_after", "anchor": shown[1].0, "text": "c"}]),
        )
        .await);
    assert_eq!(env.bytes("n.txt"), b"a\nb\nc");
    replace_line(&env, "n.txt", 3, "C\n").await;
    assert_eq!(env.bytes("n.txt"), b"a\nb\nC");
}

#[tokio::test]
async fn mixed_endings_keep_each_lines_own() {
    let env = Env::anchored();
    env.put("m.txt", "a\r\nb\nc\r\n");
    let shown = env.read_anchors("m.txt").await;
    assert_eq!(
        shown.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    ok(&env
        .edit_lines(
            "m.txt",
            json!([
                {"op": "replace", "start": shown[1].0, "text": "B1\nB2"},
                {"op": "insert_after", "anchor": shown[2].0, "text": "d"},
            ]),
        )
        .await);
    assert_eq!(env.bytes("m.txt"), b"a\r\nB1\nB2\nc\r\nd\r\n");
}

#[tokio::test]
async fn bytes_outside_the_changed_lines_are_unchanged() {
    let env = Env::anchored();
    // Trailing spaces, tabs, a lone CR inside a line, non-ASCII.
    let file = "keep  \n\tx\ry\nchange me\né😀 \n";
    env.put("k.txt", file);
    replace_line(&env, "k.txt", 3, "changed").await;
    assert_eq!(
        String::from_utf8(env.bytes("k.txt")).unwrap(),
        file.replace("change me", "changed")
    );
}

/// A file in a legacy encoding (windows-1252 here) is written back in it,
/// byte for byte outside the changed line; a character the encoding
/// cannot store refuses the call with code 12 and writes nothing.
#[tokio::test]
async fn a_legacy_encoding_stays_and_what_it_cannot_store_is_code_12() {
    let env = Env::anchored();
    // "café", "naïve", "résumé" in windows-1252: enough non-ASCII bytes to
    // know the encoding surely.
    let file: &[u8] = b"caf\xE9 cr\xE8me br\xFBl\xE9e\nna\xEFve fa\xE7ade\nr\xE9sum\xE9 \xE0 la carte d\xE9j\xE0 vu\n";
    env.put("l.txt", file);
    let shown = env.read_anchors("l.txt").await;
    assert_eq!(shown[1].1, "naïve façade");
    ok(&env
        .edit_lines(
            "l.txt",
            json!([{"op": "replace", "start": shown[1].0, "text": "naïve déjà"}]),
        )
        .await);
    assert_eq!(
        env.bytes("l.txt"),
        b"caf\xE9 cr\xE8me br\xFBl\xE9e\nna\xEFve d\xE9j\xE0\nr\xE9sum\xE9 \xE0 la carte d\xE9j\xE0 vu\n"
    );
    let before = env.bytes("l.txt");
    let shown = env.read_anchors("l.txt").await;
    let refused = env
        .edit_lines(
            "l.txt",
            json!([{"op": "replace", "start": shown[0].0, "text": "coffee ☕"}]),
        )
        .await;
    assert_eq!(refused.error_code, Some(12), "{}", refused.text());
    assert!(
        refused.text().contains("windows-1252"),
        "{}",
        refused.text()
    );
    assert_eq!(env.bytes("l.txt"), before);
}
