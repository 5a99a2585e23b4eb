//! A command's changes found by the change feed (inotify on the roots'
//! folders) are what a walk of the roots would find: files in brand-new
//! nested folders, renames across folders, chmods, whole folders deleted
//! or moved, ignore files changing what is recorded; each command's
//! checkpoint holds exactly its own changes and no fallback is said.

use std::fs;

use serde_json::json;

use super::every_change_is_recorded_and_rewound::{call, session};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_command_records_exactly_what_it_changed() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let store = tempfile::tempdir().unwrap();
    for d in 0..20 {
        fs::create_dir_all(root.join(format!("d{d}/sub"))).unwrap();
        for f in 0..10 {
            fs::write(root.join(format!("d{d}/f{f}.txt")), format!("{d} {f}\n")).unwrap();
        }
        fs::write(root.join(format!("d{d}/sub/deep.txt")), "deep\n").unwrap();
    }
    let session = session(&root, store.path());
    let steps: [(&str, &[&str]); 6] = [
        (
            "mkdir -p new/a/b && echo x > new/a/b/f && echo y > d3/f0.txt",
            &[
                "modified d3/f0.txt",
                "created folder new",
                "created folder new/a",
                "created folder new/a/b",
                "created new/a/b/f",
            ],
        ),
        (
            "mv d1/f1.txt d2/moved.txt && chmod 755 d4/f4.txt",
            &[
                "renamed d1/f1.txt -> d2/moved.txt",
                "mode of d4/f4.txt 644 -> 755",
            ],
        ),
        (
            "rm -r d5",
            &[
                "deleted folder d5",
                "deleted d5/f0.txt",
                "deleted d5/f1.txt",
                "deleted d5/f2.txt",
                "deleted d5/f3.txt",
                "deleted d5/f4.txt",
                "deleted d5/f5.txt",
                "deleted d5/f6.txt",
                "deleted d5/f7.txt",
                "deleted d5/f8.txt",
                "deleted d5/f9.txt",
                "deleted folder d5/sub",
                "deleted d5/sub/deep.txt",
            ],
        ),
        (
            "mv d6/sub new/a/b/sub2 && echo z >> new/a/b/sub2/deep.txt",
            &[
                "deleted folder d6/sub",
                "deleted d6/sub/deep.txt",
                "created folder new/a/b/sub2",
                "created new/a/b/sub2/deep.txt",
            ],
        ),
        (
            "echo 'd7/' > .gitignore && echo hidden > d7/f0.txt && echo seen > d8/f0.txt",
            &["created .gitignore", "modified d8/f0.txt"],
        ),
        (
            "echo again > new/a/b/sub2/deep.txt && echo hidden2 > d7/f1.txt",
            &["modified new/a/b/sub2/deep.txt"],
        ),
    ];
    for (i, (command, expected)) in steps.iter().enumerate() {
        call(
            &session,
            &format!("c{i}"),
            "bash",
            json!({ "command": command }),
        )
        .await;
        let listing = session.checkpoints().unwrap().unwrap();
        let cp = listing.checkpoints.last().unwrap();
        assert_eq!(cp.call_id, format!("c{i}"), "{command}");
        let mut lines = cp.describe(&root);
        let mut expected: Vec<String> = expected.iter().map(|s| (*s).to_owned()).collect();
        lines.sort();
        expected.sort();
        assert_eq!(lines, expected, "{command}");
        // (A root on a file system the feed does not trust is walked, and
        // says so once: not a failure.)
        assert!(
            !cp.notes
                .iter()
                .any(|n| n.contains("the change feed stopped")),
            "{command}: {:?}",
            cp.notes
        );
    }
}
