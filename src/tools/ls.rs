//! See the module docs of `crate::tools`.
