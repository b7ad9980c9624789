//! What a server does with a call's result before the client sees it: the result limit.

use crate::model::result_fit::ResultLimit;

use super::Server;

impl Server {
    /// Limits the payload text of every action's result to `limit` (bytes, or tokens
    /// estimated at 4 bytes each); an action's own `#[action(max_result = ..)]` takes
    /// precedence. `None` (the default) leaves results whole.
    ///
    /// A result over the limit is answered with `RESULT_TRUNCATED` (validation, not
    /// retryable): a list (the payload a JSON array written from the action's value, or the
    /// array at the action's `items = ".."` path) cut to the first items that fit, its `structuredContent` cut the
    /// same way, next to a warning (`isError: false`) naming how many items of how many came
    /// back and the arguments of the next call (the action's `page(offset, limit)`), or the
    /// filter fields to narrow the query with; anything else, or a list whose first item
    /// alone is over the limit, an error (`isError: true`) giving the result's size and the
    /// limit. The warning rides on top of the limit; text is never cut.
    ///
    /// This limit is a deployment setting, like the guards a server adds: it is in no tool's
    /// error contract or lockfile. An action whose results a client must expect to be cut
    /// declares its own limit, which its contract lists.
    ///
    /// ```
    /// use fusion::ResultLimit;
    /// use fusion::server::Server;
    ///
    /// let server = Server::new("billing", "1.0.0").max_result(Some(ResultLimit::tokens(8_000)));
    /// ```
    pub fn max_result(self, limit: Option<ResultLimit>) -> Server {
        self.set(|inner| inner.registry.set_max_result(limit))
    }
}
