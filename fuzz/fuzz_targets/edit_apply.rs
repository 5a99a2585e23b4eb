//! Arbitrary file bytes, old and new strings and replace_all through the
//! edit's pure core: it never panics, a successful `apply_edit` is the
//! plain replacement, and `edit_bytes` of UTF-8 text without CR agrees with
//! it.

#![no_main]

use agentcore::tools::edit::{apply_edit, edit_bytes};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    bytes: &'a [u8],
    old: &'a str,
    new: &'a str,
    replace_all: bool,
}

fuzz_target!(|input: Input<'_>| {
    let Input {
        bytes,
        old,
        new,
        replace_all,
    } = input;
    let edited = edit_bytes(bytes, old, new, replace_all);
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let applied = apply_edit(text, old, new, replace_all);
    if let Ok(out) = &applied {
        if !old.is_empty() {
            let want = if replace_all {
                text.replace(old, new)
            } else {
                text.replacen(old, new, 1)
            };
            assert_eq!(out, &want);
        }
    }
    // Plain UTF-8 (no BOM, no CR anywhere) goes through untouched by any
    // decoding: both paths must agree.
    let plain = !bytes.starts_with(b"\xEF\xBB\xBF")
        && !bytes.starts_with(b"\xFF\xFE")
        && !bytes.starts_with(b"\xFE\xFF")
        && !bytes.contains(&b'\r')
        && !old.contains('\r')
        && !new.contains('\r');
    if plain {
        assert_eq!(edited, applied.map(String::into_bytes));
    }
});
