//! Schema migrations, embedded at compile time so the binary needs no files.

use super::{Backend, Db};

static SQLITE: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");
static POSTGRES: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

/// Applies every pending migration of the handle's backend.
pub async fn run(db: &Db) -> anyhow::Result<()> {
    match db.backend {
        Backend::Sqlite => SQLITE.run(&db.pool).await?,
        Backend::Postgres => POSTGRES.run(&db.pool).await?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both backends must carry the same migration versions, or a deployment that
    /// moves from SQLite to PostgreSQL would see a different schema history.
    #[test]
    fn sqlite_and_postgres_have_the_same_versions() {
        let versions = |m: &sqlx::migrate::Migrator| {
            m.iter()
                .map(|m| (m.version, m.description.to_string()))
                .collect::<Vec<_>>()
        };
        assert!(!versions(&SQLITE).is_empty());
        assert_eq!(versions(&SQLITE), versions(&POSTGRES));
    }
}
