//! Secrets at rest: AES-256-GCM with a versioned key ring.
//!
//! A sealed value is `v<version>:<base64(nonce || ciphertext)>`. The caller
//! passes the row identity (for example `vendor_keys:42:api_key`) as associated
//! data, so a ciphertext copied into another row or column fails to open. The
//! version lets an operator rotate the master key: new values use the current
//! key, old values still open with the previous keys.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use anyhow::{Context, bail};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use rand::RngCore;

#[derive(Clone)]
pub struct Secrets {
    keys: BTreeMap<u32, Aes256Gcm>,
    current: u32,
    /// Raw current key, kept to derive purpose-specific keys (JWT signing).
    current_raw: [u8; 32],
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets")
            .field("current_version", &self.current)
            .finish_non_exhaustive()
    }
}

impl Secrets {
    /// Builds the ring from the current key and older keys (oldest first);
    /// versions are 1..=n for the old keys and n + 1 for the current one.
    pub fn new(current: [u8; 32], previous: &[[u8; 32]]) -> Secrets {
        let mut keys = BTreeMap::new();
        for (i, key) in previous.iter().enumerate() {
            keys.insert(i as u32 + 1, cipher(key));
        }
        let version = previous.len() as u32 + 1;
        keys.insert(version, cipher(&current));
        Secrets {
            keys,
            current: version,
            current_raw: current,
        }
    }

    /// Loads the configured key, or the key file in the data dir, generating
    /// it (mode 0600) on first start.
    pub fn load_or_generate(
        configured: &str,
        previous: &[String],
        data_dir: &Path,
    ) -> anyhow::Result<Secrets> {
        let previous = previous
            .iter()
            .map(|k| decode_key(k))
            .collect::<anyhow::Result<Vec<_>>>()
            .context("previous_encryption_keys")?;
        let current = if !configured.is_empty() {
            decode_key(configured).context("encryption_key")?
        } else {
            let path = data_dir.join("master.key");
            if path.exists() {
                decode_key(std::fs::read_to_string(&path)?.trim())
                    .with_context(|| format!("reading {}", path.display()))?
            } else {
                let mut key = [0u8; 32];
                rand::rng().fill_bytes(&mut key);
                write_private(&path, B64.encode(key).as_bytes())?;
                tracing::info!(path = %path.display(), "generated master encryption key");
                key
            }
        };
        Ok(Secrets::new(current, &previous))
    }

    pub fn current_version(&self) -> u32 {
        self.current
    }

    pub fn encrypt(&self, associated: &str, plaintext: &str) -> String {
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        let sealed = self.keys[&self.current]
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: plaintext.as_bytes(),
                    aad: associated.as_bytes(),
                },
            )
            .expect("AES-GCM encryption cannot fail for in-memory buffers");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        format!("v{}:{}", self.current, B64.encode(out))
    }

    pub fn decrypt(&self, associated: &str, sealed: &str) -> anyhow::Result<String> {
        let (version, body) = sealed
            .strip_prefix('v')
            .and_then(|s| s.split_once(':'))
            .context("not a sealed secret")?;
        let version: u32 = version.parse().context("bad key version")?;
        let Some(cipher) = self.keys.get(&version) else {
            bail!("secret sealed with unknown key version {version}");
        };
        let raw = B64.decode(body).context("bad base64")?;
        if raw.len() < 12 {
            bail!("sealed secret too short");
        }
        let (nonce, ciphertext) = raw.split_at(12);
        let plain = cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad: associated.as_bytes(),
                },
            )
            .map_err(|_| anyhow::anyhow!("secret does not open (wrong key or row identity)"))?;
        Ok(String::from_utf8(plain)?)
    }

    /// True when `sealed` was written with an older key and should be
    /// re-encrypted by a rotation job.
    pub fn needs_rotation(&self, sealed: &str) -> bool {
        !sealed.starts_with(&format!("v{}:", self.current))
    }

    /// A key for one purpose (for example JWT signing), derived from the
    /// master key with HMAC-SHA256 so the master key itself is never reused.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        use hmac::{Hmac, Mac};
        let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(&self.current_raw).unwrap();
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

fn cipher(key: &[u8; 32]) -> Aes256Gcm {
    Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(key))
}

fn decode_key(text: &str) -> anyhow::Result<[u8; 32]> {
    let raw = B64.decode(text.trim()).context("key is not base64")?;
    raw.try_into()
        .map_err(|_| anyhow::anyhow!("key must be 32 bytes"))
}

/// Writes a file readable only by its owner.
fn write_private(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    file.write_all(contents)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_row_identity() {
        let secrets = Secrets::new([7; 32], &[]);
        let sealed = secrets.encrypt("vendor_keys:1:api_key", "sk-secret");
        assert!(sealed.starts_with("v1:"));
        assert!(!sealed.contains("sk-secret"));
        assert_eq!(
            secrets.decrypt("vendor_keys:1:api_key", &sealed).unwrap(),
            "sk-secret"
        );
        // The same ciphertext in another row does not open.
        assert!(secrets.decrypt("vendor_keys:2:api_key", &sealed).is_err());
        // Two seals of the same value differ (fresh nonce).
        assert_ne!(
            sealed,
            secrets.encrypt("vendor_keys:1:api_key", "sk-secret")
        );
    }

    #[test]
    fn rotation_keeps_old_values_readable() {
        let old = Secrets::new([1; 32], &[]);
        let sealed = old.encrypt("row", "value");
        let rotated = Secrets::new([2; 32], &[[1; 32]]);
        assert_eq!(rotated.current_version(), 2);
        assert!(rotated.needs_rotation(&sealed));
        assert_eq!(rotated.decrypt("row", &sealed).unwrap(), "value");
        let resealed = rotated.encrypt("row", "value");
        assert!(resealed.starts_with("v2:"));
        assert!(!rotated.needs_rotation(&resealed));
        // A server without the new key cannot read the new value.
        assert!(old.decrypt("row", &resealed).is_err());
    }

    #[test]
    fn generated_key_file_is_private_and_stable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let a = Secrets::load_or_generate("", &[], dir.path()).unwrap();
        let mode = std::fs::metadata(dir.path().join("master.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let b = Secrets::load_or_generate("", &[], dir.path()).unwrap();
        assert_eq!(b.decrypt("r", &a.encrypt("r", "x")).unwrap(), "x");
    }
}
