//! Host bindings generated from the WIT package. The host imports (types,
//! http, log, ai) are generated once in `shared`, and every kind world maps them
//! there, so one `Host` implementation and one `Linker` serve all kinds.

#![allow(missing_docs, clippy::all)]

pub mod shared {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "imports",
        imports: { default: async },
        additional_derives: [PartialEq, serde::Serialize],
    });
}

macro_rules! kind_world {
    ($module:ident, $world:literal) => {
        pub mod $module {
            wasmtime::component::bindgen!({
                path: "../../wit",
                world: $world,
                imports: { default: async },
                exports: { default: async },
                with: {
                    "outreach:plugin/types": super::shared::outreach::plugin::types,
                    "outreach:plugin/http": super::shared::outreach::plugin::http,
                    "outreach:plugin/log": super::shared::outreach::plugin::log,
                },
            });
        }
    };
    // Reply and domain classifiers import the host's AI and no HTTP.
    (@ai $module:ident, $world:literal) => {
        pub mod $module {
            wasmtime::component::bindgen!({
                path: "../../wit",
                world: $world,
                imports: { default: async },
                exports: { default: async },
                with: {
                    "outreach:plugin/types": super::shared::outreach::plugin::types,
                    "outreach:plugin/log": super::shared::outreach::plugin::log,
                    "outreach:plugin/ai": super::shared::outreach::plugin::ai,
                },
            });
        }
    };
    // Template packs import no HTTP, and bindgen refuses unused `with` keys.
    (@data $module:ident, $world:literal) => {
        pub mod $module {
            wasmtime::component::bindgen!({
                path: "../../wit",
                world: $world,
                imports: { default: async },
                exports: { default: async },
                with: {
                    "outreach:plugin/types": super::shared::outreach::plugin::types,
                    "outreach:plugin/log": super::shared::outreach::plugin::log,
                },
            });
        }
    };
}

kind_world!(llm_provider, "llm-provider");
kind_world!(email_verifier, "email-verifier");
kind_world!(contact_enricher, "contact-enricher");
kind_world!(workflow_action, "workflow-action");
kind_world!(@data template_pack, "template-pack");
kind_world!(@ai reply_classifier, "reply-classifier");
kind_world!(@ai domain_classifier, "domain-classifier");

pub use shared::outreach::plugin::types;
