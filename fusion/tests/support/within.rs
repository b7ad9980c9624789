//! A timeout for the awaits of a test, so that a hang fails the test instead of the run.

use std::time::Duration;

/// Fails the test instead of hanging when `future` takes more than ten seconds.
pub(crate) async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), future)
        .await
        .expect("timed out after 10 s")
}
