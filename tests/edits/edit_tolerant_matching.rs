//! The edit tool lands an `old_string` that differs from the file only in
//! trailing whitespace, indentation or look-alike characters, when the place
//! is unambiguous; names the tier in its success text; keeps every byte
//! outside the place (CRLF, BOM, UTF-16); refuses a whitespace-only quote
//! (code 9) and an ambiguous tier (code 5); and shows the closest region
//! when nothing matches (code 4).

use serde_json::json;

use crate::support::files::{Env, ok_no_error_code, refused};

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

#[tokio::test]
async fn trailing_whitespace_in_the_file_is_ignored_and_named() {
    let env = Env::new();
    env.put("a.py", "def f():   \n    return 1 \n\nx = 2\n");
    env.read("a.py").await;
    let r = env
        .edit(
            "a.py",
            "def f():\n    return 1\n",
            "def f():\n    return 2\n",
        )
        .await;
    assert_eq!(
        first_line(&ok_no_error_code(&r)),
        "The file a.py has been updated successfully. (matched ignoring trailing whitespace)"
    );
    assert_eq!(env.bytes("a.py"), b"def f():\n    return 2\n\nx = 2\n");
}

#[tokio::test]
async fn tabs_quoted_as_spaces_land_and_new_string_is_reindented_with_tabs() {
    let env = Env::new();
    let file = "package main\n\nfunc main() {\n\tif ok {\n\t\trun()\n\t}\n}\n";
    env.put("main.go", file);
    env.read("main.go").await;
    let r = env
        .edit(
            "main.go",
            "    if ok {\n        run()\n    }\n",
            "    if ok {\n        run()\n        done()\n    }\n",
        )
        .await;
    assert_eq!(
        first_line(&ok_no_error_code(&r)),
        "The file main.go has been updated successfully. (matched after normalising indentation; new_string re-indented)"
    );
    assert_eq!(
        env.bytes("main.go"),
        b"package main\n\nfunc main() {\n\tif ok {\n\t\trun()\n\t\tdone()\n\t}\n}\n"
    );
}

#[tokio::test]
async fn a_snippet_quoted_at_the_wrong_depth_is_moved_to_the_files_depth() {
    let env = Env::new();
    env.put(
        "a.rs",
        "impl A {\n    fn f(&self) {\n        self.g();\n    }\n}\n",
    );
    env.read("a.rs").await;
    let r = env
        .edit(
            "a.rs",
            "fn f(&self) {\n    self.g();\n}",
            "fn f(&self) {\n    self.g();\n    self.h();\n}",
        )
        .await;
    ok_no_error_code(&r);
    assert_eq!(
        env.bytes("a.rs"),
        b"impl A {\n    fn f(&self) {\n        self.g();\n        self.h();\n    }\n}\n"
    );
}

#[tokio::test]
async fn curly_quotes_and_non_breaking_spaces_are_folded() {
    let env = Env::new();
    env.put(
        "doc.md",
        "Say \u{201C}hello\u{201D}\u{00A0}\u{2014} it\u{2019}s fine.\nOther line.\n",
    );
    env.read("doc.md").await;
    let r = env
        .edit("doc.md", "Say \"hello\" - it's fine.", "Say \"bye\".")
        .await;
    assert_eq!(
        first_line(&ok_no_error_code(&r)),
        "The file doc.md has been updated successfully. (matched after folding look-alike characters)"
    );
    assert_eq!(env.bytes("doc.md"), b"Say \"bye\".\nOther line.\n");
}

#[tokio::test]
async fn an_exact_match_wins_and_carries_no_note() {
    let env = Env::new();
    env.put("a.txt", "x = 1  \nx = 1\n");
    env.read("a.txt").await;
    let r = env.edit("a.txt", "x = 1\n", "x = 2\n").await;
    // Exactly once: "x = 1\n" (the first line has trailing spaces).
    assert_eq!(
        ok_no_error_code(&r),
        "The file a.txt has been updated successfully.\n     1\tx = 1  \n     2\tx = 2"
    );
    assert_eq!(env.bytes("a.txt"), b"x = 1  \nx = 2\n");
}

#[tokio::test]
async fn two_places_for_a_tier_without_replace_all_is_code_5_and_nothing_changes() {
    let env = Env::new();
    // Two near-identical functions: both match once indentation is
    // normalised, so the edit must not pick one.
    let file = "a:\n  def f():\n    pass\nb:\n    def f():\n        pass\n";
    env.put("m.py", file);
    env.read("m.py").await;
    let text = refused(
        &env.edit("m.py", "def f():\n pass\n", "def g():\n pass\n")
            .await,
        5,
    );
    assert_eq!(
        text,
        "Found 2 matches of the string to replace (matched after normalising indentation; there is no exact match), but replace_all is false. To replace all of them, set replace_all to true. To replace only one, copy the text exactly as the file has it from the read output, with enough surrounding lines to identify the place."
    );
    assert_eq!(env.bytes("m.py"), file.as_bytes());
    // With replace_all both are replaced, each at its own depth.
    let r = env
        .call(
            "edit",
            json!({"file_path": "m.py", "old_string": "def f():\n pass\n", "new_string": "def g():\n return\n", "replace_all": true}),
        )
        .await;
    ok_no_error_code(&r);
    assert_eq!(
        env.bytes("m.py"),
        b"a:\n  def g():\n    return\nb:\n    def g():\n        return\n"
    );
}

#[tokio::test]
async fn a_look_alike_that_would_match_two_places_is_refused() {
    let env = Env::new();
    let file = "a = \u{201C}x\u{201D}\nb = \u{201E}x\u{201F}\n";
    env.put("q.txt", file);
    env.read("q.txt").await;
    let text = refused(&env.edit("q.txt", "\"x\"", "\"y\"").await, 5);
    assert!(
        text.starts_with(
            "Found 2 matches of the string to replace (matched after folding look-alike characters; there is no exact match)"
        ),
        "{text}"
    );
    assert_eq!(env.bytes("q.txt"), file.as_bytes());
}

#[tokio::test]
async fn crlf_bom_and_utf16_files_keep_every_byte_outside_the_place() {
    let env = Env::new();
    // CRLF with a UTF-8 BOM and trailing spaces on the quoted line.
    env.put("w.txt", b"\xEF\xBB\xBFone\r\ntwo  \r\nthree\r\n");
    env.read("w.txt").await;
    ok_no_error_code(&env.edit("w.txt", "two\n", "TWO\n").await);
    assert_eq!(env.bytes("w.txt"), b"\xEF\xBB\xBFone\r\nTWO\r\nthree\r\n");
    // UTF-16 LE with tabs quoted as spaces.
    let utf16 = |s: &str| {
        let mut out = vec![0xFF, 0xFE];
        for u in s.encode_utf16() {
            out.extend_from_slice(&u.to_le_bytes());
        }
        out
    };
    env.put("u.txt", utf16("head\r\n\tbody();\r\ntail\r\n"));
    env.read("u.txt").await;
    ok_no_error_code(
        &env.edit("u.txt", "    body();\r\n", "    other();\r\n")
            .await,
    );
    assert_eq!(env.bytes("u.txt"), utf16("head\r\n\tother();\r\ntail\r\n"));
}

#[tokio::test]
async fn a_whitespace_only_old_string_on_an_existing_file_is_code_9() {
    let env = Env::new();
    env.put("a.txt", "a\n\n\nb\n");
    env.read("a.txt").await;
    for blank in ["\n\n", "   ", "\t\n"] {
        let text = refused(&env.edit("a.txt", blank, "x").await, 9);
        assert!(
            text.starts_with("old_string must contain non-whitespace text."),
            "{text}"
        );
    }
    assert_eq!(env.bytes("a.txt"), b"a\n\n\nb\n");
    // An empty old_string still creates a missing file, and is still code 7
    // on an existing one.
    ok_no_error_code(&env.edit("new.txt", "", "made\n").await);
    assert_eq!(env.bytes("new.txt"), b"made\n");
    refused(&env.edit("a.txt", "", "x").await, 7);
}

#[tokio::test]
async fn a_near_miss_shows_the_closest_lines_and_a_diff() {
    let env = Env::new();
    let mut file: String = (1..=30).map(|i| format!("let v{i} = {i};\n")).collect();
    file.push_str("fn total(a: u32, b: u32) -> u32 {\n    a + b\n}\n");
    env.put("t.rs", &file);
    env.read("t.rs").await;
    let r = env
        .edit(
            "t.rs",
            "fn total(a: u32, b: u32) -> u64 {\n    a + b\n}",
            "fn total(a: u32, b: u32) -> u64 {\n    (a + b).into()\n}",
        )
        .await;
    assert_eq!(
        refused(&r, 4),
        "String to replace not found in file.\nString: fn total(a: u32, b: u32) -> u64 {\n    a + b\n}\nThe closest text is at lines 31–33:\n-fn total(a: u32, b: u32) -> u64 {\n+fn total(a: u32, b: u32) -> u32 {\n     a + b\n }"
    );
    assert_eq!(env.bytes("t.rs"), file.as_bytes());
}

#[tokio::test]
async fn a_miss_with_nothing_close_shows_only_the_string() {
    let env = Env::new();
    env.put("a.txt", "alpha\nbeta\n");
    env.read("a.txt").await;
    assert_eq!(
        refused(&env.edit("a.txt", "completely different", "x").await, 4),
        "String to replace not found in file.\nString: completely different"
    );
}

#[tokio::test]
async fn a_long_near_miss_diff_is_cut_to_twenty_lines() {
    let env = Env::new();
    let file: String = (0..60)
        .map(|i| format!("value_{i} = compute({i})\n"))
        .collect();
    env.put("big.py", &file);
    env.read("big.py").await;
    let quote: String = (10..40)
        .map(|i| format!("value_{i} = compute({i}, x)\n"))
        .collect();
    let text = refused(&env.edit("big.py", &quote, "x").await, 4);
    let help = &text[text.find("The closest text").expect("help shown")..];
    assert!(
        help.starts_with("The closest text is at lines 11–40:"),
        "{help}"
    );
    assert_eq!(help.lines().count(), 21, "{help}");
}
