//! The template catalogue: every loaded `template-pack` component's
//! templates, each checked as a workflow definition (spec/3 "Template").
//!
//! A pack is asked for its templates once per loaded version (its hash),
//! so a pack dropped into the plugins folder appears on the next read and
//! a removed one disappears (the runtime's hot reload). Checking is
//! repeated on every read because it depends on the action types loaded
//! now (a component type may come or go); it is cheap, the schema
//! validators being cached. A refused template, or a pack that fails,
//! is logged once per pack version with the pack and the template id.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::workflows::action_types::ActionCatalog;
use crate::workflows::definition;
use crate::workflows::model::{WorkflowCondition, WorkflowDefinition, WorkflowExecutionLimits};
use outreach_core::accounts::Plan;
use outreach_core::state::AppState;
use outreach_plugin_runtime::PluginKind;
use outreach_plugin_runtime::Template as PackTemplate;

/// Default price per tag in cents (docs/decisions/templates.md, "Prices
/// and perks"); a pack's own price wins.
pub fn default_price_cents(tag: &str) -> u32 {
    match tag {
        "beginner" => 0,
        "intermediate" => 1_900,
        _ => 4_900,
    }
}

/// Whether `plan` owns templates tagged `tag` as a perk: Pro owns the
/// intermediate ones, Enterprise every one (beginner templates are free
/// by default, but a pack may price one).
pub fn perk_covers(plan: Plan, tag: &str) -> bool {
    match plan {
        Plan::Enterprise => true,
        Plan::Pro => tag != "advanced",
        Plan::Starter => tag == "beginner",
        Plan::Free => false,
    }
}

/// "$19.00", or "Free".
pub fn price_display(cents: u32) -> String {
    if cents == 0 {
        "Free".to_owned()
    } else {
        format!("${}.{:02}", cents / 100, cents % 100)
    }
}

/// Industries an id prefix stands for (the taxonomy's names).
const PREFIXES: &[(&str, &str)] = &[
    ("saas", "Software"),
    ("software", "Software"),
    ("it", "IT Services"),
    ("agency", "Marketing & Advertising"),
    ("marketing", "Marketing & Advertising"),
    ("ecommerce", "Retail"),
    ("retail", "Retail"),
    ("fintech", "Financial Services"),
    ("finance", "Financial Services"),
    ("health", "Healthcare"),
    ("healthcare", "Healthcare"),
    ("realestate", "Real Estate & Construction"),
    ("edu", "Education"),
    ("education", "Education"),
    ("manufacturing", "Manufacturing"),
    ("logistics", "Transportation & Logistics"),
    ("travel", "Hospitality & Travel"),
    ("media", "Media & Entertainment"),
    ("energy", "Energy & Utilities"),
    ("nonprofit", "Non-profit"),
    ("consulting", "Professional Services"),
];

/// spec/3's `industries`: from the id prefix (`saas_...` is Software),
/// then any `industry` condition's values, then what the pack lists; each
/// once, in that order.
pub fn industries(t: &PackTemplate, conditions: &[WorkflowCondition]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |s: &str| {
        let s = s.trim();
        if !s.is_empty() && !out.iter().any(|o| o.eq_ignore_ascii_case(s)) {
            out.push(s.to_owned());
        }
    };
    let prefix = t.id.split('_').next().unwrap_or_default();
    if let Some((_, name)) = PREFIXES.iter().find(|(p, _)| *p == prefix) {
        add(name);
    }
    for c in conditions.iter().filter(|c| c.field == "industry") {
        if !matches!(c.op.as_str(), "equals" | "in" | "contains") {
            continue;
        }
        match &c.value {
            Value::String(s) => add(s),
            Value::Array(list) => list.iter().filter_map(Value::as_str).for_each(&mut add),
            _ => {}
        }
    }
    for s in &t.industries {
        add(s);
    }
    out
}

/// One checked template with what the host derives from it.
#[derive(Debug, Clone)]
pub struct CatalogTemplate {
    pub id: String,
    pub name: String,
    pub tag: String,
    pub pack: String,
    pub price_cents: u32,
    pub industries: Vec<String>,
    /// The definition an install creates (paused).
    pub definition: WorkflowDefinition,
}

impl CatalogTemplate {
    pub fn is_free(&self) -> bool {
        self.price_cents == 0
    }
}

/// A template's checks as a workflow definition; the error names the
/// field.
pub fn check(
    catalog: &ActionCatalog,
    plugins: &outreach_plugin_runtime::PluginRuntime,
    t: &PackTemplate,
) -> Result<CatalogTemplate, String> {
    let id_ok = !t.id.is_empty()
        && t.id.len() <= 100
        && t.id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !id_ok {
        return Err("id must be 1-100 characters of a-z, 0-9 and _".to_owned());
    }
    let text = |e: outreach_core::error::ApiError| e.to_string();
    let name = definition::check_name(&t.name).map_err(text)?;
    let description = definition::check_description(&t.description).map_err(text)?;
    let (trigger_config, _) =
        definition::check_trigger(&t.trigger_type, &t.trigger_config).map_err(text)?;
    let conditions: Vec<WorkflowCondition> =
        serde_json::from_value(t.conditions.clone()).map_err(|e| format!("conditions: {e}"))?;
    definition::check_conditions(&conditions, "conditions").map_err(text)?;
    let actions: Vec<crate::workflows::model::WorkflowAction> =
        serde_json::from_value(t.actions.clone()).map_err(|e| format!("actions: {e}"))?;
    definition::check_actions(catalog, plugins, &actions).map_err(text)?;
    let price_cents = t.price_cents.unwrap_or_else(|| default_price_cents(&t.tag));
    Ok(CatalogTemplate {
        id: t.id.clone(),
        name: name.clone(),
        tag: t.tag.clone(),
        pack: t.pack.clone(),
        price_cents,
        industries: industries(t, &conditions),
        definition: WorkflowDefinition {
            name,
            description,
            trigger_type: t.trigger_type.clone(),
            trigger_config,
            conditions,
            actions,
            execution_limits: WorkflowExecutionLimits::default(),
            retry_failed: false,
            is_active: false,
        },
    })
}

/// What one pack version answered: its templates, or why it failed.
type PackAnswer = Result<Arc<Vec<PackTemplate>>, String>;

/// The catalogue; a typed extension of the state.
#[derive(Clone, Default)]
pub struct TemplateCatalog {
    /// Per pack id: the version (hash) asked and its answer.
    packs: Arc<Mutex<HashMap<String, (String, PackAnswer)>>>,
    /// (pack hash, template id) pairs whose refusal is logged already.
    logged: Arc<Mutex<HashSet<(String, String)>>>,
}

impl TemplateCatalog {
    /// Every valid template of the loaded packs: first-party packs first
    /// (the runtime's order), a template id taken by an earlier pack
    /// refused in a later one.
    pub async fn templates(&self, state: &AppState) -> Vec<CatalogTemplate> {
        let loaded: Vec<(String, String)> = state
            .plugins
            .list()
            .into_iter()
            .filter(|p| p.kind == PluginKind::TemplatePack)
            .map(|p| (p.id, p.sha256))
            .collect();
        let action_types = state.ext::<ActionCatalog>();
        let mut out: Vec<CatalogTemplate> = Vec::new();
        for (pack, sha) in &loaded {
            let answer = self.answer(state, pack, sha).await;
            let list = match answer {
                Ok(list) => list,
                Err(e) => {
                    self.log_once(
                        sha,
                        "",
                        || tracing::error!(pack = %pack, "template pack refused: {e}"),
                    );
                    continue;
                }
            };
            for t in list.iter() {
                let checked = check(action_types, &state.plugins, t).and_then(|c| {
                    match out.iter().find(|o| o.id == c.id) {
                        Some(o) => Err(format!("id already used by pack {}", o.pack)),
                        None => Ok(c),
                    }
                });
                match checked {
                    Ok(c) => out.push(c),
                    Err(e) => self.log_once(
                        sha,
                        &t.id,
                        || tracing::error!(pack = %pack, template = %t.id, "template refused: {e}"),
                    ),
                }
            }
        }
        self.forget_unloaded(&loaded);
        out
    }

    /// One template by id.
    pub async fn find(&self, state: &AppState, id: &str) -> Option<CatalogTemplate> {
        self.templates(state).await.into_iter().find(|t| t.id == id)
    }

    async fn answer(&self, state: &AppState, pack: &str, sha: &str) -> PackAnswer {
        if let Some((seen, answer)) = self.lock().get(pack)
            && seen == sha
        {
            return answer.clone();
        }
        let answer = state
            .plugins
            .template_pack_templates(pack)
            .await
            .map(Arc::new)
            .map_err(|e| e.to_string());
        self.lock()
            .insert(pack.to_owned(), (sha.to_owned(), answer.clone()));
        answer
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, PackAnswer)>> {
        self.packs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn log_once(&self, sha: &str, id: &str, log: impl FnOnce()) {
        let fresh = self
            .logged
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((sha.to_owned(), id.to_owned()));
        if fresh {
            log();
        }
    }

    fn forget_unloaded(&self, loaded: &[(String, String)]) {
        self.lock()
            .retain(|pack, _| loaded.iter().any(|(id, _)| id == pack));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(id: &str, conditions: Value, industries: &[&str]) -> PackTemplate {
        PackTemplate {
            id: id.to_owned(),
            name: "n".to_owned(),
            description: String::new(),
            tag: "beginner".to_owned(),
            trigger_type: "manual".to_owned(),
            trigger_config: serde_json::json!({}),
            actions: serde_json::json!([]),
            conditions,
            price_cents: None,
            industries: industries.iter().map(|s| s.to_string()).collect(),
            pack: "p".to_owned(),
        }
    }

    #[test]
    fn industries_come_from_the_prefix_conditions_and_the_pack() {
        let conditions: Vec<WorkflowCondition> = serde_json::from_value(serde_json::json!([
            {"field": "industry", "op": "in", "value": ["Retail", "software"]},
            {"field": "country", "value": "DE"},
        ]))
        .unwrap();
        let t = template("saas_x", Value::Null, &["Healthcare", "retail"]);
        assert_eq!(
            industries(&t, &conditions),
            vec!["Software", "Retail", "Healthcare"]
        );
        assert!(industries(&template("general_x", Value::Null, &[]), &[]).is_empty());
    }

    #[test]
    fn prices_and_perks_follow_the_tag() {
        assert_eq!(price_display(default_price_cents("beginner")), "Free");
        assert_eq!(price_display(default_price_cents("intermediate")), "$19.00");
        assert_eq!(price_display(4_950), "$49.50");
        assert!(perk_covers(Plan::Pro, "intermediate") && !perk_covers(Plan::Pro, "advanced"));
        assert!(perk_covers(Plan::Enterprise, "advanced"));
        assert!(!perk_covers(Plan::Starter, "intermediate"));
    }
}
