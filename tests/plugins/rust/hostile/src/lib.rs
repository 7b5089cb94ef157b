//! Purpose-built hostile `email-verifier`. The local part of the address
//! selects the misbehaviour, so one component covers every containment test;
//! any other address answers normally, which is how the tests show that a
//! well-behaved call running at the same time is unaffected.

use outreach_plugin_sdk::prelude::*;
use std::hint::black_box;

pub struct Hostile;

fn ok(email: &str, raw: &str) -> VerificationResult {
    VerificationResult {
        email: email.into(),
        provider: "hostile".into(),
        status: VerificationStatus::Valid,
        deliverability: Deliverability::Deliverable,
        is_disposable: false,
        is_role: false,
        is_catch_all: None,
        confidence: None,
        raw_status: raw.into(),
    }
}

/// Recursion in wasm locals: overflows the engine's wasm stack.
#[inline(never)]
#[allow(unconditional_recursion)]
fn recurse_native(n: u64) -> u64 {
    black_box(recurse_native(black_box(n + 1))) ^ n
}

/// Recursion with arrays on the shadow stack in linear memory: runs off
/// the bottom of memory.
#[inline(never)]
#[allow(unconditional_recursion)]
fn recurse(n: u64, pad: [u64; 16]) -> u64 {
    let mut p = black_box(pad);
    p[(n % 16) as usize] = n;
    recurse(n + 1, p) + p[0]
}

fn fetch(url: &str) -> Result<VerificationResult, PluginError> {
    let r = Request::get(url).send()?;
    Ok(ok(url, &format!("fetched {}", r.status)))
}

impl EmailVerifier for Hostile {
    fn metadata() -> VendorMetadata {
        VendorMetadata {
            identifier: "hostile".into(),
            display_name: "Hostile".into(),
            list_rate_usd: 0.0,
            fallback_rank: 100,
        }
    }

    fn validate_key(_ctx: &VendorContext) -> Result<KeyValidation, PluginError> {
        Ok(KeyValidation {
            credits_remaining: None,
        })
    }

    fn verify(ctx: &VendorContext, email: &str) -> Result<VerificationResult, PluginError> {
        let (local, domain) = email.split_once('@').unwrap_or((email, ""));
        match local {
            "loop" => {
                let mut x = 0u64;
                loop {
                    x = black_box(x.wrapping_add(1));
                }
            }
            "oom" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![1u8; 1 << 20]);
                    black_box(&hoard);
                }
            }
            "recurse" => Ok(ok(email, &recurse_native(0).to_string())),
            "recurse-shadow" => Ok(ok(email, &recurse(0, [0; 16]).to_string())),
            "panic" => panic!("hostile plugin panicked on purpose"),
            "file" => match std::fs::read_to_string("/etc/passwd") {
                Ok(s) => Ok(ok(email, &format!("LEAK file {}", s.len()))),
                Err(e) => Err(PluginError::Permanent(format!("file read refused: {e}"))),
            },
            "dir" => match std::fs::read_dir("/") {
                Ok(d) => Ok(ok(email, &format!("LEAK dir {}", d.count()))),
                Err(e) => Err(PluginError::Permanent(format!("dir listing refused: {e}"))),
            },
            "env" => {
                let vars: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
                match std::env::var("HOME") {
                    Ok(h) => Ok(ok(email, &format!("LEAK env HOME={h}"))),
                    Err(_) if vars.is_empty() => {
                        Err(PluginError::Permanent("environment is empty".into()))
                    }
                    Err(_) => Ok(ok(email, &format!("LEAK env {vars:?}"))),
                }
            }
            "socket" => match std::net::TcpStream::connect("127.0.0.1:22") {
                Ok(_) => Ok(ok(email, "LEAK socket connected")),
                Err(e) => Err(PluginError::Permanent(format!("socket refused: {e}"))),
            },
            "disallowed" => fetch("https://evil.example.net/steal"),
            // The domain names the target URL so the test can aim at its stub.
            "fetch" => fetch(&format!("http://{domain}/")),
            "base" => fetch(&format!(
                "{}/ping",
                base_url(ctx, "https://api.hostile.example")
            )),
            "slowhost" => fetch(&format!("http://{domain}/slow")),
            _ => Ok(ok(email, "fine")),
        }
    }
}

outreach_plugin_sdk::export_email_verifier!(Hostile);
