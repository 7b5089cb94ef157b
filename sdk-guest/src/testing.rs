//! Native test support: answer [`crate::http::send`] and
//! [`crate::ai::complete`] from closures.
//!
//! On wasm32 these functions exist but the mock is never consulted, so tests
//! compile for both targets.

use crate::http::{HttpError, Request, Response};
use crate::types::{CompletionRequest, CompletionResponse, PluginError};
use std::cell::RefCell;

type Handler = Box<dyn FnMut(&Request) -> Result<Response, HttpError>>;
type AiHandler = Box<dyn FnMut(&CompletionRequest) -> Result<CompletionResponse, PluginError>>;

thread_local! {
    static HANDLER: RefCell<Option<Handler>> = const { RefCell::new(None) };
    static AI_HANDLER: RefCell<Option<AiHandler>> = const { RefCell::new(None) };
}

/// Removes the mock when dropped.
pub struct MockGuard(());

impl Drop for MockGuard {
    fn drop(&mut self) {
        HANDLER.with(|h| h.borrow_mut().take());
    }
}

/// Installs an HTTP handler for the current thread until the guard drops.
pub fn mock_http(f: impl FnMut(&Request) -> Result<Response, HttpError> + 'static) -> MockGuard {
    HANDLER.with(|h| *h.borrow_mut() = Some(Box::new(f)));
    MockGuard(())
}

/// A JSON response with the given status.
pub fn json_response(status: u16, body: &str) -> Response {
    Response {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.as_bytes().to_vec(),
        final_url: String::new(),
    }
}

#[allow(dead_code)]
pub(crate) fn dispatch_http(req: Request) -> Result<Response, HttpError> {
    HANDLER.with(|h| match h.borrow_mut().as_mut() {
        Some(f) => f(&req),
        None => Err(HttpError::Denied(format!(
            "no HTTP mock installed (native test) for {}",
            req.url
        ))),
    })
}

/// Removes the AI mock when dropped.
pub struct AiMockGuard(());

impl Drop for AiMockGuard {
    fn drop(&mut self) {
        AI_HANDLER.with(|h| h.borrow_mut().take());
    }
}

/// Installs a handler for [`crate::ai::complete`] on the current thread until
/// the guard drops.
pub fn mock_ai(
    f: impl FnMut(&CompletionRequest) -> Result<CompletionResponse, PluginError> + 'static,
) -> AiMockGuard {
    AI_HANDLER.with(|h| *h.borrow_mut() = Some(Box::new(f)));
    AiMockGuard(())
}

/// A completion of `content` by `model`, finished with `stop`.
pub fn completion(model: &str, content: &str) -> CompletionResponse {
    CompletionResponse {
        model: model.to_string(),
        content: content.to_string(),
        prompt_tokens: 0,
        completion_tokens: 0,
        finish_reason: "stop".to_string(),
    }
}

#[allow(dead_code)]
pub(crate) fn dispatch_ai(req: &CompletionRequest) -> Result<CompletionResponse, PluginError> {
    AI_HANDLER.with(|h| match h.borrow_mut().as_mut() {
        Some(f) => f(req),
        None => Err(PluginError::Permanent(
            "no AI mock installed (native test)".to_string(),
        )),
    })
}
