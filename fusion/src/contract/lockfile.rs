//! `fusion.lock`: the contract as canonical JSON with SHA-256 digests per tool and for the
//! whole server, written and verified.

use std::path::Path;

use serde_json::{Map, Value};

use super::digest::{canonical_pretty, value_digest};
use super::model::{Contract, ToolContract};

/// The lockfile format this version of fusion writes and reads (the `format` field).
pub const LOCKFILE_FORMAT: u64 = 1;

/// A lockfile read and verified: its contract and its server digest.
///
/// The file is a JSON object `{"digest", "format", "tools"}`: `format` is
/// [`LOCKFILE_FORMAT`], `tools` maps each tool name to its [`ToolContract`] plus a `digest`
/// key, and the top `digest` covers the whole file. Keys are sorted at every level, indented by
/// two spaces, with a trailing newline.
///
/// A digest is `sha256:` followed by the lowercase hex SHA-256 of the covered JSON written
/// compactly with sorted keys (serde_json's number and string forms): for a tool, its entry
/// without its `digest` key; for the server, the whole document without the top `digest` key
/// (so it covers the tool digests). Both are independent of map order, platform and run.
///
/// ```
/// use fusion::contract::{Contract, Lockfile};
///
/// let text = Contract::default().to_lockfile();
/// assert!(text.starts_with("{\n  \"digest\": \"sha256:"));
/// assert!(text.ends_with("\n  \"tools\": {}\n}\n"));
/// let lockfile = Lockfile::parse(&text)?;
/// assert_eq!(lockfile.contract(), &Contract::default());
///
/// // A hand edit without a matching digest is refused.
/// let edited = text.replace("\"format\": 1", "\"format\": 1 ");
/// assert!(Lockfile::parse(&edited).is_ok(), "whitespace is not content");
/// let tampered = text.replace("\"tools\": {}", "\"tools\": {\"x\": {}}");
/// assert!(Lockfile::parse(&tampered).is_err());
/// # Ok::<(), fusion::contract::LockfileError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lockfile {
    contract: Contract,
    digest: String,
}

impl Lockfile {
    /// Parses and verifies lockfile text.
    ///
    /// # Errors
    /// [`LockfileError::Malformed`] when the text is not JSON or not the lockfile shape (a
    /// missing or unknown key, a wrong type), [`LockfileError::UnsupportedFormat`] for another
    /// `format`, [`LockfileError::Tampered`] when a stored digest does not match the content
    /// it covers (a tool's entry is checked against its own digest even when the top digest
    /// was left alone).
    pub fn parse(text: &str) -> Result<Lockfile, LockfileError> {
        // A byte order mark some editors add is not content (RFC 8259 section 8.1 lets a
        // parser ignore it); without this, serde_json reports "expected value at line 1".
        let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        let document: Value = serde_json::from_str(text)
            .map_err(|err| LockfileError::Malformed(format!("not JSON: {err}")))?;
        let Value::Object(mut document) = document else {
            return Err(LockfileError::Malformed(
                "the top level is not a JSON object".into(),
            ));
        };
        match document.get("format") {
            Some(Value::Number(n)) if n.as_u64() == Some(LOCKFILE_FORMAT) => {}
            Some(Value::Number(n)) => {
                return Err(LockfileError::UnsupportedFormat(n.to_string()));
            }
            Some(other) => {
                return Err(LockfileError::Malformed(format!(
                    "`format` is {other}, not a number"
                )));
            }
            None => return Err(LockfileError::Malformed("no `format` key".into())),
        }
        let stored = take_digest(&mut document, "the server")?;
        if let Some(key) = document.keys().find(|k| *k != "format" && *k != "tools") {
            return Err(LockfileError::Malformed(format!(
                "unknown top-level key `{key}`"
            )));
        }
        let Some(Value::Object(tools)) = document.get("tools") else {
            return Err(LockfileError::Malformed(
                "no `tools` object at the top level".into(),
            ));
        };
        let mut contract = Contract::default();
        for (name, entry) in tools {
            let Value::Object(entry) = entry else {
                return Err(LockfileError::Malformed(format!(
                    "tool `{name}` is not a JSON object"
                )));
            };
            let mut entry = entry.clone();
            let stored_tool = take_digest(&mut entry, &format!("tool `{name}`"))?;
            let content = Value::Object(entry);
            let computed = value_digest(&content);
            if computed != stored_tool {
                return Err(LockfileError::Tampered {
                    tool: Some(name.clone()),
                    stored: stored_tool,
                    computed,
                });
            }
            let tool: ToolContract = serde_json::from_value(content)
                .map_err(|err| LockfileError::Malformed(format!("tool `{name}`: {err}")))?;
            contract.tools.insert(name.clone(), tool);
        }
        let computed = value_digest(&Value::Object(document));
        if computed != stored {
            return Err(LockfileError::Tampered {
                tool: None,
                stored,
                computed,
            });
        }
        Ok(Lockfile {
            contract,
            digest: stored,
        })
    }

    /// Reads and verifies the lockfile at `path`.
    ///
    /// # Errors
    /// [`LockfileError::Io`] when the file cannot be read, else as [`Lockfile::parse`].
    pub fn load(path: impl AsRef<Path>) -> Result<Lockfile, LockfileError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|err| LockfileError::Io {
            path: path.display().to_string(),
            message: err.to_string(),
        })?;
        Lockfile::parse(&text)
    }

    /// The lockfile of `contract` (what [`Contract::to_lockfile`] writes).
    pub fn new(contract: Contract) -> Lockfile {
        let digest = contract.digest();
        Lockfile { contract, digest }
    }

    /// The contract recorded.
    pub fn contract(&self) -> &Contract {
        &self.contract
    }

    /// The server digest (`sha256:…`).
    pub fn digest(&self) -> &str {
        &self.digest
    }
}

impl From<Contract> for Lockfile {
    fn from(contract: Contract) -> Lockfile {
        Lockfile::new(contract)
    }
}

/// Removes and returns the `digest` string of an entry.
fn take_digest(entry: &mut Map<String, Value>, whose: &str) -> Result<String, LockfileError> {
    match entry.remove("digest") {
        Some(Value::String(digest)) => Ok(digest),
        Some(other) => Err(LockfileError::Malformed(format!(
            "the digest of {whose} is {other}, not a string"
        ))),
        None => Err(LockfileError::Malformed(format!(
            "{whose} has no `digest` key"
        ))),
    }
}

impl Contract {
    /// The lockfile text of this contract: canonical JSON (keys sorted at every level,
    /// two-space indent, trailing newline) with the digests described on [`Lockfile`].
    /// The same contract always gives the same bytes.
    pub fn to_lockfile(&self) -> String {
        let mut document = self.undigested();
        let digest = value_digest(&Value::Object(document.clone()));
        document.insert("digest".into(), Value::String(digest));
        canonical_pretty(&Value::Object(document))
    }

    /// The server digest of this contract (`sha256:…`), as its lockfile records it.
    pub fn digest(&self) -> String {
        value_digest(&Value::Object(self.undigested()))
    }

    /// The digest of tool `name`'s entry, `None` when the contract has no such tool.
    pub fn tool_digest(&self, name: &str) -> Option<String> {
        self.tools.get(name).map(tool_digest)
    }

    /// The lockfile as a JSON object without its top `digest`, which covers the rest (the tool
    /// digests included), as `Lockfile::parse` checks it.
    fn undigested(&self) -> Map<String, Value> {
        let tools: Map<String, Value> = self
            .tools
            .iter()
            .map(|(name, tool)| {
                let mut entry = to_object(tool);
                entry.insert("digest".into(), Value::String(tool_digest(tool)));
                (name.clone(), Value::Object(entry))
            })
            .collect();
        let mut document = Map::new();
        document.insert("format".into(), Value::from(LOCKFILE_FORMAT));
        document.insert("tools".into(), Value::Object(tools));
        document
    }
}

fn tool_digest(tool: &ToolContract) -> String {
    value_digest(&Value::Object(to_object(tool)))
}

fn to_object(tool: &ToolContract) -> Map<String, Value> {
    match serde_json::to_value(tool) {
        Ok(Value::Object(map)) => map,
        // A struct of strings, maps, booleans and JSON values always serializes to an object.
        _ => unreachable!("a ToolContract serializes to a JSON object"),
    }
}

/// Why a lockfile was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LockfileError {
    /// The file could not be read.
    #[error("cannot read lockfile {path}: {message}")]
    Io {
        /// The path, as given.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// Not JSON, or not the lockfile shape; the message says where.
    #[error("malformed lockfile: {0}")]
    Malformed(String),
    /// A `format` this version of fusion does not read (it reads [`LOCKFILE_FORMAT`]).
    #[error("lockfile format {0} is not supported (this fusion reads format {LOCKFILE_FORMAT})")]
    UnsupportedFormat(String),
    /// A stored digest does not match the content it covers: the file was edited by hand.
    #[error(
        "tampered lockfile: {} does not match its digest (stored {stored}, content {computed}); \
         regenerate it instead of editing it by hand",
        whose(.tool)
    )]
    Tampered {
        /// The tool whose entry changed; `None` for the server digest.
        tool: Option<String>,
        /// The digest in the file.
        stored: String,
        /// The digest of the content.
        computed: String,
    },
}

/// What a [`LockfileError::Tampered`] names: a tool's entry, or the whole file.
fn whose(tool: &Option<String>) -> String {
    match tool {
        Some(tool) => format!("the entry of tool `{tool}`"),
        None => "the lockfile".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_and_crlf_line_ends_are_not_content() {
        let text = Contract::default().to_lockfile();
        let edited = format!("\u{FEFF}{}", text.replace('\n', "\r\n"));
        assert_eq!(
            Lockfile::parse(&edited).map(|l| l.digest().to_owned()),
            Ok(Contract::default().digest())
        );
    }
}
