//! The delivery journal's start-up: two servers starting at once on one
//! data directory each keep their journal (one server's replay must never
//! take the other's journal, made a moment ago, for a dead server's).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::WriteGate;
use super::journal::{Journal, replay};
use outreach_core::testing::TestApp;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_starting_at_once_keep_their_journals() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let data_dir = app.state.config.data_dir.clone();
    let stop = Arc::new(AtomicBool::new(false));
    // The other server replays without pause the whole time, as every
    // starting server does once, so it meets each journal being made.
    let replayer = {
        let (db, dir, stop) = (app.state.db.clone(), data_dir.clone(), stop.clone());
        tokio::spawn(async move {
            let gate = WriteGate::default();
            let mut rounds = 0u64;
            while !stop.load(Ordering::Relaxed) {
                replay(&db, &gate, &dir, "sender-other").await;
                rounds += 1;
                tokio::task::yield_now().await;
            }
            rounds
        })
    };
    let mut journals = Vec::new();
    for i in 0..400 {
        let owner = format!("sender-{i}");
        let dir = data_dir.clone();
        let journal = tokio::task::spawn_blocking(move || Journal::open(&dir, &owner))
            .await
            .unwrap()
            .unwrap();
        let folder = data_dir.join(format!("sender-journal/sender-{i}"));
        assert!(
            folder.join("lock").exists() && folder.join("00000000.log").exists(),
            "journal {i} was removed under its owner"
        );
        journals.push(journal);
    }
    stop.store(true, Ordering::Relaxed);
    assert!(replayer.await.unwrap() > 0);
    for i in 0..400 {
        assert!(data_dir.join(format!("sender-journal/sender-{i}")).exists());
    }
    // Once their owners stop, the journals are a dead server's: replayed
    // (nothing in them) and removed; no staging folder is left behind.
    drop(journals);
    replay(
        &app.state.db,
        &WriteGate::default(),
        &data_dir,
        "sender-other",
    )
    .await;
    // The test app's own sender holds one journal; it stays.
    let own = app.state.ext::<super::Sender>().owner.clone();
    let left: Vec<_> = std::fs::read_dir(data_dir.join("sender-journal"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| *name != *own)
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
