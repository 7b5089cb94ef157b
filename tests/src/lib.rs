//! Helpers for end-to-end tests: they run the real `outreach` binary as a
//! child process, the way an operator does, and talk to it over loopback HTTP.
//!
//! # Finding the binary
//!
//! `env!("CARGO_BIN_EXE_outreach")` only exists for tests of the package that
//! owns the binary, so this crate finds it another way. When `OUTREACH_BIN`
//! names a file, that file is used (for running the suite against a release
//! build or an installed binary). Otherwise the first test in each test
//! executable runs `cargo build -p outreach --bin outreach` with the target
//! directory and profile the test executable itself was built with, and uses
//! `<target>/<profile>/outreach`. Building every time, rather than taking
//! whatever file is there, means a stale binary is never tested; when the
//! binary is up to date the build is a no-op of well under a second.
//!
//! # Backends
//!
//! Every [`Deployment`] gets its own temporary data directory. With
//! `OUTREACH_TEST_BACKEND=postgres` it also gets a fresh PostgreSQL database
//! (created through `OUTREACH_TEST_POSTGRES_URL`, default
//! `postgres://postgres@127.0.0.1:5432/postgres`), which is dropped again when
//! the deployment is dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Deserialize;

/// How long a server may take from spawn to answering `/healthz`. Generous
/// because the machine is shared and a PostgreSQL start runs migrations.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The stdout line that carries the bootstrap admin key.
const ADMIN_KEY_MARKER: &str = "admin API key (shown once, store it now): ";

/// Path of the `outreach` binary under test (see the crate docs).
pub fn outreach_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("OUTREACH_BIN") {
        Some(path) => PathBuf::from(path),
        None => build_outreach().expect("building the outreach binary"),
    })
}

fn build_outreach() -> anyhow::Result<PathBuf> {
    // A test executable lives at <target>/<profile>/deps/<name>-<hash>.
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .context("test executable is not under <target>/<profile>/deps")?;
    let target_dir = profile_dir
        .parent()
        .context("test executable is not under a target directory")?;
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .context("profile directory name")?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    // Read at run time: a test binary built in another checkout (a worktree)
    // and reused by cargo must not point at that checkout.
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    cmd.current_dir(manifest_dir)
        .args(["build", "--quiet", "-p", "outreach", "--bin", "outreach"])
        .arg("--target-dir")
        .arg(target_dir);
    // The "debug" directory holds both the dev and the test profile; other
    // directories are named after their profile.
    if profile != "debug" {
        cmd.args(["--profile", profile]);
    }
    let status = cmd.status().context("running cargo build -p outreach")?;
    if !status.success() {
        bail!("cargo build -p outreach failed: {status}");
    }
    let bin = profile_dir.join("outreach");
    anyhow::ensure!(bin.is_file(), "{} was not built", bin.display());
    Ok(bin)
}

/// Which database the suite runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub fn backend() -> Backend {
    match std::env::var("OUTREACH_TEST_BACKEND").as_deref() {
        Ok("postgres") => Backend::Postgres,
        _ => Backend::Sqlite,
    }
}

fn postgres_admin_url() -> String {
    std::env::var("OUTREACH_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// Runs an async PostgreSQL admin statement on a thread of its own, so it
/// works both from plain code and from inside a test's tokio runtime (where
/// blocking on another runtime would panic), and from `Drop`.
fn postgres_admin(sql: String) -> anyhow::Result<()> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        rt.block_on(async move {
            use sqlx::Connection;
            let mut conn = sqlx::PgConnection::connect(&postgres_admin_url())
                .await
                .context("connecting to PostgreSQL (set OUTREACH_TEST_POSTGRES_URL)")?;
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .execute(&mut conn)
                .await?;
            conn.close().await?;
            anyhow::Ok(())
        })
    })
    .join()
    .map_err(|_| anyhow::anyhow!("PostgreSQL admin thread panicked"))?
}

/// A PostgreSQL database made for one deployment and dropped with it.
#[derive(Debug)]
struct PgDatabase {
    name: String,
    url: String,
}

impl PgDatabase {
    fn create() -> anyhow::Result<PgDatabase> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .subsec_nanos();
        // Unique across test executables (pid) and within one (sequence).
        let name = format!(
            "outreach_e2e_{}_{}_{nanos}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        postgres_admin(format!("CREATE DATABASE {name}"))?;
        let admin = postgres_admin_url();
        let base = admin
            .rsplit_once('/')
            .map_or(admin.as_str(), |(base, _)| base);
        Ok(PgDatabase {
            url: format!("{base}/{name}"),
            name,
        })
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        // FORCE ends sessions of a server that was killed but whose
        // connections the database has not noticed yet.
        if let Err(e) = postgres_admin(format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        )) {
            eprintln!("could not drop test database {}: {e:#}", self.name);
        }
    }
}

/// What `outreach accounts create --json` prints.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreatedAccount {
    pub account_id: i64,
    pub user_id: i64,
    pub api_key: String,
}

/// One installation: a data directory and a database, shared by every server
/// and CLI command started from it, so a restart sees the same state.
#[derive(Debug)]
pub struct Deployment {
    dir: tempfile::TempDir,
    pg: Option<PgDatabase>,
    env: Vec<(String, String)>,
    removed_env: Vec<String>,
    config_file: Option<PathBuf>,
}

impl Deployment {
    /// A fresh deployment on the backend chosen by `OUTREACH_TEST_BACKEND`.
    pub fn new() -> Deployment {
        let pg = match backend() {
            Backend::Postgres => {
                Some(PgDatabase::create().expect("creating a PostgreSQL test database"))
            }
            Backend::Sqlite => None,
        };
        Deployment {
            dir: tempfile::tempdir().expect("temporary data directory"),
            pg,
            env: Vec::new(),
            removed_env: Vec::new(),
            config_file: None,
        }
    }

    /// Sets an extra `OUTREACH_*` variable for every process of this deployment.
    pub fn with_env(mut self, name: &str, value: &str) -> Deployment {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Leaves a variable this harness normally sets out of the environment,
    /// so a config file's value for it can take effect.
    pub fn without_env(mut self, name: &str) -> Deployment {
        self.removed_env.push(name.into());
        self
    }

    /// Passes `--config FILE` to every process of this deployment.
    pub fn with_config_file(mut self, path: &Path) -> Deployment {
        self.config_file = Some(path.to_path_buf());
        self
    }

    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// A scratch folder that lives as long as the deployment, for config files.
    pub fn scratch(&self) -> PathBuf {
        let path = self.dir.path().join("scratch");
        std::fs::create_dir_all(&path).expect("scratch folder");
        path
    }

    /// A command for the binary with this deployment's environment: a clean
    /// set of `OUTREACH_*` variables (none inherited from the caller),
    /// loopback listeners on port 0, this data directory and database.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = Command::new(outreach_bin());
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("OUTREACH_") {
                cmd.env_remove(name);
            }
        }
        let data_dir = self.dir.path().join("data");
        let mut env: Vec<(String, String)> = vec![
            ("OUTREACH_LISTEN".into(), "127.0.0.1:0".into()),
            ("OUTREACH_METRICS_LISTEN".into(), "127.0.0.1:0".into()),
            ("OUTREACH_DATA_DIR".into(), data_dir.display().to_string()),
            ("OUTREACH_LOG".into(), "info".into()),
        ];
        if let Some(pg) = &self.pg {
            env.push(("OUTREACH_DATABASE_URL".into(), pg.url.clone()));
        }
        env.extend(self.env.iter().cloned());
        for (name, value) in env {
            if !self.removed_env.contains(&name) {
                cmd.env(name, value);
            }
        }
        if let Some(file) = &self.config_file {
            cmd.arg("--config").arg(file);
        }
        cmd.args(args);
        cmd
    }

    /// The database every process of this deployment uses, for tests that
    /// put rows in place the way another part of the product would.
    pub fn database_url(&self) -> String {
        match &self.pg {
            Some(pg) => pg.url.clone(),
            None => format!(
                "sqlite://{}",
                self.outreach_data_dir().join("outreach.db").display()
            ),
        }
    }

    /// A connection to [`Deployment::database_url`], as the servers use it.
    pub async fn db(&self) -> sqlx::AnyConnection {
        use sqlx::Connection;
        sqlx::any::install_default_drivers();
        sqlx::AnyConnection::connect(&self.database_url())
            .await
            .unwrap()
    }

    /// The folder the harness points `OUTREACH_DATA_DIR` at.
    pub fn outreach_data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs a CLI command to completion.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.command(args)
            .stdin(Stdio::null())
            .output()
            .expect("running outreach")
    }

    /// Runs a CLI command that must succeed and returns its stdout.
    pub fn cli_ok(&self, args: &[&str]) -> String {
        let out = self.cli(args);
        assert!(
            out.status.success(),
            "outreach {args:?} failed ({}):\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8 stdout")
    }

    /// `outreach accounts create --json` with a password, parsed.
    pub fn create_account(&self, email: &str, plan: &str) -> CreatedAccount {
        let out = self.cli_ok(&[
            "accounts",
            "create",
            "--email",
            email,
            "--plan",
            plan,
            "--password",
            "correct horse battery",
            "--json",
        ]);
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out:?}"))
    }

    /// The warnings and errors every server of this deployment logged so
    /// far, and the lines that contain `also`, each prefixed with its log's
    /// name, for a failing test's message (a killed server's log outlives
    /// it).
    pub fn warnings(&self, also: &str) -> String {
        let mut logs: Vec<PathBuf> = std::fs::read_dir(self.dir.path())
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        logs.retain(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("server-") && n.ends_with(".log"))
        });
        logs.sort();
        let mut out = String::new();
        for path in logs {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let wanted = |l: &&str| l.contains("WARN") || l.contains("ERROR") || l.contains(also);
            for line in text.lines().filter(wanted) {
                out.push_str(&format!("{name}: {line}\n"));
            }
        }
        out
    }

    /// Starts `outreach serve` and waits until `/healthz` answers 200.
    pub fn start(&self) -> Server {
        self.try_start().expect("starting outreach serve")
    }

    pub fn try_start(&self) -> anyhow::Result<Server> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let log_path = self.dir.path().join(format!(
            "server-{}.log",
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let log = std::fs::File::create(&log_path)?;
        let mut child = self
            .command(["serve"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .context("spawning outreach serve")?;
        let stdout = child.stdout.take().context("child stdout")?;
        let (tx, rx) = channel();
        // The reader keeps draining stdout for the server's whole life so the
        // child never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            lines: rx,
            stdout: Vec::new(),
            base_url: String::new(),
            metrics_url: String::new(),
            admin_key: None,
            log_path,
        };
        match server.wait_ready() {
            Ok(()) => Ok(server),
            Err(e) => {
                let log = server.log();
                Err(e.context(format!(
                    "stdout so far: {:?}\nserver log:\n{log}",
                    server.stdout
                )))
            }
        }
    }
}

impl Default for Deployment {
    fn default() -> Self {
        Deployment::new()
    }
}

/// A running `outreach serve`. It is killed when dropped.
#[derive(Debug)]
pub struct Server {
    child: Child,
    lines: Receiver<String>,
    /// Every stdout line read so far.
    pub stdout: Vec<String>,
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub base_url: String,
    /// `http://127.0.0.1:PORT/metrics`.
    pub metrics_url: String,
    /// The bootstrap admin key, when this start printed one.
    pub admin_key: Option<String>,
    log_path: PathBuf,
}

impl Server {
    fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + START_TIMEOUT;
        while self.base_url.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => bail!("no `listening on` line in time"),
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait()?;
                    bail!("outreach serve exited before listening: {status}");
                }
            };
            if let Some(url) = line.strip_prefix("listening on ") {
                self.base_url = url.trim_end_matches('/').to_string();
            } else if let Some(url) = line.strip_prefix("metrics on ") {
                self.metrics_url = url.to_string();
            } else if let Some((_, key)) = line.split_once(ADMIN_KEY_MARKER) {
                self.admin_key = Some(key.trim().to_string());
            }
            self.stdout.push(line);
        }
        let addr = self
            .base_url
            .strip_prefix("http://")
            .context("listening URL is not http://")?
            .to_string();
        while Instant::now() < deadline {
            if healthz_ok(&addr) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        bail!("/healthz did not answer 200 in time")
    }

    /// `base_url` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// Stdout lines printed since the last call (or since start-up).
    pub fn more_stdout(&mut self) -> Vec<String> {
        let fresh: Vec<String> = self.lines.try_iter().collect();
        self.stdout.extend(fresh.iter().cloned());
        fresh
    }

    /// The server's stderr (its log) so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// Asks the server to shut down gracefully (SIGTERM, which flushes the
    /// usage batch) and waits for it to exit.
    pub fn stop(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        // `kill` from procps rather than libc, because the workspace denies
        // unsafe code.
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                return self.child.wait().expect("waiting for outreach");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal blocking GET of /healthz, so start-up needs no async runtime.
fn healthz_ok(addr: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.starts_with("HTTP/1.1 200")
}

/// An HTTP client for the tests. The ring provider is installed because the
/// workspace builds reqwest with `rustls-no-provider`, and building a client
/// needs a provider even when only http:// URLs are used.
pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("HTTP client")
}

/// A response read whole: status, headers and the body parsed as JSON
/// (`Value::Null` when it is not JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
    pub json: serde_json::Value,
}

impl Reply {
    pub async fn read(response: reqwest::Response) -> Reply {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("response body");
        let json = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
        Reply {
            status,
            headers,
            text,
            json,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the spec's error shape: a JSON object whose only field is the
    /// string `detail`, and returns that string.
    pub fn detail(&self) -> &str {
        let obj = self
            .json
            .as_object()
            .unwrap_or_else(|| panic!("error body is not a JSON object: {:?}", self.text));
        assert_eq!(obj.len(), 1, "error body has extra fields: {}", self.text);
        assert!(
            self.header("content-type")
                .is_some_and(|c| c.starts_with("application/json")),
            "error content type: {:?}",
            self.header("content-type")
        );
        obj["detail"]
            .as_str()
            .unwrap_or_else(|| panic!("detail is not a string: {}", self.text))
    }
}

/// GET with an optional bearer token.
pub async fn get(client: &reqwest::Client, url: &str, bearer: Option<&str>) -> Reply {
    let mut req = client.get(url);
    if let Some(token) = bearer {
        req = req.bearer_auth(token);
    }
    Reply::read(req.send().await.expect("GET")).await
}

/// POST of a JSON value with an optional bearer token.
pub async fn post_json(
    client: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
    body: &serde_json::Value,
) -> Reply {
    let mut req = client.post(url).json(body);
    if let Some(token) = bearer {
        req = req.bearer_auth(token);
    }
    Reply::read(req.send().await.expect("POST")).await
}

/// How long a server may keep serving a key after another process (the CLI)
/// revoked it or changed its account: the server's key cache lifetime (30 s)
/// plus slack.
pub const CROSS_PROCESS_CACHE: Duration = Duration::from_secs(35);

/// Polls a GET until it answers `want` or `within` runs out; returns the last
/// reply.
pub async fn eventually_status(
    client: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
    want: u16,
    within: Duration,
) -> Reply {
    let deadline = Instant::now() + within;
    loop {
        let reply = get(client, url, bearer).await;
        if reply.status == want || Instant::now() > deadline {
            return reply;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
