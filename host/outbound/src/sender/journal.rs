//! The delivery journal: how a lane on SQLite goes on to its next message
//! without waiting for the database.
//!
//! Crash safety asks that a killed server resends nothing but the message
//! whose 250 arrived just before the kill. Waiting for each answer's commit
//! before the next message bounds the group commit to one answer per
//! connection, and on SQLite the commit's fixed cost then set the pace
//! (about 0.7 ms a commit for two or three answers). Instead, each 250 is
//! appended to this journal (one `write`, which a killed process cannot
//! undo: the kernel already holds it) before the lane sends again, and the
//! recorder commits answers in large batches behind it. A server that
//! starts, and every running server as often as it renews its leases,
//! replays the journals no live server holds, so answers that a killed
//! server had journaled but not committed are recorded before their leases
//! run out.
//!
//! The journal is as durable as SQLite under `synchronous=NORMAL`: it
//! survives a killed process, not a lost machine. It lives under the data
//! directory, which is where the SQLite database lives; PostgreSQL
//! deployments span machines, so there lanes wait for their commit instead.
//!
//! Layout: `<data_dir>/sender-journal/<owner>/` holds a `lock` file the
//! owner keeps locked while it runs and segments `NNNNNNNN.log` of JSON
//! lines, one [`Outcome`] each. A segment is deleted once every answer in it
//! is committed and a newer one is being written.
//!
//! A journal is made under a staging name (`.creating-<owner>`) that replay
//! never reads, and renamed to its owner's name only once its lock is held.
//! Made in place, a server starting at the same moment as another could
//! find the new folder before its lock was taken, take it for a dead
//! server's journal and delete it under its owner.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::record::{self, Outcome};
use super::{WriteGate, Writing};
use outreach_core::store::Db;

/// Answers per segment.
const SEGMENT_ENTRIES: u64 = 10_000;

/// Answers replayed per transaction.
const REPLAY_BATCH: usize = 256;

/// Prefix of a journal folder being made (see the module docs).
const STAGING: &str = ".creating-";

/// A staging folder this old was left by a server killed while making its
/// journal (it holds no answers) and is removed by replay.
const STALE_STAGING: std::time::Duration = std::time::Duration::from_secs(600);

pub struct Journal {
    dir: PathBuf,
    state: Mutex<State>,
    /// Held (locked) for the life of the journal.
    _lock: File,
}

struct State {
    file: File,
    segment: u64,
    written: u64,
    /// Answers per segment not yet committed.
    unrecorded: BTreeMap<u64, u64>,
}

fn root(data_dir: &Path) -> PathBuf {
    data_dir.join("sender-journal")
}

fn segment_path(dir: &Path, segment: u64) -> PathBuf {
    dir.join(format!("{segment:08}.log"))
}

impl Journal {
    /// Creates and locks `owner`'s journal under `data_dir`.
    pub fn open(data_dir: &Path, owner: &str) -> io::Result<Journal> {
        let root = root(data_dir);
        let staging = root.join(format!("{STAGING}{owner}"));
        fs::create_dir_all(&staging)?;
        let lock = File::create(staging.join("lock"))?;
        lock.try_lock().map_err(io::Error::other)?;
        // The folder appears under the owner's name already locked, so a
        // replay that sees it skips it. The lock stays with the open file.
        let dir = root.join(owner);
        fs::rename(&staging, &dir)?;
        let file = open_segment(&dir, 0)?;
        Ok(Journal {
            dir,
            state: Mutex::new(State {
                file,
                segment: 0,
                written: 0,
                unrecorded: BTreeMap::new(),
            }),
            _lock: lock,
        })
    }

    /// Appends `o` and returns its segment. Returns once the line is with
    /// the kernel.
    pub fn append(&self, o: &Outcome) -> io::Result<u64> {
        let mut line = serde_json::to_vec(o).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut s = self.state.lock().expect("journal lock");
        if s.written >= SEGMENT_ENTRIES {
            let next = s.segment + 1;
            s.file = open_segment(&self.dir, next)?;
            s.segment = next;
            s.written = 0;
            self.remove_recorded(&mut s);
        }
        // One write call per line: a killed process leaves whole lines.
        s.file.write_all(&line)?;
        s.written += 1;
        let segment = s.segment;
        *s.unrecorded.entry(segment).or_default() += 1;
        Ok(segment)
    }

    /// Notes that the answers journaled in `segments` (one entry each) are
    /// committed.
    pub fn recorded(&self, segments: impl IntoIterator<Item = u64>) {
        let mut s = self.state.lock().expect("journal lock");
        for segment in segments {
            if let Some(n) = s.unrecorded.get_mut(&segment) {
                *n = n.saturating_sub(1);
            }
        }
        self.remove_recorded(&mut s);
    }

    fn remove_recorded(&self, s: &mut State) {
        let current = s.segment;
        let done: Vec<u64> = s
            .unrecorded
            .iter()
            .filter(|(seg, n)| **seg < current && **n == 0)
            .map(|(seg, _)| *seg)
            .collect();
        for seg in done {
            s.unrecorded.remove(&seg);
            if let Err(e) = fs::remove_file(segment_path(&self.dir, seg)) {
                tracing::warn!(error = %e, "removing a recorded journal segment failed");
            }
        }
    }
}

fn open_segment(dir: &Path, segment: u64) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(segment_path(dir, segment))
}

/// Records what the journals of servers that are gone hold, then removes
/// them. Skips `own` and every journal whose owner still runs (its lock is
/// held). Answers already recorded are left as they are (recording moves
/// only messages still `sending`). Returns how many answers were replayed.
pub async fn replay(db: &Db, gate: &WriteGate, data_dir: &Path, own: &str) -> usize {
    let Ok(entries) = fs::read_dir(root(data_dir)) else {
        return 0;
    };
    let mut replayed = 0;
    for entry in entries.flatten() {
        let dir = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == own || !dir.is_dir() {
            continue;
        }
        if name.starts_with(STAGING) {
            remove_if_stale(&dir);
            continue;
        }
        let Ok(lock) = File::options().write(true).open(dir.join("lock")) else {
            // A journal being created right now has no lock file yet.
            continue;
        };
        if lock.try_lock().is_err() {
            continue;
        }
        match replay_dir(db, gate, &dir).await {
            Ok(n) => {
                replayed += n;
                if n > 0 {
                    tracing::info!(answers = n, journal = %dir.display(), "replayed a sender journal");
                }
                if let Err(e) = fs::remove_dir_all(&dir) {
                    tracing::warn!(error = %e, "removing a replayed journal failed");
                }
            }
            Err(e) => {
                tracing::error!(error = %e, journal = %dir.display(), "replaying a sender journal failed")
            }
        }
    }
    replayed
}

/// Removes a staging folder that nobody holds and that is older than
/// [`STALE_STAGING`]: its server died before the rename.
fn remove_if_stale(dir: &Path) {
    let old = fs::metadata(dir)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > STALE_STAGING);
    // Only an old folder's lock is tried: trying a new one's would take it
    // for a moment from the server making it. No lock file: its server died
    // before making one.
    if !old {
        return;
    }
    let unheld = File::options()
        .write(true)
        .open(dir.join("lock"))
        .map_or(true, |lock| lock.try_lock().is_ok());
    if unheld && let Err(e) = fs::remove_dir_all(dir) {
        tracing::warn!(error = %e, "removing a stale journal staging folder failed");
    }
}

async fn replay_dir(db: &Db, gate: &WriteGate, dir: &Path) -> anyhow::Result<usize> {
    let mut segments: Vec<PathBuf> = fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    segments.sort();
    let mut outcomes = Vec::new();
    for path in segments {
        for line in BufReader::new(File::open(&path)?).lines() {
            // A line cut short by a full disk is skipped, not fatal.
            if let Ok(o) = serde_json::from_str::<Outcome>(&line?) {
                outcomes.push(o);
            }
        }
    }
    for chunk in outcomes.chunks(REPLAY_BATCH) {
        let mut turn: Writing<'_> = gate.enter(db).await;
        record::write(&mut turn, db, chunk, &[]).await?;
    }
    Ok(outcomes.len())
}
