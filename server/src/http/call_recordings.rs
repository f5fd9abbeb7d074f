//! Downloading a conference recording (a WebM file stored in chunks): over
//! REST with a tenant key, and from the dashboard's appointment page with the
//! signed-in user's session. Both stream the file a chunk at a time, and both
//! answer a single byte range (`Range: bytes=…`) with 206, so that a browser's
//! player can seek.

use axum::{
    body::Body,
    extract::{Path, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use rapport_core::{
    appointments::recordings::{ConferenceRecording, CHUNK_BYTES},
    ids::AppointmentId,
    model::Role,
    CoreError, Services,
};

use crate::{
    http::{dashboard_user::dashboard_user, error::ApiError},
    state::AppState,
};

/// The bytes asked for, `start..=end`, of a file of `size` bytes: `None`
/// for the whole file (no `Range` header, or one that cannot be read, which
/// RFC 9110 says to ignore); `Err` when the range starts past the end (416).
/// Only one range is served; a list of them gets the first.
fn wanted(headers: &HeaderMap, size: u64) -> Result<Option<(u64, u64)>, ()> {
    let Some(range) = headers.get(header::RANGE).and_then(|v| v.to_str().ok()) else {
        return Ok(None);
    };
    let Some(spec) = range.trim().strip_prefix("bytes=") else {
        return Ok(None);
    };
    let first = spec.split(',').next().unwrap_or_default().trim();
    let Some((from, to)) = first.split_once('-') else {
        return Ok(None);
    };
    let number = |s: &str| s.trim().parse::<u64>().ok();
    let (start, end) = match (from.trim(), to.trim()) {
        // The last `n` bytes.
        ("", n) => match number(n) {
            Some(0) => return Err(()),
            Some(n) => (size.saturating_sub(n), size.saturating_sub(1)),
            None => return Ok(None),
        },
        (s, "") => match number(s) {
            Some(start) => (start, size.saturating_sub(1)),
            None => return Ok(None),
        },
        (s, e) => match (number(s), number(e)) {
            (Some(start), Some(end)) if start <= end => (start, end.min(size.saturating_sub(1))),
            _ => return Ok(None),
        },
    };
    if size == 0 || start >= size {
        return Err(());
    }
    Ok(Some((start, end)))
}

/// The file (or the asked range of it) as a streamed response.
pub fn webm_response(services: Services, recording: &ConferenceRecording, headers: &HeaderMap) -> Response {
    let size = u64::try_from(recording.size).unwrap_or(0);
    let range = match wanted(headers, size) {
        Ok(range) => range,
        Err(()) => {
            // A problem document, as every REST error is, with the size.
            let mut refused = ApiError::new(
                StatusCode::RANGE_NOT_SATISFIABLE,
                "range_not_satisfiable",
                format!("the file has {size} bytes; ask for one range within them"),
            )
            .into_response();
            if let Ok(value) = HeaderValue::from_str(&format!("bytes */{size}")) {
                refused.headers_mut().insert(header::CONTENT_RANGE, value);
            }
            return refused;
        }
    };
    let (start, end) = range.unwrap_or((0, size.saturating_sub(1)));
    let chunk = CHUNK_BYTES as u64;
    let id = recording.id.clone();
    // (next chunk, bytes of it to skip, bytes still to send)
    let state = (
        start / chunk,
        start % chunk,
        if size == 0 { 0 } else { end - start + 1 },
    );
    let body = futures_util::StreamExt::fuse(futures_util::stream::unfold(state, move |(seq, skip, left)| {
        let (services, id) = (services.clone(), id.clone());
        async move {
            if left == 0 {
                return None;
            }
            let data = match services.conference_recording_chunk(&id, seq as i64).await {
                Ok(Some(data)) => data,
                Ok(None) => return Some((Err(std::io::Error::other("a chunk is missing")), (seq, 0, 0))),
                Err(e) => return Some((Err(std::io::Error::other(e.to_string())), (seq, 0, 0))),
            };
            let from = (skip as usize).min(data.len());
            let take = (data.len() - from).min(usize::try_from(left).unwrap_or(usize::MAX));
            let bytes = axum::body::Bytes::copy_from_slice(&data[from..from + take]);
            Some((Ok(bytes), (seq + 1, 0, left - take as u64)))
        }
    }));
    let stem = format!(
        "{}-{{}}-{}.webm",
        recording.started_at.format("%Y%m%d-%H%M"),
        recording.source.as_str().to_lowercase()
    );
    let ascii_name = stem.replace("{}", &file_safe(&recording.participant));
    // The participant's own name, for clients that read `filename*` (RFC 6266).
    let utf8_name = stem.replace("{}", &percent_encode(&recording.participant));
    let mut response = Response::new(Body::from_stream(body));
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("video/webm"));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(
        header::CONTENT_LENGTH,
        HeaderValue::from(if size == 0 { 0 } else { end - start + 1 }),
    );
    let disposition = format!("attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{utf8_name}");
    if let Ok(disposition) = HeaderValue::from_str(&disposition) {
        h.insert(header::CONTENT_DISPOSITION, disposition);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    if range.is_some() {
        *response.status_mut() = StatusCode::PARTIAL_CONTENT;
        if let Ok(value) = HeaderValue::from_str(&format!("bytes {start}-{end}/{size}")) {
            response.headers_mut().insert(header::CONTENT_RANGE, value);
        }
    }
    response
}

/// A participant's name as a plain file name: ASCII letters, digits and `-`.
fn file_safe(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect();
    if safe.trim_matches('-').is_empty() {
        "participant".into()
    } else {
        safe
    }
}

/// `name` percent-encoded for `filename*` (RFC 8187): unreserved characters
/// as they are, every other byte as `%XX`.
fn percent_encode(name: &str) -> String {
    name.chars()
        .take(40)
        .collect::<String>()
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// `GET /appointments/{id}/recordings/{recordingId}`: the dashboard's link,
/// for the tenant's signed-in agents and above.
pub async fn download(
    State(state): State<AppState>,
    Path((appointment_id, recording_id)): Path<(AppointmentId, String)>,
    headers: HeaderMap,
) -> Response {
    let user = match dashboard_user(&state.services, &headers, Role::Agent).await {
        Ok(user) => user,
        Err(refusal) => return refusal.into_response(),
    };
    match state
        .services
        .conference_recording(&user.tenant_id, &appointment_id, &recording_id)
        .await
    {
        Ok(recording) => webm_response(state.services.clone(), &recording, &headers),
        Err(CoreError::NotFound(_)) => (StatusCode::NOT_FOUND, "no such recording").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "recording download failed");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::RANGE, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn reads_one_byte_range() {
        assert_eq!(wanted(&HeaderMap::new(), 100), Ok(None));
        assert_eq!(wanted(&range("bytes=0-9"), 100), Ok(Some((0, 9))));
        assert_eq!(wanted(&range("bytes=90-"), 100), Ok(Some((90, 99))));
        assert_eq!(wanted(&range("bytes=-10"), 100), Ok(Some((90, 99))));
        assert_eq!(wanted(&range("bytes=50-500"), 100), Ok(Some((50, 99))));
        assert_eq!(wanted(&range("bytes=0-1, 5-6"), 100), Ok(Some((0, 1))));
        assert_eq!(wanted(&range("bytes=100-"), 100), Err(()));
        assert_eq!(wanted(&range("bytes=-0"), 100), Err(()));
        // What cannot be read is ignored: the whole file.
        assert_eq!(wanted(&range("bytes=9-1"), 100), Ok(None));
        assert_eq!(wanted(&range("items=0-1"), 100), Ok(None));
        assert_eq!(wanted(&range("bytes=x-"), 100), Ok(None));
        assert_eq!(wanted(&range("bytes=-"), 100), Ok(None));
    }

    #[test]
    fn names_files_safely() {
        assert_eq!(file_safe("Ann O'Neil"), "Ann-O-Neil");
        assert_eq!(file_safe("José"), "Jos-");
        assert_eq!(file_safe("../"), "participant");
        assert_eq!(percent_encode("José B"), "Jos%C3%A9%20B");
    }
}
