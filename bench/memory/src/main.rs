//! Live heap bytes per registered capability (DESIGN §11 target ≤ 2 KB).
//!
//! A global allocator that counts live bytes wraps the system one; the
//! figure is the growth of live bytes from "declarations in hand" to
//! "registry built and declarations consumed", divided by the number of
//! capabilities — everything a capability keeps: its declared JSON,
//! resolved metadata, tool names and index entries.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use orpc_agent_core::{CapabilityRegistry, RegistryOptions};

/// The same mix as the core's `registry` bench.
#[path = "../../../core/benches/support/generated.rs"]
mod support;
use support::generated;

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged and only updates a counter; the GlobalAlloc contract is
// System's.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    const N: usize = 10_000;
    let start = LIVE.load(Ordering::Relaxed);
    let decls = generated(N);
    let declared = LIVE.load(Ordering::Relaxed) - start;
    let registry = match CapabilityRegistry::build(decls, RegistryOptions::default()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("the generated registry did not build: {e}");
            std::process::exit(1);
        }
    };
    // Large builds free the declarations' JSON on a background thread:
    // wait until the live count settles.
    let mut last = LIVE.load(Ordering::Relaxed);
    for _ in 0..100 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let now = LIVE.load(Ordering::Relaxed);
        if now == last {
            break;
        }
        last = now;
    }
    let total = LIVE.load(Ordering::Relaxed) - start;
    println!(
        "live heap per registered capability: {} bytes (of which the declared JSON {} bytes); {N} capabilities; target <= 2048",
        total / N as isize,
        declared / N as isize
    );
    std::hint::black_box(&registry);
}
