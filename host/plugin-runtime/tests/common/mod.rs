//! Shared test helpers: a tiny HTTP stub, runtime constructors and a fake
//! AI bridge for the classifiers.
#![allow(dead_code)]

use outreach_plugin_runtime::{
    AiBridge, AiFuture, CompletionRequest, CompletionResponse, GuardPolicy, PluginError,
    PluginRuntime, RuntimeConfig, fixtures::TEST_GUESTS_DIR,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A canned answer: status, extra headers, body.
pub type Answer = (u16, Vec<(String, String)>, Vec<u8>);

/// Starts an HTTP/1.1 stub on 127.0.0.1 answering with `route(method, path, body)`.
/// Returns its base URL and a request counter.
pub async fn stub<F>(route: F) -> (String, Arc<AtomicUsize>)
where
    F: Fn(&str, &str, &[u8], &str) -> Answer + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let route = Arc::new(route);
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                break;
            };
            let route = route.clone();
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let (head_end, content_length) = loop {
                    let n = match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..i]).to_lowercase();
                        let cl = head
                            .lines()
                            .find_map(|l| {
                                l.strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap_or(0))
                            })
                            .unwrap_or(0usize);
                        break (i + 4, cl);
                    }
                };
                while buf.len() < head_end + content_length {
                    let n = match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    buf.extend_from_slice(&chunk[..n]);
                }
                counter.fetch_add(1, Ordering::SeqCst);
                let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                let mut first = head.lines().next().unwrap_or("").split(' ');
                let method = first.next().unwrap_or("").to_string();
                let path = first.next().unwrap_or("").to_string();
                let body = buf[head_end..].to_vec();
                let (status, headers, body) = route(&method, &path, &body, &head.to_lowercase());
                let mut resp = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                    body.len()
                );
                for (k, v) in headers {
                    resp.push_str(&format!("{k}: {v}\r\n"));
                }
                resp.push_str("\r\n");
                let _ = sock.write_all(resp.as_bytes()).await;
                let _ = sock.write_all(&body).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (format!("http://{addr}"), hits)
}

pub fn json(status: u16, body: &str) -> Answer {
    (
        status,
        vec![("content-type".into(), "application/json".into())],
        body.as_bytes().to_vec(),
    )
}

/// Copies test components (`trivial`, `hostile`) into a fresh folder.
pub fn guest_dir(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for n in names {
        copy_guest(n, dir.path(), n);
    }
    dir
}

pub fn copy_guest(name: &str, dir: &Path, as_name: &str) {
    let src = PathBuf::from(TEST_GUESTS_DIR);
    std::fs::copy(
        src.join(format!("{name}.wasm")),
        dir.join(format!("{as_name}.wasm")),
    )
    .unwrap();
    std::fs::copy(
        src.join(format!("{name}.toml")),
        dir.join(format!("{as_name}.toml")),
    )
    .unwrap();
}

/// A runtime over `dir` without the folder watcher.
pub async fn runtime(dir: Option<&Path>, policy: GuardPolicy, first_party: bool) -> PluginRuntime {
    PluginRuntime::new(RuntimeConfig {
        plugins_dir: dir.map(Path::to_path_buf),
        guard_policy: policy,
        load_first_party: first_party,
        watch_interval: None,
        // Artifacts are keyed by content and engine hash, so test runs can
        // share them and skip recompiling the first-party components.
        cache_dir: Some(std::env::temp_dir().join("outreach-plugin-runtime-test-cache")),
        ..RuntimeConfig::default()
    })
    .await
    .unwrap()
}

/// A bridge that answers every completion with the same canned result and
/// keeps the requests it saw.
pub struct FakeAi {
    answer: Result<CompletionResponse, PluginError>,
    seen: Mutex<Vec<CompletionRequest>>,
}

impl FakeAi {
    pub fn content(model: &str, content: &str) -> Arc<FakeAi> {
        Arc::new(FakeAi {
            answer: Ok(CompletionResponse {
                model: model.into(),
                content: content.into(),
                prompt_tokens: 120,
                completion_tokens: 12,
                finish_reason: "stop".into(),
            }),
            seen: Mutex::new(Vec::new()),
        })
    }

    pub fn failing(e: PluginError) -> Arc<FakeAi> {
        Arc::new(FakeAi {
            answer: Err(e),
            seen: Mutex::new(Vec::new()),
        })
    }

    pub fn requests(&self) -> Vec<CompletionRequest> {
        self.seen.lock().unwrap().clone()
    }
}

impl AiBridge for FakeAi {
    fn complete(&self, request: CompletionRequest) -> AiFuture<'_> {
        self.seen.lock().unwrap().push(request);
        let answer = self.answer.clone();
        Box::pin(async move { answer })
    }
}

/// `ai` as the bridge argument of a classify call.
pub fn bridge(ai: &Arc<FakeAi>) -> Option<Arc<dyn AiBridge>> {
    Some(ai.clone() as Arc<dyn AiBridge>)
}
