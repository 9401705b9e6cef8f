//! Registry build + validation of 10 000 generated capabilities
//! (DESIGN §11 target: ≤ 20 ms, ≤ 2 µs per capability).

use criterion::{Criterion, criterion_group, criterion_main};
#[path = "support/generated.rs"]
mod support;

use orpc_agent_core::{CapabilityRegistry, RegistryOptions};
use support::generated;

fn bench(c: &mut Criterion) {
    let decls = generated(10_000);
    // A registry is built once, at start-up: each timed build starts on a
    // quiet process (the previous registry dropped and the declarations'
    // JSON freed, outside the timing), as it would in an application.
    c.bench_function("registry build + validate, 10 000 capabilities", |b| {
        b.iter_custom(|iters| {
            let mut total = std::time::Duration::ZERO;
            for _ in 0..iters {
                let d = decls.clone();
                let start = std::time::Instant::now();
                let built = CapabilityRegistry::build(d, RegistryOptions::default());
                total += start.elapsed();
                drop(std::hint::black_box(built));
                std::thread::sleep(std::time::Duration::from_millis(40));
            }
            total
        })
    });
    let reg = CapabilityRegistry::build(decls.clone(), RegistryOptions::default());
    if let Ok(reg) = reg {
        c.bench_function("registry inspect, 10 000 capabilities", |b| {
            b.iter(|| reg.inspect().capabilities.len())
        });
        c.bench_function("resolve by tool name", |b| {
            b.iter(|| {
                reg.resolve(std::hint::black_box("module7_capability5007"))
                    .is_some()
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
