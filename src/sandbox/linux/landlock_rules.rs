//! The Landlock ruleset of a confined command, created before the fork
//! (its rules name paths, which the child could not open in its new mount
//! tree) and enforced in S.

use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};

use super::super::SandboxError;

/// The devices a command may write besides its roots.
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/pts",
    "/dev/ptmx",
];

/// The Landlock ruleset: read everywhere, write under the writable roots,
/// the temporary directory and the devices; with `deny_tcp`, TCP connect
/// and bind refused (the fallback without a network namespace); signals and
/// abstract UNIX sockets scoped to the sandbox.
pub(super) fn ruleset(
    writable: &[PathBuf],
    deny_tcp: bool,
) -> Result<Option<std::os::fd::OwnedFd>, SandboxError> {
    let abi = ABI::V10;
    let landlock = |e: landlock::RulesetError| SandboxError::Landlock(e.to_string());
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(landlock)?;
    if deny_tcp {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(landlock)?;
    }
    let created = ruleset
        .scope(Scope::from_all(abi))
        .map_err(landlock)?
        .create()
        .map_err(landlock)?
        .add_rules(landlock::path_beneath_rules(
            ["/"],
            AccessFs::from_read(abi),
        ))
        .map_err(landlock)?
        .add_rules(landlock::path_beneath_rules(
            WRITABLE_DEVICES,
            AccessFs::from_all(abi),
        ))
        .map_err(landlock)?
        .add_rules(landlock::path_beneath_rules(
            writable,
            AccessFs::from_all(abi),
        ))
        .map_err(landlock)?;
    Ok(created.into())
}

/// The access rights (directory, file) S grants itself on its own
/// `/dev/pts` and `/dev/ptmx`, which M mounts fresh and which the rules
/// made here cannot name, for the Landlock ABI `abi` of this kernel.
pub(super) fn pts_access(abi: Option<u32>) -> (u64, u64) {
    let abi = ABI::from(abi.map_or(0, |abi| abi as i32));
    (
        AccessFs::from_all(abi).bits(),
        AccessFs::from_file(abi).bits(),
    )
}
