//! Extractors that put the REST API's input rules in one place: JSON bodies whose
//! every failure is a problem+json answer naming the field, and the two kinds of
//! bearer authentication.

use std::net::IpAddr;

use axum::{
    body::Bytes,
    extract::{FromRequest, FromRequestParts, Request},
    http::{header, request::Parts, StatusCode},
};
use rapport_core::{
    audit::{Actor, ActorKind},
    auth::Principal,
    ids::TenantId,
    FieldError,
};
use serde::de::DeserializeOwned;

use super::{error::ApiError, request_id::RequestId};
use crate::state::AppState;

/// A JSON request body. Wrong content type is 415, unreadable JSON is 400, a body
/// over the size limit is 413, and a wrong type or missing field is 422 with the
/// field's path (e.g. `conditions[1].startHours.hour`).
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_json = media_type(req.headers()).is_some_and(|mime| {
            mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
        });
        if !is_json {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as application/json",
            ));
        }
        parse_json(&body_bytes(req, state).await?).map(ApiJson)
    }
}

/// The bytes of a request body: a body over the size limit is 413, one that
/// cannot be read is 400.
pub async fn body_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::for_status(StatusCode::PAYLOAD_TOO_LARGE)
        } else {
            ApiError::bad_request("unreadable_body", "the request body could not be read")
        }
    })
}

/// The media type of a request (`text/plain` of `text/plain; charset=utf-8`),
/// lowercased.
pub fn media_type(headers: &axum::http::HeaderMap) -> Option<String> {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|mime| mime.trim().to_ascii_lowercase())
}

/// Parses a JSON body with the error rules of [`ApiJson`].
///
/// The body is read as a JSON value first and every number with no fractional
/// part is made an integer: JSON Schema, which the OpenAPI document speaks, counts
/// `950.0` as the integer 950, so a client may send either.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request("malformed_json", format!("the body is not valid JSON: {e}")))?;
    integral_numbers_as_integers(&mut value);
    serde_path_to_error::deserialize(value).map_err(|err| {
        let inner = err.inner();
        match inner.classify() {
            serde_json::error::Category::Data => ApiError::validation(vec![field_error(&err)]),
            _ => ApiError::bad_request("malformed_json", format!("the body is not valid JSON: {inner}")),
        }
    })
}

/// Rewrites, in place, every float with no fractional part that an `i64`
/// holds exactly (`950.0`, `1e3`) as that integer.
fn integral_numbers_as_integers(value: &mut serde_json::Value) {
    /// 2^63: the first float past `i64::MAX`.
    const I64_LIMIT: f64 = 9_223_372_036_854_775_808.0;
    match value {
        serde_json::Value::Number(n) if n.is_f64() => {
            if let Some(f) = n
                .as_f64()
                .filter(|f| f.fract() == 0.0 && (-I64_LIMIT..I64_LIMIT).contains(f))
            {
                // The range check makes the cast exact.
                *value = serde_json::Value::from(f as i64);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(integral_numbers_as_integers),
        serde_json::Value::Object(fields) => fields.values_mut().for_each(integral_numbers_as_integers),
        _ => {}
    }
}

fn field_error(err: &serde_path_to_error::Error<serde_json::Error>) -> FieldError {
    let path = err.path().to_string();
    let path = if path == "." { String::new() } else { path };
    let message = err.inner().to_string();
    // serde's messages end with " at line L column C"; the field path says more.
    let message = message.split(" at line ").next().unwrap_or(&message).to_string();
    if let Some(missing) = message
        .strip_prefix("missing field `")
        .and_then(|m| m.split('`').next())
    {
        let field = if path.is_empty() {
            missing.to_string()
        } else {
            format!("{path}.{missing}")
        };
        return FieldError::new(field.clone(), "required", format!("{field} is required"));
    }
    let code = if message.starts_with("unknown variant") {
        "invalid_enum"
    } else if message.starts_with("invalid type") {
        "invalid_type"
    } else if message.starts_with("unknown field") {
        "unknown_field"
    } else {
        "invalid_value"
    };
    FieldError::new(if path.is_empty() { "body".to_string() } else { path }, code, message)
}

/// The bearer token of a request: `Authorization: Bearer …` or `?access_token=…`.
/// Both given and different is an error rather than a guess.
pub fn bearer_token(parts: &Parts) -> Result<Option<String>, ApiError> {
    let header_token = match parts.headers.get(header::AUTHORIZATION) {
        None => None,
        Some(value) => {
            let value = value.to_str().unwrap_or_default();
            match value.split_once(' ') {
                Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() => {
                    Some(token.trim().to_string())
                }
                _ => {
                    return Err(ApiError::unauthorized(
                        "invalid_token",
                        "use Authorization: Bearer <token>",
                    ))
                }
            }
        }
    };
    let query_token = parts.uri.query().and_then(|q| {
        serde_urlencoded::from_str::<Vec<(String, String)>>(q)
            .ok()?
            .into_iter()
            .find(|(k, _)| k == "access_token")
            .map(|(_, v)| v)
    });
    match (header_token, query_token) {
        (Some(h), Some(q)) if h != q => Err(ApiError::bad_request(
            "conflicting_tokens",
            "the Authorization header and access_token differ",
        )),
        (Some(t), _) | (None, Some(t)) => Ok(Some(t)),
        (None, None) => Ok(None),
    }
}

async fn principal(parts: &Parts, state: &AppState) -> Result<Principal, ApiError> {
    if let Some(p) = parts.extensions.get::<Principal>() {
        return Ok(p.clone());
    }
    let token = bearer_token(parts)?.ok_or_else(|| {
        ApiError::unauthorized("missing_token", "send a token as Authorization: Bearer or access_token")
    })?;
    Ok(state.services.authenticate_token(&token).await?)
}

/// Who acts, for the audit log: the key, the client IP and the request id.
/// The actor of a request: who (`kind`, `id`), from which IP, in which request.
pub(crate) fn actor(parts: &Parts, kind: ActorKind, key_id: &str) -> Actor {
    Actor {
        kind,
        id: key_id.to_string(),
        ip: Some(client_ip(parts).to_string()),
        request_id: parts.extensions.get::<RequestId>().map(|r| r.0.clone()),
    }
}

/// A request authenticated by a tenant API key: reaches this tenant's data only.
#[derive(Debug, Clone)]
pub struct TenantAuth {
    /// The tenant.
    pub tenant_id: TenantId,
    /// The key, client and request, for the audit log.
    pub actor: Actor,
}

impl FromRequestParts<AppState> for TenantAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        match principal(parts, state).await? {
            Principal::Tenant { tenant_id, key_id } => Ok(TenantAuth {
                tenant_id,
                actor: actor(parts, ActorKind::Apikey, &key_id),
            }),
            Principal::Platform { .. } => Err(ApiError::forbidden(
                "platform_key_not_allowed",
                "a platform key manages tenants only; use a tenant API key for tenant data",
            )),
        }
    }
}

/// A request authenticated by a platform key: tenant management only.
#[derive(Debug, Clone)]
pub struct PlatformAuth {
    /// The platform admin owning the key.
    pub user_id: rapport_core::ids::UserId,
    /// The key, client and request, for the audit log.
    pub actor: Actor,
}

impl FromRequestParts<AppState> for PlatformAuth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        match principal(parts, state).await? {
            Principal::Platform { user_id, key_id } => Ok(PlatformAuth {
                user_id,
                actor: actor(parts, ActorKind::Platformkey, &key_id),
            }),
            Principal::Tenant { .. } => Err(ApiError::forbidden(
                "tenant_key_not_allowed",
                "tenant management needs a platform key (Settings → API)",
            )),
        }
    }
}

/// The client's IP address (behind trusted proxies, the one they forwarded).
pub fn client_ip(parts: &Parts) -> IpAddr {
    super::client_ip::ClientIp::of(parts)
}

/// Query parameters. An unparsable value is 422 naming the parameter.
#[derive(Debug, Clone)]
pub struct ApiQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        let de = serde_urlencoded::Deserializer::new(form_urlencoded_parse(query));
        serde_path_to_error::deserialize(de).map(ApiQuery).map_err(|err| {
            let field = err.path().to_string();
            let message = err.inner().to_string();
            let field = if field == "." {
                message.split('`').nth(1).unwrap_or("query").to_string()
            } else {
                field
            };
            ApiError::validation(vec![FieldError::new(field, "invalid_value", message)])
        })
    }
}

fn form_urlencoded_parse(query: &str) -> form_urlencoded::Parse<'_> {
    form_urlencoded::parse(query.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Limits {
        seconds: u32,
        ratio: f64,
        nested: Vec<i64>,
    }

    #[test]
    fn integral_floats_are_read_as_integers_and_fractions_are_refused() {
        let limits: Limits = parse_json(br#"{"seconds": 950.0, "ratio": 2, "nested": [1e3, -4.0]}"#).unwrap();
        assert_eq!(
            (limits.seconds, limits.ratio, limits.nested),
            (950, 2.0, vec![1000, -4])
        );
        let refused = parse_json::<Limits>(br#"{"seconds": 950.5, "ratio": 1, "nested": []}"#).unwrap_err();
        assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let malformed = parse_json::<Limits>(b"{\"seconds\": ").unwrap_err();
        assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);
    }
}
