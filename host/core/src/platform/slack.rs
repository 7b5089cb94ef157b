//! Posting to Slack incoming webhooks (alert deliveries, workflow approval
//! requests): a JSON body through the outbound policy, since the URL is
//! whatever a user typed.

use std::time::Duration;

use outreach_ssrf::{ClientOptions, GuardPolicy, GuardedClient, GuardedRequest, Method, Url};
use serde_json::Value;

use super::jobs::JobFailure;

const TIMEOUT: Duration = Duration::from_secs(10);

/// The HTTP client Slack posts use (a typed extension of the state, added
/// by each area that posts).
#[derive(Clone)]
pub struct SlackClient(GuardedClient);

impl SlackClient {
    pub fn new(policy: GuardPolicy) -> SlackClient {
        let options = ClientOptions {
            timeout: TIMEOUT,
            connect_timeout: TIMEOUT,
            follow_redirects: false,
            ..ClientOptions::default()
        };
        SlackClient(
            GuardedClient::new(policy, options)
                .expect("the Slack HTTP client builds with static options"),
        )
    }

    /// Posts `payload` (`{text}`, optionally `blocks`) to `url`. Any answer
    /// but 2xx is a failure worth retrying; so is a refused address, since
    /// the outbound policy decides again on each attempt.
    pub async fn post(&self, url: &str, payload: &Value) -> Result<(), JobFailure> {
        let url = Url::parse(url).map_err(|e| JobFailure::new(e.to_string(), false))?;
        let mut request = GuardedRequest::new(Method::POST, url);
        request
            .headers
            .push(("content-type".into(), "application/json".into()));
        request.body = Some(payload.to_string().into_bytes());
        match self.0.send(request).await {
            Ok(r) if (200..300).contains(&r.status) => Ok(()),
            Ok(r) => Err(JobFailure::new(
                format!("Slack answered HTTP {}", r.status),
                true,
            )),
            Err(e) => Err(JobFailure::new(e.to_string(), true)),
        }
    }
}
