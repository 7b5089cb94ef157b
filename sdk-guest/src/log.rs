//! Structured logging into the host's log, tagged with the plugin id.

use crate::bindings::outreach::plugin::log as wit;

pub use wit::Level;

/// Logs a message at `level`. Never log API keys.
pub fn log(level: Level, message: &str) {
    #[cfg(target_arch = "wasm32")]
    wit::log(level, message);
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[{level:?}] {message}");
}

/// Logs at info level.
pub fn info(message: &str) {
    log(Level::Info, message)
}

/// Logs at warn level.
pub fn warn(message: &str) {
    log(Level::Warn, message)
}

/// Logs at debug level.
pub fn debug(message: &str) {
    log(Level::Debug, message)
}
