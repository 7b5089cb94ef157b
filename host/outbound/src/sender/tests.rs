//! The sender against the capturing SMTP server, on both backends, with
//! the manual clock.

use serde_json::{Value, json};

use super::worker::run_once;
use crate::testkit::{exec, insert_smtp_account, scalar, sequence, step, text};
use outreach_core::accounts::Plan;
use outreach_core::smtp_capture::CaptureServer;
use outreach_core::testing::TestApp;

const DAY: std::time::Duration = std::time::Duration::from_secs(86_400);

struct World {
    app: TestApp,
    key: String,
    account_id: i64,
    smtp: CaptureServer,
    mailbox: i64,
}

async fn world() -> World {
    let app = TestApp::with_areas(&[crate::AREA], |c| {
        c.public_base_url = "https://track.example.net".into();
    })
    .await;
    let a = app.account(Plan::Pro).await;
    let smtp = CaptureServer::start("mail-pass").await;
    let mailbox = insert_smtp_account(
        &app,
        a.account_id,
        "sam@seller.test",
        smtp.port,
        "mail-pass",
    )
    .await;
    World {
        key: a.api_key.clone(),
        account_id: a.account_id,
        app,
        smtp,
        mailbox,
    }
}

impl World {
    async fn sequence(&self, extra: Value) -> i64 {
        let mut body = json!({"name": "Outreach", "from_email": "sam@seller.test",
            "from_name": "Sam from Seller"});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        sequence(&self.app, &self.key, body).await
    }

    async fn activate(&self, id: i64) {
        let r = self
            .app
            .post(
                &format!("/v1/sequences/{id}/activate"),
                &self.key,
                json!({}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }

    async fn enroll(&self, id: i64, contacts: Value) -> Value {
        let r = self
            .app
            .post(
                &format!("/v1/sequences/{id}/enroll"),
                &self.key,
                json!({"contacts": contacts}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        r.body
    }

    /// An active sequence of one "Hi" step with ann@acme.test enrolled.
    async fn one_contact_sequence(&self) -> i64 {
        let seq = self.sequence(json!({})).await;
        step(
            &self.app,
            &self.key,
            seq,
            json!({"subject": "Hi", "body_html": "<p>Hi</p>"}),
        )
        .await;
        self.activate(seq).await;
        self.enroll(
            seq,
            json!([{"domain": "acme.test", "contact_email": "ann@acme.test"}]),
        )
        .await;
        seq
    }

    async fn pass(&self) -> usize {
        run_once(&self.app.state).await.unwrap()
    }

    async fn enrollment(&self, email: &str) -> Value {
        let r = self
            .app
            .get("/v1/sequences/suppression?limit=1", &self.key)
            .await;
        assert_eq!(r.status, 200);
        let id = scalar(
            &self.app,
            &format!("SELECT id FROM enrollments WHERE contact_email = '{email}'"),
            &[],
        )
        .await;
        let seq = scalar(
            &self.app,
            "SELECT sequence_id FROM enrollments WHERE id = $1",
            &[id],
        )
        .await;
        let r = self
            .app
            .get(
                &format!("/v1/sequences/{seq}/enrollments?limit=500"),
                &self.key,
            )
            .await;
        r.body["enrollments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["id"] == id)
            .cloned()
            .unwrap()
    }
}

#[tokio::test]
async fn steps_are_sent_threaded_tracked_and_recorded() {
    let w = world().await;
    let seq = w.sequence(json!({})).await;
    step(&w.app, &w.key, seq, json!({"subject": "Hello {{first_name}}",
        "body_html": "<p>Hi {{first_name}}, see <a href=\"https://example.com/pricing\">pricing</a>.</p>"}))
    .await;
    step(
        &w.app,
        &w.key,
        seq,
        json!({"delay_days": 2, "body_html": "<p>Following up</p>"}),
    )
    .await;
    w.activate(seq).await;
    w.enroll(
        seq,
        json!([{"domain": "acme.test", "contact_email": "ann@acme.test",
        "metadata": {"first_name": "Ann"}},
        {"domain": "acme.test", "contact_email": "bounce@acme.test"}]),
    )
    .await;

    assert_eq!(w.pass().await, 2);
    let got = w.smtp.messages();
    assert_eq!(got.len(), 1, "the refused recipient is not delivered");
    let first = &got[0];
    assert_eq!(first.to, vec!["ann@acme.test"]);
    assert_eq!(first.header("Subject").as_deref(), Some("Hello Ann"));
    let from = first.header("From").unwrap();
    assert!(
        from.contains("Sam from Seller") && from.contains("<sam@seller.test>"),
        "{from}"
    );
    let message_id = first.header("Message-ID").unwrap();
    assert!(
        message_id.starts_with("<otr.") && message_id.ends_with("@seller.test>"),
        "{message_id}"
    );
    let unsubscribe = first.header("List-Unsubscribe").unwrap();
    assert!(
        unsubscribe.starts_with("<https://track.example.net/t/u/"),
        "{unsubscribe}"
    );
    assert_eq!(
        first.header("List-Unsubscribe-Post").as_deref(),
        Some("List-Unsubscribe=One-Click")
    );
    assert!(first.data.contains("multipart/alternative"));
    assert!(first.data.contains("text/plain") && first.data.contains("text/html"));
    assert!(
        first.data.contains("https://track.example.net/t/c/"),
        "links are tracked"
    );
    assert!(
        first.data.contains("https://track.example.net/t/o/"),
        "the pixel is there"
    );

    // Ann moved to step 2, due two days after the send; the bounce ended.
    let ann = w.enrollment("ann@acme.test").await;
    assert_eq!(ann["status"], "active");
    assert_eq!(ann["current_step"], 2);
    let bounced = w.enrollment("bounce@acme.test").await;
    assert_eq!(bounced["status"], "bounced");
    let reason = text(
        &w.app,
        "SELECT reason FROM suppression_entries WHERE email = 'bounce@acme.test'",
        &[],
    )
    .await;
    assert_eq!(reason.as_deref(), Some("bounce"));
    let events = |kind: &'static str| {
        let app = &w.app;
        async move {
            scalar(
                app,
                &format!("SELECT COUNT(*) FROM sequence_events WHERE event_type = '{kind}'"),
                &[],
            )
            .await
        }
    };
    assert_eq!(events("sent").await, 2);
    assert_eq!(events("delivered").await, 1);
    assert_eq!(events("bounced").await, 1);
    let outbox = outreach_core::events::for_account(&w.app.state.db, w.account_id, 50)
        .await
        .unwrap();
    let bounce = outbox
        .iter()
        .find(|e| e.event_type.as_str() == "sequence.bounced")
        .unwrap();
    assert_eq!(bounce.data["email"], "bounce@acme.test");
    assert_eq!(bounce.data["bounce_type"], "hard");

    // Nothing is due before two days have passed.
    assert_eq!(w.pass().await, 0);
    w.app.clock.advance(DAY);
    assert_eq!(w.pass().await, 0);
    w.app.clock.advance(DAY);
    assert_eq!(w.pass().await, 1);
    let got = w.smtp.messages();
    let second = &got[1];
    assert_eq!(second.header("Subject").as_deref(), Some("Re: Hello Ann"));
    assert_eq!(
        second.header("In-Reply-To").as_deref(),
        Some(message_id.as_str())
    );
    assert_eq!(
        second.header("References").as_deref(),
        Some(message_id.as_str())
    );

    // No step left: completed, with its outbox event.
    assert_eq!(w.pass().await, 0);
    assert_eq!(w.enrollment("ann@acme.test").await["status"], "completed");
    let outbox = outreach_core::events::for_account(&w.app.state.db, w.account_id, 50)
        .await
        .unwrap();
    assert!(outbox.iter().any(
        |e| e.event_type.as_str() == "sequence.completed" && e.data["email"] == "ann@acme.test"
    ));
}

#[tokio::test]
async fn daily_limits_and_the_warmup_ramp_wait_for_the_next_day() {
    let w = world().await;
    let seq = w
        .sequence(json!({"daily_send_limit": 10, "warmup_enabled": true,
            "warmup_start_volume": 2, "warmup_increment": 1}))
        .await;
    step(
        &w.app,
        &w.key,
        seq,
        json!({"subject": "Hi", "body_html": "<p>Hi</p>"}),
    )
    .await;
    w.activate(seq).await;
    let contacts: Vec<Value> = (0..6)
        .map(|i| json!({"domain": "acme.test", "contact_email": format!("c{i}@acme.test")}))
        .collect();
    w.enroll(seq, json!(contacts)).await;
    // Day 0 of the ramp: 2.
    assert_eq!(w.pass().await, 2);
    assert_eq!(w.pass().await, 0);
    // Those that waited are due at the next UTC midnight; day 1 allows 3.
    w.app.clock.advance(DAY);
    assert_eq!(w.pass().await, 3);
    assert_eq!(w.smtp.messages().len(), 5);
    // The mailbox's own daily limit holds too.
    exec(
        &w.app,
        "UPDATE send_accounts SET daily_send_limit = 0 WHERE id = $1",
        &[w.mailbox],
    )
    .await;
    w.app.clock.advance(DAY);
    assert_eq!(w.pass().await, 0);
    assert_eq!(
        w.smtp.messages().len(),
        5,
        "nothing is dropped, nothing sent"
    );
    exec(
        &w.app,
        "UPDATE send_accounts SET daily_send_limit = 5 WHERE id = $1",
        &[w.mailbox],
    )
    .await;
    w.app.clock.advance(DAY);
    assert_eq!(w.pass().await, 1);
}

#[tokio::test]
async fn a_pool_rotates_round_robin_and_skips_full_mailboxes() {
    let w = world().await;
    let second = insert_smtp_account(
        &w.app,
        w.account_id,
        "kim@seller.test",
        w.smtp.port,
        "mail-pass",
    )
    .await;
    exec(&w.app, "UPDATE send_accounts SET daily_send_limit = 2", &[]).await;
    let seq = w.sequence(json!({})).await;
    step(
        &w.app,
        &w.key,
        seq,
        json!({"subject": "Hi", "body_html": "<p>Hi</p>"}),
    )
    .await;
    let r = w
        .app
        .call(
            "PUT",
            &format!("/v1/sequences/{seq}/mailbox-pool"),
            Some(&w.key),
            Some(json!({"send_account_ids": [w.mailbox, second]})),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    w.activate(seq).await;
    let contacts: Vec<Value> = (0..5)
        .map(|i| json!({"domain": "acme.test", "contact_email": format!("c{i}@acme.test")}))
        .collect();
    w.enroll(seq, json!(contacts)).await;
    assert_eq!(w.pass().await, 4);
    let froms: Vec<String> = w.smtp.messages().iter().map(|m| m.from.clone()).collect();
    assert_eq!(froms.iter().filter(|f| f.starts_with("sam@")).count(), 2);
    assert_eq!(froms.iter().filter(|f| f.starts_with("kim@")).count(), 2);
    // The fifth waits for tomorrow.
    assert_eq!(w.pass().await, 0);
    w.app.clock.advance(DAY);
    assert_eq!(w.pass().await, 1);
}

#[tokio::test]
async fn the_send_window_moves_sends_in_the_sequences_zone() {
    let w = world().await;
    // The test clock starts on Saturday 2026-11-21 12:00 UTC.
    let seq = w
        .sequence(
            json!({"settings": {"send_window": {"start": "09:00", "end": "17:00",
            "timezone": "America/New_York"}}}),
        )
        .await;
    step(
        &w.app,
        &w.key,
        seq,
        json!({"subject": "Hi", "body_html": "<p>Hi</p>"}),
    )
    .await;
    w.activate(seq).await;
    w.enroll(
        seq,
        json!([{"domain": "acme.test", "contact_email": "ann@acme.test"}]),
    )
    .await;
    assert_eq!(w.pass().await, 0);
    let due = scalar(&w.app, "SELECT next_send_at FROM enrollments", &[]).await;
    // Monday 09:00 in New York (EST) is 14:00 UTC.
    let monday: chrono::DateTime<chrono::Utc> = "2026-11-23T14:00:00Z".parse().unwrap();
    assert_eq!(due, monday.timestamp_millis());
    w.app.clock.set(monday);
    assert_eq!(w.pass().await, 1);
}

#[tokio::test]
async fn a_changed_password_marks_the_mailbox_and_its_mail_waits() {
    let w = world().await;
    w.one_contact_sequence().await;
    w.smtp.set_password("changed");
    assert_eq!(w.pass().await, 1);
    assert!(w.smtp.messages().is_empty());
    let status = text(
        &w.app,
        "SELECT status FROM send_accounts WHERE id = $1",
        &[w.mailbox],
    )
    .await;
    assert_eq!(status.as_deref(), Some("error"));
    let error = text(
        &w.app,
        "SELECT last_error FROM send_accounts WHERE id = $1",
        &[w.mailbox],
    )
    .await
    .unwrap();
    assert!(error.contains("authentication failed"), "{error}");
    // No loop: nothing is tried again until the mailbox has rested.
    assert_eq!(w.pass().await, 0);
    assert_eq!(w.enrollment("ann@acme.test").await["status"], "active");
    w.smtp.set_password("mail-pass");
    w.app.clock.advance(std::time::Duration::from_secs(31 * 60));
    assert_eq!(w.pass().await, 1);
    assert_eq!(w.smtp.messages().len(), 1);
    let status = text(
        &w.app,
        "SELECT status FROM send_accounts WHERE id = $1",
        &[w.mailbox],
    )
    .await;
    assert_eq!(status.as_deref(), Some("active"));
    // The daily counters hold one send, not two.
    assert_eq!(
        scalar(
            &w.app,
            "SELECT emails_sent_today FROM send_accounts WHERE id = $1",
            &[w.mailbox]
        )
        .await,
        1
    );
}

#[tokio::test]
async fn tasks_and_conditions_do_not_block_the_sequence() {
    let w = world().await;
    let seq = w.sequence(json!({})).await;
    let first = step(
        &w.app,
        &w.key,
        seq,
        json!({"subject": "Hi", "body_html": "<p>Hi</p>"}),
    )
    .await;
    step(
        &w.app,
        &w.key,
        seq,
        json!({"step_type": "phone_call", "delay_days": 1}),
    )
    .await;
    step(
        &w.app,
        &w.key,
        seq,
        json!({"subject": "Only if opened", "body_html": "<p>x</p>",
        "condition_type": "opened", "condition_step_id": first}),
    )
    .await;
    step(
        &w.app,
        &w.key,
        seq,
        json!({"subject": "Not opened", "body_html": "<p>y</p>",
        "condition_type": "not_opened", "condition_step_id": first}),
    )
    .await;
    w.activate(seq).await;
    w.enroll(
        seq,
        json!([{"domain": "acme.test", "contact_email": "ann@acme.test"}]),
    )
    .await;
    assert_eq!(w.pass().await, 1);
    w.app.clock.advance(DAY);
    // The call becomes a task; step 3 is skipped (no open), step 4 is sent.
    assert_eq!(w.pass().await, 1);
    let subjects: Vec<String> = w
        .smtp
        .messages()
        .iter()
        .map(|m| m.header("Subject").unwrap())
        .collect();
    assert_eq!(subjects, vec!["Hi", "Not opened"]);
    let r = w
        .app
        .get(&format!("/v1/sequences/{seq}/tasks?status=open"), &w.key)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["total"], 1);
    let task = &r.body["tasks"][0];
    assert_eq!(task["step_type"], "phone_call");
    assert_eq!(task["contact_email"], "ann@acme.test");
    let r = w
        .app
        .post(
            &format!("/v1/sequences/{seq}/tasks/{}/complete", task["id"]),
            &w.key,
            json!({"notes": "Left a voicemail"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["status"], "completed");
    let eid = w.enrollment("ann@acme.test").await["id"].as_i64().unwrap();
    let r = w
        .app
        .get(
            &format!("/v1/sequences/{seq}/enrollments/{eid}/tasks?status=open"),
            &w.key,
        )
        .await;
    assert_eq!(r.body["total"], 0);
}

#[tokio::test]
async fn a_crash_between_plan_and_record_resends_with_the_same_message_id() {
    let w = world().await;
    let seq = w.one_contact_sequence().await;
    // A plan whose server dies before sending: the message row exists.
    let plan = super::plan::claim_and_plan(&w.app.state, 10).await.unwrap();
    assert_eq!(plan.jobs.len(), 1);
    let planned = plan.jobs[0].message_id.clone();
    // The plan was another server's (a server never takes over its own
    // leases).
    exec(
        &w.app,
        "UPDATE enrollments SET lease_owner = 'sender-dead'",
        &[],
    )
    .await;
    // This server sees nothing due while the lease holds.
    assert_eq!(w.pass().await, 0);
    w.app.clock.advance(std::time::Duration::from_secs(
        w.app.state.config.sender_lease_secs + 1,
    ));
    assert_eq!(w.pass().await, 1);
    let got = w.smtp.messages();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].header("Message-ID"), Some(format!("<{planned}>")));
    assert_eq!(
        scalar(&w.app, "SELECT COUNT(*) FROM sequence_messages", &[]).await,
        1
    );
    // Reserved once, not twice.
    assert_eq!(
        scalar(
            &w.app,
            "SELECT sent FROM sequence_days WHERE sequence_id = $1",
            &[seq]
        )
        .await,
        1
    );
}

#[tokio::test]
async fn a_killed_servers_journaled_delivery_is_recorded_not_resent() {
    use super::journal::{Journal, replay};
    let w = world().await;
    w.one_contact_sequence().await;
    // A server claims the send, gets the 250, journals it and is killed
    // before the commit.
    let plan = super::plan::claim_and_plan(&w.app.state, 10).await.unwrap();
    let mut answer = super::worker::outcome_of(&plan.jobs[0]);
    answer.subject = "Hi".into();
    answer.at = w.app.state.clock.now_ms();
    let data_dir = w.app.state.config.data_dir.clone();
    let dead = Journal::open(&data_dir, "sender-dead").unwrap();
    dead.append(&answer).unwrap();
    // A live server's journal is not touched.
    let live = Journal::open(&data_dir, "sender-live").unwrap();
    live.append(&answer).unwrap();
    let sender = w.app.state.ext::<super::Sender>();
    drop(dead);
    assert_eq!(
        replay(
            &w.app.state.db,
            &sender.write_gate,
            &data_dir,
            &sender.owner
        )
        .await,
        1
    );
    assert!(!data_dir.join("sender-journal/sender-dead").exists());
    assert!(data_dir.join("sender-journal/sender-live").exists());
    assert_eq!(
        text(
            &w.app,
            "SELECT status FROM sequence_messages WHERE id = $1",
            &[answer.message_row_id]
        )
        .await
        .as_deref(),
        Some("sent")
    );
    assert_eq!(w.enrollment("ann@acme.test").await["status"], "completed");
    // Once the dead server's lease has run out nothing is sent again, and
    // replaying twice records nothing twice.
    w.app.clock.advance(std::time::Duration::from_secs(
        w.app.state.config.sender_lease_secs + 1,
    ));
    assert_eq!(w.pass().await, 0);
    assert!(w.smtp.messages().is_empty());
    drop(live);
    replay(
        &w.app.state.db,
        &sender.write_gate,
        &data_dir,
        &sender.owner,
    )
    .await;
    assert_eq!(
        scalar(
            &w.app,
            "SELECT COUNT(*) FROM sequence_events WHERE event_type = 'sent'",
            &[]
        )
        .await,
        1
    );
}

#[tokio::test]
async fn a_high_bounce_rate_pauses_the_sequence_with_its_reason() {
    let w = world().await;
    let seq = w.sequence(json!({"auto_pause_bounce_rate": 10.0})).await;
    step(
        &w.app,
        &w.key,
        seq,
        json!({"subject": "Hi", "body_html": "<p>Hi</p>"}),
    )
    .await;
    w.activate(seq).await;
    let mut contacts: Vec<Value> = (0..18)
        .map(|i| json!({"domain": "acme.test", "contact_email": format!("c{i}@acme.test")}))
        .collect();
    for i in 0..4 {
        contacts
            .push(json!({"domain": "acme.test", "contact_email": format!("bounce{i}@acme.test")}));
    }
    w.enroll(seq, json!(contacts)).await;
    assert_eq!(w.pass().await, 22);
    let r = w.app.get(&format!("/v1/sequences/{seq}"), &w.key).await;
    assert_eq!(r.body["status"], "paused");
    let reason = r.body["paused_reason"].as_str().unwrap();
    // Paused at the bounce that took the rate past 10 % of the 22 sends.
    assert!(
        reason.contains("of 22 sent") && reason.contains("auto_pause_bounce_rate 10%"),
        "{reason}"
    );
}

#[test]
fn variants_are_deterministic_and_follow_weights() {
    use super::plan::{bucket, choose_variant};
    use crate::steps::model::Variant;
    use crate::steps::store::StepRow;
    let mut step = StepRow {
        id: 7,
        subject: Some("A".into()),
        body_html: Some("a".into()),
        variant_b_subject: Some("B".into()),
        ab_test_enabled: true,
        ..StepRow::default()
    };
    let arms: Vec<String> = (0..1000)
        .map(|e| choose_variant(&step, e).0.unwrap())
        .collect();
    let b = arms.iter().filter(|a| *a == "b").count();
    assert!((400..600).contains(&b), "{b} of 1000 got b");
    assert_eq!(choose_variant(&step, 3), choose_variant(&step, 3));
    // B keeps A's body where it has none.
    let any_b = (0..100).find(|e| bucket(*e, 7) >= 50).unwrap();
    assert_eq!(choose_variant(&step, any_b).2, "a");
    step.ab_winner = Some("a".into());
    assert!((0..100).all(|e| choose_variant(&step, e).0.as_deref() == Some("a")));
    step.variants = Some(vec![
        Variant {
            label: "x".into(),
            subject: "X".into(),
            body_html: "x".into(),
            weight: 80,
        },
        Variant {
            label: "y".into(),
            subject: "Y".into(),
            body_html: "y".into(),
            weight: 20,
        },
    ]);
    let y = (0..1000)
        .filter(|e| choose_variant(&step, *e).0.as_deref() == Some("y"))
        .count();
    assert!((120..280).contains(&y), "{y} of 1000 got y");
}
