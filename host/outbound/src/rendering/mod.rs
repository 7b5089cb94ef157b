//! The rendering engine (spec/1 convention 7, spec/3 "Sequence tokens from
//! enrichment"): one function, [`render_email`], that preview, test-send and
//! the sequence sender all call, so a preview shows exactly what is sent.
//!
//! `template.rs` parses `{{...}}` tokens, `values.rs` resolves a name for a
//! contact, `ai.rs` writes `{{ai_write: ...}}` passages, `fill.rs`
//! substitutes and escapes, `text.rs` derives the plain-text alternative.
//!
//! Decisions:
//!
//! - **Syntax.** `{{name}}`, `{{name|fallback}}`, `{{ai_write: instruction}}`.
//!   Names are trimmed and case-insensitive. An unclosed `{{`, an empty
//!   `{{ }}` and an opening followed by another opening before its `}}` are
//!   literal text (`template::parse` lists the rules).
//! - **Lookup order** for a name: the built-ins `domain` (the contact's
//!   domain, else the part of its address after `@`) and `email`; then the
//!   enrollment metadata keys, exactly, then case-insensitively;
//!   `first_name` also from metadata `firstName`; `company` from metadata
//!   `company`, else the enrichment's `name`; then the enrichment tokens of
//!   spec/3: `technologies` comma-joined (top 20), `technologies_list` the
//!   raw array as JSON text, `company_size_estimate` the employee range,
//!   else the employee count. Other fields of the enrichment result
//!   (provider, cost, raw) are no tokens.
//! - **Values.** Numbers lose a trailing `.0`; metadata objects and arrays
//!   are their JSON text; null, blank strings and empty arrays or objects
//!   are no value.
//! - **No value.** The fallback, when the token has one (`{{x|}}` renders
//!   nothing); otherwise the token stays exactly as written and is listed in
//!   `missing_tokens`. `tokens_used` lists the distinct names that were
//!   replaced (by a value or a fallback), `ai_write` for AI passages; both
//!   lists use lower-case names in order of first appearance.
//! - **Enrichment** is read from the account's cache only
//!   (`Vendors::cached_enrichment_for_account`: the freshest unexpired
//!   entry cached by any of its users, so the sender, which acts for the
//!   account, and a preview by any user see the same values). Rendering
//!   never calls an enrichment vendor and writes no ledger row for the read.
//! - **`ai_write`.** One completion per distinct instruction per render
//!   (subject and body share it), at most 5 (`ai::MAX_AI_WRITES`), each
//!   instruction at most 1,000 characters; the prompt gives the instruction
//!   with the contact's resolved first name, company and domain. No AI key,
//!   every key failing, an empty answer or a token past the cap leaves the
//!   token literal and listed in `missing_tokens`: rendering never fails
//!   because of AI.
//! - **Escaping.** In the body, values and AI passages are HTML-escaped
//!   (`& < > " '`); the template's markup and a token's fallback (template
//!   text too) are kept as written. The subject is plain text, unescaped,
//!   but control characters in substituted text (CR, LF...) become a space,
//!   so no value can add a header. Substituted text is never parsed again.
//! - **Plain text** is derived from the rendered HTML (`text.rs`): blocks
//!   become line breaks, links `text (url)`, scripts and styles dropped,
//!   whitespace collapsed.

pub mod ai;
pub mod fill;
pub mod template;
pub mod text;
pub mod values;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

use serde_json::{Map, Value};

use outreach_core::error::ApiResult;
use outreach_core::state::AppState;
use outreach_vendors::vendor_keys::service::normalize_domain;
use outreach_vendors::{Actor, VendorsExt};

use self::fill::{Tally, Target, fill};
use self::template::Segment;
use self::values::Sources;

/// The recipient as the engine sees it (from an enrollment or a preview's sample contact).
#[derive(Debug, Clone, Default)]
pub struct Contact {
    pub email: String,
    /// The company's domain; when empty, the part of `email` after `@`.
    pub domain: String,
    /// The enrollment's metadata object: every key is a token.
    pub metadata: Map<String, Value>,
}

/// What a rendered email is.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[schema(as = RenderedEmail)]
pub struct RenderedEmail {
    /// Plain text; values are not escaped, control characters become spaces.
    pub subject: String,
    /// The body with values HTML-escaped and the template's markup kept.
    pub body_html: String,
    /// The plain-text alternative derived from `body_html`.
    pub body_text: String,
    /// Distinct token names replaced by a value or a fallback (lower case).
    pub tokens_used: Vec<String>,
    /// Distinct token names left literal because they had no value.
    pub missing_tokens: Vec<String>,
}

/// Renders a step's subject (plain text, not escaped) and body (HTML, values escaped) for one contact of `account_id`.
/// `actor` is whose AI keys / cache to use (outreach_vendors::Actor).
///
/// Fails only when the enrichment cache cannot be read (a storage error);
/// missing values and AI failures leave tokens literal instead.
pub async fn render_email(
    state: &AppState,
    actor: &Actor,
    subject: &str,
    body_html: &str,
    contact: &Contact,
) -> ApiResult<RenderedEmail> {
    render_email_using(
        state,
        actor,
        subject,
        body_html,
        contact,
        Enrichment::Lookup,
    )
    .await
}

/// Where [`render_email_using`] gets the contact's enrichment.
pub enum Enrichment<'a> {
    /// Read the account's cache (one query).
    Lookup,
    /// Already read, for example by the sender for a whole batch with
    /// `Vendors::cached_enrichments_for_account` keyed by
    /// [`enrichment_domain`].
    Given(Option<&'a Value>),
}

/// The domain whose cached enrichment fills `contact`'s tokens; `None` when
/// it does not normalise (it cannot have been enriched).
pub fn enrichment_domain(contact: &Contact) -> Option<String> {
    normalize_domain(contact_domain(contact)).ok()
}

/// [`render_email`] with the enrichment's source chosen by the caller.
pub async fn render_email_using(
    state: &AppState,
    actor: &Actor,
    subject: &str,
    body_html: &str,
    contact: &Contact,
    source: Enrichment<'_>,
) -> ApiResult<RenderedEmail> {
    let subject_parts = template::parse(subject);
    let body_parts = template::parse(body_html);
    let all = || subject_parts.iter().chain(&body_parts);
    let domain = contact_domain(contact);

    // Only templates with tokens need the cache; a domain that does not
    // normalise cannot have been enriched.
    let has_tokens = all().any(|s| !matches!(s, Segment::Literal(_)));
    let looked_up;
    let enrichment = match source {
        Enrichment::Given(given) => given,
        Enrichment::Lookup => {
            looked_up = match enrichment_domain(contact) {
                Some(d) if has_tokens => {
                    state
                        .vendors()
                        .cached_enrichment_for_account(actor.account_id, &d)
                        .await?
                }
                _ => None,
            };
            looked_up.as_ref()
        }
    };
    let sources = Sources {
        email: &contact.email,
        domain,
        metadata: &contact.metadata,
        enrichment,
    };

    let instructions = ai_instructions(all());
    let written = if instructions.is_empty() {
        HashMap::new()
    } else {
        let recipient = ai::Recipient {
            first_name: sources.lookup("first_name"),
            company: sources.lookup("company"),
            domain: sources.lookup("domain"),
        };
        ai::write_all(state, actor, instructions, &recipient).await
    };

    let mut tally = Tally::default();
    let subject = fill(
        &subject_parts,
        &sources,
        &written,
        Target::Subject,
        &mut tally,
    );
    let body_html = fill(&body_parts, &sources, &written, Target::Html, &mut tally);
    Ok(RenderedEmail {
        subject,
        body_text: text::html_to_text(&body_html),
        body_html,
        tokens_used: tally.used,
        missing_tokens: tally.missing,
    })
}

/// The contact's domain, or the part of its address after the last `@`.
fn contact_domain(contact: &Contact) -> &str {
    let given = contact.domain.trim();
    if !given.is_empty() {
        return given;
    }
    contact.email.rsplit_once('@').map_or("", |(_, d)| d.trim())
}

/// The distinct `ai_write` instructions to complete, in order of first
/// appearance: non-empty, within the length cap, at most `MAX_AI_WRITES`.
fn ai_instructions<'a>(segments: impl Iterator<Item = &'a Segment<'a>>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for segment in segments {
        if let Segment::AiWrite { instruction, .. } = segment
            && !instruction.is_empty()
            && instruction.chars().count() <= ai::MAX_INSTRUCTION_CHARS
            && !out.iter().any(|i| i == instruction)
        {
            if out.len() == ai::MAX_AI_WRITES {
                break;
            }
            out.push((*instruction).to_owned());
        }
    }
    out
}
