//! One attempt of one action, by type: the built-ins (through the ports of
//! the lists, scoring, pool and sequences areas, the SSRF-guarded HTTP
//! client, the workflow memory) and `workflow-action` components.

use std::collections::HashMap;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::conditions::all_hold;
use super::template::{Scope, memory_keys};
use super::{Failure, Outcome, RunEnv, Working, run_list};
use crate::connections::apply::ConnectionCache;
use crate::workflows::action_types::{ActionCatalog, Source};
use crate::workflows::definition::parse_when;
use crate::workflows::http_action::{
    HttpActionClient, HttpFailure, HttpRequestConfig, capture, iterate_items,
};
use crate::workflows::model::{WorkflowAction, WorkflowCondition};
use crate::workflows::{ai_actions, approvals, memory, runs, store};
use outreach_core::ports::{AutoReply, SharedOutboundPort, SharedPoolPort};

/// Runs one attempt of `action` on the working state.
pub fn execute<'a>(
    env: &'a RunEnv<'a>,
    action: &'a WorkflowAction,
    working: &'a Working,
) -> BoxFuture<'a, Result<Outcome, Failure>> {
    Box::pin(async move {
        // These read their raw config: http_request renders it per call
        // (per item with per_domain), the branching types hand nested
        // actions on unrendered, to be rendered when they run.
        match action.action_type.as_str() {
            "http_request" => return http_request(env, &action.config, working).await,
            "conditional_branch" => return branch(env, &action.config, working).await,
            "parallel_split" => return parallel(env, &action.config, working).await,
            _ => {}
        }
        let config = render(env, &action.config, working, None).await?;
        let state = env.state;
        let items = working.items.clone();
        match action.action_type.as_str() {
            "enroll_in_sequence" => enroll(env, &config, items).await,
            "add_to_list" => {
                let list_id = id(&config, "list_id")?;
                let port = state.ext::<SharedPoolPort>();
                let result = port.add_to_list(state, env.actor, list_id, &items).await?;
                Ok(Outcome::pass(items, result))
            }
            "score_domains" => {
                let rule_id = id(&config, "rule_id")?;
                let port = state.ext::<SharedPoolPort>();
                let scored = port.score(state, env.actor, rule_id, items).await?;
                let n = scored.len();
                Ok(Outcome::pass(scored, json!({"scored": n})))
            }
            "enrich" => {
                let fields: Vec<String> = serde_json::from_value(config["fields"].clone())
                    .map_err(|e| Failure::fatal(format!("config.fields: {e}")))?;
                let domains = domains_of(&items);
                let port = state.ext::<SharedPoolPort>();
                let result = port.enrich(state, env.actor, &domains, &fields).await?;
                Ok(Outcome::pass(items, result))
            }
            "merge_branches" => Ok(merge(&config, working)),
            "cross_run_memory" => memory::action(env, &config, working).await,
            "auto_reply_template" => {
                let reply = AutoReply {
                    subject: config["template_subject"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    body: config["template_body"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    only_classes: serde_json::from_value(config["only_classes"].clone())
                        .unwrap_or_default(),
                };
                let port = state.ext::<SharedOutboundPort>();
                let result = port.auto_reply(state, env.actor, &reply, &items).await?;
                Ok(Outcome::pass(items, result))
            }
            "schedule_workflow" => schedule(env, &config, items).await,
            "sub_workflow" => sub_workflow(env, &config, working).await,
            "wait_for_approval" => approvals::service::wait(env, &config, items).await,
            "ai_extract" | "ai_write" => {
                ai_actions::run(env, &action.action_type, &config, items).await
            }
            other => component(env, other, &config, items).await,
        }
    })
}

fn id(config: &Value, key: &str) -> Result<i64, Failure> {
    config[key]
        .as_i64()
        .ok_or_else(|| Failure::fatal(format!("config.{key} must be an integer")))
}

fn domains_of(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| i.get("domain").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// Renders a config for the run (or for one item), loading the memory
/// keys it mentions first.
async fn render(
    env: &RunEnv<'_>,
    config: &Value,
    working: &Working,
    item: Option<&Value>,
) -> Result<Value, Failure> {
    let mut keys = Vec::new();
    memory_keys(config, &mut keys);
    let memory = if keys.is_empty() {
        HashMap::new()
    } else {
        memory::recall_many(env.state, env.workflow_id, &keys)
            .await
            .map_err(|e| Failure::retry(format!("reading workflow memory: {e}")))?
    };
    let scope = Scope {
        item,
        items: &working.items,
        previous_result: &working.previous_result,
        trigger: env.trigger,
        memory: &memory,
    };
    Ok(scope.render(config))
}

async fn http_request(
    env: &RunEnv<'_>,
    raw: &Value,
    working: &Working,
) -> Result<Outcome, Failure> {
    let client = env.state.ext::<HttpActionClient>();
    let per_domain = raw["per_domain"].as_bool().unwrap_or(false);
    let mut connection = ConnectionCache::default();
    if !per_domain {
        let config = render(env, raw, working, None).await?;
        let request = HttpRequestConfig::from_config(&config).map_err(Failure::fatal)?;
        let request = connection.apply(env, request).await?;
        let response = client
            .send(&request)
            .await
            .map_err(|f| failed(&request, &f, None))?;
        let captured = request
            .capture_field
            .as_deref()
            .and_then(|path| capture(&response.body, path));
        let items = match (&captured, request.iterate_into_domains) {
            (Some(c), true) => iterate_items(c).unwrap_or_else(|| working.items.clone()),
            _ => working.items.clone(),
        };
        let mut result = json!({
            "method": request.method,
            "url": request.url,
            "headers": request.recorded_headers(),
            "status": response.status,
            "elapsed_ms": response.elapsed_ms,
        });
        note_connection(&mut result, &request);
        let previous = captured
            .clone()
            .unwrap_or_else(|| json!({"status": response.status}));
        return Ok(Outcome {
            items,
            previous_result: Some(previous),
            result,
            captured,
            ..Outcome::default()
        });
    }
    // Per item: each item gains `http_status` and, with capture_field,
    // `http_result`; one failed call fails the action.
    let mut items = Vec::with_capacity(working.items.len());
    let mut statuses = Vec::new();
    let mut request_shown = Value::Null;
    for item in &working.items {
        let config = render(env, raw, working, Some(item)).await?;
        let request = HttpRequestConfig::from_config(&config).map_err(Failure::fatal)?;
        let request = connection.apply(env, request).await?;
        let domain = item.get("domain").and_then(Value::as_str).unwrap_or("item");
        let response = client
            .send(&request)
            .await
            .map_err(|f| failed(&request, &f, Some(domain)))?;
        if request_shown.is_null() {
            request_shown =
                json!({"method": request.method, "headers": request.recorded_headers()});
            note_connection(&mut request_shown, &request);
        }
        let mut item = item.clone();
        if let Value::Object(o) = &mut item {
            o.insert("http_status".into(), json!(response.status));
            if let Some(c) = request
                .capture_field
                .as_deref()
                .and_then(|p| capture(&response.body, p))
            {
                o.insert("http_result".into(), c);
            }
        }
        statuses.push(response.status);
        items.push(item);
    }
    let captured: Vec<Value> = items
        .iter()
        .filter_map(|i| i.get("http_result").cloned())
        .collect();
    Ok(Outcome {
        result: json!({"request": request_shown, "calls": statuses.len(), "statuses": statuses}),
        previous_result: Some(Value::Array(captured.clone())),
        captured: (!captured.is_empty()).then_some(Value::Array(captured)),
        items,
        ..Outcome::default()
    })
}

/// The run record's error for a failed call, without the values of a
/// saved connection's headers (a receiver may echo them in its answer).
fn failed(request: &HttpRequestConfig, f: &HttpFailure, domain: Option<&str>) -> Failure {
    let message = match domain {
        Some(domain) => format!("{domain}: {f}"),
        None => f.to_string(),
    };
    Failure {
        retryable: f.is_retryable(),
        message: request.scrub(&message),
    }
}

/// Names the saved connection in the record, and says when it no longer
/// existed and the action ran on its own URL.
fn note_connection(result: &mut Value, request: &HttpRequestConfig) {
    if let Some(id) = request.connection_id {
        result["connection_id"] = json!(id);
        if request.connection.is_none() {
            result["connection_missing"] = json!(true);
        }
    }
}

async fn enroll(env: &RunEnv<'_>, config: &Value, items: Vec<Value>) -> Result<Outcome, Failure> {
    let sequence_id = id(config, "sequence_id")?;
    let mut contacts = Vec::new();
    let mut without_address = 0usize;
    for item in &items {
        let email = ["email", "website_email"].iter().find_map(|k| {
            item.get(*k)
                .and_then(Value::as_str)
                .filter(|e| e.contains('@'))
        });
        match email {
            Some(email) => {
                let mut contact = item.clone();
                if let Value::Object(o) = &mut contact {
                    o.insert("email".into(), json!(email));
                    if !o.contains_key("company")
                        && let Some(d) = o.get("domain").cloned()
                    {
                        o.insert("company".into(), d);
                    }
                }
                contacts.push(contact);
            }
            None => without_address += 1,
        }
    }
    let mut result = if contacts.is_empty() {
        json!({"enrolled": 0, "skipped": 0})
    } else {
        let port = env.state.ext::<SharedOutboundPort>();
        port.enroll(env.state, env.actor, sequence_id, &contacts)
            .await?
    };
    result["skipped_without_email"] = json!(without_address);
    Ok(Outcome::pass(items, result))
}

fn action_list(v: &Value) -> Vec<WorkflowAction> {
    serde_json::from_value(v.clone()).unwrap_or_default()
}

/// Each item goes down the first branch whose `when` holds; items no
/// branch takes go down `else`, or on unchanged.
async fn branch(env: &RunEnv<'_>, raw: &Value, working: &Working) -> Result<Outcome, Failure> {
    let branches = raw["branches"].as_array().cloned().unwrap_or_default();
    let whens: Vec<Vec<WorkflowCondition>> = branches
        .iter()
        .map(|b| parse_when(&b["when"]).unwrap_or_default())
        .collect();
    let mut groups: Vec<Vec<Value>> = vec![Vec::new(); branches.len()];
    let mut rest = Vec::new();
    for item in &working.items {
        match whens.iter().position(|w| all_hold(w, item, env.trigger)) {
            Some(b) => groups[b].push(item.clone()),
            None => rest.push(item.clone()),
        }
    }
    let mut out = Vec::new();
    let mut shown = Vec::new();
    let mut previous = None;
    for (b, group) in groups.into_iter().enumerate() {
        let input = group.len();
        if group.is_empty() {
            shown.push(json!({"matched": 0, "output": 0}));
            continue;
        }
        let done = run_list(
            env,
            &action_list(&branches[b]["then"]),
            sub_working(working, group),
        )
        .await?;
        shown.push(json!({"matched": input, "output": done.items.len()}));
        previous = Some(done.previous_result);
        out.extend(done.items);
    }
    let else_input = rest.len();
    let else_list = action_list(&raw["else"]);
    if !else_list.is_empty() && !rest.is_empty() {
        let done = run_list(env, &else_list, sub_working(working, rest)).await?;
        previous = Some(done.previous_result);
        out.extend(done.items);
    } else {
        out.extend(rest);
    }
    Ok(Outcome {
        items: out,
        previous_result: previous,
        result: json!({"branches": shown, "else": else_input}),
        ..Outcome::default()
    })
}

fn sub_working(working: &Working, items: Vec<Value>) -> Working {
    Working {
        items,
        previous_result: working.previous_result.clone(),
        branches: None,
    }
}

/// Runs each branch on a copy of the items at once; the items after it
/// are the union (by domain) until `merge_branches` says otherwise.
async fn parallel(env: &RunEnv<'_>, raw: &Value, working: &Working) -> Result<Outcome, Failure> {
    let lists: Vec<Vec<WorkflowAction>> = raw["branches"]
        .as_array()
        .map(|b| b.iter().map(action_list).collect())
        .unwrap_or_default();
    let runs = lists
        .iter()
        .map(|list| run_list(env, list, sub_working(working, working.items.clone())));
    let done = futures::future::join_all(runs).await;
    let mut outputs = Vec::with_capacity(done.len());
    for (b, d) in done.into_iter().enumerate() {
        let d = d.map_err(|f| Failure {
            message: format!("branch {b}: {}", f.message),
            retryable: f.retryable,
        })?;
        outputs.push(d.items);
    }
    let counts: Vec<usize> = outputs.iter().map(Vec::len).collect();
    let items = merged(&outputs, "domain", false);
    Ok(Outcome {
        items,
        result: json!({"branches": counts}),
        branches: Some(Some(outputs)),
        ..Outcome::default()
    })
}

fn merge(config: &Value, working: &Working) -> Outcome {
    let Some(outputs) = &working.branches else {
        return Outcome::pass(
            working.items.clone(),
            json!({"merged": false, "reason": "no parallel_split before this action"}),
        );
    };
    let key = config["key"].as_str().unwrap_or("domain");
    let intersection = config["strategy"].as_str() == Some("intersection");
    let items = merged(outputs, key, intersection);
    Outcome {
        result: json!({
            "strategy": if intersection { "intersection" } else { "union" },
            "key": key,
            "branches": outputs.iter().map(Vec::len).collect::<Vec<_>>(),
            "output": items.len(),
        }),
        items,
        branches: Some(None),
        ..Outcome::default()
    }
}

/// Union (first-seen order; later branches' fields added to an item seen
/// earlier) or intersection (items every branch kept) by `key`. Items
/// without the key are kept once each in a union, dropped by an
/// intersection.
fn merged(outputs: &[Vec<Value>], key: &str, intersection: bool) -> Vec<Value> {
    let mut order: Vec<String> = Vec::new();
    let mut by_key: HashMap<String, (Value, usize)> = HashMap::new();
    let mut keyless = Vec::new();
    for output in outputs {
        let mut seen_here = std::collections::HashSet::new();
        for item in output {
            let Some(k) = item
                .get(key)
                .map(|v| v.as_str().map(str::to_owned).unwrap_or(v.to_string()))
            else {
                keyless.push(item.clone());
                continue;
            };
            if !seen_here.insert(k.clone()) {
                continue;
            }
            match by_key.get_mut(&k) {
                Some((existing, n)) => {
                    *n += 1;
                    if let (Value::Object(e), Value::Object(new)) = (existing, item) {
                        for (f, v) in new {
                            e.entry(f.clone()).or_insert_with(|| v.clone());
                        }
                    }
                }
                None => {
                    order.push(k.clone());
                    by_key.insert(k, (item.clone(), 1));
                }
            }
        }
    }
    let mut out: Vec<Value> = order
        .into_iter()
        .filter_map(|k| by_key.remove(&k))
        .filter(|(_, n)| !intersection || *n == outputs.len())
        .map(|(v, _)| v)
        .collect();
    if !intersection {
        out.extend(keyless);
    }
    out
}

async fn schedule(env: &RunEnv<'_>, config: &Value, items: Vec<Value>) -> Result<Outcome, Failure> {
    let target = id(config, "workflow_id")?;
    let delay = config["delay_seconds"].as_i64().unwrap_or(0).max(0);
    let mut conn = env
        .state
        .db
        .pool
        .acquire()
        .await
        .map_err(|e| Failure::retry(e.to_string()))?;
    let Some(row) = store::get(&mut conn, env.actor.account_id, target)
        .await
        .map_err(|e| Failure::retry(e.to_string()))?
    else {
        return Err(Failure::fatal("Workflow not found"));
    };
    refuse_unfilled(&row.definition, target)?;
    let now = env.state.clock.now_ms();
    let run = runs::NewRun {
        workflow_id: target,
        account_id: env.actor.account_id,
        trigger_event: "schedule_workflow".to_owned(),
        trigger_data: json!({"workflow_id": env.workflow_id, "run_id": env.run_id}),
        items: Some(items.clone()),
        due_at: now + delay * 1000,
        rerun_of: None,
        resume_at: None,
    };
    let run_id = runs::enqueue(&mut conn, &run, now)
        .await
        .map_err(|e| Failure::retry(e.to_string()))?;
    runs::wake(env.state);
    Ok(Outcome::pass(
        items,
        json!({"workflow_id": target, "run_id": run_id, "delay_seconds": delay}),
    ))
}

async fn sub_workflow(
    env: &RunEnv<'_>,
    config: &Value,
    working: &Working,
) -> Result<Outcome, Failure> {
    let target = id(config, "workflow_id")?;
    if target == env.workflow_id || env.inline_stack.contains(&target) {
        return Err(Failure::fatal(format!(
            "sub_workflow cycle: workflow {target} is already running inline"
        )));
    }
    let mut conn = env
        .state
        .db
        .pool
        .acquire()
        .await
        .map_err(|e| Failure::retry(e.to_string()))?;
    let Some(row) = store::get(&mut conn, env.actor.account_id, target)
        .await
        .map_err(|e| Failure::retry(e.to_string()))?
    else {
        return Err(Failure::fatal("Workflow not found"));
    };
    drop(conn);
    refuse_unfilled(&row.definition, target)?;
    let mut inner = env.clone();
    inner.inline_stack.push(env.workflow_id);
    inner.workflow_id = target;
    let input: Vec<Value> = working
        .items
        .iter()
        .filter(|i| all_hold(&row.definition.conditions, i, env.trigger))
        .cloned()
        .collect();
    let entered = input.len();
    let done = run_list(&inner, &row.definition.actions, sub_working(working, input)).await?;
    Ok(Outcome {
        result: json!({"workflow_id": target, "entered": entered, "output": done.items.len()}),
        items: done.items,
        previous_result: Some(done.previous_result),
        ..Outcome::default()
    })
}

/// A `workflow-action` component: its config is checked against its
/// schema again (a reloaded plugin may have changed it), then it runs in
/// its sandbox; a trap, a timeout or the memory cap fails the attempt.
async fn component(
    env: &RunEnv<'_>,
    type_name: &str,
    config: &Value,
    items: Vec<Value>,
) -> Result<Outcome, Failure> {
    let state = env.state;
    let catalog = state.ext::<ActionCatalog>();
    let Some(resolved) = catalog.resolve(&state.plugins, type_name) else {
        return Err(Failure::fatal(format!(
            "unknown action type '{type_name}' (its plugin is no longer loaded)"
        )));
    };
    catalog
        .check(&state.plugins, type_name, &resolved, config, "config")
        .map_err(Failure::fatal)?;
    let Source::Plugin { plugin_id } = resolved.source else {
        return Err(Failure::fatal(format!("'{type_name}' is not a component")));
    };
    let out = state
        .plugins
        .workflow_action_execute(&plugin_id, config, &items)
        .await
        .map_err(|e| Failure::retry(format!("{plugin_id}: {e}")))?;
    let n = out.items.len();
    Ok(Outcome {
        items: out.items,
        result: json!({"plugin": plugin_id, "output": n, "previous_result": out.previous_result}),
        previous_result: out.previous_result,
        ..Outcome::default()
    })
}

/// A workflow installed from a template or the marketplace cannot be run
/// by another one before its placeholders are filled.
fn refuse_unfilled(
    d: &crate::workflows::model::WorkflowDefinition,
    target: i64,
) -> Result<(), Failure> {
    crate::workflows::placeholders::refuse_unfilled(d, "run")
        .map_err(|e| Failure::fatal(format!("workflow {target}: {e}")))
}
