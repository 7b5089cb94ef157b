//! Statements assembled from optional parts (filters, the fields an update
//! names): each part takes its values' placeholders from [`Args`], numbered
//! `$1..$n` in the order they are bound, which both backends accept (SQLite
//! reads `$n` as a named parameter bound in order of first appearance, so
//! the numbering must follow the binding order).

use sqlx::Any;
use sqlx::any::AnyArguments;
use sqlx::query::{Query, QueryScalar};

/// Binds every value of `$args` to `$q` in order. A macro because sqlx's
/// `Query` and `QueryScalar` have `bind` methods but no trait in common.
macro_rules! bind_each {
    ($args:expr, $q:expr) => {{
        let mut q = $q;
        for a in &$args.0 {
            q = match a {
                Arg::Int(v) => q.bind(*v),
                Arg::OptInt(v) => q.bind(*v),
                Arg::Real(v) => q.bind(*v),
                Arg::Text(v) => q.bind(v.clone()),
                Arg::OptText(v) => q.bind(v.clone()),
            };
        }
        q
    }};
}

/// A bound value of an assembled statement.
#[derive(Debug, Clone)]
pub enum Arg {
    Int(i64),
    OptInt(Option<i64>),
    Real(f64),
    Text(String),
    OptText(Option<String>),
}

/// The placeholders of an assembled statement, numbered in binding order.
#[derive(Debug, Default)]
pub struct Args(Vec<Arg>);

impl Args {
    /// Adds a value and returns its placeholder.
    pub fn push(&mut self, a: Arg) -> String {
        self.0.push(a);
        format!("${}", self.0.len())
    }

    /// Placeholders for each of `values` as text, comma-separated (an
    /// `IN (...)` list).
    pub fn push_texts<'a>(&mut self, values: impl IntoIterator<Item = &'a String>) -> String {
        values
            .into_iter()
            .map(|v| self.push(Arg::Text(v.clone())))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Binds the values to `q` in order.
    pub fn bind<'q>(&self, q: Query<'q, Any, AnyArguments>) -> Query<'q, Any, AnyArguments> {
        bind_each!(self, q)
    }

    /// [`Args::bind`] for a statement that answers one column.
    pub fn bind_scalar<'q, O>(
        &self,
        q: QueryScalar<'q, Any, O, AnyArguments>,
    ) -> QueryScalar<'q, Any, O, AnyArguments> {
        bind_each!(self, q)
    }
}
