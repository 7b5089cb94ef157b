//! Native test support: answer [`crate::http::send`] from a closure.
//!
//! On wasm32 these functions exist but the mock is never consulted, so tests
//! compile for both targets.

use crate::http::{HttpError, Request, Response};
use std::cell::RefCell;

type Handler = Box<dyn FnMut(&Request) -> Result<Response, HttpError>>;

thread_local! {
    static HANDLER: RefCell<Option<Handler>> = const { RefCell::new(None) };
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
