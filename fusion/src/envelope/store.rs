//! A store a call needs that cannot be reached (the task store, the record of request states,
//! the Redis rate-limit store): `SERVER_BUSY`, retryable, and the store's error in the log
//! under an error id, without credentials.

use std::borrow::Cow;

use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;
use crate::envelope::internal::{ERROR_ID_KEY, new_error_id, redacted};

/// How long a call refused for a store is told to wait, in seconds.
pub(crate) const RETRY_AFTER: u64 = 5;

/// The `tracing` target a store failure is logged under: `fusion::server` or `fusion::guard`.
#[derive(Clone, Copy)]
pub(crate) enum Target {
    Server,
    #[cfg(feature = "redis")]
    Guard,
}

/// `SERVER_BUSY` with `message`, the recovery "Retry in 5 seconds." (a caller may
/// [`suggest`](ToolError::suggest) its own), a retry after [`RETRY_AFTER`] seconds and a fresh
/// error id (the `errorId` detail). Logs `error`, the store's failure, at `ERROR` under
/// `target` with the same id and `log` as the message: URL credentials removed
/// ([`without_credentials`]), then rewritten by the server's redactor ([`redacted`]).
pub(crate) fn store_unreachable(
    target: Target,
    error: &str,
    log: &str,
    message: &str,
) -> ToolError {
    let id = new_error_id();
    let error = without_credentials(error);
    let error: &str = &redacted(&error);
    match target {
        Target::Server => {
            tracing::error!(target: "fusion::server", error_id = %id, %error, "{log}")
        }
        #[cfg(feature = "redis")]
        Target::Guard => tracing::error!(target: "fusion::guard", error_id = %id, %error, "{log}"),
    }
    ToolError::new(ErrorCode::ServerBusy, message)
        .suggest(format!("Retry in {RETRY_AFTER} seconds."))
        .retry_after(RETRY_AFTER)
        .detail(ERROR_ID_KEY, id)
}

/// Query parameters that carry a credential (`redis+unix:///run/redis.sock?pass=…`), compared
/// without regard to case.
const CREDENTIAL_PARAMETERS: &[&str] = &["pass", "password", "token", "secret"];

/// `text` with the credentials of every URL in it (a `scheme://` up to whitespace or a quote)
/// replaced by `[redacted]`: the userinfo (`redis://admin:secret@cache` →
/// `redis://[redacted]@cache`) and the values of [`CREDENTIAL_PARAMETERS`].
pub(crate) fn without_credentials(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
            .unwrap_or(tail.len());
        let url;
        (url, rest) = tail.split_at(end);
        // The authority (RFC 3986, section 3.2) ends at the path, the query or the fragment.
        let (authority, path) = url.split_at(url.find(['/', '?', '#']).unwrap_or(url.len()));
        match authority.rfind('@') {
            Some(userinfo_end) => out.extend(["[redacted]", &authority[userinfo_end..]]),
            None => out.push_str(authority),
        }
        // Each piece after a `?` or `&` is a parameter; a credential's value ends at `&` or `#`.
        for (n, piece) in path.split_inclusive(['?', '&']).enumerate() {
            match piece.split_once('=') {
                Some((name, value))
                    if n > 0
                        && (CREDENTIAL_PARAMETERS.iter()).any(|p| name.eq_ignore_ascii_case(p)) =>
                {
                    let end = value.find(['&', '#']).unwrap_or(value.len());
                    out.extend([name, "=[redacted]", &value[end..]]);
                }
                _ => out.push_str(piece),
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The log written while `f` runs, as text (for tests that read what was logged).
#[cfg(test)]
pub(crate) fn logged(f: impl FnOnce()) -> String {
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Log(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Log {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let log = Log::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    String::from_utf8(log.0.lock().unwrap().clone()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_credentials() {
        for (text, expected) in [
            (
                "connect redis://admin:hunter2@cache:6379/0: refused",
                "connect redis://[redacted]@cache:6379/0: refused",
            ),
            ("redis://:hunter2@cache", "redis://[redacted]@cache"),
            (
                "a rediss://u:p@a:1 and \"redis://v:q@b?x=1#f\"",
                "a rediss://[redacted]@a:1 and \"redis://[redacted]@b?x=1#f\"",
            ),
            (
                "redis+unix:///run/redis.sock?db=1&PASS=hunter2&token=t#top",
                "redis+unix:///run/redis.sock?db=1&PASS=[redacted]&token=[redacted]#top",
            ),
            ("http://host/a@b?q", "http://host/a@b?q"),
            ("no url: user:pass@host", "no url: user:pass@host"),
            ("cut short ://", "cut short ://"),
        ] {
            assert_eq!(without_credentials(text), expected, "{text}");
        }
    }

    #[test]
    fn a_store_unreachable_is_busy_and_logged_without_credentials() {
        let mut refusal = None;
        let log = logged(|| {
            refusal = Some(store_unreachable(
                Target::Server,
                "connect redis://admin:hunter2@cache:6379: refused",
                "the store failed",
                "Try later.",
            ));
        });
        let refusal = refusal.unwrap();
        assert_eq!(refusal.code(), &ErrorCode::ServerBusy);
        assert_eq!(refusal.message(), "Try later.");
        assert_eq!(refusal.recovery(), Some("Retry in 5 seconds."));
        assert_eq!(refusal.retry_after_secs(), Some(5));
        assert!(refusal.is_retryable());
        let id = refusal.detail_value(ERROR_ID_KEY).unwrap();
        assert!(
            log.contains("ERROR fusion::server: the store failed"),
            "{log}"
        );
        assert!(log.contains(id), "{log}");
        assert!(log.contains("redis://[redacted]@cache:6379"), "{log}");
        assert!(!log.contains("hunter2"), "{log}");
    }
}
