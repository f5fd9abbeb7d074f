//! Secrets Rapport must read back, sealed with the operator's key.
//!
//! API keys, passwords and session ids are stored as digests: Rapport only ever
//! compares them. Some secrets must be read back, though: the webhook and alert
//! signing secrets sign every delivery, the identity secret checks visitors'
//! signatures, and an appointment's join link is shown on every read (and sent
//! in the invitations the mail outbox keeps, whose bodies are sealed too). A leaked
//! backup holding those in plain text would forge webhooks and join calls.
//!
//! So they are sealed with XChaCha20-Poly1305 (the `chacha20poly1305` crate) under a
//! 256-bit key the operator supplies (`RAPPORT_SECRET_KEY` or a key file). A sealed
//! value reads `sealed1.<key id>.<base64url(nonce ‖ ciphertext)>`: the key id (the
//! first 8 hex digits of the key's SHA-256) says which key opens it, and the
//! [`Purpose`] is the associated data, so a value sealed as one kind of secret does
//! not open as another. The 192-bit nonce is random, so one key seals any number of
//! values safely.
//!
//! Without a key, values are stored as given (the server says so at start). With
//! one, [`Services::reseal_secrets`] seals every value not yet sealed under it at
//! start: the first start with a key seals the plain ones, and a start with a new
//! key and the old one among the previous keys moves every value to the new key.
//! A value sealed under a key that is not configured stops the start, so rotating
//! the key never loses a secret.

use std::{fmt, sync::Arc};

use base64::{
    engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD},
    Engine,
};
use chacha20poly1305::{
    aead::{Aead, AeadCore, KeyInit, OsRng, Payload},
    XChaCha20Poly1305, XNonce,
};
use sha2::{Digest, Sha256};

use crate::{
    crypto::token_digest,
    error::{CoreError, CoreResult},
    with_db, with_tx, Services,
};

/// The prefix of every sealed value; a stored value without it is plain text.
const PREFIX: &str = "sealed1.";
/// XChaCha20's nonce length.
const NONCE_BYTES: usize = 24;

/// What a sealed value is, bound into its seal as associated data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A webhook or alert signing secret (`whsec_…`). An alert receiver's row
    /// holds a copy of the tenant's alert secret, so both share one purpose.
    SigningSecret,
    /// A workspace's identity verification secret (`is_…`).
    IdentitySecret,
    /// The token in an appointment's join link.
    JoinToken,
    /// A mail's body in the outbox: an invitation's carries a join link.
    MailBody,
}

impl Purpose {
    fn associated_data(self) -> &'static [u8] {
        match self {
            Purpose::SigningSecret => b"rapport signing secret",
            Purpose::IdentitySecret => b"rapport identity secret",
            Purpose::JoinToken => b"rapport join token",
            Purpose::MailBody => b"rapport mail body",
        }
    }
}

struct SealingKey {
    id: String,
    cipher: XChaCha20Poly1305,
}

impl SealingKey {
    /// A key from its text: 32 bytes as 64 hex digits or as base64 (standard or
    /// URL-safe, padded or not).
    fn parse(text: &str) -> CoreResult<Self> {
        let text = text.trim();
        let bytes = if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            hex::decode(text).ok()
        } else {
            // Padding is optional in every alphabet: `=` is dropped before decoding.
            let unpadded = text.trim_end_matches('=');
            STANDARD_NO_PAD
                .decode(unpadded)
                .ok()
                .or_else(|| URL_SAFE_NO_PAD.decode(unpadded).ok())
        };
        let bytes = bytes.filter(|b| b.len() == 32).ok_or_else(|| {
            CoreError::Internal(
                "a secret key must be 32 bytes, written as 64 hex digits or in base64 \
                 (make one with `openssl rand -base64 32`)"
                    .into(),
            )
        })?;
        Ok(Self {
            id: hex::encode(&Sha256::digest(&bytes)[..4]),
            cipher: XChaCha20Poly1305::new_from_slice(&bytes)
                .map_err(|_| CoreError::Internal("unusable secret key".into()))?,
        })
    }
}

/// The operator's keys: the one that seals, and previous ones that still open.
/// Cheap to clone. Its `Debug` shows key ids only.
#[derive(Clone, Default)]
pub struct Sealer {
    keys: Arc<Keys>,
}

#[derive(Default)]
struct Keys {
    current: Option<SealingKey>,
    previous: Vec<SealingKey>,
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealer")
            .field("current", &self.key_id())
            .field(
                "previous",
                &self.keys.previous.iter().map(|k| &k.id).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Sealer {
    /// A sealer with `current` (none: store as given) and `previous` keys, which
    /// only open values sealed before a rotation.
    pub fn new(current: Option<&str>, previous: &[&str]) -> CoreResult<Self> {
        Ok(Self {
            keys: Arc::new(Keys {
                current: current.map(SealingKey::parse).transpose()?,
                previous: previous
                    .iter()
                    .map(|k| SealingKey::parse(k))
                    .collect::<CoreResult<_>>()?,
            }),
        })
    }

    /// The id of the key that seals (the first 8 hex digits of its SHA-256), or
    /// `None` when values are stored in plain text.
    pub fn key_id(&self) -> Option<&str> {
        self.keys.current.as_ref().map(|k| k.id.as_str())
    }

    /// `plain` as it is to be stored: sealed under the current key, or as given
    /// when there is none.
    pub fn seal(&self, purpose: Purpose, plain: &str) -> String {
        let Some(key) = &self.keys.current else {
            return plain.to_string();
        };
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let sealed = key
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: plain.as_bytes(),
                    aad: purpose.associated_data(),
                },
            )
            .expect("XChaCha20-Poly1305 seals any message shorter than 256 GiB");
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        format!("{PREFIX}{}.{}", key.id, URL_SAFE_NO_PAD.encode(bytes))
    }

    /// The plain value of a stored one. A plain stored value is returned as it is;
    /// a sealed one needs its key among the configured ones.
    pub fn open(&self, purpose: Purpose, stored: &str) -> CoreResult<String> {
        let Some(rest) = stored.strip_prefix(PREFIX) else {
            return Ok(stored.to_string());
        };
        let (key_id, body) = rest
            .split_once('.')
            .ok_or_else(|| CoreError::Internal("a sealed secret is malformed".into()))?;
        let key = self
            .keys
            .current
            .iter()
            .chain(&self.keys.previous)
            .find(|k| k.id == key_id)
            .ok_or_else(|| {
                CoreError::Internal(format!(
                    "a secret is sealed with key {key_id}, which is not configured: set it as \
                     RAPPORT_SECRET_KEY, or list it in RAPPORT_PREVIOUS_SECRET_KEYS"
                ))
            })?;
        let bytes = URL_SAFE_NO_PAD
            .decode(body)
            .ok()
            .filter(|b| b.len() > NONCE_BYTES)
            .ok_or_else(|| CoreError::Internal("a sealed secret is malformed".into()))?;
        let (nonce, sealed) = bytes.split_at(NONCE_BYTES);
        let plain = key
            .cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: purpose.associated_data(),
                },
            )
            .map_err(|_| CoreError::Internal(format!("a secret sealed with key {key_id} does not open")))?;
        String::from_utf8(plain).map_err(|_| CoreError::Internal("a sealed secret is not text".into()))
    }

    /// Whether a stored value is already as [`Sealer::seal`] would store it now.
    fn is_current(&self, stored: &str) -> bool {
        match self.key_id() {
            Some(id) => stored
                .strip_prefix(PREFIX)
                .is_some_and(|r| r.split_once('.').is_some_and(|(k, _)| k == id)),
            None => !stored.starts_with(PREFIX),
        }
    }

    /// A SQL condition true for a column's values that are not stored as they
    /// would be now (the key id is hex, so it is safe to inline).
    fn stale(&self, column: &str) -> String {
        match self.key_id() {
            Some(id) => format!("({column} is not null and {column} not like '{PREFIX}{id}.%')"),
            None => format!("({column} like '{PREFIX}%')"),
        }
    }
}

/// One table's sealed columns, and the key of its rows.
struct SealedTable {
    table: &'static str,
    key: &'static str,
    columns: &'static [&'static str],
    purpose: Purpose,
}

const SEALED: &[SealedTable] = &[
    SealedTable {
        table: "webhook_endpoints",
        key: "id",
        columns: &["secret", "previous_secret"],
        purpose: Purpose::SigningSecret,
    },
    SealedTable {
        table: "alert_secrets",
        key: "tenant_id",
        columns: &["secret", "previous_secret"],
        purpose: Purpose::SigningSecret,
    },
    SealedTable {
        table: "tenants",
        key: "id",
        columns: &["identity_secret"],
        purpose: Purpose::IdentitySecret,
    },
    SealedTable {
        table: "appointments",
        key: "id",
        columns: &["join_token"],
        purpose: Purpose::JoinToken,
    },
    SealedTable {
        table: "mail_outbox",
        key: "id",
        columns: &["body"],
        purpose: Purpose::MailBody,
    },
];

/// Rows resealed per transaction.
const BATCH: i64 = 500;

impl Services {
    /// Stores every sealed secret as the current key would: seals plain ones when a
    /// key is set, moves ones sealed under a previous key to the current one, and
    /// opens them all when the key was removed (with the old one among the previous
    /// keys). Also gives join tokens stored before digests were kept their digest.
    /// Fails, changing nothing more, on a value whose key is not configured.
    /// Returns how many rows changed. Run at start, before serving.
    pub async fn reseal_secrets(&self) -> CoreResult<u64> {
        let sealer = self.sealer().clone();
        let mut changed = 0;
        for t in SEALED {
            let mut stale: Vec<String> = t.columns.iter().map(|c| sealer.stale(c)).collect();
            if t.table == "appointments" {
                stale.push("join_token_hash is null".into());
            }
            let select = format!(
                "select {key}, {columns} from {table} where {stale} order by {key} limit {BATCH}",
                key = t.key,
                columns = t.columns.join(", "),
                table = t.table,
                stale = stale.join(" or "),
            );
            loop {
                let rows: Vec<Vec<Option<String>>> = with_db!(self.writer(), |pool| {
                    use sqlx::Row;
                    sqlx::query(&select).fetch_all(pool).await.map(|rows| {
                        rows.iter()
                            .map(|r| (0..=t.columns.len()).map(|i| r.get::<Option<String>, _>(i)).collect())
                            .collect()
                    })
                })?;
                if rows.is_empty() {
                    break;
                }
                let mut tx = self.db().begin().await?;
                for row in &rows {
                    let mut values = Vec::with_capacity(t.columns.len() + 1);
                    let mut digest = None;
                    for stored in &row[1..] {
                        values.push(match stored {
                            Some(stored) => {
                                let plain = sealer.open(t.purpose, stored)?;
                                if t.purpose == Purpose::JoinToken {
                                    digest = Some(token_digest(&plain));
                                }
                                Some(if sealer.is_current(stored) {
                                    stored.clone()
                                } else {
                                    sealer.seal(t.purpose, &plain)
                                })
                            }
                            None => None,
                        });
                    }
                    let mut sets: Vec<String> = t
                        .columns
                        .iter()
                        .enumerate()
                        .map(|(i, c)| format!("{c} = ${}", i + 2))
                        .collect();
                    if let Some(digest) = digest {
                        sets.push(format!("join_token_hash = ${}", t.columns.len() + 2));
                        values.push(Some(digest));
                    }
                    // Only if the row still holds what was read: a secret rotated
                    // meanwhile (by a running instance) is newer, and is kept.
                    let unchanged: Vec<String> = t
                        .columns
                        .iter()
                        .enumerate()
                        .map(|(i, c)| format!("{c} is not distinct from ${}", values.len() + 2 + i))
                        .collect();
                    let update = format!(
                        "update {} set {} where {} = $1 and {}",
                        t.table,
                        sets.join(", "),
                        t.key,
                        unchanged.join(" and ")
                    );
                    let updated = with_tx!(&mut tx, |conn| {
                        let mut q = sqlx::query(&update).bind(row[0].clone());
                        for v in values.iter().chain(&row[1..]) {
                            q = q.bind(v.clone());
                        }
                        q.execute(conn).await.map(|r| r.rows_affected())
                    })?;
                    changed += updated;
                }
                tx.commit().await?;
            }
        }
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY_A: &str = "0000000000000000000000000000000000000000000000000000000000000001";
    const KEY_B: &str = "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=";

    #[test]
    fn sealed_values_open_only_with_their_key_and_purpose() {
        let a = Sealer::new(Some(KEY_A), &[]).unwrap();
        let sealed = a.seal(Purpose::SigningSecret, "whsec_abc");
        assert!(sealed.starts_with(&format!("sealed1.{}.", a.key_id().unwrap())));
        assert!(!sealed.contains("whsec_abc"));
        assert_ne!(
            sealed,
            a.seal(Purpose::SigningSecret, "whsec_abc"),
            "each seal has its own nonce"
        );
        assert_eq!(a.open(Purpose::SigningSecret, &sealed).unwrap(), "whsec_abc");
        assert!(a.open(Purpose::JoinToken, &sealed).is_err(), "the purpose is bound in");
        let b = Sealer::new(Some(KEY_B), &[]).unwrap();
        let err = b.open(Purpose::SigningSecret, &sealed).unwrap_err().to_string();
        assert!(err.contains(a.key_id().unwrap()), "{err}");
        let mut tampered = sealed.clone();
        tampered.pop();
        tampered.push(if sealed.ends_with('A') { 'B' } else { 'A' });
        assert!(a.open(Purpose::SigningSecret, &tampered).is_err());
    }

    #[test]
    fn a_rotated_key_still_opens_and_plain_values_pass_through() {
        let a = Sealer::new(Some(KEY_A), &[]).unwrap();
        let old = a.seal(Purpose::IdentitySecret, "is_1");
        let rotated = Sealer::new(Some(KEY_B), &[KEY_A]).unwrap();
        assert_eq!(rotated.open(Purpose::IdentitySecret, &old).unwrap(), "is_1");
        assert!(!rotated.is_current(&old));
        assert!(rotated.is_current(&rotated.seal(Purpose::IdentitySecret, "is_1")));
        let none = Sealer::default();
        assert_eq!(none.seal(Purpose::JoinToken, "tok"), "tok");
        assert_eq!(none.open(Purpose::JoinToken, "tok").unwrap(), "tok");
        assert!(none.is_current("tok") && !none.is_current(&old));
        assert_eq!(rotated.open(Purpose::JoinToken, "plain").unwrap(), "plain");
    }

    #[test]
    fn keys_are_32_bytes_in_hex_or_base64() {
        assert!(Sealer::new(Some(KEY_A), &[]).is_ok());
        assert!(Sealer::new(Some(KEY_B), &[]).is_ok());
        assert!(Sealer::new(Some("AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI"), &[]).is_ok());
        // The same key with `+` and `/`, without padding, and URL-safe.
        let standard = "+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/+/8=";
        let id = |k: &str| Sealer::new(Some(k), &[]).unwrap().key_id().unwrap().to_string();
        assert_eq!(id(standard), id(standard.trim_end_matches('=')));
        assert_eq!(id(standard), id(&standard.replace('+', "-").replace('/', "_")));
        assert!(Sealer::new(Some("too short"), &[]).is_err());
        assert!(Sealer::new(Some(&KEY_A[2..]), &[]).is_err());
        let debug = format!("{:?}", Sealer::new(Some(KEY_A), &[KEY_B]).unwrap());
        assert!(!debug.contains(KEY_A) && debug.contains("current"), "{debug}");
    }
}
