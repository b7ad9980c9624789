struct Counter;

#[fusion::tool]
impl Counter {
    #[action]
    fn consume(self) {}
}

fn main() {}
