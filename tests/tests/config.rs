//! `outreach config print-default`, `--config FILE` and the precedence of
//! environment variables over the file.

use outreach_e2e::{Deployment, client, get};

#[test]
fn print_default_is_valid_toml_with_every_setting() {
    let deployment = Deployment::new();
    let out = deployment.cli_ok(&["config", "print-default"]);
    let parsed: toml::Table = toml::from_str(&out).expect("print-default parses as TOML");
    for key in [
        "listen",
        "metrics_listen",
        "data_dir",
        "database_url",
        "public_base_url",
        "key_prefix",
        "trusted_proxies",
        "encryption_key",
        "usage_flush_interval_ms",
        "max_body_bytes",
        "log",
        "smtp",
        "outbound_allow_cidrs",
        "unsafe_outbound_allow_loopback",
        "unsafe_plugins_allow_loopback",
        "vendor_base_urls",
        "dns_nameservers",
        "sender_lease_secs",
        "sender_connections_per_account",
        "inbox_poll_interval_secs",
        "crawler_base_url_overrides",
        "rdap_bootstrap_url",
        "domain_classifier",
        "domain_refresh_age_days",
        "workflow_run_retention_days",
    ] {
        assert!(parsed.contains_key(key), "{key} missing from print-default");
    }
    assert_eq!(parsed["key_prefix"].as_str(), Some("otr"));
    // It is meant to be written to a file and used as is.
    let file = deployment.scratch().join("default.toml");
    std::fs::write(&file, &out).unwrap();
    let fresh = Deployment::new().with_config_file(&file);
    let account = fresh.create_account("default@example.com", "free");
    assert!(account.api_key.starts_with("otr_"));
}

#[tokio::test]
async fn config_file_applies_and_environment_wins() {
    let deployment = Deployment::new();
    let file = deployment.scratch().join("outreach.toml");
    let file_data_dir = deployment.scratch().join("from-file");
    std::fs::write(
        &file,
        format!(
            "key_prefix = \"filepfx\"\nusage_flush_interval_ms = 100\ndata_dir = \"{}\"\n",
            file_data_dir.display()
        ),
    )
    .unwrap();

    // File only (the harness's data-dir variable left out): the file's
    // prefix and data directory apply.
    let from_file = Deployment::new()
        .with_config_file(&file)
        .without_env("OUTREACH_DATA_DIR");
    let account = from_file.create_account("file@example.com", "pro");
    assert!(
        account.api_key.starts_with("filepfx_"),
        "{}",
        account.api_key
    );
    let server = from_file.start();
    assert!(
        file_data_dir.join("master.key").is_file(),
        "the file's data_dir was not used"
    );
    let http = client();
    let r = get(&http, &server.url("/v1/account"), Some(&account.api_key)).await;
    assert_eq!(r.status, 200, "{}", r.text);
    drop(server);

    // File plus environment: the environment wins.
    let both = Deployment::new()
        .with_config_file(&file)
        .with_env("OUTREACH_KEY_PREFIX", "envpfx");
    let account = both.create_account("env@example.com", "pro");
    assert!(
        account.api_key.starts_with("envpfx_"),
        "{}",
        account.api_key
    );
    assert!(both.outreach_data_dir().join("master.key").is_file());
    let server = both.start();
    let r = get(&http, &server.url("/v1/account"), Some(&account.api_key)).await;
    assert_eq!(r.status, 200, "{}", r.text);
}

#[test]
fn bad_configuration_is_refused_with_a_message() {
    let deployment = Deployment::new();
    let file = deployment.scratch().join("bad.toml");
    std::fs::write(&file, "no_such_setting = 1\n").unwrap();
    let out = Deployment::new().with_config_file(&file).cli(&[
        "accounts",
        "create",
        "--email",
        "x@example.com",
        "--plan",
        "free",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no_such_setting"), "{stderr}");

    let out = Deployment::new()
        .with_env("OUTREACH_LISTEN", "not an address")
        .cli(&["migrate"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("OUTREACH_LISTEN"), "{stderr}");

    let missing = Deployment::new()
        .with_config_file(&deployment.scratch().join("absent.toml"))
        .cli(&["migrate"]);
    assert!(!missing.status.success());
}

/// `[limits.<plan>]` values an operator gets wrong stop the server at start
/// with the setting's name; good ones are accepted from file and environment.
#[test]
fn bad_plan_limits_stop_the_server_with_the_settings_name() {
    let deployment = Deployment::new();
    for (toml_text, needle) in [
        ("[limits.gold]\nmonthly_quota = 5\n", "limits.gold"),
        (
            "[limits.pro]\nmonthly_qouta = 5\n",
            "limits.pro.monthly_qouta",
        ),
        (
            "[limits.pro]\nmonthly_quota = -1\n",
            "limits.pro.monthly_quota",
        ),
        (
            "[limits.pro]\nrequests_per_minute = 0\n",
            "limits.pro.requests_per_minute",
        ),
        (
            "[limits.free]\nwebhooks = \"many\"\n",
            "limits.free.webhooks",
        ),
        ("[limits.free]\nwebhooks = 1.5\n", "webhooks"),
    ] {
        let file = deployment.scratch().join("limits.toml");
        std::fs::write(&file, toml_text).unwrap();
        let out = Deployment::new().with_config_file(&file).cli(&["serve"]);
        assert!(!out.status.success(), "{toml_text}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{toml_text}: {stderr}");
    }
    let out = Deployment::new()
        .with_env("OUTREACH_LIMITS_STARTER_MONTHLY_QUOTA", "-3")
        .cli(&["serve"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("limits.starter.monthly_quota"), "{stderr}");

    let file = deployment.scratch().join("good.toml");
    std::fs::write(
        &file,
        "[limits.pro]\nmonthly_quota = \"unlimited\"\nwebhooks = 25\n",
    )
    .unwrap();
    Deployment::new()
        .with_config_file(&file)
        .with_env("OUTREACH_LIMITS_FREE_REQUESTS_PER_MINUTE", "50")
        .cli_ok(&["migrate"]);
}

/// A `dns_nameservers` entry that is not an address or `address:port`
/// stops the server at start with the setting's name, from the file or the
/// environment; good entries are accepted.
#[test]
fn bad_dns_nameservers_stop_the_server_with_the_settings_name() {
    let deployment = Deployment::new();
    let file = deployment.scratch().join("dns.toml");
    std::fs::write(&file, "dns_nameservers = [\"resolver.example\"]\n").unwrap();
    let out = Deployment::new().with_config_file(&file).cli(&["serve"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("dns_nameservers"), "{stderr}");
    let out = Deployment::new()
        .with_env("OUTREACH_DNS_NAMESERVERS", "127.0.0.1:70000")
        .cli(&["serve"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("dns_nameservers"), "{stderr}");
    Deployment::new()
        .with_env("OUTREACH_DNS_NAMESERVERS", "127.0.0.1:5353, ::1")
        .cli_ok(&["migrate"]);
}

/// A classifier setting that names no loaded plugin of its kind stops the
/// server at start with the setting's name, instead of a warning per
/// message and a silent fall back to the rules; a loaded one of the right
/// kind starts.
#[test]
fn a_chosen_classifier_that_is_not_loaded_stops_the_server() {
    // One data directory, so the plugins are compiled once, not per start.
    let deployment = Deployment::new();
    for (setting, value) in [
        ("OUTREACH_INBOX_REPLY_CLASSIFIER", "reply-classifier-nope"),
        // Loaded, but a reply classifier, not a domain classifier.
        ("OUTREACH_DOMAIN_CLASSIFIER", "reply-classifier-rules"),
        ("OUTREACH_INBOX_REPLY_CLASSIFIER", "domain-classifier-rules"),
    ] {
        let out = deployment
            .command(["serve"])
            .env(setting, value)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{setting}={value}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let name = setting.trim_start_matches("OUTREACH_").to_lowercase();
        assert!(
            stderr.contains(&format!("{name} = \"{value}\"")),
            "{setting}={value}: {stderr}"
        );
    }
    let server = deployment
        .with_env("OUTREACH_INBOX_REPLY_CLASSIFIER", "reply-classifier-llm")
        .with_env("OUTREACH_DOMAIN_CLASSIFIER", "domain-classifier-llm")
        .start();
    server.stop();
}

#[test]
fn migrate_is_idempotent() {
    let deployment = Deployment::new();
    let first = deployment.cli_ok(&["migrate"]);
    assert!(first.contains("migrations applied"), "{first}");
    deployment.cli_ok(&["migrate"]);
}
