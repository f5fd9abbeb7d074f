//! The inbox's search: the same service as `GET /rest/v1/search`, for agents.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Where search results are shown.
pub const SEARCH_PATH: &str = "/search";
/// Hits per page.
pub const HITS_PER_PAGE: i64 = 20;

/// One hit as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HitView {
    /// The customer (the conversation to open).
    pub customer_id: String,
    /// How the customer is called.
    pub name: String,
    /// The conversation's status.
    pub status: String,
    /// Whether a message matched (else the customer's name or address).
    pub in_message: bool,
    /// `YYYY-MM-DD HH:MM` UTC.
    pub at: String,
    /// The passage, cut into `(text, matched)` pieces.
    pub pieces: Vec<(String, bool)>,
}

/// A page of hits.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchView {
    /// The hits, best first.
    pub hits: Vec<HitView>,
    /// How many there are in all.
    pub total: i64,
}

/// `text` cut at `highlights` (character ranges) into pieces, each marked
/// whether it matched.
pub fn pieces(text: &str, highlights: &[[usize; 2]]) -> Vec<(String, bool)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    for [start, end] in highlights.iter().copied() {
        let (start, end) = (start.min(chars.len()), end.min(chars.len()));
        if start < at || end <= start {
            continue;
        }
        if start > at {
            out.push((chars[at..start].iter().collect(), false));
        }
        out.push((chars[start..end].iter().collect(), true));
        at = end;
    }
    if at < chars.len() {
        out.push((chars[at..].iter().collect(), false));
    }
    out
}

/// The signed-in agent's search: `q`, optionally only one status, only their
/// own conversations, or one tag; page `page` (from 0).
#[server(endpoint = "inbox_search")]
pub async fn inbox_search(
    q: String,
    status: Option<String>,
    mine: Option<bool>,
    tag: Option<String>,
    page: Option<i64>,
) -> Result<SearchView, ServerFnError> {
    use rapport_core::{conversations::ConversationStatus, model::PageRequest, search::SearchQuery};
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let query = SearchQuery {
        q,
        status: status.as_deref().and_then(ConversationStatus::parse),
        agent: mine.unwrap_or(false).then(|| user.id.to_string()),
        tag: tag.filter(|t| !t.trim().is_empty()),
        from: None,
        to: None,
    };
    let found = ctx
        .services
        .search(
            &user.tenant_id,
            &query,
            &PageRequest {
                page_number: Some(page.unwrap_or(0).max(0)),
                page_size: Some(HITS_PER_PAGE),
                offset: None,
            },
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(SearchView {
        total: found.page.total_elements,
        hits: found
            .results
            .into_iter()
            .map(|h| HitView {
                pieces: pieces(&h.snippet, &h.highlights),
                customer_id: h.customer_id.into_string(),
                name: h.customer_name,
                status: h.status.as_str().to_string(),
                in_message: h.kind == rapport_core::search::HitKind::Message,
                at: h.at.format("%Y-%m-%d %H:%M").to_string(),
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_cut_the_passage_into_pieces() {
        let cut = pieces("Your refund for order 1182", &[[5, 11], [16, 21]]);
        let expected: Vec<(String, bool)> = [
            ("Your ", false),
            ("refund", true),
            (" for ", false),
            ("order", true),
            (" 1182", false),
        ]
        .into_iter()
        .map(|(t, m)| (t.to_string(), m))
        .collect();
        assert_eq!(cut, expected);
        assert_eq!(pieces("abc", &[[5, 9]]), vec![("abc".to_string(), false)]);
    }
}
