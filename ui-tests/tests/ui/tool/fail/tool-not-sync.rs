// A tool is shared between concurrent calls, so its type must be `Send + Sync`: a `Cell` in it
// is refused where the tool is declared, the first error naming `fusion::Tool`.
use std::cell::Cell;

struct Counter {
    calls: Cell<u32>,
}

#[fusion::tool]
impl Counter {
    /// Counts.
    #[action]
    fn count(&self) -> u32 {
        self.calls.set(self.calls.get() + 1);
        self.calls.get()
    }
}

fn main() {}
