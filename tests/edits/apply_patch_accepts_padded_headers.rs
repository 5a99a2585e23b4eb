//! Issue 25 item 11 (c): file headers padded with leading spaces are read
//! as headers, as the padded `*** Begin Patch` / `*** End Patch` lines
//! already were: Add, Delete, Update, Move to and End of File.

use agentcore::tools::apply_patch::{FileOp, parse};
use serde_json::json;

use crate::support::files::{Env, ok};

#[tokio::test]
async fn the_issues_padded_update_header_lands() {
    let env = Env::new();
    env.put("x", "a\nb\n");
    env.read("x").await;
    let patch = "  *** Begin Patch\n  *** Update File: x\n@@\n-a\n+A\n  *** End Patch";
    ok(&env.call("apply_patch", json!({"patch": patch})).await);
    assert_eq!(env.bytes("x"), b"A\nb\n");
}

#[tokio::test]
async fn every_padded_header_is_a_header() {
    let env = Env::new();
    env.put("old.txt", "gone\n");
    env.put("m.txt", "m\n");
    env.read("old.txt").await;
    env.read("m.txt").await;
    let patch = "*** Begin Patch\n   *** Add File: new.txt\n+n\n\t*** Delete File: old.txt\n *** Update File: m.txt\n  *** Move to: moved.txt\n@@\n-m\n+M\n  *** End of File\n*** End Patch";
    ok(&env.call("apply_patch", json!({"patch": patch})).await);
    assert_eq!(env.bytes("new.txt"), b"n\n");
    assert!(!env.path("old.txt").exists());
    assert!(!env.path("m.txt").exists());
    assert_eq!(env.bytes("moved.txt"), b"M\n");
}

#[test]
fn padded_headers_parse_as_unpadded_ones() {
    let plain = parse("*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End of File\n*** Add File: c\n+z\n*** End Patch").unwrap();
    let padded = parse("*** Begin Patch\n  *** Update File: a\n  *** Move to: b\n@@\n-x\n+y\n  *** End of File\n  *** Add File: c\n+z\n*** End Patch").unwrap();
    assert_eq!(plain, padded);
    assert!(
        matches!(&padded.ops[0], FileOp::Update { move_to: Some(b), hunks, .. } if b == "b" && hunks[0].end_of_file)
    );
}
