//! What this machine's kernel offers the sandbox, and what a sandbox will
//! enforce with it: the text of `agentcore sandbox check`.

use std::fmt;

/// A kernel feature the sandbox is built from. In the policy's
/// `[sandbox] assume_missing` list: `landlock`, `user-namespace`,
/// `mount-namespace`, `pid-namespace`, `network-namespace`, `seccomp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Feature {
    /// Landlock: writes only under the writable roots.
    Landlock,
    /// User namespaces, which the mount, PID and network namespaces need
    /// without root.
    UserNamespace,
    /// Mount namespaces: hidden paths and read-only protected paths.
    MountNamespace,
    /// PID namespaces: nothing started by a command outlives it.
    PidNamespace,
    /// Network namespaces: no network but a loopback of the command's own.
    NetworkNamespace,
    /// Seccomp: odd socket families and `io_uring` refused.
    Seccomp,
}

impl Feature {
    /// Every feature, in the order of the status text.
    pub const ALL: [Feature; 6] = [
        Feature::Landlock,
        Feature::UserNamespace,
        Feature::MountNamespace,
        Feature::PidNamespace,
        Feature::NetworkNamespace,
        Feature::Seccomp,
    ];

    fn index(self) -> usize {
        match self {
            Feature::Landlock => 0,
            Feature::UserNamespace => 1,
            Feature::MountNamespace => 2,
            Feature::PidNamespace => 3,
            Feature::NetworkNamespace => 4,
            Feature::Seccomp => 5,
        }
    }

    /// "is" or "are", for a sentence about the feature.
    pub(crate) fn verb(self) -> &'static str {
        match self {
            Feature::Landlock | Feature::Seccomp => "is",
            _ => "are",
        }
    }

    /// The namespaces that need a user namespace first.
    fn needs_user_namespace(self) -> bool {
        matches!(
            self,
            Feature::MountNamespace | Feature::PidNamespace | Feature::NetworkNamespace
        )
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Feature::Landlock => "Landlock",
            Feature::UserNamespace => "user namespaces",
            Feature::MountNamespace => "mount namespaces",
            Feature::PidNamespace => "PID namespaces",
            Feature::NetworkNamespace => "network namespaces",
            Feature::Seccomp => "seccomp",
        })
    }
}

/// What the kernel offers, as probed once per process (Landlock's ABI
/// version, and a trial fork that creates each namespace and uses it), with
/// the reason for each missing feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxStatus {
    landlock_abi: Option<u32>,
    seccomp_arch: Option<&'static str>,
    missing: [Option<String>; 6],
    network: bool,
    shared_loopback: bool,
    /// With an allow list: `Ok(names listed)` when its proxies run, or
    /// why they do not.
    allowlist: Option<Result<usize, String>>,
}

impl SandboxStatus {
    /// A status where every feature is present, for the probe to strike
    /// out what fails.
    #[cfg_attr(not(all(target_os = "linux", feature = "sandbox")), allow(dead_code))]
    pub(crate) fn all_present(landlock_abi: u32, seccomp_arch: &'static str) -> Self {
        SandboxStatus {
            landlock_abi: Some(landlock_abi),
            seccomp_arch: Some(seccomp_arch),
            missing: Default::default(),
            network: false,
            shared_loopback: false,
            allowlist: None,
        }
    }

    /// A status where nothing is present, for `reason` (another platform).
    #[cfg_attr(all(target_os = "linux", feature = "sandbox"), allow(dead_code))] // other platforms and tests
    pub(crate) fn nothing(reason: &str) -> Self {
        let mut status = SandboxStatus {
            landlock_abi: None,
            seccomp_arch: None,
            missing: Default::default(),
            network: false,
            shared_loopback: false,
            allowlist: None,
        };
        for feature in Feature::ALL {
            status.set_missing(feature, reason.to_owned());
        }
        status
    }

    /// Marks `feature` missing for `reason` (the first reason stays), and
    /// with the user namespace, the namespaces that need it.
    pub(crate) fn set_missing(&mut self, feature: Feature, reason: String) {
        if feature == Feature::Landlock {
            self.landlock_abi = None;
        }
        if feature == Feature::Seccomp {
            self.seccomp_arch = None;
        }
        if feature == Feature::UserNamespace {
            for dependent in Feature::ALL
                .into_iter()
                .filter(|f| f.needs_user_namespace())
            {
                if self.missing[dependent.index()].is_none() {
                    self.missing[dependent.index()] = Some("needs user namespaces".to_owned());
                }
            }
        }
        let slot = &mut self.missing[feature.index()];
        if slot.is_none() {
            *slot = Some(reason);
        }
    }

    /// The same status for a sandbox with or without network access (which
    /// decides whether a network namespace is needed).
    pub(crate) fn with_network(mut self, network: bool) -> Self {
        self.network = network;
        self
    }

    /// The same status for a sandbox whose commands share one network
    /// namespace.
    #[cfg_attr(not(all(target_os = "linux", feature = "sandbox")), allow(dead_code))]
    pub(crate) fn with_shared_loopback(mut self, shared: bool) -> Self {
        self.shared_loopback = shared;
        self
    }

    /// The same status for a sandbox whose commands reach the network
    /// through the allow list's proxies (`Some(names listed)`).
    pub(crate) fn with_allowlist(mut self, names: Option<usize>) -> Self {
        self.allowlist = names.map(Ok);
        self
    }

    /// The same status for a sandbox whose allow list could not be set up
    /// (commands get no network).
    pub(crate) fn with_allowlist_unavailable(mut self, reason: String) -> Self {
        self.allowlist = Some(Err(reason));
        self
    }

    /// Whether `feature` is available.
    pub fn has(&self, feature: Feature) -> bool {
        self.missing[feature.index()].is_none()
    }

    /// Why `feature` is missing, or `None` when it is available.
    pub fn reason_missing(&self, feature: Feature) -> Option<&str> {
        self.missing[feature.index()].as_deref()
    }

    /// Landlock's ABI version, when Landlock is available.
    pub fn landlock_abi(&self) -> Option<u32> {
        self.landlock_abi
    }

    /// The features a command needs to be fully confined: all of them,
    /// except the network namespace when the network is allowed.
    pub fn needed(&self) -> impl Iterator<Item = Feature> + '_ {
        Feature::ALL
            .into_iter()
            .filter(|f| !(self.network && *f == Feature::NetworkNamespace))
    }

    /// The first needed feature that is missing, with its reason.
    pub fn first_missing(&self) -> Option<(Feature, &str)> {
        self.needed()
            .find_map(|f| self.reason_missing(f).map(|reason| (f, reason)))
    }

    /// Whether every needed feature is available.
    pub fn is_complete(&self) -> bool {
        self.first_missing().is_none()
    }

    /// One line of what a sandbox enforces with these features, e.g.
    /// `fs writes (Landlock ABI 7), hidden paths (mount ns), network: none
    /// (net ns, per command), process lifetime (pid ns), syscalls (seccomp
    /// x86_64)`; `unconfined` when nothing is.
    pub fn enforced(&self) -> String {
        let mut parts = Vec::new();
        if let Some(abi) = self.landlock_abi {
            parts.push(format!("fs writes (Landlock ABI {abi})"));
        }
        if self.has(Feature::MountNamespace) {
            parts.push("hidden and protected paths (mount ns)".to_owned());
        }
        if self.network {
            parts.push("network: open".to_owned());
        } else if let Some(Ok(names)) = &self.allowlist {
            parts.push(format!(
                "network: {names} allowed name{} through the session's proxies, nothing else (net ns)",
                if *names == 1 { "" } else { "s" }
            ));
        } else if let Some(Err(reason)) = &self.allowlist {
            parts.push(format!(
                "network: none (the allow list is unavailable: {reason})"
            ));
        } else if self.has(Feature::NetworkNamespace) && self.shared_loopback {
            parts.push("network: none, loopback shared by the session (net ns)".to_owned());
        } else if self.has(Feature::NetworkNamespace) {
            parts.push("network: none, loopback of its own (net ns, per command)".to_owned());
        } else if self.landlock_abi.is_some_and(|abi| abi >= 4) && self.seccomp_arch.is_some() {
            parts
                .push("network: TCP (Landlock) and UDP (seccomp) refused, loopback too".to_owned());
        }
        if self.has(Feature::PidNamespace) {
            parts.push("process lifetime (pid ns)".to_owned());
        }
        if let Some(arch) = self.seccomp_arch {
            parts.push(format!("syscalls (seccomp {arch})"));
        }
        if parts.is_empty() {
            "unconfined".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

impl fmt::Display for SandboxStatus {
    /// One line per capability, then what is enforced and what is missing:
    ///
    /// ```text
    /// Landlock:           ABI 7 (filesystem rules; TCP rules)
    /// user namespaces:    yes
    /// …
    /// enforced: fs writes (Landlock ABI 7), …
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for feature in Feature::ALL {
            let label = format!("{feature}:");
            let value = match (self.reason_missing(feature), feature) {
                (Some(reason), _) => format!("no ({reason})"),
                (None, Feature::Landlock) => {
                    let abi = self.landlock_abi.unwrap_or(0);
                    let mut what = vec!["filesystem rules"];
                    if abi >= 4 {
                        what.push("TCP rules");
                    }
                    if abi >= 10 {
                        what.push("UDP rules");
                    }
                    format!("ABI {abi} ({})", what.join("; "))
                }
                (None, Feature::Seccomp) => {
                    format!("yes ({})", self.seccomp_arch.unwrap_or("?"))
                }
                (None, _) => "yes".to_owned(),
            };
            writeln!(f, "{label:<20}{value}")?;
        }
        write!(f, "enforced: {}", self.enforced())?;
        if let Some((feature, reason)) = self.first_missing() {
            let verb = feature.verb();
            write!(
                f,
                "\nnot fully confined: {feature} {verb} not available ({reason})"
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_status_lists_every_capability_and_what_is_enforced() {
        let status = SandboxStatus::all_present(7, "x86_64");
        assert!(status.is_complete());
        assert_eq!(
            status.to_string(),
            "Landlock:           ABI 7 (filesystem rules; TCP rules)\n\
             user namespaces:    yes\n\
             mount namespaces:   yes\n\
             PID namespaces:     yes\n\
             network namespaces: yes\n\
             seccomp:            yes (x86_64)\n\
             enforced: fs writes (Landlock ABI 7), hidden and protected paths (mount ns), \
             network: none, loopback of its own (net ns, per command), \
             process lifetime (pid ns), syscalls (seccomp x86_64)"
        );
    }

    #[test]
    fn a_missing_user_namespace_takes_the_other_namespaces_with_it() {
        let mut status = SandboxStatus::all_present(4, "x86_64");
        status.set_missing(Feature::UserNamespace, "EPERM".to_owned());
        assert!(!status.has(Feature::PidNamespace));
        assert_eq!(
            status.reason_missing(Feature::MountNamespace),
            Some("needs user namespaces")
        );
        assert_eq!(
            status.first_missing(),
            Some((Feature::UserNamespace, "EPERM"))
        );
        assert_eq!(
            status.enforced(),
            "fs writes (Landlock ABI 4), network: TCP (Landlock) and UDP (seccomp) refused, \
             loopback too, syscalls (seccomp x86_64)"
        );
        assert!(
            status
                .to_string()
                .ends_with("not fully confined: user namespaces are not available (EPERM)")
        );
    }

    #[test]
    fn with_network_the_network_namespace_is_not_needed() {
        let mut status = SandboxStatus::all_present(7, "x86_64");
        status.set_missing(Feature::NetworkNamespace, "test".to_owned());
        assert!(!status.is_complete());
        assert!(status.clone().with_network(true).is_complete());
    }

    #[test]
    fn nothing_is_unconfined() {
        let status = SandboxStatus::nothing("not Linux");
        assert_eq!(status.enforced(), "unconfined");
        assert_eq!(
            status.first_missing(),
            Some((Feature::Landlock, "not Linux"))
        );
    }
}
