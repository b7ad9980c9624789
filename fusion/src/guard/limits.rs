//! The argument limits: size in bytes of JSON and nesting depth, checked before a tool sees
//! its arguments, answered with a `VALIDATION_ERROR` that names the limit.

use std::io::Write;

use serde_json::{Map, Value};

use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;

/// The default [`ArgumentLimits::max_bytes`]: 4 MiB of JSON, the request body limit of rmcp's
/// Streamable HTTP server.
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 4 * 1024 * 1024;

/// How large and how deep a call's arguments may be. Beyond either, the call is answered
/// `VALIDATION_ERROR` naming the limit, and the tool is not called.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArgumentLimits {
    /// The most bytes the arguments may take as compact JSON; `None`: no limit. Default
    /// [`DEFAULT_MAX_ARGUMENT_BYTES`] (4 MiB).
    pub max_bytes: Option<usize>,
    /// The deepest nesting of objects and arrays (the arguments object is level 1), checked
    /// before the tool; `None` (the default): no check here. Tools made by `#[fusion::tool]`
    /// refuse more than [`DEFAULT_MAX_DEPTH`](crate::validation::DEFAULT_MAX_DEPTH) (64)
    /// levels anyway, in their own `<validation_error>`; set this to refuse sooner, or to
    /// protect hand-written tools.
    pub max_depth: Option<usize>,
}

impl Default for ArgumentLimits {
    fn default() -> ArgumentLimits {
        ArgumentLimits {
            max_bytes: Some(DEFAULT_MAX_ARGUMENT_BYTES),
            max_depth: None,
        }
    }
}

impl ArgumentLimits {
    /// The `VALIDATION_ERROR` refusing `arguments`, if they break a limit: the size first (it
    /// is cheaper to measure and stops early), then the depth.
    pub fn check(&self, arguments: &Map<String, Value>) -> Option<ToolError> {
        self.check_at_depth(arguments, None)
    }

    /// [`ArgumentLimits::check`], the nesting depth given (`levels`) rather than measured:
    /// for arguments holding JSON too deep to be read, counted as if it were.
    pub(crate) fn check_at_depth(
        &self,
        arguments: &Map<String, Value>,
        levels: Option<usize>,
    ) -> Option<ToolError> {
        if let Some(limit) = self.max_bytes
            && let Some(size) = oversized(arguments, limit)
        {
            return Some(
                ToolError::new(
                    ErrorCode::ValidationError,
                    format!(
                        "The arguments are over {limit} bytes of JSON (at least {size} bytes \
                         sent)."
                    ),
                )
                .suggest(format!(
                    "Send arguments under {limit} bytes: shorten the longest values or split \
                     the work into several calls."
                )),
            );
        }
        let limit = self.max_depth?;
        // The arguments object is level 1; measuring its values avoids cloning it.
        let depth = levels.unwrap_or_else(|| {
            1 + (arguments.values())
                .map(crate::validation::nesting_depth)
                .max()
                .unwrap_or(0)
        });
        (depth > limit).then(|| {
            ToolError::new(
                ErrorCode::ValidationError,
                format!(
                    "The arguments are nested {depth} levels deep; the limit is {limit} levels of \
                     objects and arrays."
                ),
            )
            .suggest(format!(
                "Send arguments nested at most {limit} levels deep: flatten the deepest values."
            ))
        })
    }
}

/// The serialized size of `arguments` when it exceeds `limit` bytes. Counting stops just past
/// the limit, so a huge argument costs no more than the limit to measure.
fn oversized(arguments: &Map<String, Value>, limit: usize) -> Option<usize> {
    struct Counter {
        bytes: usize,
        limit: usize,
    }
    impl Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes += buf.len();
            if self.bytes > self.limit {
                // Stops serialization early; the count is what matters.
                return Err(std::io::Error::other("over the limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { bytes: 0, limit };
    match serde_json::to_writer(&mut counter, arguments) {
        Ok(()) => None,
        Err(_) => Some(counter.bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An arguments object nested `levels` deep.
    fn nested(levels: usize) -> Map<String, Value> {
        let mut value = json!({ "a": 1 });
        for _ in 1..levels {
            value = json!({ "a": value });
        }
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn depth_counts_the_arguments_object_as_level_one() {
        let limits = ArgumentLimits {
            max_bytes: None,
            max_depth: Some(3),
        };
        assert!(limits.check(&nested(3)).is_none());
        let error = limits.check(&nested(4)).unwrap();
        assert_eq!(*error.code(), ErrorCode::ValidationError);
        assert_eq!(
            error.message(),
            "The arguments are nested 4 levels deep; the limit is 3 levels of objects and arrays."
        );
        assert!(limits.check(&Map::new()).is_none());
    }

    #[test]
    fn size_comes_first_and_names_the_limit() {
        let limits = ArgumentLimits {
            max_bytes: Some(10),
            max_depth: Some(1),
        };
        let error = limits.check(&nested(5)).unwrap();
        assert!(
            error.message().contains("over 10 bytes"),
            "{}",
            error.message()
        );
        let none = ArgumentLimits {
            max_bytes: None,
            max_depth: None,
        };
        assert!(none.check(&nested(500)).is_none());
    }

    #[test]
    fn oversized_stops_counting_past_the_limit() {
        let args = json!({"text": "x".repeat(1000)});
        let args = args.as_object().unwrap();
        assert_eq!(oversized(args, 2000), None);
        let size = oversized(args, 100).unwrap();
        assert!(size > 100 && size < 1100, "{size}");
    }
}
