//! Test `template-pack` whose `templates` traps while `metadata` answers: the
//! host must load the pack, contain the trap of one call and keep serving
//! every other pack's templates.

use outreach_plugin_sdk::prelude::*;

pub struct PackTrap;

impl TemplatePack for PackTrap {
    fn metadata() -> PackMetadata {
        PackMetadata {
            id: "pack-trap".into(),
            name: "Trap pack".into(),
            author: "Outreach tests".into(),
            description: "Its templates call traps.".into(),
        }
    }

    fn templates() -> Vec<Template> {
        // With panic = "abort" in the release profile this is a wasm trap.
        panic!("trap")
    }
}

outreach_plugin_sdk::export_template_pack!(PackTrap);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_answers() {
        assert_eq!(PackTrap::metadata().id, "pack-trap");
    }

    #[test]
    #[should_panic(expected = "trap")]
    fn templates_panic() {
        PackTrap::templates();
    }
}
