//! How long `malloc_trim(0)` takes on a fragmented heap, and how long another thread's
//! allocations wait meanwhile: the pause a trim of fusion's HTTP session store can cause in a
//! process with a large heap (`HttpServer::release_memory`).
//!
//! ```text
//! cargo run --release -p fusion-benches --bin trim_pause -- 100 1000 4000   # heap sizes, MB
//! GLIBC_TUNABLES=glibc.malloc.arena_max=1:glibc.malloc.tcache_count=0 \
//!   cargo run --release -p fusion-benches --bin trim_pause                  # one arena, no cache
//! ```
//!
//! Each heap is blocks of 64 to 2,111 bytes, every other one freed: free memory scattered
//! between live blocks, as closed sessions leave it. glibc only (Linux, `target_env = "gnu"`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|mb| mb.parse().expect("a size in MB"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![100, 1000]
    } else {
        sizes
    };
    for mb in sizes {
        let (trim, worst) = measure(mb << 20);
        println!(
            "heap {mb:>5} MB, half freed: malloc_trim {:>7.1} ms; another thread's slowest allocation {:>7.3} ms",
            trim.as_secs_f64() * 1e3,
            worst.as_secs_f64() * 1e3
        );
    }
}

/// Builds a heap of about `bytes`, frees every other block, and times a trim while another
/// thread allocates and frees in a loop. Returns the trim's time and that thread's slowest
/// allocation.
fn measure(bytes: usize) -> (Duration, Duration) {
    let mut blocks = Vec::new();
    let (mut used, mut seed) = (0, 1_u64);
    while used < bytes {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let size = 64 + (seed >> 33) as usize % 2048;
        blocks.push(vec![7_u8; size]);
        used += size;
    }
    // Every other block freed; the rest kept until the trim is measured.
    let kept: Vec<Vec<u8>> = blocks.into_iter().skip(1).step_by(2).collect();
    let stop = AtomicBool::new(false);
    let (trim, worst) = std::thread::scope(|threads| {
        let other = threads.spawn(|| {
            let mut worst = Duration::ZERO;
            while !stop.load(Ordering::Relaxed) {
                let started = Instant::now();
                drop(std::hint::black_box(vec![1_u8; 200]));
                worst = worst.max(started.elapsed());
            }
            worst
        });
        std::thread::sleep(Duration::from_millis(50));
        let started = Instant::now();
        release_free_memory();
        let trim = started.elapsed();
        stop.store(true, Ordering::Relaxed);
        (trim, other.join().expect("the allocating thread"))
    });
    drop(kept);
    (trim, worst)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn release_free_memory() {
    // SAFETY: `malloc_trim` only walks and releases malloc's own free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {
    eprintln!("malloc_trim is glibc's: nothing to measure here");
    std::process::exit(2);
}
