//! The read tool, through the whole pipeline: every behaviour and string of
//! docs/tools.md's `read` section, and the stamps it records.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use agentcore::TypedTool;
use agentcore::fs::read_state::{FileReadState, Freshness};
use agentcore::fs::workspace::Workspace;
use agentcore::tools::read::ReadTool;
use agentcore::{Call, Content, InterruptBehavior, Outcome, Pipeline, ToolRegistry, ToolResult};
use base64::Engine as _;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::files::numbered;

struct Env {
    dir: tempfile::TempDir,
    state: FileReadState,
}

impl Env {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            state: FileReadState::new(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) {
        let path = self.root().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, bytes).unwrap();
    }

    fn canonical(&self, name: &str) -> std::path::PathBuf {
        fs::canonicalize(self.root().join(name)).unwrap()
    }

    async fn read(&self, args: Value) -> ToolResult {
        let ws = Workspace::new(self.root()).unwrap();
        let tool = ReadTool::new(ws, self.state.clone()).into_dyn();
        let registry = ToolRegistry::new().with(tool).unwrap();
        Pipeline::builder()
            .registry(Arc::new(registry))
            .build()
            .service()
            .oneshot(Call::new("r1", "read", args))
            .await
            .unwrap()
    }

    async fn ok(&self, args: Value) -> String {
        let r = self.read(args).await;
        assert_eq!(r.outcome, Outcome::Success, "{}", r.text());
        r.text()
    }

    async fn err(&self, args: Value) -> String {
        let r = self.read(args).await;
        assert_eq!(r.outcome, Outcome::Failed, "{}", r.text());
        r.text()
    }
}

#[tokio::test]
async fn shows_a_file_in_cat_n_form() {
    let env = Env::new();
    env.write("src/main.rs", "fn main() {\n\tprintln!(\"hi\");\n}\n");
    let text = env.ok(json!({"file_path": "src/main.rs"})).await;
    assert_eq!(
        text,
        "     1\tfn main() {\n     2\t\tprintln!(\"hi\");\n     3\t}"
    );
    let stamp = env.state.get(&env.canonical("src/main.rs")).unwrap();
    assert!(!stamp.partial);
    assert_eq!(
        env.state.freshness(&env.canonical("src/main.rs")).unwrap(),
        Freshness::Unchanged
    );
}

#[tokio::test]
async fn absolute_paths_work_too() {
    let env = Env::new();
    env.write("a.txt", "x");
    let abs = env.root().join("a.txt");
    let text = env.ok(json!({"file_path": abs.to_str().unwrap()})).await;
    assert_eq!(text, "     1\tx");
}

#[tokio::test]
async fn shows_2000_lines_by_default_then_the_more_lines_note() {
    let env = Env::new();
    env.write("long.txt", numbered(1..=2500));
    let text = env.ok(json!({"file_path": "long.txt"})).await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2001);
    assert_eq!(lines[0], "     1\tline 1");
    assert_eq!(lines[1999], "  2000\tline 2000");
    assert_eq!(
        lines[2000],
        "(File has 2500 lines; showed 1–2000. Use offset and limit to read more.)"
    );
    assert!(env.state.get(&env.canonical("long.txt")).unwrap().partial);
}

#[tokio::test]
async fn offset_and_limit_select_lines_and_mark_the_stamp_partial() {
    let env = Env::new();
    env.write("f.txt", numbered(1..=20));
    let text = env
        .ok(json!({"file_path": "f.txt", "offset": 10, "limit": 3}))
        .await;
    assert_eq!(
        text,
        "    10\tline 10\n    11\tline 11\n    12\tline 12\n(File has 20 lines; showed 10–12. Use offset and limit to read more.)"
    );
    let text = env.ok(json!({"file_path": "f.txt", "offset": 19})).await;
    assert_eq!(text, "    19\tline 19\n    20\tline 20");
    let path = env.canonical("f.txt");
    assert!(env.state.get(&path).unwrap().partial);
    assert_eq!(env.state.freshness(&path).unwrap(), Freshness::Partial);
}

#[tokio::test]
async fn long_lines_are_cut_at_2000_characters() {
    let env = Env::new();
    env.write("wide.txt", format!("{}\nshort\n", "ab".repeat(1500)));
    let text = env.ok(json!({"file_path": "wide.txt"})).await;
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        format!("     1\t{} [… 1000 more characters]", "ab".repeat(1000))
    );
    assert!(text.ends_with("     2\tshort"));
    assert!(env.state.get(&env.canonical("wide.txt")).unwrap().partial);
}

#[tokio::test]
async fn output_over_256_kib_is_refused() {
    let env = Env::new();
    let line = "x".repeat(200);
    env.write("big.txt", format!("{line}\n").repeat(2000));
    let text = env.err(json!({"file_path": "big.txt"})).await;
    // 2000 lines of 7 + 200 bytes plus 1999 newlines: 415,999 bytes.
    assert_eq!(
        text,
        "File content (407 KiB) exceeds maximum allowed size (256 KiB). Use offset and limit parameters to read specific portions of the file, or use grep to search for specific content."
    );
    assert!(env.state.get(&env.canonical("big.txt")).is_none());
    let ok = env
        .ok(json!({"file_path": "big.txt", "offset": 1, "limit": 100}))
        .await;
    assert_eq!(ok.lines().count(), 101);
}

#[tokio::test]
async fn empty_file_and_offset_past_the_end_are_reminders() {
    let env = Env::new();
    env.write("empty.txt", "");
    env.write("three.txt", "a\nb\nc\n");
    assert_eq!(
        env.ok(json!({"file_path": "empty.txt"})).await,
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
    );
    assert_eq!(
        env.ok(json!({"file_path": "three.txt", "offset": 7})).await,
        "<system-reminder>Warning: the file exists but is shorter than the provided offset (7). The file has 3 lines.</system-reminder>"
    );
}

#[tokio::test]
async fn a_directory_lists_its_entries() {
    let env = Env::new();
    env.write("d/b.txt", "");
    env.write("d/a.txt", "");
    env.write("d/sub/x", "");
    env.write("d/.hidden", "");
    let text = env.ok(json!({"file_path": "d"})).await;
    assert_eq!(text, ".hidden\na.txt\nb.txt\nsub/");
}

#[tokio::test]
async fn images_come_back_as_base64_blocks() {
    let env = Env::new();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR fake png body \0\x01\x02";
    env.write("pic.png", png);
    env.write("photo.bin", b"\xFF\xD8\xFF\xE0\0\x10JFIF\0");
    env.write("anim.gif", b"GIF89a\x01\0\x01\0\0\0\0;");
    env.write("img.webp", b"RIFF\x10\0\0\0WEBPVP8 \0\0\0\0");
    for (name, media, bytes) in [
        ("pic.png", "image/png", &png[..]),
        ("photo.bin", "image/jpeg", b"\xFF\xD8\xFF\xE0\0\x10JFIF\0"),
        ("anim.gif", "image/gif", b"GIF89a\x01\0\x01\0\0\0\0;"),
        ("img.webp", "image/webp", b"RIFF\x10\0\0\0WEBPVP8 \0\0\0\0"),
    ] {
        let r = env.read(json!({"file_path": name})).await;
        assert_eq!(r.outcome, Outcome::Success);
        let Content::Image { media_type, data } = &r.content[0] else {
            panic!("{name}: not an image block: {:?}", r.content);
        };
        assert_eq!(media_type, media);
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        assert_eq!(decoded, bytes, "{name}");
    }
}

#[tokio::test]
async fn images_over_5_mib_are_refused() {
    let env = Env::new();
    let mut big = b"\x89PNG\r\n\x1a\n".to_vec();
    big.resize(5 * 1024 * 1024 + 1, 0);
    env.write("huge.png", &big);
    let text = env.err(json!({"file_path": "huge.png"})).await;
    assert!(text.starts_with("Image file huge.png is 5.0 MiB"), "{text}");
    assert!(text.contains("5 MiB limit"), "{text}");
}

#[tokio::test]
async fn binary_files_are_refused() {
    let env = Env::new();
    env.write("sub/data.bin", b"ELF\0\0\x01\x02binary stuff");
    assert_eq!(
        env.err(json!({"file_path": "sub/data.bin"})).await,
        "Cannot read binary file sub/data.bin"
    );
}

#[tokio::test]
async fn boms_are_decoded() {
    let env = Env::new();
    env.write("u8.txt", b"\xEF\xBB\xBFhello\nworld\n");
    assert_eq!(
        env.ok(json!({"file_path": "u8.txt"})).await,
        "     1\thello\n     2\tworld"
    );
    let text = "héllo\r\n世界\r\n";
    let mut le = vec![0xFF, 0xFE];
    let mut be = vec![0xFE, 0xFF];
    for unit in text.encode_utf16() {
        le.extend_from_slice(&unit.to_le_bytes());
        be.extend_from_slice(&unit.to_be_bytes());
    }
    env.write("le.txt", &le);
    env.write("be.txt", &be);
    for name in ["le.txt", "be.txt"] {
        assert_eq!(
            env.ok(json!({"file_path": name})).await,
            "     1\théllo\n     2\t世界",
            "{name}"
        );
    }
}

#[tokio::test]
async fn invalid_utf8_is_shown_lossily_under_a_note() {
    let env = Env::new();
    // Not UTF-8, and with a control character: text in no encoding.
    env.write("bad.txt", b"caf\xE9\x01\nok\n");
    let text = env.ok(json!({"file_path": "bad.txt"})).await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "(Note: this file is not valid UTF-8 or UTF-16 text; invalid bytes are shown as \u{FFFD}. It cannot be edited with the edit tool.)"
    );
    assert_eq!(lines[1], "     1\tcaf\u{FFFD}\u{1}");
    assert_eq!(lines[2], "     2\tok");
    // Without it, the same bytes are windows-1252 (Latin-1) text.
    env.write("latin1.txt", b"caf\xE9\nok\n");
    assert_eq!(
        env.ok(json!({"file_path": "latin1.txt"})).await,
        "(file is windows-1252; shown as UTF-8)\n     1\tcafé\n     2\tok"
    );
    // The note is about the whole file, even when the bad byte is not shown.
    env.write("late.txt", b"fine\nstill fine\nbad \xFF\x01 here\n");
    let text = env.ok(json!({"file_path": "late.txt", "limit": 1})).await;
    assert!(
        text.starts_with("(Note: this file is not valid UTF-8"),
        "{text}"
    );
}

#[tokio::test]
async fn deep_offsets_stream_through_large_files() {
    let env = Env::new();
    // ~12 MB, 1.2 million lines, read three lines near the end.
    let mut body = String::with_capacity(13 << 20);
    for i in 1..=1_200_000u32 {
        body.push_str(&format!("{i:09}\n"));
    }
    env.write("big.log", &body);
    let text = env
        .ok(json!({"file_path": "big.log", "offset": 1_000_000, "limit": 3}))
        .await;
    assert_eq!(
        text,
        "1000000\t001000000\n1000001\t001000001\n1000002\t001000002\n(File has 1200000 lines; showed 1000000–1000002. Use offset and limit to read more.)"
    );
    // The stamp still hashes the whole file.
    let path = env.canonical("big.log");
    assert_eq!(env.state.freshness(&path).unwrap(), Freshness::Partial);
    let mut changed = body.into_bytes();
    let last = changed.len() - 2;
    changed[last] = b'X';
    fs::write(&path, changed).unwrap();
    assert_eq!(env.state.freshness(&path).unwrap(), Freshness::Changed);
}

#[tokio::test]
async fn missing_files_and_bad_offsets_are_clear_errors() {
    let env = Env::new();
    assert_eq!(
        env.err(json!({"file_path": "nope.txt"})).await,
        "path \"nope.txt\" does not exist"
    );
    let r = env.read(json!({"file_path": "x", "offset": 0})).await;
    assert_eq!(r.outcome, Outcome::Failed);
    let r = env.read(json!({"file_path": "x", "bogus": 1})).await;
    assert_eq!(r.outcome, Outcome::Failed);
}

#[test]
fn metadata_matches_the_tools_table() {
    let dir = tempfile::tempdir().unwrap();
    let tool = ReadTool::new(Workspace::new(dir.path()).unwrap(), FileReadState::new()).into_dyn();
    let args = json!({"file_path": "src/main.rs"});
    assert_eq!(tool.name(), "read");
    assert_eq!(tool.label(), Some("Read File"));
    assert!(tool.read_only(&args));
    assert_eq!(tool.concurrency_safe(&args), Some(true));
    assert_eq!(tool.interrupt_behavior(&args), InterruptBehavior::Cancel);
    assert_eq!(tool.activity(&args).as_deref(), Some("Reading src/main.rs"));
    let abs = dir.path().canonicalize().unwrap().join("src/lib.rs");
    assert_eq!(
        tool.activity(&json!({"file_path": abs})).as_deref(),
        Some("Reading src/lib.rs")
    );
    let schema = tool.schema();
    assert_eq!(schema["additionalProperties"], json!(false));
    for (name, prop) in schema["properties"].as_object().unwrap() {
        assert!(
            prop["description"].is_string(),
            "{name} lacks a description"
        );
    }
}
