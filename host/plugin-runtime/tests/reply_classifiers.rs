//! Reply classifiers: the embedded rules and AI components through the typed
//! API, the `ai` import answered by a per-call bridge, and the host's checks
//! on every verdict (with the `echo-classifier` fixture, which returns the
//! AI's answer unchecked).

mod common;

use common::*;
use outreach_plugin_runtime::{
    AiBridge, AiFuture, CallError, CompletionRequest, GuardPolicy, MAX_AI_CALLS_PER_CALL,
    NO_AI_PROVIDER, PluginError, PluginKind, PluginMetadata, PluginRuntime, REPLY_LABELS,
    ReplyInput, Role,
};
use std::sync::Arc;

fn reply(headers: &[(&str, &str)], subject: &str, text: &str) -> ReplyInput {
    ReplyInput {
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        subject: subject.into(),
        text: text.into(),
        original_subject: Some("Quick question about Acme".into()),
    }
}

async fn with_echo() -> (PluginRuntime, tempfile::TempDir) {
    let dir = guest_dir(&["echo-classifier"]);
    let rt = runtime(Some(dir.path()), GuardPolicy::strict(), true).await;
    (rt, dir)
}

#[tokio::test]
async fn classifiers_are_listed_with_their_metadata() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;
    let list = rt.reply_classifiers();
    let ids: Vec<&str> = list.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["reply-classifier-llm", "reply-classifier-rules"]);
    let rules = rt.reply_classifier("reply-classifier-rules").unwrap();
    assert_eq!((rules.model.as_str(), rules.uses_ai), ("rules-v1", false));
    let llm = rt.reply_classifier("reply-classifier-llm").unwrap();
    assert!(llm.uses_ai);
    assert!(rt.reply_classifier("llm-openai").is_none());
    assert_eq!(
        rt.plugins_of_kind(PluginKind::ReplyClassifier),
        ["reply-classifier-llm", "reply-classifier-rules"]
    );

    // `outreach plugins list` serialises these rows: the kind reads
    // `reply-classifier` and the metadata says whether AI is used.
    let info = rt.plugin("reply-classifier-rules").unwrap();
    assert!(matches!(
        &info.metadata,
        Some(PluginMetadata::ReplyClassifier(m)) if m.model == "rules-v1" && !m.uses_ai
    ));
    let row = serde_json::to_value(&info).unwrap();
    assert_eq!(row["kind"], "reply-classifier");
    assert_eq!(row["metadata"]["kind"], "reply-classifier");
    assert_eq!(row["metadata"]["uses_ai"], false);
    // Classifiers get no network, whatever their manifest says.
    assert!(info.allowed_hosts.is_empty());
}

#[tokio::test]
async fn rules_classifier_labels_replies() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;
    let id = "reply-classifier-rules";

    let v = rt
        .classify_reply(
            id,
            reply(
                &[("From", "Jane <jane@acme.example>")],
                "Re: Quick question about Acme",
                "Please remove me from your mailing list.",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        (v.label.as_str(), v.model.as_str()),
        ("unsubscribe", "rules-v1")
    );

    let v = rt
        .classify_reply(
            id,
            reply(
                &[
                    ("From", "Jane <jane@acme.example>"),
                    ("Auto-Submitted", "auto-replied"),
                ],
                "Automatic reply: Quick question about Acme",
                "Thank you for your email. I am out of the office until Monday 3 March \
                 with limited access to email.",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!((v.label.as_str(), v.model.as_str()), ("ooo", "rules-v1"));
    assert!(v.confidence >= 0.9, "{v:?}");

    let v = rt
        .classify_reply(
            id,
            reply(
                &[],
                "Re: Quick question about Acme",
                "Sounds great, can we set up a call on Tuesday?",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        (v.label.as_str(), v.model.as_str()),
        ("interested", "rules-v1")
    );
    assert!((0.0..=1.0).contains(&v.confidence));

    let v = rt
        .classify_reply(
            id,
            reply(
                &[("From", "Mail Delivery System <MAILER-DAEMON@mx.example>")],
                "Undelivered Mail Returned to Sender",
                "This is the mail system at host mx.example.\n\nI'm sorry to have to inform \
                 you that your message could not be delivered to one or more recipients.\n\n\
                 <jane@acme.example>: host mx.acme.example said: 550 5.1.1 User unknown",
            ),
            None,
        )
        .await
        .unwrap();
    assert_eq!(v.label, "bounce");

    // The largest text the poller hands over (1 MiB) fits the limits.
    let big = "We might look at this again next year, thanks. ".repeat(22_000);
    let v = rt
        .classify_reply(id, reply(&[], "Re: Quick question about Acme", &big), None)
        .await
        .unwrap();
    assert_eq!(v.label, "not_now");

    // Every call is a fresh instance, phrase patterns compiled again: keep
    // an eye on what that costs against the manifest's CPU budget.
    let stats = rt.plugin(id).unwrap().stats;
    assert_eq!((stats.calls, stats.ok), (5, 5), "{stats:?}");
    eprintln!(
        "rules classifier: p50 {} us, max {} us per call",
        stats.latency_p50_us, stats.latency_max_us
    );
}

#[tokio::test]
async fn llm_classifier_asks_the_bridge_and_reads_its_answer() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;
    let id = "reply-classifier-llm";
    let ai = FakeAi::content(
        "gpt-4o-mini-2024-07-18",
        "```json\n{\"label\": \"Not Now\", \"confidence\": 0.83}\n```",
    );
    let long = "Thanks for reaching out. We are mid-migration until autumn. ".repeat(200);
    let v = rt
        .classify_reply(
            id,
            reply(
                &[("Auto-Submitted", "no")],
                "Re: Quick question about Acme",
                &long,
            ),
            bridge(&ai),
        )
        .await
        .unwrap();
    assert_eq!(
        (v.label.as_str(), v.confidence, v.model.as_str()),
        ("not_now", 0.83, "gpt-4o-mini-2024-07-18")
    );

    let requests = ai.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert!(r.json_mode);
    assert_eq!((r.max_tokens, r.temperature), (Some(60), Some(0.0)));
    assert_eq!(r.model, "", "the key's default model");
    assert_eq!(r.messages[0].role, Role::System);
    for label in REPLY_LABELS {
        assert!(r.messages[0].content.contains(label), "{label}");
    }
    let user = &r.messages[1].content;
    assert!(user.contains("Quick question about Acme"), "{user}");
    assert!(
        user.len() < 4_600,
        "the reply is truncated: {} bytes",
        user.len()
    );
}

#[tokio::test]
async fn llm_classifier_failures() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;
    let id = "reply-classifier-llm";
    let input = || reply(&[], "Re: Quick question about Acme", "Tell me more.");

    // No AI provider connected: the import refuses, the plugin passes it on.
    let e = rt.classify_reply(id, input(), None).await.unwrap_err();
    assert!(
        matches!(&e, CallError::Permanent(m) if m.contains(NO_AI_PROVIDER)),
        "{e}"
    );

    // An answer that names no label.
    let junk = FakeAi::content("m", "I'd be happy to help! What would you like to know?");
    let e = rt
        .classify_reply(id, input(), bridge(&junk))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::Permanent(m) if m.contains("not a classification")),
        "{e}"
    );

    // A label the plugin does not know is not guessed.
    let odd = FakeAi::content("m", r#"{"label":"enthusiastic","confidence":0.9}"#);
    let e = rt
        .classify_reply(id, input(), bridge(&odd))
        .await
        .unwrap_err();
    assert!(matches!(&e, CallError::Permanent(_)), "{e}");

    // The bridge's own failure class reaches the caller: all providers
    // failing transiently is transient.
    let down = FakeAi::failing(PluginError::Transient("All vendors failed".into()));
    let e = rt
        .classify_reply(id, input(), bridge(&down))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::Transient(m) if m == "All vendors failed") && e.is_transient(),
        "{e}"
    );

    // Another kind, or no such plugin.
    let e = rt
        .classify_reply("llm-openai", input(), None)
        .await
        .unwrap_err();
    assert!(matches!(e, CallError::WrongKind { .. }), "{e}");
    let e = rt.classify_reply("nope", input(), None).await.unwrap_err();
    assert!(matches!(e, CallError::NotFound(_)), "{e}");
}

#[tokio::test]
async fn the_host_checks_every_verdict() {
    let (rt, _dir) = with_echo().await;
    let input = |subject: &str| reply(&[], subject, "hello");
    let echo = |answer: &str| FakeAi::content("m", answer);

    let v = rt
        .classify_reply(
            "echo-classifier",
            input("Re: x"),
            bridge(&echo("ooo|0.7|tiny-1")),
        )
        .await
        .unwrap();
    assert_eq!(
        (v.label.as_str(), v.confidence, v.model.as_str()),
        ("ooo", 0.7, "tiny-1")
    );

    // A label outside the seven is refused, even in another case.
    for label in ["maybe", "Interested", ""] {
        let e = rt
            .classify_reply(
                "echo-classifier",
                input("Re: x"),
                bridge(&echo(&format!("{label}|0.5|m"))),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&e, CallError::InvalidOutput(m) if m.contains("is not one of interested, not_now, objection, ooo, unsubscribe, bounce, other")),
            "{label}: {e}"
        );
    }

    // Confidence is clamped; NaN is refused; an empty model is the metadata's.
    let v = rt
        .classify_reply(
            "echo-classifier",
            input("Re: x"),
            bridge(&echo("interested|3.5|")),
        )
        .await
        .unwrap();
    assert_eq!((v.confidence, v.model.as_str()), (1.0, "echo-v0"));
    let v = rt
        .classify_reply(
            "echo-classifier",
            input("Re: x"),
            bridge(&echo("other|-1|m")),
        )
        .await
        .unwrap();
    assert_eq!(v.confidence, 0.0);
    let e = rt
        .classify_reply(
            "echo-classifier",
            input("Re: x"),
            bridge(&echo("other|NaN|m")),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::InvalidOutput(m) if m.contains("confidence")),
        "{e}"
    );

    // A plugin cannot spend an account's credits in a loop.
    let ai = echo("other|0.5|m");
    let v = rt
        .classify_reply(
            "echo-classifier",
            input(&format!("calls:{MAX_AI_CALLS_PER_CALL}")),
            bridge(&ai),
        )
        .await
        .unwrap();
    assert_eq!(v.label, "other");
    let ai = echo("other|0.5|m");
    let e = rt
        .classify_reply(
            "echo-classifier",
            input(&format!("calls:{}", MAX_AI_CALLS_PER_CALL + 1)),
            bridge(&ai),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, CallError::Permanent(m) if m.contains("AI completions per plugin call")),
        "{e}"
    );
    assert_eq!(ai.requests().len(), MAX_AI_CALLS_PER_CALL as usize);
}

/// An AI that takes longer than any plugin call may.
struct Slow;

impl AiBridge for Slow {
    fn complete(&self, _request: CompletionRequest) -> AiFuture<'_> {
        Box::pin(async {
            tokio::time::sleep(std::time::Duration::from_secs(30)).await;
            Err(PluginError::Transient("unreachable".into()))
        })
    }
}

#[tokio::test]
async fn a_slow_bridge_hits_the_wall_clock_timeout() {
    let (rt, _dir) = with_echo().await;
    let started = std::time::Instant::now();
    let single = rt
        .classify_reply(
            "echo-classifier",
            reply(&[], "Re: x", "hello"),
            Some(Arc::new(Slow)),
        )
        .await
        .map(|_| ());
    // A batch that runs out of time fails as a whole, for the caller to
    // classify its replies one by one.
    let batch = rt
        .classify_replies(
            "echo-classifier",
            vec![reply(&[], "Re: x", "a"), reply(&[], "Re: x", "b")],
            Some(Arc::new(Slow)),
        )
        .await
        .map(|_| ());
    // The fixture's manifest allows 2 s of wall clock a call.
    for e in [single.unwrap_err(), batch.unwrap_err()] {
        assert!(
            matches!(&e, CallError::Timeout(m) if m.starts_with("wall-clock")),
            "{e}"
        );
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

/// Answers each completion with its own prompt, so every reply of a batch
/// can ask for a different verdict.
struct Mirror;

impl AiBridge for Mirror {
    fn complete(&self, request: CompletionRequest) -> AiFuture<'_> {
        Box::pin(async move {
            Ok(outreach_plugin_runtime::CompletionResponse {
                model: "mirror".into(),
                content: request.messages[0].content.clone(),
                prompt_tokens: 1,
                completion_tokens: 1,
                finish_reason: "stop".into(),
            })
        })
    }
}

#[tokio::test]
async fn a_batch_answers_as_single_calls_do() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;
    let replies = vec![
        reply(
            &[],
            "Re: Quick question",
            "Sounds interesting, can we talk on Tuesday?",
        ),
        reply(
            &[],
            "Re: Quick question",
            "Please remove me from your list.",
        ),
        reply(
            &[("Auto-Submitted", "auto-replied")],
            "Automatic reply",
            "I am out of the office until Monday.",
        ),
        reply(
            &[],
            "Re: Quick question",
            "We already use a competitor and are happy.",
        ),
    ];
    let batch = rt
        .classify_replies("reply-classifier-rules", replies.clone(), None)
        .await
        .unwrap();
    assert_eq!(batch.len(), replies.len());
    for (input, answer) in replies.into_iter().zip(batch) {
        let single = rt
            .classify_reply("reply-classifier-rules", input, None)
            .await
            .unwrap();
        let answer = answer.unwrap();
        assert_eq!(
            (answer.label, answer.confidence, answer.model),
            (single.label, single.confidence, single.model)
        );
    }
    assert!(
        rt.classify_replies("reply-classifier-rules", Vec::new(), None)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn each_reply_of_a_batch_is_its_own_call() {
    let (rt, _dir) = with_echo().await;
    let most = format!("calls:{MAX_AI_CALLS_PER_CALL}");
    let ai: Option<Arc<dyn AiBridge>> = Some(Arc::new(Mirror));
    // Every reply may use the whole AI-call allowance, and a refused verdict
    // is that reply's error alone.
    let batch = rt
        .classify_replies(
            "echo-classifier",
            vec![
                reply(&[], &most, "interested|0.9|m"),
                reply(&[], &most, "maybe|0.5|m"),
                reply(&[], &most, "ooo|0.7|m"),
            ],
            ai,
        )
        .await
        .unwrap();
    let labels: Vec<Result<String, String>> = batch
        .into_iter()
        .map(|v| v.map(|v| v.label).map_err(|e| e.to_string()))
        .collect();
    assert_eq!(labels[0].as_deref(), Ok("interested"));
    assert!(
        labels[1]
            .as_ref()
            .is_err_and(|e| e.contains("is not one of")),
        "{labels:?}"
    );
    assert_eq!(labels[2].as_deref(), Ok("ooo"));
}

#[tokio::test]
async fn an_accounts_batches_share_a_warm_instance() {
    let rt = runtime(None, GuardPolicy::strict(), true).await;
    let replies = vec![
        reply(&[], "Re: Quick question", "Sounds great, send me the deck."),
        reply(&[], "Re: Quick question", "Not now, maybe next quarter."),
        reply(
            &[],
            "Re: Quick question",
            "Bitte nehmen Sie mich aus dem Verteiler.",
        ),
    ];
    let labels = |answers: Vec<Result<outreach_plugin_runtime::ReplyVerdict, CallError>>| {
        answers
            .into_iter()
            .map(|a| a.unwrap().label)
            .collect::<Vec<_>>()
    };
    let fresh = labels(
        rt.classify_replies("reply-classifier-rules", replies.clone(), None)
            .await
            .unwrap(),
    );
    assert_eq!(fresh, ["interested", "not_now", "unsubscribe"]);
    assert_eq!(rt.warm_instances(), 0, "a plain batch keeps nothing");

    // The account's first batch leaves its instance warm, the next batches
    // use it and give the same verdicts; another account gets its own.
    for _ in 0..3 {
        let warm = rt
            .classify_account_replies("reply-classifier-rules", 1, replies.clone())
            .await
            .unwrap();
        assert_eq!(labels(warm), fresh);
        assert_eq!(rt.warm_instances(), 1);
    }
    rt.classify_account_replies("reply-classifier-rules", 2, replies.clone())
        .await
        .unwrap();
    assert_eq!(rt.warm_instances(), 2);

    // A classifier that uses AI gets a fresh instance every time.
    let (rt, _dir) = with_echo().await;
    let ai = rt
        .classify_account_replies(
            "echo-classifier",
            1,
            vec![reply(&[], "Re: Hi", "interested|0.9|m")],
        )
        .await
        .unwrap();
    // No bridge: the echo classifier cannot reach its AI.
    assert!(ai[0].is_err(), "{ai:?}");
    assert_eq!(rt.warm_instances(), 0);
}
