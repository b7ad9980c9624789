#[derive(fusion::ToolErrors)]
union Raw {
    code: u32,
    bits: f32,
}

fn main() {}
