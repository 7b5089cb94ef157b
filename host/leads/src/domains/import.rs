//! `outreach domains import FILE`: domains into the pool from a CSV or TSV
//! file (the domain column found as spec/2's list import finds it) or JSON
//! lines carrying record fields.
//!
//! - A new domain is added with the fields its line carries (`imported`),
//!   with `--enrich` queued for enrichment instead.
//! - A known domain with fields on its line gets those fields (`updated`);
//!   without fields, or repeated in the file, it is `skipped`.
//! - A line whose domain the pool refuses, or whose JSON or fields are
//!   malformed (unknown field names included), is `invalid`.
//!
//! Lines are written in batches of 500, one transaction each, so a large
//! file neither holds one long transaction nor loses more than a batch to
//! a crash; re-running the import skips what is already there.

use std::collections::HashSet;
use std::io::BufRead;

use serde::Serialize;
use serde_json::{Map, Value};
use sqlx::AnyConnection;

use super::record::{IMPORTED, Technology};
use super::service::BUSINESS_TYPES;
use super::store::{self, TAG_TECHNOLOGY};
use super::{facets, pipeline};
use crate::domain_csv::{DomainCell, DomainRows, sniff_delimiter};
use outreach_core::state::AppState;
use outreach_domain_analysis::domain::normalise;

/// The `--json` summary.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub imported: u64,
    pub updated: u64,
    pub skipped: u64,
    pub invalid: u64,
}

/// The file's kind, by its name or first character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    JsonLines,
}

const BATCH: usize = 500;

/// Text fields a JSON line may carry, as the record names them.
const TEXT_FIELDS: &[&str] = &[
    "company_name",
    "summary",
    "industry",
    "sub_industry",
    "website_email",
    "phone",
    "employees_range",
    "registrant_country",
    "ip_country",
    "city",
    "language",
    "mx_provider",
];

/// One line: its domain and the columns to set.
type Row = (String, Vec<(&'static str, Value)>);

/// Reads `input` and writes the pool; `progress` hears the bytes read so
/// far after each batch.
pub async fn import(
    state: &AppState,
    input: impl BufRead,
    format: Format,
    enrich: bool,
    mut progress: impl FnMut(u64),
) -> anyhow::Result<Summary> {
    let mut summary = Summary::default();
    let mut seen: HashSet<String> = HashSet::new();
    let mut batch: Vec<Row> = Vec::with_capacity(BATCH);
    let mut read = 0u64;
    let mut lines = Lines::new(input, format)?;
    while let Some(line) = lines.next_line()? {
        read += line.bytes;
        match line.row {
            Ok(Some((domain, fields))) => {
                if !seen.insert(domain.clone()) {
                    summary.skipped += 1;
                    continue;
                }
                batch.push((domain, fields));
            }
            Ok(None) => {}
            Err(()) => summary.invalid += 1,
        }
        if batch.len() >= BATCH {
            write(state, &mut batch, enrich, &mut summary).await?;
            progress(read);
        }
    }
    write(state, &mut batch, enrich, &mut summary).await?;
    progress(read);
    Ok(summary)
}

async fn write(
    state: &AppState,
    batch: &mut Vec<Row>,
    enrich: bool,
    summary: &mut Summary,
) -> anyhow::Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let now = state.clock.now_ms();
    let mut tx = state.db.pool.begin().await?;
    let mut added = Vec::new();
    for (domain, fields) in batch.iter() {
        let inserted: Option<i64> = sqlx::query_scalar(
            "INSERT INTO domains (domain, status, source, created_at, refresh_at, updated_at) \
             VALUES ($1, $2, 'import', $3, NULL, $3) ON CONFLICT (domain) DO NOTHING RETURNING id",
        )
        .bind(domain)
        .bind(IMPORTED)
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?;
        match inserted {
            Some(id) => {
                set_fields(&mut tx, id, fields).await?;
                facets::refresh(&mut tx, id, now).await?;
                summary.imported += 1;
                added.push(domain.clone());
            }
            None if fields.is_empty() => summary.skipped += 1,
            None => {
                let id: i64 = sqlx::query_scalar("SELECT id FROM domains WHERE domain = $1")
                    .bind(domain)
                    .fetch_one(&mut *tx)
                    .await?;
                set_fields(&mut tx, id, fields).await?;
                facets::refresh(&mut tx, id, now).await?;
                summary.updated += 1;
            }
        }
    }
    tx.commit().await?;
    if enrich && !added.is_empty() {
        // One job each; the records stay `imported` until enriched.
        pipeline::submit(state, &added, "import", None).await?;
    }
    batch.clear();
    Ok(())
}

async fn set_fields(
    conn: &mut AnyConnection,
    id: i64,
    fields: &[(&'static str, Value)],
) -> sqlx::Result<()> {
    for (column, value) in fields {
        // Column names come from the fixed lists above, never from input.
        let sql = format!("UPDATE domains SET {column} = $1 WHERE id = $2");
        let q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(false);
        let q = match value {
            Value::String(s) => q.bind(s.clone()),
            Value::Number(n) if n.is_i64() => q.bind(n.as_i64()),
            Value::Number(n) => q.bind(n.as_f64()),
            Value::Bool(b) => q.bind(i64::from(*b)),
            other => q.bind(other.to_string()),
        };
        q.bind(id).execute(&mut *conn).await?;
        // Imported technologies are searchable at once, like enriched ones.
        if *column == "technologies" {
            let names = value
                .as_str()
                .and_then(|t| serde_json::from_str::<Vec<Technology>>(t).ok())
                .unwrap_or_default();
            let tags = names
                .into_iter()
                .map(|t| (TAG_TECHNOLOGY, t.name.to_lowercase()))
                .collect();
            store::replace_tags(conn, id, &[TAG_TECHNOLOGY], tags).await?;
        }
    }
    Ok(())
}

/// One line read: its size, and its domain and fields, nothing (a header
/// or blank line), or invalid.
struct Line {
    bytes: u64,
    row: Result<Option<Row>, ()>,
}

/// The file's lines: JSON lines one by one, CSV records through
/// [`DomainRows`].
enum Lines<R: BufRead> {
    Json(R),
    Csv(DomainRows<R>),
}

impl<R: BufRead> Lines<R> {
    fn new(mut input: R, format: Format) -> std::io::Result<Self> {
        Ok(match format {
            Format::JsonLines => Lines::Json(input),
            Format::Csv => {
                let delimiter = sniff_delimiter(input.fill_buf()?);
                Lines::Csv(DomainRows::new(input, delimiter))
            }
        })
    }

    fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        match self {
            Lines::Json(input) => {
                // Invalid UTF-8 is read lossily: the domain either survives
                // it or is refused by the normalisation.
                let mut raw = Vec::new();
                let n = input.read_until(b'\n', &mut raw)?;
                if n == 0 {
                    return Ok(None);
                }
                let text = String::from_utf8_lossy(&raw);
                let text = text.trim_start_matches('\u{feff}').trim();
                let row = if text.is_empty() {
                    Ok(None)
                } else {
                    json_row(text)
                };
                Ok(Some(Line {
                    bytes: n as u64,
                    row,
                }))
            }
            Lines::Csv(rows) => {
                let Some((bytes, cell)) = rows.next_row().map_err(std::io::Error::other)? else {
                    return Ok(None);
                };
                let row = match cell {
                    DomainCell::Skip => Ok(None),
                    DomainCell::Domain(d) => Ok(Some((d, Vec::new()))),
                    DomainCell::Malformed => Err(()),
                };
                Ok(Some(Line { bytes, row }))
            }
        }
    }
}

fn json_row(text: &str) -> Result<Option<Row>, ()> {
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(text) else {
        return Err(());
    };
    let domain = obj.get("domain").and_then(Value::as_str).ok_or(())?;
    let domain = normalise(domain).map_err(|_| ())?;
    Ok(Some((domain, fields(&obj)?)))
}

/// The columns a JSON line sets, each checked; any unknown or malformed
/// field makes the line invalid.
fn fields(obj: &Map<String, Value>) -> Result<Vec<(&'static str, Value)>, ()> {
    let mut out = Vec::new();
    for (key, value) in obj {
        if key == "domain" || value.is_null() {
            continue;
        }
        if let Some(col) = TEXT_FIELDS.iter().find(|f| **f == key) {
            let text = value.as_str().ok_or(())?.trim();
            if text.is_empty() || text.len() > 2000 {
                return Err(());
            }
            out.push((*col, Value::String(text.to_string())));
            continue;
        }
        let column: &'static str = match key.as_str() {
            "business_type" => {
                let b = value.as_str().ok_or(())?;
                if !BUSINESS_TYPES.contains(&b) {
                    return Err(());
                }
                "business_type"
            }
            "confidence" => {
                let c = value.as_f64().ok_or(())?;
                if !(0.0..=1.0).contains(&c) {
                    return Err(());
                }
                "confidence"
            }
            "is_trusted" => {
                value.as_bool().ok_or(())?;
                "is_trusted"
            }
            "registered_at" => {
                let ms = value
                    .as_str()
                    .and_then(super::service::parse_date)
                    .ok_or(())?;
                out.push(("registered_at", Value::from(ms)));
                continue;
            }
            "technologies" => {
                let techs = technologies(value).ok_or(())?;
                out.push(("technologies", Value::String(techs.to_string())));
                continue;
            }
            "social_links" => {
                let links = value.as_object().ok_or(())?;
                if !links.values().all(Value::is_string) {
                    return Err(());
                }
                out.push(("social_links", Value::String(value.to_string())));
                continue;
            }
            _ => return Err(()),
        };
        out.push((column, value.clone()));
    }
    Ok(out)
}

/// Technologies as names, or objects with a name, into the record's shape.
fn technologies(value: &Value) -> Option<Value> {
    let list = value.as_array()?;
    let mut out = Vec::with_capacity(list.len());
    for t in list {
        let (name, categories, version) = match t {
            Value::String(name) => (name.clone(), Vec::new(), None),
            Value::Object(o) => (
                o.get("name")?.as_str()?.to_string(),
                o.get("categories")
                    .and_then(Value::as_array)
                    .map(|c| {
                        c.iter()
                            .filter_map(Value::as_str)
                            .map(String::from)
                            .collect()
                    })
                    .unwrap_or_default(),
                o.get("version").and_then(Value::as_str).map(String::from),
            ),
            _ => return None,
        };
        out.push(serde_json::json!({
            "name": name, "categories": categories, "version": version, "confidence": 100
        }));
    }
    Some(Value::Array(out))
}
