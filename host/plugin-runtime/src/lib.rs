//! Plugin runtime (being written).
