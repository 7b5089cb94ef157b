//! Purpose-built hostile `workflow-action` (type `hostile_action`). The
//! config's `mode` selects the misbehaviour, so one component covers the
//! workflow engine's containment tests: `loop` spins until the CPU deadline,
//! `trap` panics, `memory` allocates until the memory cap, and `ok` answers
//! the items unchanged (the well-behaved control).

use outreach_plugin_sdk::prelude::*;
use serde_json::{Value, json};
use std::hint::black_box;

pub struct HostileAction;

const MODES: [&str; 4] = ["loop", "trap", "memory", "ok"];

impl WorkflowAction for HostileAction {
    fn describe() -> ActionDescriptor {
        ActionDescriptor {
            type_name: "hostile_action".into(),
            display_name: "Hostile action".into(),
            description: "Test component: loops, traps, exhausts memory or passes items through."
                .into(),
            config_schema: to_json(&json!({
                "type": "object",
                "required": ["mode"],
                "additionalProperties": false,
                "properties": {"mode": {"type": "string", "enum": MODES}},
            })),
        }
    }

    fn execute(config: &str, items: Vec<String>) -> Result<ActionOutput, PluginError> {
        let config: Value = from_json("config", config)?;
        match config["mode"].as_str().unwrap_or_default() {
            "loop" => {
                let mut x = 0u64;
                loop {
                    x = black_box(x.wrapping_add(1));
                }
            }
            "trap" => panic!("hostile action panicked on purpose"),
            "memory" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1 << 20]);
                    black_box(&hoard);
                }
            }
            "ok" => Ok(ActionOutput {
                items,
                previous_result: None,
            }),
            other => Err(PluginError::InvalidInput(format!(
                "config.mode must be one of {}, not {other:?}",
                MODES.join(", ")
            ))),
        }
    }
}

outreach_plugin_sdk::export_workflow_action!(HostileAction);
