//! A `tracing` writer that keeps everything written to it, for tests that read the log.

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing::level_filters::LevelFilter;
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::fmt::SubscriberBuilder;
use tracing_subscriber::fmt::format::{DefaultFields, Format};

/// Everything written so far; clones share it.
#[derive(Clone, Default)]
pub(crate) struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A subscriber writes to a clone: `tracing_subscriber::fmt().with_writer(log.clone())`.
impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

impl Captured {
    /// A fresh log and a `fmt` subscriber writing to it (see [`Captured::builder`]), this
    /// thread's default until the guard drops.
    #[allow(dead_code, reason = "some test binaries do not call it")]
    pub(crate) fn install() -> (Captured, DefaultGuard) {
        let log = Captured::default();
        let guard = tracing::subscriber::set_default(log.builder().finish());
        (log, guard)
    }

    /// A `fmt` subscriber builder writing to this log, without colours: add options, `finish()`.
    pub(crate) fn builder(
        &self,
    ) -> SubscriberBuilder<DefaultFields, Format, LevelFilter, Captured> {
        tracing_subscriber::fmt()
            .with_writer(self.clone())
            .with_ansi(false)
    }

    /// What was written, as text.
    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}
