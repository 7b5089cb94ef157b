//! The spreadsheet service's REST API (Google Sheets v4): create a
//! spreadsheet, write ranges of values. Errors come as `{error: {code,
//! message, status}}`; 401 refreshes the token once, 429 and 5xx are
//! retried a bounded number of times with growing waits, and each request
//! has the provider's deadline.

use std::time::Duration;

use serde_json::{Value, json};

use super::Sheets;
use super::oauth::{access_token, google_error};
use outreach_core::error::{ApiError, ApiResult};
use outreach_core::state::AppState;
use outreach_ssrf::{GuardError, GuardedRequest, Method, Url};

/// One write stays under this many bytes of JSON (issue 33: under 2 MB).
pub const MAX_REQUEST_BYTES: usize = 2_000_000 - 64 * 1024;
/// Rows per write at most, whatever their size.
pub const MAX_ROWS_PER_WRITE: usize = 200;
/// Attempts of one request when the provider answers 429 or 5xx.
const ATTEMPTS: u32 = 3;
/// The first wait between attempts; each next one doubles.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);

/// A created spreadsheet.
#[derive(Debug, Clone)]
pub struct Spreadsheet {
    pub id: String,
    pub url: String,
}

/// The provider's error text from its `{error: {message}}` body, else the
/// status. The access token never appears: it is removed if echoed.
fn provider_message(status: u16, body: &[u8], token: &str) -> String {
    let parsed: Value = serde_json::from_slice(body).unwrap_or_default();
    let text = parsed["error"]["message"]
        .as_str()
        .or(parsed["error"].as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("HTTP {status}"));
    let text: String = text.chars().take(300).collect();
    if token.is_empty() {
        text
    } else {
        text.replace(token, "[token]")
    }
}

/// Sends one API request for the account with its bearer token, handling
/// 401 (refresh once), 429 and 5xx (retries) and the deadline.
async fn call(
    state: &AppState,
    account_id: i64,
    method: Method,
    segments: &[&str],
    query: &[(&str, &str)],
    body: &Value,
) -> ApiResult<Value> {
    let sheets = state.ext::<Sheets>();
    let bad_base =
        |e: &dyn std::fmt::Display| ApiError::Internal(anyhow::anyhow!("sheets.api_base_url: {e}"));
    let mut url = Url::parse(&state.config.sheets.api_base_url).map_err(|e| bad_base(&e))?;
    url.path_segments_mut()
        .map_err(|_| bad_base(&"cannot be a base"))?
        .pop_if_empty()
        .extend(segments);
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    let bytes = serde_json::to_vec(body).map_err(|e| ApiError::Internal(e.into()))?;
    let mut token = access_token(state, account_id, false).await?;
    let mut refreshed = false;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut request = GuardedRequest::new(method.clone(), url.clone());
        request.timeout = Some(sheets.timeout());
        request.headers = vec![
            ("authorization".into(), format!("Bearer {token}")),
            ("content-type".into(), "application/json".into()),
        ];
        request.body = Some(bytes.clone());
        let got = match sheets.http.send(request).await {
            Ok(got) => got,
            Err(GuardError::Timeout) => {
                return Err(google_error("the service did not answer within 30 seconds"));
            }
            Err(e) => return Err(google_error(&e.to_string())),
        };
        match got.status {
            200..=299 => {
                return serde_json::from_slice(&got.body).map_err(|_| {
                    google_error("the service answered with a body that is not JSON")
                });
            }
            401 if !refreshed => {
                refreshed = true;
                token = access_token(state, account_id, true).await?;
            }
            429 | 500..=599 if attempt < ATTEMPTS => {
                let wait = FIRST_BACKOFF * 2u32.pow(attempt - 1);
                tokio::time::sleep(wait).await;
            }
            429 => {
                let retry_after = got
                    .header("retry-after")
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .unwrap_or(60);
                return Err(ApiError::RateLimitExceeded {
                    retry_after,
                    limit: None,
                    reset_at_ms: None,
                });
            }
            status => return Err(google_error(&provider_message(status, &got.body, &token))),
        }
    }
}

/// Creates a spreadsheet with one sheet named `sheet`.
pub async fn create(
    state: &AppState,
    account_id: i64,
    title: &str,
    sheet: &str,
) -> ApiResult<Spreadsheet> {
    let body = json!({
        "properties": {"title": title},
        "sheets": [{"properties": {"title": sheet}}],
    });
    let segments = ["v4", "spreadsheets"];
    let answer = call(state, account_id, Method::POST, &segments, &[], &body).await?;
    let id = answer["spreadsheetId"]
        .as_str()
        .ok_or_else(|| google_error("the created spreadsheet has no spreadsheetId"))?
        .to_owned();
    let url = answer["spreadsheetUrl"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("https://docs.google.com/spreadsheets/d/{id}/edit"));
    Ok(Spreadsheet { id, url })
}

/// The A1 range of a sheet's rows from `first_row` (1-based).
fn range(sheet: &str, first_row: usize) -> String {
    // Sheet names are quoted in A1 notation; ours hold no quote.
    format!("'{sheet}'!A{first_row}")
}

/// Writes `rows` from row 1 of `sheet`, in requests of at most
/// [`MAX_ROWS_PER_WRITE`] rows and [`MAX_REQUEST_BYTES`]. Each request
/// names its range (values update, never append), so a retried request
/// writes the same cells again instead of adding rows. `RAW` input: a cell
/// starting with `=` stays text.
pub async fn write_rows(
    state: &AppState,
    account_id: i64,
    spreadsheet_id: &str,
    sheet: &str,
    rows: &[Vec<Value>],
) -> ApiResult<usize> {
    let mut requests = 0;
    let mut start = 0;
    while start < rows.len() {
        let mut end = start;
        let mut size = 0;
        while end < rows.len() && end - start < MAX_ROWS_PER_WRITE {
            let row_size = serde_json::to_vec(&rows[end]).map_or(0, |b| b.len()) + 1;
            if end > start && size + row_size > MAX_REQUEST_BYTES {
                break;
            }
            size += row_size;
            end += 1;
        }
        let range = range(sheet, start + 1);
        let body = json!({
            "range": range,
            "majorDimension": "ROWS",
            "values": &rows[start..end],
        });
        let segments = ["v4", "spreadsheets", spreadsheet_id, "values", &range];
        let query = [("valueInputOption", "RAW")];
        call(state, account_id, Method::PUT, &segments, &query, &body).await?;
        requests += 1;
        start = end;
    }
    Ok(requests)
}
