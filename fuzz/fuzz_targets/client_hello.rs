//! The sandbox proxy's first-bytes check on any input: the ClientHello
//! parser and the judgement never panic, a ClientHello's server name is
//! plain printable ASCII, and cutting the input short never turns a
//! refusal into a whole ClientHello (more bytes can only complete, never
//! undo, an invalid verdict).

#![no_main]

use agentcore::sandbox::proxy::{Malformed, client_hello_sni, judge};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = judge(data);
    let whole = client_hello_sni(data);
    if let Ok(Some(name)) = &whole {
        assert!(!name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic()));
    }
    if let Err(Malformed::Invalid(_)) = whole {
        return;
    }
    // A prefix of a valid beginning is incomplete or invalid, never a
    // different ClientHello.
    for cut in [data.len() / 2, data.len().saturating_sub(1)] {
        if let Ok(sni) = client_hello_sni(&data[..cut]) {
            assert_eq!(Ok(sni), whole, "a prefix parsed as a whole ClientHello");
        }
    }
});
