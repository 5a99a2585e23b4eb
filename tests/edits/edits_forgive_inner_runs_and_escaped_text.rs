//! Issue 31 item 2: `edit`, `multi_edit` and `apply_patch` land a quote
//! whose runs of spaces and tabs inside a line differ from the file's, and
//! a quote whose backslash escapes were written literally (a model that
//! escaped its JSON twice), when exactly one place matches; the success
//! text names the tier; several places is code 5, a quote whose escapes
//! read two ways is not guessed (code 4), a run never matches no run, and
//! a file that really holds a backslash-n is matched exactly, its bytes
//! kept.

use serde_json::json;

use crate::support::files::{Env, ok, ok_no_error_code, refused, utf16le};

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or_default()
}

const INNER: &str = "(matched with runs of spaces and tabs inside lines compared as one space)";
const ESCAPED: &str = "(matched after reading backslash escapes in old_string as the characters they stand for; new_string read the same way)";

#[tokio::test]
async fn edit_lands_a_quote_whose_inner_runs_differ_either_way() {
    let env = Env::new();
    let file = "fn f() {\n    const   x    =  5;\n    let y = 1;\n}\n";
    env.put("a.js", file);
    env.read("a.js").await;
    let r = env.edit("a.js", "const x = 5;", "const x = 6;").await;
    assert_eq!(
        first_line(&ok_no_error_code(&r)),
        format!("The file a.js has been updated successfully. {INNER}")
    );
    assert_eq!(
        env.bytes("a.js"),
        b"fn f() {\n    const x = 6;\n    let y = 1;\n}\n"
    );
    // The quote has the wider runs, over two lines, tabs among them.
    let r = env
        .edit(
            "a.js",
            "    const  x =\t6;\n    let   y = 1;\n",
            "    const x = 7;\n    let y = 2;\n",
        )
        .await;
    ok_no_error_code(&r);
    assert_eq!(
        env.bytes("a.js"),
        b"fn f() {\n    const x = 7;\n    let y = 2;\n}\n"
    );
}

#[tokio::test]
async fn inner_runs_at_two_places_are_code_5_and_replace_all_takes_both() {
    let env = Env::new();
    let file = "x  = 1\ny = 2\nx =   1\n";
    env.put("c.txt", file);
    env.read("c.txt").await;
    let text = refused(&env.edit("c.txt", "x = 1", "x = 9").await, 5);
    assert!(
        text.starts_with(
            "Found 2 matches of the string to replace (matched with runs of spaces and tabs inside lines compared as one space; there is no exact match)"
        ),
        "{text}"
    );
    assert_eq!(env.bytes("c.txt"), file.as_bytes());
    let r = env
        .call(
            "edit",
            json!({"file_path": "c.txt", "old_string": "x = 1", "new_string": "x = 9", "replace_all": true}),
        )
        .await;
    ok_no_error_code(&r);
    assert_eq!(env.bytes("c.txt"), b"x = 9\ny = 2\nx = 9\n");
}

#[tokio::test]
async fn a_run_never_matches_no_run_and_indentation_is_not_forgiven_with_it() {
    let env = Env::new();
    let file = "return a+b;\ndef f():\n    x  =  1\n";
    env.put("r.py", file);
    env.read("r.py").await;
    refused(&env.edit("r.py", "return a + b;", "return a - b;").await, 4);
    refused(&env.edit("r.py", "returna+b;", "x").await, 4);
    refused(&env.edit("r.py", "def f():\n  x = 1", "x").await, 4);
    assert_eq!(env.bytes("r.py"), file.as_bytes());
}

#[tokio::test]
async fn edit_reads_escapes_written_literally_and_new_string_the_same_way() {
    let env = Env::new();
    let file = "fn main() {\n    println!(\"hello\\n\");\n    run();\n}\n";
    env.put("m.rs", file);
    env.read("m.rs").await;
    // As a model that escaped its JSON twice sends it.
    let r = env
        .edit(
            "m.rs",
            r#"    println!(\"hello\\n\");\n    run();"#,
            r#"    println!(\"bye\\n\");\n    run();\n    done();"#,
        )
        .await;
    assert_eq!(
        first_line(&ok_no_error_code(&r)),
        format!("The file m.rs has been updated successfully. {ESCAPED}")
    );
    assert_eq!(
        env.bytes("m.rs"),
        b"fn main() {\n    println!(\"bye\\n\");\n    run();\n    done();\n}\n"
    );
}

#[tokio::test]
async fn escaped_quotes_with_raw_newlines_land_and_crlf_utf16_bytes_are_kept() {
    let env = Env::new();
    env.put("p.py", "msg = \"hi\"\r\nprint(msg)\r\nend = 1\r\n");
    env.read("p.py").await;
    ok_no_error_code(
        &env.edit(
            "p.py",
            "msg = \\\"hi\\\"\nprint(msg)",
            "msg = \\\"bye\\\"\nprint(msg)",
        )
        .await,
    );
    assert_eq!(
        env.bytes("p.py"),
        b"msg = \"bye\"\r\nprint(msg)\r\nend = 1\r\n"
    );
    env.put("u.txt", utf16le("x = \"1\"\r\ny = 2\r\n"));
    env.read("u.txt").await;
    ok_no_error_code(&env.edit("u.txt", "x = \\\"1\\\"", "x = \\\"2\\\"").await);
    assert_eq!(env.bytes("u.txt"), utf16le("x = \"2\"\r\ny = 2\r\n"));
}

#[tokio::test]
async fn a_file_that_holds_a_backslash_n_is_matched_exactly_and_kept() {
    let env = Env::new();
    // A C string with the two characters backslash and n, and one with a
    // real newline in it.
    let file = "puts(\"a\\n\");\nputs(\"a\n\");\n";
    env.put("c.c", file);
    env.read("c.c").await;
    let r = env.edit("c.c", "puts(\"a\\n\");", "puts(\"b\\n\");").await;
    // Exact: no note, the other string untouched, the new backslash-n
    // written as given.
    assert_eq!(
        first_line(&ok_no_error_code(&r)),
        "The file c.c has been updated successfully."
    );
    assert_eq!(env.bytes("c.c"), b"puts(\"b\\n\");\nputs(\"a\n\");\n");
}

#[tokio::test]
async fn escapes_that_read_two_ways_or_land_twice_are_refused() {
    let env = Env::new();
    // A raw newline and a `\n`: the code's own escape or an escaped
    // newline? Not guessed.
    let file = "printf(\"a\\n\");\nreturn 0;\nsay(\"x\");\nsay(\"x\");\n";
    env.put("t.c", file);
    env.read("t.c").await;
    refused(
        &env.edit(
            "t.c",
            "printf(\\\"a\\n\\\");\nreturn 0;",
            "printf(\\\"b\\n\\\");\nreturn 0;",
        )
        .await,
        4,
    );
    let text = refused(
        &env.edit("t.c", "say(\\\"x\\\");", "say(\\\"y\\\");").await,
        5,
    );
    assert!(
        text.starts_with(
            "Found 2 matches of the string to replace (matched after reading backslash escapes in old_string; there is no exact match)"
        ),
        "{text}"
    );
    assert_eq!(env.bytes("t.c"), file.as_bytes());
}

#[tokio::test]
async fn multi_edit_names_each_new_tier() {
    let env = Env::new();
    env.put("m.py", "a  =  1\nb = \"x\"\n");
    env.read("m.py").await;
    let r = env
        .call(
            "multi_edit",
            json!({"file_path": "m.py", "edits": [
                {"old_string": "a = 1", "new_string": "a = 2"},
                {"old_string": "b = \\\"x\\\"", "new_string": "b = \\\"y\\\""},
            ]}),
        )
        .await;
    let text = ok_no_error_code(&r);
    assert!(text.contains(&format!("Edit 1 of 2: {INNER}")), "{text}");
    assert!(text.contains(&format!("Edit 2 of 2: {ESCAPED}")), "{text}");
    assert_eq!(env.bytes("m.py"), b"a = 2\nb = \"y\"\n");
}

#[tokio::test]
async fn apply_patch_places_hunks_by_the_new_tiers_and_keeps_context_lines() {
    let env = Env::new();
    env.put(
        "s.js",
        "let  total =  0;\nfor (x of xs) {\n  log(\"seen\");\n}\n",
    );
    env.read("s.js").await;
    let patch = "*** Begin Patch\n*** Update File: s.js\n@@\n-let total = 0;\n+let total = 1;\n@@\n for (x of xs) {\n-  log(\\\"seen\\\");\n+  log(\\\"done\\\");\n*** End Patch\n";
    ok(&env.call("apply_patch", json!({"patch": patch})).await);
    assert_eq!(
        env.bytes("s.js"),
        b"let total = 1;\nfor (x of xs) {\n  log(\"done\");\n}\n"
    );
    // Two places with runs collapsed: code 5, nothing written.
    env.put("d.js", "f(a,  b);\nf(a,   b);\n");
    env.read("d.js").await;
    let patch = "*** Begin Patch\n*** Update File: d.js\n@@\n-f(a, b);\n+g();\n*** End Patch\n";
    let text = refused(&env.call("apply_patch", json!({"patch": patch})).await, 5);
    assert!(text.contains(&format!("match 2 places {INNER}")), "{text}");
    assert_eq!(env.bytes("d.js"), b"f(a,  b);\nf(a,   b);\n");
}
