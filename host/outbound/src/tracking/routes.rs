//! The public tracking endpoints (no API key; the signed token in the path
//! is the authority). A token that does not verify, or that names another
//! kind of link, answers 404 before anything is read or written.

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::service::{self, ClickTarget};
use super::token::{Token, TrackingKey};
use outreach_core::error::{ApiError, ApiResult, ErrorBody};
use outreach_core::http::extract::Path;
use outreach_core::http::page::html_page;
use outreach_core::state::AppState;

pub fn public_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(open))
        .routes(routes!(click))
        .routes(routes!(unsubscribe_page, unsubscribe))
}

fn verify(state: &AppState, token: &str) -> ApiResult<Token> {
    TrackingKey::new(&state.secrets)
        .verify(token)
        .ok_or_else(|| ApiError::not_found("Tracking link"))
}

// The open pixel's body in the document: bytes, not JSON. `format: binary`
// is what client generators read as "return the raw bytes" (a bare
// `Vec<u8>` would be documented as an array of integers);
// `contentMediaType` says the same in OpenAPI 3.1's terms. (Doc comments
// here would become the schema's description.)
#[derive(utoipa::ToSchema)]
#[schema(value_type = String, format = Binary, content_media_type = "image/gif",
    description = "GIF image bytes")]
#[allow(dead_code)]
struct Gif(Vec<u8>);

/// The open pixel: a 1x1 transparent GIF, never cached, so every load
/// reaches us (only the first per message is recorded).
#[utoipa::path(get, path = "/t/o/{token}", tag = "tracking", operation_id = "track_open",
    params(("token" = String, Path, description = "Signed open token")),
    responses(
        (status = 200, description = "A 1x1 transparent GIF", content_type = "image/gif", body = inline(Gif)),
        (status = 404, description = "Bad or tampered token", body = ErrorBody),
    ))]
async fn open(State(state): State<AppState>, Path(token): Path<String>) -> ApiResult<Response> {
    let Token::Open { message } = verify(&state, &token)? else {
        return Err(ApiError::not_found("Tracking link"));
    };
    // A recipient's image must load whatever happens to the recording.
    if let Err(e) = service::open(&state, message).await {
        tracing::warn!(message, error = %e, "open not recorded");
    }
    Ok((
        [
            (header::CONTENT_TYPE, "image/gif"),
            (
                header::CACHE_CONTROL,
                "no-store, no-cache, must-revalidate, max-age=0",
            ),
            (header::PRAGMA, "no-cache"),
            (header::EXPIRES, "0"),
        ],
        PIXEL,
    )
        .into_response())
}

/// A click: 302 to the message's original URL.
#[utoipa::path(get, path = "/t/c/{token}", tag = "tracking", operation_id = "track_click",
    params(("token" = String, Path, description = "Signed click token")),
    responses(
        (status = 302, description = "To the original URL",
            headers(("Location" = String, description = "The link as written in the message"))),
        (status = 200, description = "The message is no longer on file: a page saying the link expired", content_type = "text/html", body = String),
        (status = 404, description = "Bad or tampered token, or no such link in the message", body = ErrorBody),
    ))]
async fn click(State(state): State<AppState>, Path(token): Path<String>) -> ApiResult<Response> {
    let Token::Click { message, link } = verify(&state, &token)? else {
        return Err(ApiError::not_found("Tracking link"));
    };
    match service::click(&state, message, link).await? {
        ClickTarget::Redirect(url) => {
            let location =
                HeaderValue::try_from(url).map_err(|_| ApiError::not_found("Tracking link"))?;
            Ok((
                StatusCode::FOUND,
                [
                    (header::LOCATION, location),
                    (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
                    // The destination does not learn the token.
                    (
                        header::REFERRER_POLICY,
                        HeaderValue::from_static("no-referrer"),
                    ),
                ],
            )
                .into_response())
        }
        ClickTarget::Gone => Ok(page(
            "Link expired",
            "<p>This link is no longer available.</p>",
        )),
        ClickTarget::NoSuchLink => Err(ApiError::not_found("Tracking link")),
    }
}

/// The human unsubscribe page: asks for confirmation and posts to itself.
/// Loading it changes nothing, since mail scanners follow links.
#[utoipa::path(get, path = "/t/u/{token}", tag = "tracking", operation_id = "unsubscribe_page",
    params(("token" = String, Path, description = "Signed unsubscribe token")),
    responses(
        (status = 200, description = "Confirmation page with a form that POSTs to the same URL", content_type = "text/html", body = String),
        (status = 404, description = "Bad or tampered token", body = ErrorBody),
    ))]
async fn unsubscribe_page(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> ApiResult<Response> {
    let Token::Unsubscribe { .. } = verify(&state, &token)? else {
        return Err(ApiError::not_found("Tracking link"));
    };
    Ok(page(
        "Unsubscribe",
        "<p>Stop receiving emails from this sender?</p>\
         <form method=\"post\"><input type=\"hidden\" name=\"List-Unsubscribe\" value=\"One-Click\">\
         <button type=\"submit\">Unsubscribe</button></form>",
    ))
}

/// The RFC 8058 form body, as documented; the handler accepts any body.
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[allow(dead_code)]
struct OneClickUnsubscribe {
    /// `One-Click`.
    #[serde(rename = "List-Unsubscribe")]
    list_unsubscribe: Option<String>,
}

/// One-click unsubscribe (RFC 8058: mailbox providers POST
/// `List-Unsubscribe=One-Click`; any body is accepted) and the page's form.
#[utoipa::path(post, path = "/t/u/{token}", tag = "tracking", operation_id = "unsubscribe",
    params(("token" = String, Path, description = "Signed unsubscribe token")),
    request_body(content = OneClickUnsubscribe, content_type = "application/x-www-form-urlencoded",
        description = "`List-Unsubscribe=One-Click` (optional)"),
    responses(
        (status = 200, description = "Unsubscribed (or the message is no longer on file): a short page", content_type = "text/html", body = String),
        (status = 404, description = "Bad or tampered token", body = ErrorBody),
    ))]
async fn unsubscribe(
    State(state): State<AppState>,
    Path(token): Path<String>,
) -> ApiResult<Response> {
    let Token::Unsubscribe { message } = verify(&state, &token)? else {
        return Err(ApiError::not_found("Tracking link"));
    };
    if service::unsubscribe(&state, message).await? {
        Ok(page(
            "You are unsubscribed",
            "<p>You will not receive further emails from this sender.</p>",
        ))
    } else {
        Ok(page(
            "Link expired",
            "<p>This message is no longer on file, so this link cannot unsubscribe you. \
             Reply to the email and ask to be removed.</p>",
        ))
    }
}

/// A small self-contained page (the core's public-link page).
fn page(title: &str, content: &str) -> Response {
    html_page(StatusCode::OK, title, content)
}

/// A 1x1 transparent GIF (GIF89a, one-colour palette, transparent index 0).
const PIXEL: &[u8] = &[
    0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xff, 0xff, 0xff, 0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b,
];
