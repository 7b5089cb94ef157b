//! The market-intelligence rollups (`pool_totals`, `pool_days`,
//! `pool_city_days`): counts of the records with facts by industry,
//! country, city and the day they entered the pool, so geography, industry
//! reports and the overview read a few hundred rollup rows instead of a
//! million records.
//!
//! Each record's contribution sits in its `pool_facets` row; every save of
//! its facts ([`super::facets::refresh`]) takes the old contribution out
//! and adds the new one in the save's transaction, so a rollup is always
//! the sum over the records as committed. `outreach domains
//! rebuild-rollups` recomputes them from the facet rows (after the
//! database was edited by hand, or seeded for a benchmark).

use sqlx::AnyConnection;

use outreach_core::store::Db;

/// One day in milliseconds; `day` columns are `entered_at / DAY_MS`.
pub const DAY_MS: i64 = 86_400_000;

/// What one record adds to the rollups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contribution {
    /// Lower case; empty when the record has none.
    pub industry: String,
    /// Upper case; empty when the record has none.
    pub country: String,
    pub city: Option<String>,
    /// When the record entered the pool (`domains.created_at`).
    pub entered_at: i64,
    pub has_email: bool,
    /// The 0-1 confidence in basis points.
    pub confidence_bp: i64,
}

impl Contribution {
    /// The UTC day the record entered the pool.
    pub fn day(&self) -> i64 {
        self.entered_at.div_euclid(DAY_MS)
    }
}

/// One change to a rollup row: `(table key, count, with email, basis points)`.
type Delta<K> = (K, i64, i64, i64);

/// Adds `delta` to `key`'s entry, creating it.
fn add<K: PartialEq>(deltas: &mut Vec<Delta<K>>, key: K, sign: i64, email: i64, bp: i64) {
    match deltas.iter_mut().find(|d| d.0 == key) {
        Some(d) => {
            d.1 += sign;
            d.2 += sign * email;
            d.3 += sign * bp;
        }
        None => deltas.push((key, sign, sign * email, sign * bp)),
    }
}

/// Moves the rollups from `before` to `after` on `conn`, the save's
/// transaction. Rows are touched in key order, table by table, so two saves
/// moving records between the same rows in opposite directions wait for
/// each other on PostgreSQL instead of deadlocking.
pub async fn apply(
    conn: &mut AnyConnection,
    before: Option<&Contribution>,
    after: Option<&Contribution>,
) -> sqlx::Result<()> {
    if before == after {
        return Ok(());
    }
    let mut totals: Vec<Delta<(String, String)>> = Vec::new();
    let mut days: Vec<Delta<(i64, String, String)>> = Vec::new();
    let mut cities: Vec<Delta<(String, i64, String, String)>> = Vec::new();
    for (c, sign) in [(before, -1), (after, 1)] {
        let Some(c) = c else { continue };
        let email = i64::from(c.has_email);
        let key = (c.industry.clone(), c.country.clone());
        add(&mut totals, key, sign, email, c.confidence_bp);
        let key = (c.day(), c.industry.clone(), c.country.clone());
        add(&mut days, key, sign, 0, 0);
        if let Some(city) = &c.city {
            let key = (c.country.clone(), c.day(), city.clone(), c.industry.clone());
            add(&mut cities, key, sign, 0, 0);
        }
    }
    totals.retain(|d| d.1 != 0 || d.2 != 0 || d.3 != 0);
    totals.sort_by(|a, b| a.0.cmp(&b.0));
    days.retain(|d| d.1 != 0);
    days.sort_by(|a, b| a.0.cmp(&b.0));
    cities.retain(|d| d.1 != 0);
    cities.sort_by(|a, b| a.0.cmp(&b.0));
    for ((industry, country), cnt, email, bp) in totals {
        sqlx::query(
            "INSERT INTO pool_totals (industry, country, cnt, with_email, confidence_bp) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (industry, country) DO UPDATE SET \
             cnt = pool_totals.cnt + excluded.cnt, \
             with_email = pool_totals.with_email + excluded.with_email, \
             confidence_bp = pool_totals.confidence_bp + excluded.confidence_bp",
        )
        .bind(&industry)
        .bind(&country)
        .bind(cnt)
        .bind(email)
        .bind(bp)
        .execute(&mut *conn)
        .await?;
        if cnt < 0 {
            sqlx::query(
                "DELETE FROM pool_totals WHERE industry = $1 AND country = $2 AND cnt <= 0",
            )
            .bind(&industry)
            .bind(&country)
            .execute(&mut *conn)
            .await?;
        }
    }
    for ((day, industry, country), cnt, _, _) in days {
        sqlx::query(
            "INSERT INTO pool_days (day, industry, country, cnt) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (day, industry, country) DO UPDATE SET cnt = pool_days.cnt + excluded.cnt",
        )
        .bind(day)
        .bind(&industry)
        .bind(&country)
        .bind(cnt)
        .execute(&mut *conn)
        .await?;
        if cnt < 0 {
            sqlx::query(
                "DELETE FROM pool_days WHERE day = $1 AND industry = $2 AND country = $3 \
                 AND cnt <= 0",
            )
            .bind(day)
            .bind(&industry)
            .bind(&country)
            .execute(&mut *conn)
            .await?;
        }
    }
    for ((country, day, city, industry), cnt, _, _) in cities {
        sqlx::query(
            "INSERT INTO pool_city_days (country, day, city, industry, cnt) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (country, day, city, industry) \
             DO UPDATE SET cnt = pool_city_days.cnt + excluded.cnt",
        )
        .bind(&country)
        .bind(day)
        .bind(&city)
        .bind(&industry)
        .bind(cnt)
        .execute(&mut *conn)
        .await?;
        if cnt < 0 {
            sqlx::query(
                "DELETE FROM pool_city_days WHERE country = $1 AND day = $2 AND city = $3 \
                 AND industry = $4 AND cnt <= 0",
            )
            .bind(&country)
            .bind(day)
            .bind(&city)
            .bind(&industry)
            .execute(&mut *conn)
            .await?;
        }
    }
    Ok(())
}

/// Recomputes every rollup from the facet rows, in one transaction.
/// Returns the records counted.
pub async fn rebuild(db: &Db) -> sqlx::Result<i64> {
    let mut tx = db.pool.begin().await?;
    for sql in [
        "DELETE FROM pool_totals",
        "DELETE FROM pool_days",
        "DELETE FROM pool_city_days",
        "INSERT INTO pool_totals (industry, country, cnt, with_email, confidence_bp) \
         SELECT COALESCE(industry, ''), COALESCE(country, ''), COUNT(*), SUM(has_email), \
         SUM(confidence_bp) FROM pool_facets GROUP BY COALESCE(industry, ''), COALESCE(country, '')",
        "INSERT INTO pool_days (day, industry, country, cnt) \
         SELECT entered_at / 86400000, COALESCE(industry, ''), COALESCE(country, ''), COUNT(*) \
         FROM pool_facets \
         GROUP BY entered_at / 86400000, COALESCE(industry, ''), COALESCE(country, '')",
        "INSERT INTO pool_city_days (country, day, city, industry, cnt) \
         SELECT COALESCE(country, ''), entered_at / 86400000, city, COALESCE(industry, ''), \
         COUNT(*) FROM pool_facets WHERE city IS NOT NULL \
         GROUP BY COALESCE(country, ''), entered_at / 86400000, city, COALESCE(industry, '')",
    ] {
        sqlx::query(sql).execute(&mut *tx).await?;
    }
    let counted: Option<i64> =
        sqlx::query_scalar("SELECT CAST(SUM(cnt) AS BIGINT) FROM pool_totals")
            .fetch_one(&mut *tx)
            .await?;
    tx.commit().await?;
    Ok(counted.unwrap_or(0))
}
