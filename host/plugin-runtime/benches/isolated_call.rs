//! Isolated call vs native call of the same logic, in the same run.
//!
//! `cargo bench -p outreach -p outreach-plugin-runtime --bench isolated_call`
//! (the server named too, so the bench is built with the release build's
//! features and reuses its wasmtime).
//!
//! Each isolated call builds a fresh store from the cached `InstancePre`,
//! instantiates the trivial Rust component (pooling allocator), calls
//! `verify`, lifts the result and drops the store. The native baseline runs
//! the same checks as a plain Rust function. Also measured: the start of the
//! runtime with every first-party component, cold (compile) and warm
//! (precompiled artifacts from the cache).
//!
//! The reference for the overhead is measured in the same run too:
//! wasmtime's own floor for a fresh instance under the plugins' engine
//! configuration, a core module with a 2 MiB memory (what the SDK links
//! guests with) and a data segment, instantiated from an `InstancePre` into
//! a fresh store with an epoch deadline, called once (the call dirties a
//! page, as any guest's stack does) and dropped. The isolated call's
//! overhead over that floor is what the component layer and the plugin
//! runtime add; the floor itself moves with the machine (its kernel's
//! `PAGEMAP_SCAN`, page-table walks under virtualisation).
//!
//! `BENCH_TRIVIAL_WASM=<path>` measures another build of the trivial
//! component (say, one built with other linker flags) in its place, so two
//! builds can be compared in turns on the same machine.

use outreach_plugin_runtime::{
    GuardPolicy, PluginRuntime, RuntimeConfig, fixtures::TEST_GUESTS_DIR,
};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

#[derive(Debug)]
#[allow(dead_code)]
struct Native {
    email: String,
    provider: String,
    status: &'static str,
    deliverability: &'static str,
    is_role: bool,
    confidence: Option<f64>,
    raw_status: String,
}

/// The trivial component's logic, natively.
#[inline(never)]
fn native_verify(email: &str) -> Result<Native, String> {
    let (local, domain) = email.split_once('@').ok_or("no @")?;
    let valid = !local.is_empty() && domain.contains('.');
    Ok(Native {
        email: email.to_string(),
        provider: "trivial".into(),
        status: if valid { "valid" } else { "invalid" },
        deliverability: if valid {
            "deliverable"
        } else {
            "undeliverable"
        },
        is_role: matches!(local, "info" | "sales" | "admin"),
        confidence: Some(1.0),
        raw_status: "ok".into(),
    })
}

fn pct(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

fn report(name: &str, mut samples: Vec<Duration>, total: Duration) -> Duration {
    samples.sort();
    let p50 = pct(&samples, 0.5);
    println!(
        "{name:<10} n={:<6} p50={:>8.2} µs  p99={:>8.2} µs  throughput={:>10.0} calls/s",
        samples.len(),
        p50.as_secs_f64() * 1e6,
        pct(&samples, 0.99).as_secs_f64() * 1e6,
        samples.len() as f64 / total.as_secs_f64()
    );
    p50
}

/// wasmtime's own cost of an isolated call on `engine`: see the module
/// documentation. Returns each call's time and the total.
async fn wasmtime_floor(engine: &wasmtime::Engine, n: usize) -> (Vec<Duration>, Duration) {
    let module = wasmtime::Module::new(
        engine,
        r#"(module
            (memory (export "memory") 32)
            (data (i32.const 1048576) "floor")
            (func (export "call") (param i32) (result i32)
                (i32.store (i32.const 1044480) (local.get 0))
                (i32.load (i32.const 1048576))))"#,
    )
    .unwrap();
    let pre = wasmtime::Linker::<()>::new(engine)
        .instantiate_pre(&module)
        .unwrap();
    let call_once = async |i: usize| {
        let mut store = wasmtime::Store::new(engine, ());
        store.set_epoch_deadline(1);
        store.epoch_deadline_async_yield_and_update(1);
        let instance = pre.instantiate_async(&mut store).await.unwrap();
        let call = instance
            .get_typed_func::<i32, i32>(&mut store, "call")
            .unwrap();
        black_box(call.call_async(&mut store, i as i32).await.unwrap());
    };
    for i in 0..1000 {
        call_once(i).await;
    }
    timed(n, call_once).await
}

/// Times `n` calls of `call`, each given its number: each call's time and
/// the total. (The native baseline keeps a plain loop, so it carries no
/// future's poll.)
async fn timed(n: usize, mut call: impl AsyncFnMut(usize)) -> (Vec<Duration>, Duration) {
    let mut samples = Vec::with_capacity(n);
    let start = Instant::now();
    for i in 0..n {
        let t = Instant::now();
        call(i).await;
        samples.push(t.elapsed());
    }
    (samples, start.elapsed())
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        for ext in ["wasm", "toml"] {
            let from = match (ext, std::env::var("BENCH_TRIVIAL_WASM")) {
                ("wasm", Ok(path)) => std::path::PathBuf::from(path),
                _ => Path::new(TEST_GUESTS_DIR).join(format!("trivial.{ext}")),
            };
            std::fs::copy(from, dir.path().join(format!("trivial.{ext}"))).unwrap();
        }
        let runtime = PluginRuntime::new(RuntimeConfig {
            plugins_dir: Some(dir.path().to_path_buf()),
            load_first_party: false,
            watch_interval: None,
            guard_policy: GuardPolicy::strict(),
            ..RuntimeConfig::default()
        })
        .await
        .unwrap();
        println!("pooling allocator: {}", runtime.uses_pooling_allocator());
        let n: usize = std::env::var("BENCH_CALLS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(20_000);
        let emails: Vec<String> = (0..64).map(|i| format!("user{i}@example.com")).collect();

        for _ in 0..1000 {
            runtime
                .verify_email("trivial", "k", None, &emails[0])
                .await
                .unwrap();
            black_box(native_verify(&emails[0]).unwrap());
        }

        let mut native = Vec::with_capacity(n);
        let start = Instant::now();
        for i in 0..n {
            let t = Instant::now();
            black_box(native_verify(black_box(&emails[i % 64])).unwrap());
            native.push(t.elapsed());
        }
        let native_total = start.elapsed();

        let (isolated, isolated_total) = timed(n, async |i| {
            let r = runtime
                .verify_email("trivial", "k", None, &emails[i % 64])
                .await
                .unwrap();
            black_box(r);
        })
        .await;

        let (floor, floor_total) = wasmtime_floor(runtime.engine(), n).await;

        let np50 = report("native", native, native_total);
        let ip50 = report("isolated", isolated, isolated_total);
        let fp50 = report("floor", floor, floor_total);
        let overhead = ip50.saturating_sub(np50);
        println!(
            "p50 overhead of isolation: {:.2} µs; wasmtime's floor: {:.2} µs; overhead / floor: {:.2}",
            overhead.as_secs_f64() * 1e6,
            fp50.as_secs_f64() * 1e6,
            overhead.as_secs_f64() / fp50.as_secs_f64()
        );

        // Start of the runtime with all first-party components (skipped
        // with BENCH_CALLS_ONLY, for profiling the calls alone).
        if std::env::var_os("BENCH_CALLS_ONLY").is_some() {
            return;
        }
        let cache = tempfile::tempdir().unwrap();
        for label in [
            "cold (compile + cache)",
            "warm (precompiled)",
            "warm (precompiled)",
        ] {
            let t = Instant::now();
            let r = PluginRuntime::new(RuntimeConfig {
                cache_dir: Some(cache.path().to_path_buf()),
                watch_interval: None,
                ..RuntimeConfig::default()
            })
            .await
            .unwrap();
            println!(
                "start with {} first-party components, {label}: {:.1} ms",
                r.list().len(),
                t.elapsed().as_secs_f64() * 1e3
            );
        }
    });
}
