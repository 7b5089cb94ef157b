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
