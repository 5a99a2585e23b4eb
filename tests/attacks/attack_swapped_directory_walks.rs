//! Issue 13 item 3, the walks: with `d` a directory and `dl -> /outside`
//! exchanged by a neighbour thread with `renameat2(RENAME_EXCHANGE)` in a
//! loop, glob, grep and ls never list a name from outside nor print a byte
//! of an outside file. The walks go through directory handles opened with
//! no symlink following, so a swapped-in symlink fails to open instead of
//! leading out.

#![cfg(target_os = "linux")]

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use agentcore::TypedTool;
use agentcore::fs::workspace::Workspace;
use agentcore::tools::glob::GlobTool;
use agentcore::tools::grep::GrepTool;
use agentcore::tools::ls::LsTool;
use agentcore::{CallContext, EventSink, GatedArgs, Tool};
use serde_json::{Value, json};

use crate::support::text_of;

/// A marker found only in names and contents outside the workspace.
const OUTSIDE: &str = "ZZOUTSIDEZZ";

/// Exchanges `a` and `b` atomically.
fn exchange(a: &Path, b: &Path) -> bool {
    let a = CString::new(a.as_os_str().as_bytes()).expect("no NUL");
    let b = CString::new(b.as_os_str().as_bytes()).expect("no NUL");
    // SAFETY: renameat2 reads two NUL-terminated paths that live across the
    // call; no memory is written. (The libc wrapper needs glibc 2.28.)
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    rc == 0
}

/// The workspace `ws` with `d/` (inside files) and `dl -> outside`, and
/// the outside directory full of marked names and contents.
fn setup() -> (tempfile::TempDir, tempfile::TempDir) {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let d = ws.path().join("d");
    fs::create_dir_all(d.join("sub")).unwrap();
    fs::write(d.join("t.txt"), "inside needle\n").unwrap();
    fs::write(d.join("sub/u.txt"), "inside needle too\n").unwrap();
    fs::write(ws.path().join("top.txt"), "top needle\n").unwrap();
    fs::create_dir_all(outside.path().join(format!("{OUTSIDE}_dir"))).unwrap();
    for i in 0..5 {
        fs::write(
            outside.path().join(format!("{OUTSIDE}_{i}.txt")),
            format!("{OUTSIDE} needle secret {i}\n"),
        )
        .unwrap();
    }
    fs::write(
        outside.path().join(format!("{OUTSIDE}_dir/t.txt")),
        format!("{OUTSIDE} needle\n"),
    )
    .unwrap();
    fs::write(outside.path().join("t.txt"), format!("{OUTSIDE} needle\n")).unwrap();
    symlink(outside.path(), ws.path().join("dl")).unwrap();
    (ws, outside)
}

async fn call(tool: &dyn Tool, args: Value) -> String {
    let cx = CallContext::for_test("w1", EventSink::noop());
    match tool.execute(GatedArgs::for_test(args), &cx).await {
        Ok(out) => text_of(&out.content),
        Err(e) => text_of(&e.content),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walks_never_show_outside_names_or_bytes_while_a_directory_is_swapped() {
    let (ws, _outside) = setup();
    let workspace = Workspace::new(ws.path()).unwrap();
    let glob = GlobTool::new(workspace.clone()).into_dyn();
    let grep = GrepTool::new(workspace.clone()).into_dyn();
    let ls = LsTool::new(workspace).into_dyn();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        let (d, dl) = (ws.path().join("d"), ws.path().join("dl"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if exchange(&d, &dl) {
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };

    let calls: [(&dyn Tool, Value); 8] = [
        (&*glob, json!({"pattern": "**/*"})),
        (&*glob, json!({"pattern": "**/*.txt", "path": "d"})),
        (
            &*grep,
            json!({"pattern": "needle", "output_mode": "content"}),
        ),
        (
            &*grep,
            json!({"pattern": "needle", "path": "d", "output_mode": "content"}),
        ),
        (
            &*grep,
            json!({"pattern": "needle", "path": "d/t.txt", "output_mode": "content"}),
        ),
        (&*grep, json!({"pattern": "needle"})),
        (&*ls, json!({"path": "."})),
        (&*ls, json!({"path": "d"})),
    ];
    let mut runs = 0;
    let mut saw_inside = 0;
    for round in 0..250 {
        for (tool, args) in &calls {
            let text = call(*tool, args.clone()).await;
            runs += 1;
            assert!(
                !text.contains(OUTSIDE),
                "round {round}: {} {args} showed something from outside:\n{text}",
                tool.name()
            );
            if text.contains("inside needle") || text.contains("t.txt") {
                saw_inside += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let swaps = swaps.load(Ordering::Relaxed);
    eprintln!("{runs} walks during {swaps} swaps; {saw_inside} showed inside entries");
    assert_eq!(runs, 2000);
    assert!(
        swaps > 100,
        "the swapping thread barely ran ({swaps} swaps)"
    );
    assert!(saw_inside > 0, "no walk ever saw the inside directory");
}

/// The same tree without the swapping thread: the walks show the inside
/// files, list the symlink pointing out under no name, and never follow it.
#[tokio::test]
async fn a_symlink_pointing_out_is_neither_listed_nor_followed() {
    let (ws, _outside) = setup();
    let workspace = Workspace::new(ws.path()).unwrap();
    let glob = call(
        &*GlobTool::new(workspace.clone()).into_dyn(),
        json!({"pattern": "**/*"}),
    )
    .await;
    let grep = call(
        &*GrepTool::new(workspace.clone()).into_dyn(),
        json!({"pattern": "needle", "output_mode": "content"}),
    )
    .await;
    let ls = call(&*LsTool::new(workspace).into_dyn(), json!({"path": "."})).await;
    for text in [&glob, &grep, &ls] {
        assert!(!text.contains(OUTSIDE), "{text}");
        assert!(
            !text.lines().any(|l| l
                .trim_start_matches("  ")
                .trim_start_matches("- ")
                .starts_with("dl")),
            "{text}"
        );
        assert!(text.contains("t.txt"), "{text}");
    }
    assert_eq!(
        ls,
        "- ./\n  - d/\n    - sub/\n      - u.txt\n    - t.txt\n  - top.txt"
    );
}
