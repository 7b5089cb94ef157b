//! The classification worker: labels new replies (and those reclassify
//! cleared) through the reply-classifier plugins, then stores the verdicts
//! of a pass and applies each reply's effects once (`effects.rs`), events
//! included, in one transaction per pass: a crash before its commit leaves
//! every reply of the pass unclassified, to be claimed again when its lease
//! runs out.
//!
//! Which classifier: bounces, complaints and auto-replies always go to the
//! rules classifier (their structure decides, and an LLM would only cost
//! money); human replies go to the operator's `inbox_reply_classifier`
//! when set, else to the LLM classifier when the account has an AI key,
//! else to the rules classifier. A failing plugin falls back to the rules
//! classifier, and a missing rules plugin to the same rules compiled in, so
//! a reply is never left unlabelled by a plugin problem.
//!
//! The rules classifier gets each account's replies of a pass in one
//! instance: a fresh instance compiles its phrase patterns again (17 ms),
//! which per reply held the worker near 60 replies a second.
//!
//! Replies suspected of spoofing are never claimed: their classification
//! is deferred, so they cannot move an enrollment.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use sqlx::{AnyConnection, Row};
use tracing::Instrument;

use super::effects::{self, Classified};
use outreach_core::state::AppState;
use outreach_core::store::{Backend, placeholder_list};
use outreach_mail_analysis::rules;
use outreach_plugin_runtime::{AiBridge, ReplyInput};
use outreach_vendors::vendor_keys::catalogue::Family;
use outreach_vendors::{AccountAi, VendorsExt};

/// The first-party classifiers' plugin ids.
pub const RULES_CLASSIFIER: &str = "reply-classifier-rules";
pub const LLM_CLASSIFIER: &str = "reply-classifier-llm";

/// Action type of the LLM classifier's completions in the vendor ledger.
pub const ACTION_TYPE: &str = "reply_classifier";

/// Replies claimed per pass. The rules classifier gets each account's
/// replies of a pass in one instance, whose start (compiling and warming
/// its phrase patterns) costs about 140 ms in a release build; 200 a pass
/// classified 2.3 times as many replies a second as 50 did.
const BATCH: i64 = 200;

/// How long a claimed reply stays with its worker: a batch of human replies
/// classified by an LLM at about 2 s each takes under 7 minutes; a dead
/// worker's replies are claimable again after it.
const LEASE_MS: i64 = 20 * 60_000;

/// How long an idle worker waits before it looks again; well inside the
/// reclassify answer's promise (`CLASSIFY_INTERVAL_SECS`).
const IDLE_WAIT: Duration = Duration::from_secs(5);

/// The loop `outreach serve` runs.
pub async fn run(state: AppState) {
    let owner = format!("classifier-{}", uuid::Uuid::new_v4().simple());
    loop {
        let span = tracing::info_span!("job", name = "inbox.classify");
        match classify_due(&state, &owner).instrument(span).await {
            Ok(n) if n as i64 >= BATCH => continue,
            Ok(_) => {}
            Err(e) => tracing::error!(error = %e, "classifying replies failed"),
        }
        tokio::time::sleep(IDLE_WAIT).await;
    }
}

/// A claimed reply.
struct Pending {
    id: i64,
    account_id: i64,
    thread_row_id: i64,
    kind: String,
    headers: Vec<(String, String)>,
    subject: String,
    body_text: String,
    override_label: Option<String>,
    effects_applied: bool,
    effects: Classified,
}

/// One pass: claims up to a batch of unclassified replies and classifies
/// them. Returns how many it classified.
pub async fn classify_due(state: &AppState, owner: &str) -> sqlx::Result<usize> {
    let now = state.clock.now_ms();
    let pending = claim(state, owner, now).await?;
    if pending.is_empty() {
        return Ok(0);
    }
    let messages: Vec<i64> = pending
        .iter()
        .filter_map(|p| p.effects.sequence_message_id)
        .collect();
    let subjects = original_subjects(state, &messages).await?;
    let inputs: Vec<ReplyInput> = pending
        .iter()
        .map(|p| ReplyInput {
            headers: p.headers.clone(),
            subject: p.subject.clone(),
            text: p.body_text.clone(),
            original_subject: p
                .effects
                .sequence_message_id
                .and_then(|m| subjects.get(&m).cloned().flatten()),
        })
        .collect();
    let verdicts = classify_all(state, &pending, &inputs).await;
    save_all(state, owner, &pending, &verdicts).await?;
    Ok(pending.len())
}

async fn claim(state: &AppState, owner: &str, now: i64) -> sqlx::Result<Vec<Pending>> {
    let lock = match state.db.backend {
        Backend::Postgres => "FOR UPDATE SKIP LOCKED",
        Backend::Sqlite => "",
    };
    let sql = format!(
        "UPDATE inbox_replies SET classify_lease_owner = $1, classify_lease_until = $2
         WHERE id IN (
             SELECT id FROM inbox_replies
             WHERE classified_at IS NULL AND spoofing_suspected = 0
               AND (classify_lease_until IS NULL OR classify_lease_until < $3)
             ORDER BY id LIMIT $4 {lock})
         RETURNING id, account_id, thread_row_id, kind, headers, subject, body_text,
             manually_overridden_to, effects_applied_at, send_account_id, bounce_type,
             bounce_reason, failed_recipient, return_at, sequence_message_id"
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(owner)
        .bind(now + LEASE_MS)
        .bind(now)
        .bind(BATCH)
        .fetch_all(&state.db.pool)
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let headers: String = r.try_get(4)?;
        let kind: String = r.try_get(3)?;
        let applied: Option<i64> = r.try_get(8)?;
        let id: i64 = r.try_get(0)?;
        let account_id: i64 = r.try_get(1)?;
        out.push(Pending {
            id,
            account_id,
            thread_row_id: r.try_get(2)?,
            headers: serde_json::from_str(&headers).unwrap_or_default(),
            subject: r.try_get(5)?,
            body_text: r.try_get(6)?,
            override_label: r.try_get(7)?,
            effects_applied: applied.is_some(),
            effects: Classified {
                reply_id: id,
                account_id,
                send_account_id: r.try_get(9)?,
                kind: kind.clone(),
                bounce_type: r.try_get(10)?,
                bounce_reason: r.try_get(11)?,
                failed_recipient: r.try_get(12)?,
                return_at: r.try_get(13)?,
                sequence_message_id: r.try_get(14)?,
                label: String::new(),
            },
            kind,
        });
    }
    out.sort_by_key(|p| p.id);
    Ok(out)
}

/// The subjects of the sequence messages `ids`, by id.
async fn original_subjects(
    state: &AppState,
    ids: &[i64],
) -> sqlx::Result<HashMap<i64, Option<String>>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let backend = state.db.backend;
    let sql = format!(
        "SELECT id, subject FROM sequence_messages WHERE id IN ({})",
        placeholder_list(backend, 1, ids.len())
    );
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
    for id in ids {
        q = q.bind(*id);
    }
    q.fetch_all(&state.db.pool)
        .await?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
        .collect()
}

/// A label with where it came from.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub label: String,
    pub confidence: f64,
    pub model: String,
    pub provider: String,
}

/// The verdicts of a pass, in the order of `pending`.
///
/// Human replies with another classifier chosen (the operator's, or the LLM
/// one) go to it one by one. Everything else, and whatever that classifier
/// failed on, goes to the rules classifier one account at a time, each
/// account's replies in one instance, kept warm for the account's next pass
/// (see `classify_account_replies`).
async fn classify_all(
    state: &AppState,
    pending: &[Pending],
    inputs: &[ReplyInput],
) -> Vec<Verdict> {
    let mut verdicts: Vec<Option<Verdict>> = vec![None; pending.len()];
    let mut ai_keys: HashMap<i64, bool> = HashMap::new();
    for (index, p) in pending.iter().enumerate() {
        if p.kind != "reply" {
            continue;
        }
        let chosen = &state.config.inbox_reply_classifier;
        let plugin = if !chosen.is_empty() {
            Some(chosen.as_str())
        } else {
            let has_key = match ai_keys.get(&p.account_id) {
                Some(known) => *known,
                None => {
                    let known = has_ai_key(state, p.account_id).await;
                    ai_keys.insert(p.account_id, known);
                    known
                }
            };
            has_key.then_some(LLM_CLASSIFIER)
        };
        if let Some(plugin) = plugin.filter(|id| *id != RULES_CLASSIFIER) {
            verdicts[index] = classify_with(state, p, plugin, &inputs[index]).await;
        }
    }

    let mut by_account: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (index, p) in pending.iter().enumerate() {
        if verdicts[index].is_none() {
            by_account.entry(p.account_id).or_default().push(index);
        }
    }
    for (account_id, indexes) in &by_account {
        let batch = indexes.iter().map(|i| inputs[*i].clone()).collect();
        let answers: Vec<Option<_>> = match state
            .plugins
            .classify_account_replies(RULES_CLASSIFIER, *account_id, batch)
            .await
        {
            Ok(answers) => answers.into_iter().map(Some).collect(),
            Err(e) => {
                tracing::warn!(error = %e, replies = indexes.len(),
                    "rules classifier batch failed; classifying its replies one by one");
                indexes.iter().map(|_| None).collect()
            }
        };
        for (index, answer) in indexes.iter().zip(answers) {
            let answer = match answer {
                Some(answer) => answer,
                None => {
                    state
                        .plugins
                        .classify_reply(RULES_CLASSIFIER, inputs[*index].clone(), None)
                        .await
                }
            };
            verdicts[*index] = Some(match answer {
                Ok(v) => Verdict {
                    label: v.label,
                    confidence: v.confidence,
                    model: v.model,
                    provider: RULES_CLASSIFIER.to_owned(),
                },
                Err(e) => {
                    tracing::warn!(reply = pending[*index].id, error = %e,
                        "rules classifier plugin unavailable");
                    compiled_rules(&inputs[*index])
                }
            });
        }
    }
    verdicts
        .into_iter()
        .zip(inputs)
        .map(|(verdict, input)| verdict.unwrap_or_else(|| compiled_rules(input)))
        .collect()
}

/// A human reply classified by `plugin` with the account's AI keys; `None`
/// when it failed, for the rules classifier to label.
async fn classify_with(
    state: &AppState,
    p: &Pending,
    plugin: &str,
    input: &ReplyInput,
) -> Option<Verdict> {
    let bridge = Arc::new(AccountAi::new(
        state,
        p.account_id,
        "inbox-classifier",
        ACTION_TYPE,
    ));
    let ai: Arc<dyn AiBridge> = bridge.clone();
    match state
        .plugins
        .classify_reply(plugin, input.clone(), Some(ai))
        .await
    {
        Ok(v) => {
            let provider = bridge.provider().unwrap_or_else(|| plugin.to_owned());
            Some(Verdict {
                label: v.label,
                confidence: v.confidence,
                model: v.model,
                provider,
            })
        }
        Err(e) => {
            tracing::warn!(reply = p.id, plugin, error = %e,
                "reply classifier failed; the rules classifier labels the reply");
            None
        }
    }
}

/// The rules classifier compiled into the server: the plugin's own code.
fn compiled_rules(input: &ReplyInput) -> Verdict {
    let v = rules::classify(&rules::Input {
        headers: &input.headers,
        subject: &input.subject,
        text: &input.text,
        original_subject: input.original_subject.as_deref(),
    });
    Verdict {
        label: v.label.to_owned(),
        confidence: v.confidence,
        model: rules::MODEL.to_owned(),
        provider: "outreach".to_owned(),
    }
}

async fn has_ai_key(state: &AppState, account_id: i64) -> bool {
    // The chain answers 400 ("No BYOK provider connected") when empty.
    state.vendors().chain(account_id, Family::Ai).await.is_ok()
}

/// Stores the verdicts of a pass in one transaction: each reply's label
/// and, the first time, its effects; then each thread touched shows its
/// latest classified reply's label.
async fn save_all(
    state: &AppState,
    owner: &str,
    pending: &[Pending],
    verdicts: &[Verdict],
) -> sqlx::Result<()> {
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    let mut threads = BTreeSet::new();
    for (p, v) in pending.iter().zip(verdicts) {
        if save(&mut tx, owner, p, v, now).await? {
            threads.insert(p.thread_row_id);
        }
    }
    for thread_row_id in threads {
        refresh_thread(&mut tx, thread_row_id, now).await?;
    }
    tx.commit().await
}

/// Stores one verdict and, the first time, applies the reply's effects;
/// false when the reply's lease ran out and another worker took it.
async fn save(
    conn: &mut AnyConnection,
    owner: &str,
    p: &Pending,
    v: &Verdict,
    now: i64,
) -> sqlx::Result<bool> {
    let saved = sqlx::query(
        "UPDATE inbox_replies SET classification_label = $1, classification_confidence = $2,
             classification_model = $3, classification_provider = $4, classified_at = $5,
             effects_applied_at = COALESCE(effects_applied_at, $5),
             classify_lease_owner = NULL, classify_lease_until = NULL
         WHERE id = $6 AND classify_lease_owner = $7 AND classified_at IS NULL",
    )
    .bind(&v.label)
    .bind(v.confidence.clamp(0.0, 1.0))
    .bind(&v.model)
    .bind(&v.provider)
    .bind(now)
    .bind(p.id)
    .bind(owner)
    .execute(&mut *conn)
    .await?;
    if saved.rows_affected() == 0 {
        return Ok(false);
    }
    if !p.effects_applied {
        let mut reply = p.effects.clone();
        reply.label = p.override_label.clone().unwrap_or_else(|| v.label.clone());
        effects::apply(conn, &reply, now).await?;
    }
    Ok(true)
}

/// The thread's `last_classification`: its latest classified reply's label
/// in force (a manual override, confidence 1.0, else the classifier's).
pub async fn refresh_thread(
    conn: &mut AnyConnection,
    thread_row_id: i64,
    now: i64,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE inbox_threads SET
             last_classification = (SELECT COALESCE(manually_overridden_to, classification_label)
                 FROM inbox_replies WHERE thread_row_id = $1
                   AND (classified_at IS NOT NULL OR manually_overridden_to IS NOT NULL)
                 ORDER BY received_at DESC, id DESC LIMIT 1),
             last_classification_confidence = (SELECT CASE WHEN manually_overridden_to IS NOT NULL
                     THEN 1.0 ELSE classification_confidence END
                 FROM inbox_replies WHERE thread_row_id = $1
                   AND (classified_at IS NOT NULL OR manually_overridden_to IS NOT NULL)
                 ORDER BY received_at DESC, id DESC LIMIT 1),
             updated_at = $2
         WHERE id = $1",
    )
    .bind(thread_row_id)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}
