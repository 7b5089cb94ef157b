//! The OpenAPI 3.1 document, generated from the handlers' annotations.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Outreach API",
        description = "B2B lead intelligence and outbound email. Authenticate with `Authorization: Bearer <API key>` on /v1 routes; dashboard routes under /auth use a JWT from /auth/login. Errors are `{\"detail\": \"...\"}`.",
        version = "0.1.0"
    ),
    modifiers(&SecuritySchemes),
    components(schemas(crate::error::ErrorBody))
)]
pub struct BaseDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API key: <prefix>_..."))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "dashboard_jwt",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .build(),
            ),
        );
    }
}

/// The keys of an OpenAPI path item that hold operations.
pub const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Operation ids that name more than one operation, or operations without
/// one: one line per problem, naming the operations (`METHOD /path`).
///
/// # Why the assembly refuses duplicates rather than renaming them
///
/// Client generators name a method after each `operationId`, and the
/// OpenAPI specification requires them to be unique, so
/// `openapi-spec-validator` refuses a document with two equal ids. utoipa
/// defaults an id to the handler's function name, which is unique within a
/// module but not across areas: `POST /v1/contact-enrichers/enrich-bulk`
/// and `POST /v1/enrichment/bulk` were both `enrich_bulk`.
///
/// Renaming collisions while assembling (a suffix, or ids derived from
/// method and path) would make an operation's id depend on which other
/// areas happen to be assembled, and would rename methods in users'
/// generated clients without anyone choosing to. Instead every id is unique
/// as written: [`super::app`] panics while building the document (at
/// start-up, and in every test that builds a router) when this list is not
/// empty, and the fix is an explicit `operation_id = "..."` in the
/// `#[utoipa::path]` of one of the handlers. The server's tests also check
/// the assembled document of every area directly.
pub fn operation_id_problems(doc: &serde_json::Value) -> Vec<String> {
    use std::collections::BTreeMap;
    let mut owners: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    let Some(paths) = doc.get("paths").and_then(|p| p.as_object()) else {
        return problems;
    };
    for (path, item) in paths {
        for method in METHODS {
            let Some(op) = item.get(method) else {
                continue;
            };
            let operation = format!("{} {path}", method.to_uppercase());
            match op.get("operationId").and_then(|id| id.as_str()) {
                Some(id) => owners.entry(id).or_default().push(operation),
                None => problems.push(format!("{operation} has no operationId")),
            }
        }
    }
    for (id, operations) in owners {
        if operations.len() > 1 {
            problems.push(format!(
                "operationId {id:?} names {}",
                operations.join(" and ")
            ));
        }
    }
    problems
}

/// Adds the answers the shared layers can give to every operation they
/// cover, so the document matches the server without each handler listing
/// them: API-key routes can answer 401, 403 and 429; any route with a body
/// or parameters can answer 400 (and 413 for bodies); any route with a path
/// parameter can answer 404.
pub fn complete_responses(doc: &mut serde_json::Value) {
    let Some(paths) = doc.get_mut("paths").and_then(|p| p.as_object_mut()) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            if !["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                continue;
            }
            let security = op["security"].to_string();
            let has_body = op.get("requestBody").is_some();
            let has_params = op["parameters"].as_array().is_some_and(|p| !p.is_empty());
            let mut add = |status: &str, description: &str| {
                let responses = op["responses"].as_object_mut().expect("responses");
                responses.entry(status).or_insert_with(|| {
                    serde_json::json!({
                        "description": description,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
                    })
                });
            };
            if security.contains("\"api_key\"") {
                add("401", "Invalid API key");
                add("403", "API key does not have access to this resource");
                add("429", "Rate limit or monthly quota exceeded");
            }
            if security.contains("\"dashboard_jwt\"") {
                add("401", "Not authenticated");
            }
            if has_body {
                add("400", "Malformed request");
                add("413", "Request body too large");
            }
            if has_params {
                add("400", "Invalid parameter");
            }
            if path.contains('{') {
                add("404", "Not found");
            }
        }
    }
}
