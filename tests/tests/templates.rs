//! Template ownership on the real binary: a paid template answers 402 until
//! `outreach templates grant` gives it to the account, `templates list`
//! shows the grant, `revoke` takes it back, and the CLI refuses a template
//! no loaded pack has. The statistics are public.

use outreach_e2e::{Deployment, client, get, post_json};
use serde_json::{Value, json};

#[tokio::test]
async fn a_grant_from_the_cli_turns_a_402_into_an_install() {
    let deployment = Deployment::new();
    let account = deployment.create_account("grants@example.com", "starter");
    let id = account.account_id.to_string();
    let server = deployment.start();
    let http = client();
    let key = Some(account.api_key.as_str());

    let list = get(&http, &server.url("/v1/workflows/templates"), key).await;
    assert_eq!(list.status, 200, "{}", list.text);
    let paid = list.json["templates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["owned"] == false)
        .expect("a template a Starter account does not own")
        .clone();
    let template = paid["id"].as_str().unwrap();
    let install = || async {
        post_json(
            &http,
            &server.url("/v1/workflows/install-template"),
            key,
            &json!({"template_id": template}),
        )
        .await
    };
    assert_eq!(install().await.status, 402);

    deployment.cli_ok(&[
        "templates",
        "grant",
        "--account-id",
        &id,
        "--template-id",
        template,
    ]);
    let granted: Value = serde_json::from_str(&deployment.cli_ok(&[
        "templates",
        "list",
        "--account-id",
        &id,
        "--json",
    ]))
    .unwrap();
    assert_eq!(granted[0]["template_id"], template);
    let r = install().await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.json["is_active"], false);

    deployment.cli_ok(&[
        "templates",
        "revoke",
        "--account-id",
        &id,
        "--template-id",
        template,
    ]);
    assert_eq!(install().await.status, 402);
    let unknown = deployment.cli(&[
        "templates",
        "grant",
        "--account-id",
        &id,
        "--template-id",
        "no_such_template",
    ]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no_such_template"));

    let stats = get(&http, &server.url("/v1/workflows/template-stats"), None).await;
    assert_eq!(stats.status, 200, "{}", stats.text);
    assert_eq!(stats.json["install_counts"][template], 1);
}
