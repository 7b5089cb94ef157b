//! `{{ai_write}}` on the account's AI key, through the OpenAI-compatible
//! adapter and a stub in the chat-completions shape.

use serde_json::json;

use super::{contact, render};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;
use outreach_core::testing::stub::{Canned, Stub};
use outreach_vendors::vendor_keys::catalogue::{self, Family};

fn completion(content: &str) -> Canned {
    Canned::json(
        200,
        json!({"model": "writer-model", "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 30, "completion_tokens": 12}}),
    )
}

const LLM: &str = "/llm/v1/chat/completions";

#[tokio::test]
async fn ai_write_uses_the_accounts_ai_key_once_per_instruction() {
    let stub = Stub::start().await;
    let app = TestApp::with_areas(&[outreach_vendors::AREA, crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let c = contact("acme.com", json!({"first_name": "Ann", "company": "Acme"}));
    let subject = "{{ai_write: a hook}} for {{company}}";
    let body = "<p>{{ai_write: a compliment}}</p><p>{{ ai_write :  a compliment }}</p><p>{{ai_write: a hook}}</p>";

    // No AI key: literal and missing, and the render still succeeds.
    let r = render(&app, &acct, subject, body, &c).await;
    assert_eq!(r.subject, "{{ai_write: a hook}} for Acme");
    assert_eq!(r.body_html, body);
    assert_eq!(
        (r.tokens_used, r.missing_tokens),
        (vec!["company".to_owned()], vec!["ai_write".to_owned()])
    );

    stub.set(LLM, completion("OK"));
    let compatible = catalogue::providers(&app.state, Family::Ai)
        .into_iter()
        .find(|p| p.supports_endpoint_url == Some(true))
        .unwrap()
        .provider;
    let k = app
        .post("/v1/ai/providers", &acct.api_key, json!({"provider": compatible, "api_key": "local-key-123", "validation_model": "writer-model", "endpoint_url": stub.url("/llm")}))
        .await;
    assert_eq!(k.status, 201, "{:?}", k.body);
    let before = stub.hits(LLM);

    stub.set(
        LLM,
        completion("\"Loved the <b>launch</b> & the\r\nnews.\""),
    );
    let r = render(&app, &acct, subject, body, &c).await;
    assert_eq!(
        stub.hits(LLM) - before,
        2,
        "one completion per distinct instruction"
    );
    assert_eq!(r.subject, "Loved the <b>launch</b> & the news. for Acme");
    let passage = "Loved the &lt;b&gt;launch&lt;/b&gt; &amp; the\r\nnews.";
    assert_eq!(
        r.body_html,
        format!("<p>{passage}</p><p>{passage}</p><p>{passage}</p>")
    );
    assert_eq!(r.tokens_used, ["ai_write", "company"]);
    assert!(r.missing_tokens.is_empty());
    let prompt = stub.last_body(LLM).unwrap()["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        prompt.contains("first name: Ann; company: Acme; company website: acme.com"),
        "{prompt}"
    );
    let ledger: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM vendor_calls WHERE account_id = $1 AND action_type = 'sequence_ai_write' AND success = 1",
    )
    .bind(acct.account_id)
    .fetch_one(&app.state.db.pool)
    .await
    .unwrap();
    assert_eq!(ledger, 2);

    // At most five instructions per render; the rest stay literal.
    let many: String = (1..=7)
        .map(|i| format!("<p>{{{{ai_write: line {i}}}}}</p>"))
        .collect();
    let before = stub.hits(LLM);
    let r = render(&app, &acct, "", &many, &c).await;
    assert_eq!(stub.hits(LLM) - before, 5);
    assert!(
        r.body_html
            .ends_with("<p>{{ai_write: line 6}}</p><p>{{ai_write: line 7}}</p>"),
        "{}",
        r.body_html
    );
    assert_eq!(
        (r.tokens_used, r.missing_tokens),
        (vec!["ai_write".to_owned()], vec!["ai_write".to_owned()])
    );

    // Every vendor failing, or an empty answer: literal, never an error.
    for canned in [
        Canned::json(500, json!({"error": "down"})),
        completion("  "),
    ] {
        stub.set(LLM, canned);
        let r = render(
            &app,
            &acct,
            subject,
            "<p>{{ai_write: a compliment}}</p>",
            &c,
        )
        .await;
        assert_eq!(r.body_html, "<p>{{ai_write: a compliment}}</p>");
        assert_eq!(r.missing_tokens, ["ai_write"]);
    }
}
