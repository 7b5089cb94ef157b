//! A webhook receiver for the benchmark: answers every POST with 200 at
//! once and counts them; `GET /count` reports the count. Prints
//! `listening on <port>`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::routing::get;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let count = Arc::new(AtomicU64::new(0));
    let app =
        Router::new()
            .route(
                "/count",
                get(|State(c): State<Arc<AtomicU64>>| async move {
                    c.load(Ordering::Relaxed).to_string()
                }),
            )
            .fallback(
                |State(c): State<Arc<AtomicU64>>, _body: axum::body::Bytes| async move {
                    c.fetch_add(1, Ordering::Relaxed);
                    "ok"
                },
            )
            .with_state(count);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("listening on {}", listener.local_addr()?.port());
    axum::serve(listener, app).await?;
    Ok(())
}
