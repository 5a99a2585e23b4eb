//! What a test needs beyond a plain Rust toolchain, checked. A test that
//! needs one of these is `#[ignore = "needs …"]`, so a plain `cargo test`
//! reports it ignored, never passed. Run anyway (`--ignored`,
//! `--include-ignored`, as .ci/run does), each check here fails the test
//! naming what is missing: a test that did not run never reports `ok`.

use std::path::Path;

use agentcore::sandbox::{self, Feature, SandboxStatus};

/// Fails unless this machine confines fully: Landlock, seccomp, and user,
/// mount, pid and network namespaces.
pub fn require_sandbox() {
    if let Some((feature, reason)) = sandbox::check().first_missing() {
        panic!("this test needs the command sandbox, and {feature} is missing here ({reason})");
    }
}

/// Fails unless `status` has every feature in `needed`.
pub fn require_features(status: &SandboxStatus, needed: &[Feature]) {
    for feature in needed {
        if let Some(reason) = status.reason_missing(*feature) {
            panic!("this test needs {feature}, missing here ({reason})");
        }
    }
}

/// Fails unless `status` has Landlock with ABI `abi` or later.
pub fn require_landlock_abi(status: &SandboxStatus, abi: u32) {
    require_features(status, &[Feature::Landlock]);
    let found = status.landlock_abi().unwrap_or(0);
    assert!(
        found >= abi,
        "this test needs Landlock ABI {abi} or later, this kernel has ABI {found}"
    );
}

/// Whether `program` is on `PATH`.
pub fn have(program: &str) -> bool {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Fails unless `program` is on `PATH`.
pub fn require_program(program: &str) {
    assert!(
        have(program),
        "this test needs {program} on PATH, and there is none"
    );
}

/// Fails unless `path` exists (a program the test runs by absolute path).
pub fn require_file(path: &str) {
    assert!(
        Path::new(path).exists(),
        "this test needs {path}, and there is none"
    );
}

/// Fails unless the tests run as root.
pub fn require_root() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test needs root (it runs as uid {})",
        nix::unistd::geteuid()
    );
}

/// `setpriv`, to run a command as `nobody`; fails unless the tests run as
/// root and `setpriv` is installed.
pub fn require_root_and_setpriv() -> &'static str {
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test runs a part as nobody: it needs root and setpriv (it runs as uid {})",
        nix::unistd::geteuid()
    );
    ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or_else(|| {
            panic!("this test needs setpriv (util-linux) to run as nobody, and there is none")
        })
}
