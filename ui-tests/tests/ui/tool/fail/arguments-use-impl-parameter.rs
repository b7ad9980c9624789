#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query<T> {
    filter: T,
}

struct Search<T> {
    marker: std::marker::PhantomData<fn() -> T>,
}

#[fusion::tool]
impl<T: Send + 'static> Search<T> {
    #[action]
    fn find(&self, _args: Query<T>) {}
}

fn main() {}
