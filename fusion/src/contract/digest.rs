//! Canonical JSON (object keys sorted at every level) and the SHA-256 digests the contract and
//! its lockfile record.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// `sha256:` and the lowercase hex SHA-256 of `text`.
pub(super) fn sha256_digest(text: &str) -> String {
    let hex: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The digest of `value` as canonical compact JSON.
pub(super) fn value_digest(value: &Value) -> String {
    sha256_digest(&canonical_compact(value))
}

/// `value` with object keys sorted (byte order) at every level, whatever the map's own order.
fn sorted(value: &Value) -> Value {
    let mut value = value.clone();
    value.sort_all_objects();
    value
}

/// `value` as compact JSON with object keys sorted at every level.
pub(super) fn canonical_compact(value: &Value) -> String {
    sorted(value).to_string()
}

/// `value` as JSON with object keys sorted at every level, two-space indent, and a trailing
/// newline (scalars in serde_json's own forms: shortest round-trip floats).
pub(super) fn canonical_pretty(value: &Value) -> String {
    let mut out = serde_json::to_string_pretty(&sorted(value))
        .expect("a JSON value always serializes to a string");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let value = json!({"b": [{"z": 1, "a": [1.5, null]}], "a": {}, "c": []});
        assert_eq!(
            canonical_compact(&value),
            r#"{"a":{},"b":[{"a":[1.5,null],"z":1}],"c":[]}"#
        );
        assert_eq!(
            canonical_pretty(&value),
            "{\n  \"a\": {},\n  \"b\": [\n    {\n      \"a\": [\n        1.5,\n        null\n      ],\n      \"z\": 1\n    }\n  ],\n  \"c\": []\n}\n"
        );
    }

    #[test]
    fn digest_is_sha256_hex() {
        // The SHA-256 of the empty string (FIPS 180-2 test vector).
        assert_eq!(
            sha256_digest(""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
