trait HasArgs {
    type Args;
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    filter: String,
}

struct Search<T> {
    marker: std::marker::PhantomData<fn() -> T>,
}

impl<T> HasArgs for Search<T> {
    type Args = Query;
}

#[fusion::tool]
impl<T: Send + 'static> Search<T> {
    #[action]
    fn find(&self, _args: <Self as HasArgs>::Args) {}
}

fn main() {}
