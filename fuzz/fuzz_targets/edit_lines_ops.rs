//! edit_lines' arguments as a model sends them: anchors (`12:a3f`) and the
//! list of operations. Neither parser panics on any input; an anchor that
//! parses is written back as text that parses to the same anchor, and a
//! list that parses holds between 1 and the allowed number of operations.

#![no_main]

use agentcore::limits::edit_lines::MAX_OPERATIONS;
use agentcore::tools::edit_lines::Operations;
use agentcore::tools::edit_lines::anchor::Anchor;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(anchor) = text.parse::<Anchor>()
    {
        let again: Anchor = anchor
            .to_string()
            .parse()
            .expect("an anchor written out parses again");
        assert_eq!(again, anchor);
    }
    if let Ok(ops) = serde_json::from_slice::<Operations>(data) {
        let n = ops.as_slice().len();
        assert!((1..=MAX_OPERATIONS).contains(&n), "{n} operations");
    }
});
