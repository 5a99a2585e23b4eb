//! `edit_lines` applies its operations only when every cited line still
//! has its hash; otherwise nothing is written, the call fails with code 14
//! and the message shows the current lines around each stale anchor with
//! their anchors, so that the model can re-anchor without a read. An
//! anchor whose hash repeats within 16 lines, on a line the model has not
//! read as the file is now, is refused as ambiguous — the case where lines
//! moved under the model's anchors and another line took the place.

use agentcore::tools::edit_lines::anchor::line_hash;
use serde_json::json;

use crate::support::files::{Env, anchored_lines, ok, refused};

const FILE: &str = "fn main() {\n    let a = 1;\n    let b = 2;\n    println!(\"{a} {b}\");\n}\n";

fn anchor(n: usize, content: &str) -> String {
    format!("{n}:{}", line_hash(content.as_bytes()))
}

#[tokio::test]
async fn read_shows_anchors_and_edit_lines_takes_them() {
    let env = Env::anchored();
    env.put("src/main.rs", FILE);
    let shown = env.read_anchors("src/main.rs").await;
    assert_eq!(
        shown[1],
        (anchor(2, "    let a = 1;"), "    let a = 1;".to_owned())
    );
    let r = env
        .edit_lines(
            "src/main.rs",
            json!([
                {"op": "replace", "start": shown[1].0, "end": shown[2].0, "text": "    let a = 10;\n    let b = 20;\n    let c = a + b;"},
                {"op": "insert_after", "anchor": "0:", "text": "// top"},
            ]),
        )
        .await;
    let text = ok(&r);
    assert!(
        text.starts_with("The file src/main.rs has been updated successfully (2 operations); it has 7 lines (before: 5)."),
        "{text}"
    );
    // The changed lines come back with their anchors.
    let fresh = anchored_lines(&text);
    assert!(
        fresh.contains(&(
            anchor(5, "    let c = a + b;"),
            "    let c = a + b;".to_owned()
        )),
        "{text}"
    );
    assert_eq!(
        String::from_utf8(env.bytes("src/main.rs")).unwrap(),
        "// top\nfn main() {\n    let a = 10;\n    let b = 20;\n    let c = a + b;\n    println!(\"{a} {b}\");\n}\n"
    );
}

#[tokio::test]
async fn a_stale_anchor_refuses_the_call_and_shows_the_lines_now() {
    let env = Env::anchored();
    env.put("src/main.rs", FILE);
    let shown = env.read_anchors("src/main.rs").await;
    // The model's own edit moves every line below the first down by one.
    ok(&env
        .edit("src/main.rs", "fn main() {", "// entry\nfn main() {")
        .await);
    let before = env.bytes("src/main.rs");
    let r = env
        .edit_lines(
            "src/main.rs",
            json!([
                {"op": "replace", "start": shown[2].0, "text": "    let b = 3;"},
                {"op": "delete", "start": "40:abc"},
            ]),
        )
        .await;
    let text = refused(&r, 14);
    assert_eq!(env.bytes("src/main.rs"), before, "nothing is written");
    assert!(
        text.starts_with("Nothing was changed: 2 anchors no longer stand for the lines you meant."),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Operation 1 of 2 (replace {}): {} is stale: line 3 is now {}.",
            shown[2].0,
            shown[2].0,
            anchor(3, "    let a = 1;")
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "Operation 2 of 2 (delete 40:abc): 40:abc is past the end: the file has 6 lines."
        ),
        "{text}"
    );
    // The current lines around it, with their anchors: enough to re-anchor.
    let now = anchored_lines(&text);
    let b = now
        .iter()
        .find(|(_, t)| t == "    let b = 2;")
        .expect("the line meant is shown")
        .0
        .clone();
    assert_eq!(b, anchor(4, "    let b = 2;"));
    ok(&env
        .edit_lines(
            "src/main.rs",
            json!([{"op": "replace", "start": b, "text": "    let b = 3;"}]),
        )
        .await);
    assert!(
        String::from_utf8(env.bytes("src/main.rs"))
            .unwrap()
            .contains("    let b = 3;\n")
    );
}

#[tokio::test]
async fn a_repeated_line_that_moved_under_its_anchor_is_refused_as_ambiguous() {
    let env = Env::anchored();
    env.put("notes.txt", "a\n\nb\n\nc\n");
    let shown = env.read_anchors("notes.txt").await;
    // The model means the empty line between b and c.
    let blank_before_c = shown[3].0.clone();
    assert_eq!(blank_before_c, anchor(4, ""));
    // Its own edit inserts two lines at the top: line 4 is now the empty
    // line between a and b, which hashes the same.
    ok(&env.edit("notes.txt", "a\n", "a\nz\nw\n").await);
    let r = env
        .edit_lines(
            "notes.txt",
            json!([{"op": "replace", "start": blank_before_c, "text": "between b and c"}]),
        )
        .await;
    let text = refused(&r, 14);
    assert!(
        text.contains(&format!(
            "{blank_before_c} is ambiguous: line 6 has the same hash, within 16 lines of it, and you have not read line 4 since the file last changed"
        )),
        "{text}"
    );
    assert_eq!(
        env.bytes("notes.txt"),
        b"a\nz\nw\n\nb\n\nc\n",
        "nothing landed"
    );
    // The lines shown carry their anchors; after a read the line is exact.
    assert!(
        anchored_lines(&text)
            .iter()
            .any(|(a, t)| a == &anchor(6, "") && t.is_empty()),
        "{text}"
    );
    let shown = env.read_anchors("notes.txt").await;
    ok(&env
        .edit_lines(
            "notes.txt",
            json!([{"op": "replace", "start": shown[5].0, "text": "between b and c"}]),
        )
        .await);
    assert_eq!(
        env.bytes("notes.txt"),
        b"a\nz\nw\n\nb\nbetween b and c\nc\n"
    );
}

#[tokio::test]
async fn a_line_read_in_a_partial_read_of_the_current_file_is_exact() {
    let env = Env::anchored();
    env.put("notes.txt", "}\nx\n}\ny\n");
    ok(&env
        .call(
            "read",
            json!({"file_path": "notes.txt", "offset": 3, "limit": 1}),
        )
        .await);
    // Line 3 was shown as the file is now: exact, though line 1 repeats it.
    ok(&env
        .edit_lines(
            "notes.txt",
            json!([{"op": "delete", "start": anchor(3, "}")}]),
        )
        .await);
    assert_eq!(env.bytes("notes.txt"), b"}\nx\ny\n");
}

/// Two different lines with the same 12-bit hash, found by search.
fn colliding_pair() -> (String, String) {
    let mut seen = std::collections::HashMap::new();
    for i in 0.. {
        let line = format!("let v{i} = {i};");
        if let Some(other) = seen.insert(line_hash(line.as_bytes()), line.clone()) {
            return (other, line);
        }
    }
    unreachable!()
}

#[tokio::test]
async fn a_hash_collision_near_an_anchor_is_detected() {
    let (x, y) = colliding_pair();
    assert_ne!(x, y);
    assert_eq!(line_hash(x.as_bytes()), line_hash(y.as_bytes()));
    let env = Env::anchored();
    env.put("c.rs", format!("{x}\nmiddle\n{y}\nend\n"));
    let shown = env.read_anchors("c.rs").await;
    assert_eq!(shown[0].0.split(':').nth(1), shown[2].0.split(':').nth(1));
    // Read as it is now: the collision does not matter, line 1 is line 1.
    ok(&env
        .edit_lines("c.rs", json!([{"op": "replace", "start": "4:".to_owned() + &line_hash(b"end").to_string(), "text": "END"}]))
        .await);
    // Changed since (by the model's own call): the anchor of line 1 is
    // refused, for line 3 hashes the same within the window.
    let r = env
        .edit_lines("c.rs", json!([{"op": "delete", "start": shown[0].0}]))
        .await;
    let text = refused(&r, 14);
    assert!(
        text.contains("is ambiguous: line 3 has the same hash"),
        "{text}"
    );
    assert_eq!(
        String::from_utf8(env.bytes("c.rs")).unwrap(),
        format!("{x}\nmiddle\n{y}\nEND\n")
    );
}
