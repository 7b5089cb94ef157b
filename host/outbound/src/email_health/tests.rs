//! Email health: each check on its own, and the endpoint.

use serde_json::json;

use super::score::assess;
use outreach_core::accounts::plans::Plan;
use outreach_core::testing::TestApp;

const GOOD_BODY: &str = "<p>Hi Jane,</p><p>I noticed Acme is hiring three data engineers this quarter. \
    We help teams like yours cut pipeline maintenance by a third, and I thought a short note might be useful \
    before your new hires start. Would a fifteen minute call next week be worth it? If not, no worries at all, \
    and thanks for reading this far.</p><p>Best, Sam</p>";

#[test]
fn a_plain_personal_email_scores_100() {
    let h = assess("Quick question about Acme's data team", GOOD_BODY);
    assert_eq!(h.score, 100, "{:?}", h.findings);
    assert!(h.findings.is_empty());
}

#[test]
fn each_check_takes_its_penalty() {
    let h = assess(
        "Act now",
        "<p>This is not spam. Click here for a free gift, guaranteed!!!!</p>",
    );
    let p = &h.parts;
    assert_eq!(
        p.spam_triggers.found,
        vec![
            "act now",
            "click here",
            "free gift",
            "guaranteed",
            "this is not spam"
        ]
    );
    assert_eq!(p.spam_triggers.penalty, 25);
    assert_eq!(
        (p.exclamation_marks.in_body, p.exclamation_marks.penalty),
        (4, 5)
    );
    assert_eq!(p.subject_length.penalty, 5);

    let shout = assess("HELLO THERE FRIEND", "<p>BUY THIS TODAY</p>");
    assert_eq!(shout.parts.caps.penalty, 15);
    assert_eq!(shout.parts.caps.ratio, 1.0);

    let links = "<p>See <a href='https://a.com'>a</a> <a href='https://b.com'>b</a> <a href='https://c.com'>c</a> <a href='https://d.com'>d</a> <a href='https://e.com'>e</a></p>";
    let h = assess("Five links for you today", links);
    assert_eq!(h.parts.links.count, 5);
    assert_eq!(h.parts.links.penalty, 10 + 10);
    assert_eq!(h.parts.unsubscribe.penalty, 10);
    let with_unsub = links.replace("e</a>", "unsubscribe</a>");
    assert_eq!(
        assess("Five links for you today", &with_unsub)
            .parts
            .unsubscribe
            .penalty,
        0
    );

    let image_only = assess("A picture for you, Jane", "<img src='https://x.com/a.png'>");
    assert_eq!(image_only.parts.images.penalty, 20);
    assert_eq!(assess("", GOOD_BODY).parts.subject_length.penalty, 20);
    // Words inside words are not phrases: "winners" is not "winner".
    assert!(
        assess("Our winners circle", GOOD_BODY)
            .parts
            .spam_triggers
            .found
            .is_empty()
    );
    // Hostile markup is only text.
    let h = assess(
        "Hello there, Jane Doe",
        "<script>alert('FREE MONEY')</script><p>hi</p>",
    );
    assert!(h.score <= 100);
}

#[tokio::test]
async fn the_endpoint_scores_and_refuses_bad_input() {
    let app = TestApp::with_areas(&[crate::AREA], |_| {}).await;
    let acct = app.account(Plan::Starter).await;
    let path = "/v1/sequences/email-health";
    let r = app
        .post(
            path,
            &acct.api_key,
            json!({"subject": "FREE MONEY!!!", "body_html": "<p>click here</p>"}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    // Two phrases (10), half the letters capitals (10), "!" in the subject (5).
    assert_eq!(r.body["score"], 75, "{:?}", r.body);
    assert!(!r.body["findings"].as_array().unwrap().is_empty());
    assert_eq!(
        app.post(path, &acct.api_key, json!({"subject": "x"}))
            .await
            .status,
        400
    );
    let big = "a".repeat(513 * 1024);
    assert_eq!(
        app.post(
            path,
            &acct.api_key,
            json!({"subject": "x", "body_html": big})
        )
        .await
        .status,
        400
    );
    let free = app.account(Plan::Free).await;
    assert_eq!(
        app.post(
            path,
            &free.api_key,
            json!({"subject": "x", "body_html": ""})
        )
        .await
        .status,
        403
    );
}
