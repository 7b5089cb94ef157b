//! The condition model of a scoring rule: which fields of a domain record a
//! condition may read (`fields.rs` lists them), which ops apply to each
//! kind of field, how a rule's conditions are checked and compiled, and how
//! a compiled rule scores a record. Pure: no database, no clock.
//!
//! - A condition is `{field, op, value, points}`. Fields are the record's
//!   scalar fields (text, number or flag) and four lists (`technologies` by
//!   name, `signals` = alert and audience signals together, `likely_buys`,
//!   `gaps`); `country` is the registrant's country, else the server's,
//!   as search reads it.
//! - Ops per kind: text `equals`, `not_equals`, `in`, `contains` (substring),
//!   `exists`; number `equals`, `not_equals`, `in`, `gte`, `lte`, `exists`
//!   (always true: numbers always hold a value); flag `equals`,
//!   `not_equals`, `exists`; list `contains` (an element equal to the
//!   value), `in` (an element equal to one of the values), `exists`
//!   (non-empty).
//! - Text is compared case-insensitively. A missing value (null) equals
//!   nothing, so `not_equals` matches it and `equals`, `in` and `contains`
//!   do not.
//! - Compiling lower-cases the texts and reads the numbers once, so scoring
//!   a batch is a walk over the records with no parsing.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::fields::{FIELDS, Field, Kind, OPS, Reading, contains_ci, equal_ci};
use crate::domains::record::DomainRecord;

/// Bounds of a rule (ours: the spec shows no rule fields).
pub const MAX_DESCRIPTION_CHARS: usize = 1000;
pub const MAX_CONDITIONS: usize = 50;
pub const MAX_POINTS: i64 = 100;
/// Longest text value and most values of an `in`.
pub const MAX_VALUE_CHARS: usize = 200;
pub const MAX_IN_VALUES: usize = 100;

/// One condition of a rule, as sent and as shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScoringCondition {
    /// A field of the domain record (see the list in a 400's detail).
    pub field: String,
    /// equals, not_equals, in, contains, exists, gte or lte.
    pub op: String,
    /// A string, number or boolean as the field holds; an array for `in`;
    /// a boolean (default true) for `exists`.
    #[serde(default)]
    pub value: Value,
    /// -100 to 100, awarded when the condition matches.
    pub points: i64,
}

/// How one condition fared for one domain.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ScoreBreakdown {
    /// The condition in words, e.g. `industry equals "Software"`.
    pub condition: String,
    pub matched: bool,
    /// The points awarded: the condition's points when matched, else 0.
    pub points: i64,
}

/// A condition's test with its value read and lower-cased.
#[derive(Debug, Clone, PartialEq)]
enum Test {
    TextEquals(String),
    TextNotEquals(String),
    TextIn(Vec<String>),
    TextContains(String),
    NumberEquals(f64),
    NumberNotEquals(f64),
    NumberIn(Vec<f64>),
    Gte(f64),
    Lte(f64),
    FlagEquals(bool),
    FlagNotEquals(bool),
    ListContains(String),
    ListIn(Vec<String>),
    Exists(bool),
}

impl Test {
    fn matches(&self, reading: &Reading<'_>) -> bool {
        match (self, reading) {
            (Test::Exists(want), r) => r.exists() == *want,
            (Test::TextEquals(v), Reading::Text(t)) => t.is_some_and(|t| equal_ci(t, v)),
            (Test::TextNotEquals(v), Reading::Text(t)) => !t.is_some_and(|t| equal_ci(t, v)),
            (Test::TextIn(vs), Reading::Text(t)) => {
                t.is_some_and(|t| vs.iter().any(|v| equal_ci(t, v)))
            }
            (Test::TextContains(v), Reading::Text(t)) => t.is_some_and(|t| contains_ci(t, v)),
            (Test::NumberEquals(v), Reading::Number(n)) => n == v,
            (Test::NumberNotEquals(v), Reading::Number(n)) => n != v,
            (Test::NumberIn(vs), Reading::Number(n)) => vs.contains(n),
            (Test::Gte(v), Reading::Number(n)) => n >= v,
            (Test::Lte(v), Reading::Number(n)) => n <= v,
            (Test::FlagEquals(v), Reading::Flag(f)) => *f == Some(*v),
            (Test::FlagNotEquals(v), Reading::Flag(f)) => *f != Some(*v),
            (Test::ListContains(v), r) => r.any(|e| equal_ci(e, v)),
            (Test::ListIn(vs), r) => r.any(|e| vs.iter().any(|v| equal_ci(e, v))),
            // Compilation pairs each test with its field's kind.
            _ => false,
        }
    }
}

/// One condition ready to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledCondition {
    field: Field,
    test: Test,
    points: i64,
    /// The condition in words, for the breakdown.
    label: String,
}

/// A rule's conditions ready to evaluate, and their stored form (values
/// as given, `exists` with its boolean spelled out).
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledRule {
    pub conditions: Vec<ScoringCondition>,
    compiled: Vec<CompiledCondition>,
}

/// A record's score under a rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    /// The matched conditions' points, clamped to 0-100.
    pub score: i64,
    pub breakdown: Vec<ScoreBreakdown>,
}

impl CompiledRule {
    pub fn evaluate(&self, record: &DomainRecord) -> Score {
        let mut total = 0i64;
        let breakdown = self
            .compiled
            .iter()
            .map(|c| {
                let matched = c.test.matches(&c.field.read(record));
                let points = if matched { c.points } else { 0 };
                total += points;
                ScoreBreakdown {
                    condition: c.label.clone(),
                    matched,
                    points,
                }
            })
            .collect();
        Score {
            score: total.clamp(0, 100),
            breakdown,
        }
    }
}

/// spec/2's tier of a score (the same mapping as the intent level).
pub fn tier(score: i64) -> &'static str {
    outreach_domain_analysis::signals::level(score)
}

/// Checks a rule's conditions and compiles them; the error is a 400's
/// detail naming the condition and what is wrong.
pub fn compile(conditions: &[ScoringCondition]) -> Result<CompiledRule, String> {
    if conditions.is_empty() || conditions.len() > MAX_CONDITIONS {
        return Err(format!(
            "conditions must hold 1 to {MAX_CONDITIONS} conditions"
        ));
    }
    let mut stored = Vec::with_capacity(conditions.len());
    let mut compiled = Vec::with_capacity(conditions.len());
    for (i, c) in conditions.iter().enumerate() {
        let (canonical, condition) = compile_one(c).map_err(|e| format!("conditions[{i}]: {e}"))?;
        stored.push(canonical);
        compiled.push(condition);
    }
    Ok(CompiledRule {
        conditions: stored,
        compiled,
    })
}

fn compile_one(c: &ScoringCondition) -> Result<(ScoringCondition, CompiledCondition), String> {
    let names: Vec<&str> = FIELDS.iter().map(|(n, _)| *n).collect();
    let field = Field::parse(&c.field).ok_or_else(|| {
        format!(
            "unknown field '{}'; allowed: {}",
            clip(&c.field),
            names.join(", ")
        )
    })?;
    if !OPS.contains(&c.op.as_str()) {
        return Err(format!(
            "unknown op '{}'; allowed: {}",
            clip(&c.op),
            OPS.join(", ")
        ));
    }
    let kind = field.kind();
    if !kind.ops().contains(&c.op.as_str()) {
        return Err(format!(
            "op '{}' does not apply to {} field '{}' (it takes {})",
            c.op,
            kind.name(),
            field.name(),
            kind.ops().join(", ")
        ));
    }
    if !(-MAX_POINTS..=MAX_POINTS).contains(&c.points) {
        return Err(format!(
            "points must be between -{MAX_POINTS} and {MAX_POINTS}"
        ));
    }
    let mut value = c.value.clone();
    let test = match c.op.as_str() {
        "exists" => {
            let want = match &c.value {
                Value::Null => true,
                Value::Bool(b) => *b,
                _ => return Err("exists takes a boolean value (default true)".into()),
            };
            value = Value::Bool(want);
            Test::Exists(want)
        }
        "in" => {
            let items = match &c.value {
                Value::Array(items) if !items.is_empty() && items.len() <= MAX_IN_VALUES => items,
                _ => {
                    return Err(format!("in takes an array of 1 to {MAX_IN_VALUES} values"));
                }
            };
            match kind {
                Kind::Number => Test::NumberIn(
                    items
                        .iter()
                        .map(|v| number(field, v))
                        .collect::<Result<_, _>>()?,
                ),
                _ => {
                    let texts = items
                        .iter()
                        .map(|v| text(field, v, true))
                        .collect::<Result<Vec<_>, _>>()?;
                    if kind == Kind::List {
                        Test::ListIn(texts)
                    } else {
                        Test::TextIn(texts)
                    }
                }
            }
        }
        "contains" if kind == Kind::List => Test::ListContains(text(field, &c.value, true)?),
        // A substring of a text field is not one of a known set's values.
        "contains" => Test::TextContains(text(field, &c.value, false)?),
        "gte" => Test::Gte(number(field, &c.value)?),
        "lte" => Test::Lte(number(field, &c.value)?),
        op => {
            let equals = op == "equals";
            match kind {
                Kind::Number => {
                    let n = number(field, &c.value)?;
                    if equals {
                        Test::NumberEquals(n)
                    } else {
                        Test::NumberNotEquals(n)
                    }
                }
                Kind::Flag => {
                    let Value::Bool(b) = c.value else {
                        return Err(format!("{op} on '{}' takes a boolean", field.name()));
                    };
                    if equals {
                        Test::FlagEquals(b)
                    } else {
                        Test::FlagNotEquals(b)
                    }
                }
                _ => {
                    let t = text(field, &c.value, true)?;
                    if equals {
                        Test::TextEquals(t)
                    } else {
                        Test::TextNotEquals(t)
                    }
                }
            }
        }
    };
    let canonical = ScoringCondition {
        field: field.name().to_owned(),
        op: c.op.clone(),
        value,
        points: c.points,
    };
    let label = label(&canonical);
    Ok((
        canonical,
        CompiledCondition {
            field,
            test,
            points: c.points,
            label,
        },
    ))
}

/// A text value, lower-cased; `known` checks it against the field's set.
fn text(field: Field, v: &Value, known: bool) -> Result<String, String> {
    let s = match v {
        Value::String(s) if !s.trim().is_empty() && s.chars().count() <= MAX_VALUE_CHARS => s,
        _ => {
            return Err(format!(
                "'{}' takes a string value of 1 to {MAX_VALUE_CHARS} characters",
                field.name()
            ));
        }
    };
    let lowered = s.to_lowercase();
    if known
        && let Some(values) = field.known_values()
        && !values.iter().any(|k| k.to_lowercase() == lowered)
    {
        return Err(format!(
            "unknown {} '{}'; allowed: {}",
            field.name(),
            clip(s),
            values.join(", ")
        ));
    }
    Ok(lowered)
}

fn number(field: Field, v: &Value) -> Result<f64, String> {
    let (low, high) = field.range();
    match v.as_f64() {
        Some(n) if (low..=high).contains(&n) => Ok(n),
        Some(_) => Err(format!("'{}' is between {low} and {high}", field.name())),
        None => Err(format!("'{}' takes a number value", field.name())),
    }
}

/// Input shown back in an error, cut so a hostile value stays short.
fn clip(s: &str) -> String {
    s.chars().take(100).collect()
}

/// A condition in words: `industry equals "Software"`, `intent_score gte
/// 50`, `business_type in ["B2B", "B2B2C"]`, `phone exists`, `phone does
/// not exist`.
fn label(c: &ScoringCondition) -> String {
    fn show(v: &Value) -> String {
        match v {
            Value::Array(items) => format!(
                "[{}]",
                items.iter().map(show).collect::<Vec<_>>().join(", ")
            ),
            other => other.to_string(),
        }
    }
    match (c.op.as_str(), &c.value) {
        ("exists", Value::Bool(false)) => format!("{} does not exist", c.field),
        ("exists", _) => format!("{} exists", c.field),
        (op, v) => format!("{} {op} {}", c.field, show(v)),
    }
}
