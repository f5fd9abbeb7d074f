//! The domain error: what went wrong, in terms a client can act on.
//!
//! Entry points map each variant to their own wire format (problem+json for REST,
//! a `ServerFnError` for the dashboard). Internal causes are kept for the logs and
//! never shown to clients.

use serde::{Deserialize, Serialize};

/// One offending input field: where it is, a stable machine code and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "server", derive(utoipa::ToSchema))]
pub struct FieldError {
    /// Path of the field in the request, e.g. `conditions[1].startHours.hour`.
    pub field: String,
    /// Stable machine-readable code, e.g. `required`, `invalid_enum`, `too_long`.
    pub code: String,
    /// Human-readable explanation.
    pub message: String,
}

impl FieldError {
    /// Builds a field error.
    pub fn new(field: impl Into<String>, code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            code: code.into(),
            message: message.into(),
        }
    }
}

/// Errors returned by services.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The object does not exist, or belongs to another tenant (indistinguishable on purpose).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The input is well-formed but breaks a rule; each offending field is named.
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    /// A uniqueness or state conflict, naming the field when there is one.
    #[error("conflict: {message}")]
    Conflict {
        /// The conflicting field, e.g. `email`.
        field: Option<String>,
        /// Stable machine code, e.g. `email_taken`.
        code: &'static str,
        /// Human-readable explanation.
        message: String,
    },
    /// No valid credentials.
    #[error("authentication failed")]
    Unauthenticated,
    /// Valid credentials, but not allowed to do this.
    #[error("not allowed")]
    Forbidden,
    /// Valid credentials, but the object is out of this actor's reach, for a
    /// reason the caller can be told (403 with the code).
    #[error("not allowed: {message}")]
    Denied {
        /// Stable machine code, e.g. `platform_admin_protected`.
        code: &'static str,
        /// Human-readable explanation.
        message: String,
    },
    /// Too many attempts; retry after this many seconds.
    #[error("too many attempts")]
    RateLimited {
        /// Seconds until the next attempt is allowed.
        retry_after_secs: u64,
    },
    /// One object would outgrow its bound (413): sending the same again cannot
    /// help, and what is stored stays as it is.
    #[error("too large: {message}")]
    TooLarge {
        /// Stable machine code, e.g. `recording_session_full`.
        code: &'static str,
        /// Human-readable explanation, naming the bound.
        message: String,
    },
    /// A tenant's allowance for a period is spent (429); it is renewed after
    /// this many seconds.
    #[error("allowance spent: {message}")]
    AllowanceSpent {
        /// Stable machine code, e.g. `recording_allowance_spent`.
        code: &'static str,
        /// Human-readable explanation, naming the bound.
        message: String,
        /// Seconds until the allowance is renewed.
        retry_after_secs: u64,
    },
    /// Anything else: a database failure, a bug. Logged, never shown to clients.
    #[error("internal error: {0}")]
    Internal(String),
}

impl CoreError {
    /// A validation error with a single field.
    pub fn invalid(field: impl Into<String>, code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Validation(vec![FieldError::new(field, code, message)])
    }
}

#[cfg(feature = "server")]
impl From<sqlx::Error> for CoreError {
    fn from(err: sqlx::Error) -> Self {
        match err {
            sqlx::Error::RowNotFound => CoreError::NotFound("object"),
            other => CoreError::Internal(format!("database: {other}")),
        }
    }
}

#[cfg(feature = "server")]
impl From<sqlx::migrate::MigrateError> for CoreError {
    fn from(err: sqlx::migrate::MigrateError) -> Self {
        CoreError::Internal(format!("migration: {err}"))
    }
}

/// Result alias for services.
pub type CoreResult<T, E = CoreError> = Result<T, E>;
