//! Issue 25 item 11 (g): a UTF-32 file (little- or big-endian, after its
//! byte-order mark) is read as its text, not as UTF-16 full of NULs, and
//! edited in its own encoding; an invalid UTF-32 file is never shown as
//! text nor edited.

use agentcore::Outcome;
use serde_json::json;

use crate::support::files::{Env, ok};

fn utf32(text: &str, big_endian: bool) -> Vec<u8> {
    let mut out = if big_endian {
        vec![0, 0, 0xFE, 0xFF]
    } else {
        vec![0xFF, 0xFE, 0, 0]
    };
    for c in text.chars() {
        let n = u32::from(c);
        out.extend_from_slice(&if big_endian {
            n.to_be_bytes()
        } else {
            n.to_le_bytes()
        });
    }
    out
}

#[tokio::test]
async fn utf32_is_read_as_its_text_and_edited_in_its_encoding() {
    for big_endian in [false, true] {
        let env = Env::new();
        env.put("u.txt", utf32("héllo\r\nwörld 😀\r\n", big_endian));
        let r = env.call("read", json!({"file_path": "u.txt"})).await;
        let text = ok(&r);
        assert!(text.contains("héllo"), "{text}");
        assert!(text.contains("wörld 😀"), "{text}");
        assert!(!text.contains('\0'), "{text:?}");
        ok(&env.edit("u.txt", "wörld", "world").await);
        assert_eq!(
            env.bytes("u.txt"),
            utf32("héllo\r\nworld 😀\r\n", big_endian)
        );
    }
}

#[tokio::test]
async fn invalid_utf32_is_never_shown_as_text_nor_edited() {
    let env = Env::new();
    // A surrogate, and a unit past U+10FFFF.
    let mut bad = utf32("ok\n", false);
    bad.extend_from_slice(&0xD800u32.to_le_bytes());
    let mut far = utf32("ok\n", true);
    far.extend_from_slice(&0x0011_0000u32.to_be_bytes());
    for (name, bytes) in [("bad.txt", bad), ("far.txt", far)] {
        env.put(name, &bytes);
        let r = env.call("read", json!({"file_path": name})).await;
        assert!(!r.text().contains('\0'), "{name}: {:?}", r.text());
        assert!(!r.text().contains("ok\u{FFFD}"), "{name}: {}", r.text());
        let r = env.edit(name, "ok", "no").await;
        assert_eq!(r.outcome, Outcome::Failed, "{name}: {}", r.text());
        assert_eq!(env.bytes(name), bytes);
    }
}
