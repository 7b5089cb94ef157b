//! The engine end to end on either backend: metadata and escaping here, the
//! account's enrichment cache (never a vendor) in `enrichment.rs`, and
//! `{{ai_write}}` through the real OpenAI-compatible adapter talking to a
//! local stub in `ai_write.rs`.

mod ai_write;
mod enrichment;

use serde_json::{Value, json};

use super::{Contact, RenderedEmail, render_email};
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::{TestAccount, TestApp};
use outreach_vendors::Actor;

const DAY_MS: i64 = 86_400_000;

fn actor(acct: &TestAccount) -> Actor {
    Actor {
        account_id: acct.account_id,
        user_key: format!("u{}", acct.user_id),
    }
}

fn contact(domain: &str, metadata: Value) -> Contact {
    Contact {
        email: format!("ann@{domain}"),
        domain: domain.to_owned(),
        metadata: metadata.as_object().cloned().unwrap_or_default(),
    }
}

async fn render(
    app: &TestApp,
    acct: &TestAccount,
    subject: &str,
    body: &str,
    c: &Contact,
) -> RenderedEmail {
    render_email(&app.state, &actor(acct), subject, body, c)
        .await
        .unwrap()
}

#[tokio::test]
async fn metadata_values_are_escaped_and_missing_tokens_stay_literal() {
    let app = TestApp::with_areas(&[outreach_vendors::AREA, crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let c = contact(
        "acme.com",
        json!({"firstName": "<script>alert('x')</script>", "company": "Acme\r\nBcc: victim@example.com",
               "Seats": 40.0, "tags": ["a", "b"], "title": ""}),
    );
    let r = render(
        &app,
        &acct,
        "{{ Company }}: {{seats}} seats, {{unknown}}",
        "<p>Hi {{first_name|there}},</p><p>{{title|}}{{Title}} at {{domain}} ({{tags}}) \
         <a href=\"https://{{domain}}/x?a=1&amp;b=2\">site</a> {{nope</p>",
        &c,
    )
    .await;
    assert_eq!(
        r.subject,
        "Acme Bcc: victim@example.com: 40 seats, {{unknown}}"
    );
    assert_eq!(
        r.body_html,
        "<p>Hi &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;,</p><p>{{Title}} at acme.com \
         ([&quot;a&quot;,&quot;b&quot;]) <a href=\"https://acme.com/x?a=1&amp;b=2\">site</a> {{nope</p>"
    );
    assert_eq!(
        r.body_text,
        "Hi <script>alert('x')</script>,\n\n{{Title}} at acme.com ([\"a\",\"b\"]) site \
         (https://acme.com/x?a=1&b=2) {{nope"
    );
    assert_eq!(
        r.tokens_used,
        ["company", "seats", "first_name", "title", "domain", "tags"]
    );
    assert_eq!(r.missing_tokens, ["unknown", "title"]);

    // Serialised as the preview answers it.
    let v = serde_json::to_value(&r).unwrap();
    for field in [
        "subject",
        "body_html",
        "body_text",
        "tokens_used",
        "missing_tokens",
    ] {
        assert!(v.get(field).is_some(), "{field}");
    }

    // Text without tokens is kept as it is; with no domain given, the
    // address's is used.
    let bare = Contact {
        email: "bo@Beta.io".into(),
        ..Contact::default()
    };
    let r = render(&app, &acct, "Hello", "<p>{{domain}}</p>", &bare).await;
    assert_eq!(
        (r.subject.as_str(), r.body_html.as_str()),
        ("Hello", "<p>Beta.io</p>")
    );
}
