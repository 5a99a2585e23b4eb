//! Arbitrary file bytes, old and new strings and replace_all through the
//! edit's pure core: it never panics, a successful `apply_edit` is the
//! plain replacement, and `edit_bytes` of UTF-8 text without CR agrees with
//! it. The tiered forms too: an exact match wins and gives the same text, a
//! tier that found several places never applies without replace_all, a
//! single tiered place changes nothing outside it, and `edit_bytes_tiered`
//! of plain UTF-8 agrees with `apply_edit_tiered`.

#![no_main]

use agentcore::tools::edit::{
    EditError, Tier, apply_edit, apply_edit_tiered, edit_bytes, edit_bytes_tiered, locate,
};
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
    let tiered = apply_edit_tiered(text, old, new, replace_all);
    if plain {
        assert_eq!(edited, applied.clone().map(String::into_bytes));
        let tiered_bytes = edit_bytes_tiered(bytes, old, new, replace_all);
        assert_eq!(
            tiered_bytes,
            tiered.clone().map(|e| (e.text.into_bytes(), e.tier))
        );
    }
    if old.is_empty() || old.trim().is_empty() || old == new {
        return;
    }
    match locate(text, old, &Tier::ALL) {
        None => assert!(matches!(
            tiered,
            Err(EditError::NotFound(_) | EditError::NotFoundNear { .. })
        )),
        Some(found) if found.tier == Tier::Exact => {
            // Applied, or ambiguous, exactly as the exact edit.
            assert_eq!(tiered.map(|e| e.text), applied);
        }
        Some(found) if found.places.len() > 1 && !replace_all => {
            assert_eq!(tiered, Err(if found.tier == Tier::Exact {
                EditError::Ambiguous(found.places.len())
            } else {
                EditError::AmbiguousTolerant(found.places.len(), found.tier)
            }));
        }
        Some(found) if found.places.len() == 1 => {
            let place = &found.places[0];
            let Ok(replacement) = place.replacement(new) else {
                // A re-indentation that would be a guess: refused.
                assert_eq!(tiered, Err(EditError::IndentationUnclear));
                return;
            };
            let edit = tiered.expect("one place applies");
            let want = format!(
                "{}{}{}",
                &text[..place.range.start],
                replacement,
                &text[place.range.end..]
            );
            assert_eq!(edit.text, want);
        }
        Some(found) => {
            // replace_all over several tolerant places: applied, unless the
            // re-indentation of a place it replaces would be a guess, which
            // refuses the whole edit as for a single place. Of two places
            // that overlap, the later is not replaced (so its
            // re-indentation is never made).
            let mut from = 0;
            let replaced: Vec<_> = found
                .places
                .iter()
                .filter(|p| {
                    let keep = p.range.start >= from;
                    if keep {
                        from = p.range.end;
                    }
                    keep
                })
                .collect();
            if replaced.iter().any(|p| p.replacement(new).is_err()) {
                assert_eq!(tiered, Err(EditError::IndentationUnclear));
            } else {
                assert!(tiered.is_ok(), "{tiered:?}");
            }
        }
    }
});
