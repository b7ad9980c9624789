struct Counter {
    count: u64,
}

#[fusion::tool]
impl Counter {
    #[action]
    fn increment(&mut self) -> u64 {
        self.count += 1;
        self.count
    }
}

fn main() {}
