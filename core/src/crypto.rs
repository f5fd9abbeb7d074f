//! Secrets: random tokens, their digests, and password hashing.
//!
//! Passwords are hashed with argon2id (the `argon2` crate's defaults, OWASP's
//! recommended parameters), on the blocking pool because a hash takes tens of
//! milliseconds of CPU. Tokens (API keys, session ids) are 256 random bits, so a
//! single SHA-256 is a sound digest for them, and it lets a request be authenticated
//! with one indexed lookup.

use argon2::{
    password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString},
    Argon2,
};
use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::error::{CoreError, CoreResult};

/// `bytes` random bytes from the OS generator, base64url without padding.
pub fn random_token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    URL_SAFE_NO_PAD.encode(buf)
}

/// Hex SHA-256 of a token, as stored.
pub fn token_digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Hashes a password with argon2id (PHC string format).
pub async fn hash_password(password: &str) -> CoreResult<String> {
    let password = password.to_owned();
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| CoreError::Internal(format!("argon2: {e}")))
    })
    .await
    .map_err(|e| CoreError::Internal(format!("hashing task: {e}")))?
}

/// Checks a password against a stored PHC hash. A malformed hash verifies nothing.
pub async fn verify_password(password: &str, phc: &str) -> bool {
    let password = password.to_owned();
    let phc = phc.to_owned();
    tokio::task::spawn_blocking(move || {
        PasswordHash::new(&phc)
            .map(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
            .unwrap_or(false)
    })
    .await
    .unwrap_or(false)
}

/// A password that is hard to guess and easy to copy: 18 random bytes, base64url.
pub fn generate_password() -> String {
    random_token(18)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn password_round_trip() {
        let hash = hash_password("correct horse").await.unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &hash).await);
        assert!(!verify_password("wrong horse", &hash).await);
        assert!(!verify_password("correct horse", "not-a-hash").await);
    }

    #[test]
    fn tokens_are_random_and_digests_stable() {
        let a = random_token(32);
        let b = random_token(32);
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert_eq!(token_digest("abc"), token_digest("abc"));
        assert_ne!(token_digest("abc"), token_digest("abd"));
    }
}
