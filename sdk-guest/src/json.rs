//! JSON helpers: WIT carries JSON values as text.

use crate::types::PluginError;

/// Serialises a value to JSON text.
pub fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

/// Parses JSON text; failure is an invalid-input error naming `what`.
pub fn from_json<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, PluginError> {
    serde_json::from_str(text)
        .map_err(|e| PluginError::InvalidInput(format!("{what} is not valid JSON: {e}")))
}
