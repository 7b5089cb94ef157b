//! Tests of the assembled server: every area's routes are served and
//! documented.

use outreach_core::http::openapi::METHODS;
use outreach_core::testing::TestApp;

use crate::AREAS;

#[tokio::test]
async fn every_documented_route_is_served() {
    let app = TestApp::with_areas(&AREAS, |_| {}).await;
    let doc = outreach_core::http::app::openapi(&AREAS);
    let served = app.call("GET", "/openapi.json", None, None).await;
    assert_eq!(served.status, 200);
    assert_eq!(
        served.body["openapi"].as_str().map(|v| &v[..3]),
        Some("3.1")
    );
    let mut count = 0;
    assert!(
        doc["paths"]
            .as_object()
            .unwrap()
            .contains_key("/v1/ai/providers"),
        "the vendor keys area is assembled"
    );
    for (path, item) in doc["paths"].as_object().unwrap() {
        let concrete = path.replace("{client_id}", "1").replace("{key_id}", "1");
        for method in ["get", "post", "put", "patch", "delete"] {
            let item_json = item.clone();
            if item_json.get(method).is_none() {
                continue;
            }
            count += 1;
            let r = app
                .call(&method.to_uppercase(), &concrete, None, None)
                .await;
            assert_ne!(r.status, 405, "{method} {path} documented but not routed");
            assert!(
                !(r.status == 404 && r.detail() == "Not Found"),
                "{method} {path} documented but not routed"
            );
            // Every response of every documented route has a description.
            for (status, resp) in item_json[method]["responses"].as_object().unwrap() {
                assert!(
                    resp["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{method} {path} {status}"
                );
            }
        }
    }
    assert!(count >= 20, "only {count} operations documented");
}

/// Routes are registered only through `routes!` (which also documents them),
/// so a route cannot be served without appearing in the OpenAPI document.
#[test]
fn no_route_is_registered_outside_the_openapi_router() {
    fn walk(dir: &std::path::Path, hits: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, hits);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                // app.rs serves /openapi.json itself; server.rs is the separate metrics listener.
                // Test files (`tests.rs`, `*_tests.rs`) serve stand-in sites.
                if name == "app.rs" || name == "server.rs" || name.ends_with("tests.rs") {
                    continue;
                }
                if text.contains(concat!(".route", "(")) {
                    hits.push(path.display().to_string());
                }
            }
        }
    }
    // Every crate under host/ that serves HTTP: the server and its areas.
    let host = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut hits = Vec::new();
    let mut crates = 0;
    for entry in std::fs::read_dir(&host).unwrap() {
        let src = entry.unwrap().path().join("src");
        if src.is_dir() {
            crates += 1;
            walk(&src, &mut hits);
        }
    }
    assert!(
        crates >= 6,
        "found only {crates} crates under {}",
        host.display()
    );
    assert!(hits.is_empty(), "undocumented routes in {hits:?}");
}

/// utoipa names a schema after its Rust type, and merging documents keeps
/// one of two same-named schemas silently; a second `Health` once replaced
/// the `/healthz` answer's schema. Each area's schemas must agree with
/// every other area's of the same name.
#[test]
fn schema_names_do_not_collide_across_areas() {
    use std::collections::BTreeMap;
    let mut seen: BTreeMap<String, (String, serde_json::Value)> = BTreeMap::new();
    let core_only = outreach_core::http::app::openapi(&[]);
    let mut docs = vec![("core (health)".to_owned(), core_only)];
    for area in &AREAS {
        for (kind, router) in [("v1", (area.v1)()), ("public", (area.public)())] {
            let (_, doc) = router.split_for_parts();
            docs.push((
                format!("{} {kind}", area.name),
                serde_json::to_value(doc).unwrap(),
            ));
        }
    }
    for (owner, doc) in docs {
        let Some(schemas) = doc["components"]["schemas"].as_object() else {
            continue;
        };
        for (name, schema) in schemas {
            match seen.get(name) {
                Some((first, earlier)) => assert_eq!(
                    earlier, schema,
                    "schema {name} of {owner} differs from {first}'s: rename one type"
                ),
                None => {
                    seen.insert(name.clone(), (owner.clone(), schema.clone()));
                }
            }
        }
    }
}

/// Client generators name a method after each operationId, and the
/// specification requires them to be unique (`http::openapi::
/// operation_id_problems` explains why the assembly refuses duplicates
/// instead of renaming them). Checked here on the assembled document
/// directly, so the check holds even if the assembly's own assertion goes.
#[test]
fn every_operation_has_its_own_id() {
    use std::collections::BTreeMap;
    let doc = outreach_core::http::app::openapi(&AREAS);
    let mut owners: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if !METHODS.contains(&method.as_str()) {
                continue;
            }
            let id = op["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path} has no operationId"));
            owners
                .entry(id.to_owned())
                .or_default()
                .push(format!("{method} {path}"));
        }
    }
    let shared: Vec<_> = owners.iter().filter(|(_, ops)| ops.len() > 1).collect();
    assert!(
        shared.is_empty(),
        "operationIds naming several operations: {shared:?}"
    );
    assert!(owners.len() >= 20, "only {} operations", owners.len());
}

/// Bodies that are not JSON are typed for what they are: text as a string,
/// anything else (the open pixel's GIF, uploaded files) as binary, which
/// generated clients turn into bytes. utoipa documents a bare `Vec<u8>` as
/// an array of integers, which clients would try to parse as JSON.
#[test]
fn non_json_bodies_are_strings_or_binary() {
    fn is_binary(schema: &serde_json::Value) -> bool {
        schema["type"] == "string"
            && (schema["format"] == "binary" || schema.get("contentMediaType").is_some())
    }
    fn byte_array(schema: &serde_json::Value) -> bool {
        schema["type"] == "array" && schema["items"]["type"] == "integer"
    }
    let doc = outreach_core::http::app::openapi(&AREAS);
    let mut binary = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if !METHODS.contains(&method.as_str()) {
                continue;
            }
            let mut bodies = vec![("request".to_owned(), &op["requestBody"])];
            for (status, response) in op["responses"].as_object().unwrap() {
                bodies.push((status.clone(), response));
            }
            for (which, body) in bodies {
                let Some(content) = body["content"].as_object() else {
                    continue;
                };
                for (media, entry) in content {
                    let schema = &entry["schema"];
                    let at = format!("{method} {path} {which} {media}");
                    if media == "application/json" {
                        continue;
                    } else if media.starts_with("text/") {
                        assert_eq!(schema["type"], "string", "{at}");
                    } else if media == "multipart/form-data"
                        || media == "application/x-www-form-urlencoded"
                    {
                        // Form fields refer to a component or are inline.
                        let fields = match schema["$ref"].as_str() {
                            Some(r) => {
                                let name = r.rsplit('/').next().unwrap();
                                &doc["components"]["schemas"][name]["properties"]
                            }
                            None => &schema["properties"],
                        };
                        for (name, field) in fields.as_object().into_iter().flatten() {
                            assert!(!byte_array(field), "{at} field {name}: bytes as integers");
                            binary += usize::from(is_binary(field));
                        }
                    } else {
                        assert!(is_binary(schema), "{at}: not binary: {schema}");
                        binary += 1;
                    }
                }
            }
        }
    }
    assert!(
        binary >= 3,
        "the pixel and two uploads are binary; found {binary}"
    );
}
