//! Issue 31 item 1: a file in a legacy encoding (windows-1252, Shift_JIS,
//! GBK, EUC-KR) is read as UTF-8 under a first line naming its encoding,
//! edited by edit, multi_edit, apply_patch and write in that encoding with
//! every byte outside the edited span unchanged, and searched by grep
//! decoded; a character the encoding cannot store is refused with code 12
//! and nothing written; a short file whose encoding is only a guess is
//! shown as a guess and refused for edits with code 13; binary stays
//! refused with code 8.

use std::sync::Arc;

use agentcore::TypedTool;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::grep::GrepTool;
use agentcore::{Call, Outcome, Pipeline, ToolRegistry, ToolResult};
use encoding_rs::{EUC_KR, Encoding, GBK, SHIFT_JIS, WINDOWS_1252};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::files::{Env, ok, refused};

/// A file in each encoding: its text (with enough non-ASCII bytes for the
/// detector to be sure), a line to change and what it becomes.
struct Case {
    charset: &'static Encoding,
    name: &'static str,
    text: &'static str,
    old: &'static str,
    new: &'static str,
}

const CASES: [Case; 4] = [
    Case {
        charset: WINDOWS_1252,
        name: "windows-1252",
        text: "// Größe des Puffers: für Überläufe prüfen\nlet größe = 4096;\n// Grüße aus Köln, schöne Äpfel, süße Öfen\nfn main() {}\n",
        old: "let größe = 4096;",
        new: "let größe = 8192; // € für Übergröße",
    },
    Case {
        charset: SHIFT_JIS,
        name: "shift_jis",
        text: "// 日本語のコメントです。設定を読み込みます。\nlet 値 = 1;\n// ファイルの終わりです。\nfn main() {}\n",
        old: "let 値 = 1;",
        new: "let 値 = 2; // 変更しました",
    },
    Case {
        charset: GBK,
        name: "gbk",
        text: "// 这是一个简体中文的注释，用于读取配置。\nlet 值 = 1;\n// 文件到此结束。\nfn main() {}\n",
        old: "let 值 = 1;",
        new: "let 值 = 2; // 已经修改",
    },
    Case {
        charset: EUC_KR,
        name: "euc-kr",
        text: "// 이것은 한국어 주석입니다. 설정을 읽습니다.\nlet 값 = 1;\n// 파일의 끝입니다.\nfn main() {}\n",
        old: "let 값 = 1;",
        new: "let 값 = 2; // 바꾸었습니다",
    },
];

fn encode(text: &str, charset: &'static Encoding) -> Vec<u8> {
    let (bytes, _, unmappable) = charset.encode(text);
    assert!(!unmappable, "{text:?} in {}", charset.name());
    bytes.into_owned()
}

/// `after` is `before` with `old` replaced by `new` in `text`, and every
/// byte before and after that span is the same.
fn only_the_span_changed(case: &Case, text: &str, before: &[u8], after: &[u8]) {
    let at = text.find(case.old).expect("old in text");
    let head = encode(&text[..at], case.charset).len();
    let tail = encode(&text[at + case.old.len()..], case.charset).len();
    assert_eq!(after[..head], before[..head], "{}: bytes before", case.name);
    assert_eq!(
        after[after.len() - tail..],
        before[before.len() - tail..],
        "{}: bytes after",
        case.name
    );
    let want = text.replacen(case.old, case.new, 1);
    assert_eq!(after, encode(&want, case.charset), "{}", case.name);
}

async fn read(env: &Env, name: &str) -> String {
    ok(&env.call("read", json!({"file_path": name})).await)
}

#[tokio::test]
async fn read_shows_the_text_under_a_line_naming_the_encoding() {
    for case in &CASES {
        let env = Env::new();
        env.put("f.txt", encode(case.text, case.charset));
        let shown = read(&env, "f.txt").await;
        let mut lines = shown.lines();
        assert_eq!(
            lines.next(),
            Some(format!("(file is {}; shown as UTF-8)", case.name).as_str())
        );
        assert_eq!(
            lines.next().map(|l| l.split_once('\t').unwrap().1),
            case.text.lines().next()
        );
        // Line numbers, offset and limit as for UTF-8.
        let part = ok(&env
            .call(
                "read",
                json!({"file_path": "f.txt", "offset": 2, "limit": 1}),
            )
            .await);
        let mut lines = part.lines();
        assert_eq!(
            lines.next(),
            Some(format!("(file is {}; shown as UTF-8)", case.name).as_str())
        );
        assert_eq!(lines.next(), Some(format!("     2\t{}", case.old).as_str()));
    }
}

#[tokio::test]
async fn edit_writes_back_in_the_files_encoding_and_changes_only_its_span() {
    for case in &CASES {
        for crlf in [false, true] {
            let env = Env::new();
            let text = if crlf {
                case.text.replace('\n', "\r\n")
            } else {
                case.text.to_owned()
            };
            let before = encode(&text, case.charset);
            env.put("f.txt", &before);
            // A partial read is enough for an edit, as for UTF-8.
            ok(&env
                .call(
                    "read",
                    json!({"file_path": "f.txt", "offset": 2, "limit": 1}),
                )
                .await);
            ok(&env.edit("f.txt", case.old, case.new).await);
            only_the_span_changed(case, &text, &before, &env.bytes("f.txt"));
            // And the file reads as the new text.
            let shown = read(&env, "f.txt").await;
            assert!(shown.contains(case.new), "{}: {shown}", case.name);
        }
    }
}

#[tokio::test]
async fn multi_edit_writes_back_in_the_files_encoding_and_changes_only_its_span() {
    for case in &CASES {
        let env = Env::new();
        let before = encode(case.text, case.charset);
        env.put("f.txt", &before);
        read(&env, "f.txt").await;
        let r = env
            .call(
                "multi_edit",
                json!({"file_path": "f.txt", "edits": [
                    {"old_string": case.old, "new_string": "PLACEHOLDER"},
                    {"old_string": "PLACEHOLDER", "new_string": case.new},
                ]}),
            )
            .await;
        ok(&r);
        only_the_span_changed(case, case.text, &before, &env.bytes("f.txt"));
    }
}

#[tokio::test]
async fn apply_patch_writes_back_in_the_files_encoding_and_changes_only_its_span() {
    for case in &CASES {
        let env = Env::new();
        let before = encode(case.text, case.charset);
        env.put("f.txt", &before);
        read(&env, "f.txt").await;
        let patch = format!(
            "*** Begin Patch\n*** Update File: f.txt\n@@\n-{}\n+{}\n*** End Patch\n",
            case.old, case.new
        );
        ok(&env.call("apply_patch", json!({"patch": patch})).await);
        only_the_span_changed(case, case.text, &before, &env.bytes("f.txt"));
    }
}

#[tokio::test]
async fn write_over_an_existing_file_keeps_its_encoding_and_a_new_file_is_utf8() {
    for case in &CASES {
        let env = Env::new();
        let before = encode(case.text, case.charset);
        env.put("f.txt", &before);
        read(&env, "f.txt").await;
        let text = case.text.replacen(case.old, case.new, 1);
        ok(&env.write("f.txt", &text).await);
        only_the_span_changed(case, case.text, &before, &env.bytes("f.txt"));
        // A new file is UTF-8.
        ok(&env.write("new.txt", case.text).await);
        assert_eq!(env.bytes("new.txt"), case.text.as_bytes());
    }
}

#[tokio::test]
async fn a_character_the_encoding_cannot_store_is_code_12_and_nothing_is_written() {
    // Ω is in none of windows-1252's 256 bytes; 😀 is in no legacy encoding.
    for (case, character, code_point) in [
        (&CASES[0], 'Ω', "U+03A9"),
        (&CASES[1], '😀', "U+1F600"),
        (&CASES[2], '😀', "U+1F600"),
        (&CASES[3], '😀', "U+1F600"),
    ] {
        let env = Env::new();
        let before = encode(case.text, case.charset);
        env.put("f.txt", &before);
        read(&env, "f.txt").await;
        let new = format!("{} // {character}", case.old);
        let said = format!(
            "The file is {}, which cannot store '{character}' ({code_point}); nothing was changed.",
            case.name
        );
        let edit = refused(&env.edit("f.txt", case.old, &new).await, 12);
        assert!(edit.starts_with(&said), "{edit}");
        assert!(edit.contains("convert the file to UTF-8"), "{edit}");
        let multi = refused(
            &env.call(
                "multi_edit",
                json!({"file_path": "f.txt", "edits": [{"old_string": case.old, "new_string": new}]}),
            )
            .await,
            12,
        );
        assert!(multi.contains(&said), "{multi}");
        let patch = format!(
            "*** Begin Patch\n*** Update File: f.txt\n@@\n-{}\n+{new}\n*** End Patch\n",
            case.old
        );
        let patched = refused(&env.call("apply_patch", json!({"patch": patch})).await, 12);
        assert!(patched.contains(&said), "{patched}");
        let write = refused(
            &env.write("f.txt", &format!("{}{character}", case.text))
                .await,
            12,
        );
        assert!(write.starts_with(&said), "{write}");
        // Never a ?, a U+FFFD or an HTML entity: nothing at all.
        assert_eq!(env.bytes("f.txt"), before, "{}", case.name);
    }
}

#[tokio::test]
async fn a_short_file_valid_in_several_encodings_is_shown_as_a_guess_and_not_edited() {
    let env = Env::new();
    // B0 A1 is 가 in EUC-KR, 啊 in GBK, ｰ｡ in Shift_JIS, °¡ in windows-1252.
    let bytes = b"x = \"\xB0\xA1\";\ny = 1;\n".to_vec();
    env.put("short.txt", &bytes);
    let shown = read(&env, "short.txt").await;
    let first = shown.lines().next().unwrap();
    assert!(first.starts_with("(file is probably "), "{first}");
    assert!(
        first.contains("but that is a guess: it has only 2 non-ASCII bytes"),
        "{first}"
    );
    assert!(shown.contains("     2\ty = 1;"), "{shown}");
    let edit = refused(&env.edit("short.txt", "y = 1;", "y = 2;").await, 13);
    assert!(
        edit.starts_with("File is not UTF-8 and its encoding is not known for sure"),
        "{edit}"
    );
    let multi = env
        .call(
            "multi_edit",
            json!({"file_path": "short.txt", "edits": [{"old_string": "y = 1;", "new_string": "y = 2;"}]}),
        )
        .await;
    refused(&multi, 13);
    let patch =
        "*** Begin Patch\n*** Update File: short.txt\n@@\n-y = 1;\n+y = 2;\n*** End Patch\n";
    refused(&env.call("apply_patch", json!({"patch": patch})).await, 13);
    refused(&env.write("short.txt", "x = \"가\";\n").await, 13);
    assert_eq!(env.bytes("short.txt"), bytes);
    // ASCII is the same bytes in every candidate: write needs no guess.
    ok(&env.write("short.txt", "x = 1;\n").await);
    assert_eq!(env.bytes("short.txt"), b"x = 1;\n");
}

#[tokio::test]
async fn a_binary_file_is_still_code_8() {
    let env = Env::new();
    let bytes = b"valid line\n\xFF\xFEbroken \x81\x01(\n".to_vec();
    env.put("bin.txt", &bytes);
    let shown = read(&env, "bin.txt").await;
    assert!(
        shown.starts_with("(Note: this file is not valid UTF-8 or UTF-16 text"),
        "{shown}"
    );
    refused(&env.edit("bin.txt", "valid", "x").await, 8);
    assert_eq!(env.bytes("bin.txt"), bytes);
    // write replaces a file that is text in no encoding with UTF-8, as
    // before.
    ok(&env.write("bin.txt", "naïve\n").await);
    assert_eq!(env.bytes("bin.txt"), "naïve\n".as_bytes());
}

#[tokio::test]
async fn a_file_changed_after_the_read_is_still_refused() {
    let case = &CASES[1];
    let env = Env::new();
    env.put("f.txt", encode(case.text, case.charset));
    read(&env, "f.txt").await;
    let changed = encode(&case.text.replace("終わり", "最後"), case.charset);
    env.put("f.txt", &changed);
    refused(&env.edit("f.txt", case.old, case.new).await, 3);
    assert_eq!(env.bytes("f.txt"), changed);
}

async fn grep(env: &Env, args: Value) -> ToolResult {
    let ws = Workspace::new(env.root()).unwrap();
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

#[tokio::test]
async fn grep_finds_words_in_legacy_files_and_shows_them_in_utf8() {
    let env = Env::new();
    for case in &CASES {
        env.put(
            &format!("{}.txt", case.name),
            encode(case.text, case.charset),
        );
    }
    env.put("plain.txt", "nothing here\n");
    for (pattern, file, line) in [
        (
            "Grüße",
            "windows-1252.txt",
            "3:// Grüße aus Köln, schöne Äpfel, süße Öfen",
        ),
        ("let größe", "windows-1252.txt", "2:let größe = 4096;"),
        (
            "日本語",
            "shift_jis.txt",
            "1:// 日本語のコメントです。設定を読み込みます。",
        ),
        (
            "简体中文",
            "gbk.txt",
            "1:// 这是一个简体中文的注释，用于读取配置。",
        ),
        (
            "한국어",
            "euc-kr.txt",
            "1:// 이것은 한국어 주석입니다. 설정을 읽습니다.",
        ),
    ] {
        let r = grep(&env, json!({"pattern": pattern, "output_mode": "content"})).await;
        assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
        assert_eq!(r.text(), format!("{file}:{line}"), "{pattern}");
        let r = grep(&env, json!({"pattern": pattern})).await;
        assert!(r.text().contains(file), "{pattern}: {}", r.text());
    }
    // An ASCII pattern shows the whole line decoded, never as U+FFFD.
    let r = grep(
        &env,
        json!({"pattern": "^fn main", "output_mode": "content"}),
    )
    .await;
    assert_eq!(r.text().lines().count(), 4, "{}", r.text());
    let r = grep(
        &env,
        json!({"pattern": "Puffers", "output_mode": "content", "-A": 1}),
    )
    .await;
    assert_eq!(
        r.text(),
        "windows-1252.txt:1:// Größe des Puffers: für Überläufe prüfen\nwindows-1252.txt-2-let größe = 4096;"
    );
}

#[tokio::test]
async fn grep_searches_a_file_whose_encoding_is_a_guess_as_bytes() {
    let env = Env::new();
    env.put("short.txt", b"x = \"\xB0\xA1\";\n");
    let r = grep(&env, json!({"pattern": "x =", "output_mode": "content"})).await;
    assert_eq!(r.text(), "short.txt:1:x = \"\u{FFFD}\u{FFFD}\";");
}

#[tokio::test]
async fn grep_decodes_a_legacy_file_again_when_its_window_lies_past_the_kept_lines() {
    // Far more matching lines than the walk keeps (256 KiB a file): the
    // window deep inside is found by searching the file again, decoded.
    let env = Env::new();
    let text: String = (1..=30_000).map(|n| format!("café {n} naïve\n")).collect();
    env.put("big.txt", encode(&text, WINDOWS_1252));
    let r = grep(
        &env,
        json!({"pattern": "café", "output_mode": "content", "offset": 29_000, "head_limit": 2}),
    )
    .await;
    assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
    let mut lines = r.text().lines().map(str::to_owned).collect::<Vec<_>>();
    lines.truncate(2);
    assert_eq!(
        lines,
        [
            "big.txt:29001:café 29001 naïve",
            "big.txt:29002:café 29002 naïve"
        ]
    );
}

#[tokio::test]
async fn utf8_with_a_stray_byte_is_a_guess_and_not_edited() {
    // Mostly UTF-8, with one windows-1252 byte: no single encoding reads
    // it right, so nothing is written in one.
    let env = Env::new();
    let mut bytes = "// Größe des Puffers: für Überläufe prüfen\nlet größe = 1;\n"
        .as_bytes()
        .to_vec();
    bytes.extend_from_slice(b"// caf\xE9\n");
    env.put("mixed.txt", &bytes);
    let shown = read(&env, "mixed.txt").await;
    let first = shown.lines().next().unwrap();
    assert!(first.starts_with("(file is probably "), "{first}");
    assert!(
        first.contains("non-ASCII bytes are UTF-8 characters"),
        "{first}"
    );
    let r = refused(
        &env.edit("mixed.txt", "let größe = 1;", "let größe = 2;")
            .await,
        13,
    );
    assert!(r.contains("looks like UTF-8 with stray bytes"), "{r}");
    assert_eq!(env.bytes("mixed.txt"), bytes);
}
