//! What a server does with a call's arguments before its tool sees them: the size and depth
//! limits, and reading stringified JSON as the JSON it holds.

#[cfg(doc)]
use crate::guard::DEFAULT_MAX_ARGUMENT_BYTES;

use super::Server;

impl Server {
    /// Rejects calls whose arguments serialize to more than `bytes` bytes of JSON with a
    /// `VALIDATION_ERROR` envelope, before the tool sees them; `None` removes the limit.
    /// Default: [`DEFAULT_MAX_ARGUMENT_BYTES`] (4 MiB).
    pub fn max_argument_bytes(self, bytes: Option<usize>) -> Server {
        self.set(|inner| inner.registry.set_limits(|g| g.max_argument_bytes(bytes)))
    }

    /// Rejects calls whose arguments nest objects and arrays deeper than `levels` (the
    /// arguments object is level 1) with a `VALIDATION_ERROR` envelope, before the tool sees
    /// them; `None` (the default) leaves depth to the tool: the validator of every
    /// `#[fusion::tool]` action refuses more than 64 levels in its own `<validation_error>`.
    pub fn max_argument_depth(self, levels: Option<usize>) -> Server {
        self.set(|inner| inner.registry.set_limits(|g| g.max_argument_depth(levels)))
    }

    /// Reads an argument sent as a string holding JSON where the action's input schema wants
    /// an array, an object, a number, an integer or a boolean as that JSON, before the
    /// arguments are validated. On by default; `false` turns it off for every action (an
    /// action declared `#[action(strict_json)]` is never decoded either).
    ///
    /// Some clients send `{"items": "[{\"sku\": \"a\", \"qty\": 1}]"}` for an array
    /// argument; refused, the model often repeats the call unchanged, since from its side it
    /// sent an array. A string is decoded when, at its place in the schema (through local
    /// `$ref`s, properties, items and `allOf`/`anyOf`/`oneOf` branches, at any depth), no
    /// schema allows a string and one allows the type of the JSON it holds (an integer counts
    /// as a number; a number counts as an integer when it is whole, as JSON Schema says). A
    /// field whose schema allows a string (a `String`, an `Option<String>`, an untagged enum
    /// with a string variant, an untyped field) is never parsed, whatever it looks like; nor is
    /// a string that is not JSON, or JSON of a type the place refuses (`"[1]"` for a number),
    /// or null: those are validated as sent. The decoded arguments go through the
    /// [argument limits](Server::max_argument_bytes) again and are validated like JSON sent as
    /// such: a validation error names the decoded value at the path it would have had.
    ///
    /// Such a call is answered with the decoded paths in `_meta["fusion/decoded"]`
    /// ([`DECODED_META_KEY`](crate::DECODED_META_KEY): `["items"]`, `["order.lines[0]"]`), a
    /// `tracing` debug line (target `fusion::arguments`), and, the first time a session sends
    /// a field so (on every such call without a session), a `VALIDATION_ERROR` warning next to
    /// the result saying which field was read as what and how to send it next time.
    pub fn decode_stringified_arguments(self, enabled: bool) -> Server {
        self.set(|inner| inner.registry.decode_stringified(enabled))
    }
}
