//! What the log gets of an internal error's cause: the server's redactor.

use std::sync::Arc;

use super::Server;

impl Server {
    /// Rewrites the cause of every internal error of this server's calls before it is logged.
    ///
    /// **By default the cause is logged verbatim**, secrets and all. An error without a
    /// contract (an `anyhow::Error`, a boxed error, an I/O error, a `#[tool_error(internal)]`
    /// variant) and a caught panic answer `INTERNAL_ERROR` with an error id; the model sees the
    /// id and never the cause, and the log (`tracing`, target `fusion::internal`, level
    /// `ERROR`) gets the id with the cause: the error's whole chain (`Display` of each
    /// source, joined by `": "`), or the panic's message. A driver's error can name a
    /// connection string with its password, an HTTP client's a URL with a token: those reach
    /// the log as they are. Verbatim is the default because the whole cause is what debugging
    /// an incident needs; set a redactor when the log goes where secrets must not.
    ///
    /// `redact` gets the cause and returns what the log gets in its place (the `cause` field;
    /// the error id is logged as before). It runs while the call is polled (in the handler,
    /// its guards and layers, on the blocking thread of a synchronous action, and when the
    /// call's panic is caught), as the call's `tracing` span is entered; an error converted on
    /// a task or thread the action spawns itself is logged verbatim. A `redact` that panics
    /// logs `(cause withheld: the redactor panicked)` instead. The failures of a store a call
    /// needs, logged with an error id too (the Redis rate-limit store's under target
    /// `fusion::guard`, the task store's and the record of request states' under
    /// `fusion::server`), go through it as well, after the credentials of any URL in them
    /// (userinfo, `pass`/`password`/`token`/`secret` query parameters) became `[redacted]`.
    ///
    /// Rust's panic hook prints a panic's message to standard error before fusion catches the
    /// panic: replace the hook ([`std::panic::set_hook`]) when panic messages may carry
    /// secrets.
    ///
    /// ```
    /// use fusion::server::Server;
    ///
    /// // The database password, from the configuration the server connects with.
    /// let password = std::env::var("LEDGER_DB_PASSWORD")
    ///     .ok()
    ///     .filter(|password| !password.is_empty());
    /// let server = Server::new("billing", "1.0.0").redact_internal_causes(move |cause| {
    ///     match &password {
    ///         Some(password) => cause.replace(password.as_str(), "[redacted]"),
    ///         None => cause.to_owned(),
    ///     }
    /// });
    /// ```
    pub fn redact_internal_causes(
        self,
        redact: impl Fn(&str) -> String + Send + Sync + 'static,
    ) -> Server {
        let redact: crate::internal::Redactor = Arc::new(redact);
        self.set(|inner| inner.registry.set_redactor(redact))
    }
}
