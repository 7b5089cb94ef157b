//! `sqlx::migrate!` embeds the migration files, but cargo only knows to
//! rebuild when a file it already read changes; a new migration file must
//! trigger a rebuild too.

fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
