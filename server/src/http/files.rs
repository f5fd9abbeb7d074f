//! Files sent in conversations, outside the REST API (the visitor's upload is
//! `POST /rest/v1/widget/file`):
//!
//! - `GET /files/{token}/{name}`: a file's download link. The token is the
//!   capability (see `rapport_core::files`); the name only labels the link.
//!   The file is streamed from the media store.
//!   Files that could run script in a browser (HTML, SVG, …) are always
//!   downloaded, never shown, and every file is sandboxed by its CSP.
//! - `POST /inbox/{customerId}/file`: an agent sends a file from the inbox, as
//!   a plain `multipart/form-data` form (it works before the page's wasm has
//!   loaded). The form's `back` field says which inbox view to return to; a
//!   refused file comes back there as `file_error=<code>`.

use axum::{
    extract::{FromRequestParts, Multipart, Path, State},
    http::{header, request::Parts, HeaderValue, StatusCode},
    response::{IntoResponse, Redirect, Response},
};
use rapport_core::{
    audit::ActorKind,
    files::{shown_inline, FileUpload},
    ids::{CustomerId, TenantId},
    model::Role,
    CoreError,
};

use super::{
    dashboard_user::{dashboard_user, Refusal},
    extract::actor,
};
use crate::state::AppState;

/// `GET /files/{token}/{name}`.
pub async fn download(State(state): State<AppState>, Path((token, _name)): Path<(String, String)>) -> Response {
    let file = match state.services.download_file(&token).await {
        Ok(file) => file,
        Err(CoreError::NotFound(_)) => return (StatusCode::NOT_FOUND, "no such file").into_response(),
        Err(err) => {
            tracing::error!(error = %err, "cannot read a file");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    };
    let disposition = if shown_inline(&file.content_type) {
        "inline"
    } else {
        "attachment"
    };
    let headers = [
        (
            header::CONTENT_TYPE,
            HeaderValue::from_str(&file.content_type)
                .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream")),
        ),
        (
            header::CONTENT_DISPOSITION,
            HeaderValue::from_str(&content_disposition(disposition, &file.name))
                .unwrap_or_else(|_| HeaderValue::from_static("attachment")),
        ),
        // Even a file shown in place runs no script and loads nothing.
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("sandbox; default-src 'none'; img-src 'self'; media-src 'self'"),
        ),
        // The link is the credential: no shared cache keeps the file.
        (
            header::CACHE_CONTROL,
            HeaderValue::from_static("private, max-age=86400"),
        ),
        // The widget's links open from customers' sites.
        (
            header::HeaderName::from_static("cross-origin-resource-policy"),
            HeaderValue::from_static("cross-origin"),
        ),
    ];
    // Streamed from the media store: the object is never held in memory
    // whole, and the link stays the only credential (a redirect to a
    // presigned URL would hand out a second one, without these headers).
    let mut response = (headers, axum::body::Body::from_stream(file.content)).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(file.size));
    response
}

/// `Content-Disposition` with the file's name: an ASCII fallback and the
/// UTF-8 name (RFC 6266).
fn content_disposition(disposition: &str, name: &str) -> String {
    let ascii: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let encoded: String = name
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    format!("{disposition}; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

/// The signed-in agent (or higher) of an inbox request; anyone else is sent
/// to sign in, or refused.
pub struct Agent {
    tenant_id: TenantId,
    actor: rapport_core::audit::Actor,
}

impl FromRequestParts<AppState> for Agent {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        match dashboard_user(&state.services, &parts.headers, Role::Agent).await {
            Ok(user) => Ok(Agent {
                actor: actor(parts, ActorKind::User, &user.id),
                tenant_id: user.tenant_id,
            }),
            // A plain form post: back to the login page, not a bare 401.
            Err(Refusal::SignIn) => Err(Redirect::to("/login").into_response()),
            Err(refusal) => Err(refusal.into_response()),
        }
    }
}

/// `POST /inbox/{customerId}/file`: fields `back` (the inbox view to return
/// to, a path under `/inbox`), then `file`.
pub async fn send_from_inbox(
    State(state): State<AppState>,
    agent: Agent,
    Path(customer_id): Path<CustomerId>,
    mut form: Multipart,
) -> Response {
    let mut back = String::from(rapport_app::api::inbox::INBOX_PATH);
    let outcome = loop {
        let field = match form.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break Err("missing"),
            // Over the size limit, or a broken form.
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => break Err("file_too_large"),
            Err(_) => break Err("unreadable"),
        };
        match field.name() {
            Some("back") => {
                if let Ok(value) = field.text().await {
                    // Only a place in the inbox: never a redirect elsewhere.
                    if value.starts_with(rapport_app::api::inbox::INBOX_PATH)
                        && rapport_core::redirects::local_path(&value).is_some()
                    {
                        back = value;
                    }
                }
            }
            Some("file") => {
                let name = field.file_name().unwrap_or_default().to_string();
                let content_type = field.content_type().map(str::to_string);
                let bytes = match field.bytes().await {
                    Ok(bytes) => bytes,
                    Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => break Err("file_too_large"),
                    Err(_) => break Err("unreadable"),
                };
                let upload = FileUpload {
                    name: &name,
                    content_type: content_type.as_deref(),
                    bytes: &bytes,
                };
                break match state
                    .services
                    .agent_file(&agent.tenant_id, &customer_id, upload, &agent.actor)
                    .await
                {
                    Ok(_) => Ok(()),
                    Err(CoreError::Validation(fields)) => Err(match fields.first().map(|f| f.code.as_str()) {
                        Some("file_too_large") => "file_too_large",
                        Some("empty") => "empty",
                        Some("files_off") => "files_off",
                        Some("required") => "missing",
                        _ => "invalid",
                    }),
                    Err(CoreError::TooLarge { code, .. }) => Err(code),
                    Err(CoreError::NotFound(_)) => return (StatusCode::NOT_FOUND, "no such customer").into_response(),
                    Err(err) => {
                        tracing::error!(error = %err, "inbox file: cannot send");
                        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
                    }
                };
            }
            _ => {}
        }
    };
    match outcome {
        Ok(()) => Redirect::to(&back).into_response(),
        Err(code) => {
            let joiner = if back.contains('?') { '&' } else { '?' };
            Redirect::to(&format!("{back}{joiner}file_error={code}")).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::content_disposition;

    #[test]
    fn dispositions_carry_an_ascii_and_a_utf8_name() {
        assert_eq!(
            content_disposition("attachment", "Rechnung März \"1\".pdf"),
            "attachment; filename=\"Rechnung M_rz _1_.pdf\"; filename*=UTF-8''Rechnung%20M%C3%A4rz%20%221%22.pdf"
        );
    }
}
