//! SSRF-guarded HTTP client (being written).
