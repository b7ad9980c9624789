#[derive(serde::Serialize)]
struct SearchResult<T> {
    hits: Vec<T>,
}

struct Search;

#[fusion::tool]
impl Search {
    #[action]
    fn find(&self) -> SearchResult<u8> {
        SearchResult { hits: vec![1] }
    }
}

fn main() {}
