//! Reads of the pool's rollups (`crate::domains::rollups` writes them).
//! Each is one statement over an index of a rollup table: a few hundred to
//! a few thousand rows, whatever the size of the pool.

use sqlx::Row;

use outreach_core::store::Db;

/// A `pool_totals` row: the records of one industry and country.
#[derive(Debug, Clone, Default)]
pub struct Total {
    /// Lower case, '' for none.
    pub industry: String,
    /// Upper case, '' for none.
    pub country: String,
    pub cnt: i64,
    pub with_email: i64,
    pub confidence_bp: i64,
}

impl Total {
    /// Adds `other`'s counts to these.
    pub fn absorb(&mut self, other: &Total) {
        self.cnt += other.cnt;
        self.with_email += other.with_email;
        self.confidence_bp += other.confidence_bp;
    }
}

/// The all-time totals, of one industry (lower case) or of all.
pub async fn totals(db: &Db, industry: Option<&str>) -> sqlx::Result<Vec<Total>> {
    let sql = match industry {
        Some(_) => {
            "SELECT industry, country, cnt, with_email, confidence_bp FROM pool_totals \
             WHERE industry = $1"
        }
        None => "SELECT industry, country, cnt, with_email, confidence_bp FROM pool_totals",
    };
    let mut query = sqlx::query(sql);
    if let Some(industry) = industry {
        query = query.bind(industry);
    }
    query
        .fetch_all(&db.pool)
        .await?
        .iter()
        .map(|r| {
            Ok(Total {
                industry: r.try_get("industry")?,
                country: r.try_get("country")?,
                cnt: r.try_get("cnt")?,
                with_email: r.try_get("with_email")?,
                confidence_bp: r.try_get("confidence_bp")?,
            })
        })
        .collect()
}

/// Records that entered the pool from `first_day` on, per country ('' for
/// none), of one industry or of all.
pub async fn countries_since(
    db: &Db,
    first_day: i64,
    industry: Option<&str>,
) -> sqlx::Result<Vec<(String, i64)>> {
    let sql = match industry {
        Some(_) => {
            "SELECT country, CAST(SUM(cnt) AS BIGINT) AS n FROM pool_days \
             WHERE industry = $2 AND day >= $1 GROUP BY country"
        }
        None => {
            "SELECT country, CAST(SUM(cnt) AS BIGINT) AS n FROM pool_days \
             WHERE day >= $1 GROUP BY country"
        }
    };
    let mut query = sqlx::query_as(sql).bind(first_day);
    if let Some(industry) = industry {
        query = query.bind(industry);
    }
    query.fetch_all(&db.pool).await
}

/// Records that entered the pool from `first_day` on, per city, of one
/// country and industry or of all.
pub async fn cities_since(
    db: &Db,
    first_day: i64,
    country: Option<&str>,
    industry: Option<&str>,
) -> sqlx::Result<Vec<(String, i64)>> {
    let mut sql = String::from(
        "SELECT city, CAST(SUM(cnt) AS BIGINT) AS n FROM pool_city_days WHERE day >= $1",
    );
    let mut n = 1;
    if country.is_some() {
        n += 1;
        sql.push_str(&format!(" AND country = ${n}"));
    }
    if industry.is_some() {
        n += 1;
        sql.push_str(&format!(" AND industry = ${n}"));
    }
    sql.push_str(" GROUP BY city");
    let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(first_day);
    for value in [country, industry].into_iter().flatten() {
        query = query.bind(value);
    }
    query.fetch_all(&db.pool).await
}

/// Records of one industry that entered the pool from `first_day` on, per
/// day: `(day, count)`.
pub async fn days_since(db: &Db, industry: &str, first_day: i64) -> sqlx::Result<Vec<(i64, i64)>> {
    sqlx::query_as(
        "SELECT day, CAST(SUM(cnt) AS BIGINT) AS n FROM pool_days \
         WHERE industry = $1 AND day >= $2 GROUP BY day",
    )
    .bind(industry)
    .bind(first_day)
    .fetch_all(&db.pool)
    .await
}

/// Records that entered the pool from `recent_day` on and from `first_day`
/// on, per industry: `(industry, recent, all)`.
pub async fn new_per_industry(
    db: &Db,
    recent_day: i64,
    first_day: i64,
) -> sqlx::Result<Vec<(String, i64, i64)>> {
    sqlx::query_as(
        "SELECT industry, CAST(SUM(CASE WHEN day >= $1 THEN cnt ELSE 0 END) AS BIGINT), \
         CAST(SUM(cnt) AS BIGINT) FROM pool_days WHERE day >= $2 GROUP BY industry",
    )
    .bind(recent_day)
    .bind(first_day)
    .fetch_all(&db.pool)
    .await
}

/// One of an industry's most confident records.
#[derive(Debug, Clone)]
pub struct Confident {
    pub domain: String,
    pub confidence: f64,
    pub summary: Option<String>,
}

/// The `limit` most confident records of an industry (ties: the older
/// record first).
pub async fn most_confident(db: &Db, industry: &str, limit: i64) -> sqlx::Result<Vec<Confident>> {
    let rows = sqlx::query(
        "SELECT d.domain, d.confidence, d.summary FROM pool_facets f \
         JOIN domains d ON d.id = f.domain_id WHERE f.industry = $1 \
         ORDER BY f.confidence_bp DESC, f.domain_id LIMIT $2",
    )
    .bind(industry)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(Confident {
                domain: r.try_get("domain")?,
                confidence: r.try_get("confidence")?,
                summary: r.try_get("summary")?,
            })
        })
        .collect()
}
