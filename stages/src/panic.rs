//! Turning a caught panic into the text of a `Failed` result.

use std::any::Any;

/// The panic's message, if it carried a string.
pub(crate) fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_owned()
    }
}

/// `tool "NAME" panicked: MSG`
pub(crate) fn failure_text(tool: &str, payload: &(dyn Any + Send)) -> String {
    format!("tool \"{tool}\" panicked: {}", message(payload))
}
