// Placeholder by the lead so the crate compiles; the thread-API helper replaces this file.
