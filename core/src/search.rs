//! Full-text search across a tenant's customers (names, e-mail, external id)
//! and message text, with the inbox's filters: status, assigned agent, tag and
//! date. Results are ranked, paged, and carry the matched passage.
//!
//! The index is kept by the database in the transaction of each write:
//! SQLite's FTS5 table fed by triggers, PostgreSQL's generated `tsvector`
//! columns with GIN indexes (`migrations/*/0042_search.sql`). A query is its
//! words, each matched as the start of a word, all of them required:
//! `refund 118` finds "Refund for order 1182". SQLite also folds diacritics
//! (`cafe` finds "café"); PostgreSQL's `simple` configuration does not.

use serde::{Deserialize, Serialize};

use crate::{
    conversations::ConversationStatus,
    db::{page, Arg, Db},
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId},
    model::{Page, PageRequest},
    time::from_ms,
    validate::Paging,
    Services,
};

/// Longest query, in characters.
pub const MAX_QUERY: usize = 500;
/// Most words a query uses; the rest are ignored.
pub const MAX_WORDS: usize = 8;
/// Marks the start of a matched word in a snippet (private use, never in text).
const OPEN: char = '\u{E000}';
/// Marks its end.
const CLOSE: char = '\u{E001}';

/// What a hit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[schema(as = SearchHitKind)]
pub enum HitKind {
    /// A message's text matched.
    Message,
    /// The customer's name, e-mail address or external id matched.
    Customer,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// What matched.
    pub kind: HitKind,
    /// The customer (the conversation).
    #[schema(value_type = String)]
    pub customer_id: CustomerId,
    /// How the customer is called.
    pub customer_name: String,
    /// The conversation's status.
    pub status: ConversationStatus,
    /// The user the customer is assigned to.
    pub assigned_user: Option<String>,
    /// With `MESSAGE`: the message.
    pub message_id: Option<String>,
    /// When the message was written, or the customer created.
    pub at: chrono::DateTime<chrono::Utc>,
    /// The matched passage, as plain text.
    pub snippet: String,
    /// Where the matched words are in `snippet`: `[start, end)` in characters.
    pub highlights: Vec<[usize; 2]>,
}

/// A search and its filters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchQuery {
    /// The words.
    pub q: String,
    /// Only conversations with this status.
    pub status: Option<ConversationStatus>,
    /// Only customers assigned to this user.
    pub agent: Option<String>,
    /// Only customers with this tag (theirs or their page's, whole).
    pub tag: Option<String>,
    /// Only hits at or after this time (unix ms).
    pub from: Option<i64>,
    /// Only hits before this time (unix ms).
    pub to: Option<i64>,
}

/// The words of a query: letters and digits, lowercased, each once, at most
/// [`MAX_WORDS`]. Anything else separates words, so no query syntax of either
/// backend can be injected.
pub fn words(q: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in q.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let word = word.to_lowercase();
        if !out.contains(&word) {
            out.push(word);
        }
        if out.len() == MAX_WORDS {
            break;
        }
    }
    out
}

/// FTS5's query: each word as a prefix, all required. (The tenant is a
/// column of `search_docs`, joined: as a column of the index, every search
/// would walk the whole tenant's posting list.)
fn fts5_query(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("\"{w}\"*"))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// PostgreSQL's `to_tsquery`: each word as a prefix, all required.
fn ts_query(words: &[String]) -> String {
    words.iter().map(|w| format!("{w}:*")).collect::<Vec<_>>().join(" & ")
}

/// A snippet with its marks taken out, and where they were.
pub fn unmark(marked: &str) -> (String, Vec<[usize; 2]>) {
    let mut text = String::with_capacity(marked.len());
    let mut highlights = Vec::new();
    let (mut at, mut start) = (0usize, None);
    for c in marked.chars() {
        match c {
            OPEN => start = Some(at),
            CLOSE => {
                if let Some(s) = start.take() {
                    if at > s {
                        highlights.push([s, at]);
                    }
                }
            }
            c => {
                text.push(c);
                at += 1;
            }
        }
    }
    (text, highlights)
}

#[derive(sqlx::FromRow)]
struct HitRow {
    kind: String,
    customer_id: CustomerId,
    message_id: Option<String>,
    at: i64,
    snippet: String,
    first_name: Option<String>,
    last_name: Option<String>,
    email: Option<String>,
    external_id: Option<String>,
    status: String,
    assigned_user_id: Option<String>,
}

impl From<HitRow> for SearchHit {
    fn from(r: HitRow) -> Self {
        let (snippet, highlights) = unmark(&r.snippet);
        let name = [r.first_name.as_deref(), r.last_name.as_deref()]
            .into_iter()
            .flatten()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let customer_name = if name.is_empty() {
            r.email.or(r.external_id).unwrap_or_else(|| r.customer_id.to_string())
        } else {
            name
        };
        SearchHit {
            kind: if r.kind == "CUSTOMER" {
                HitKind::Customer
            } else {
                HitKind::Message
            },
            customer_id: r.customer_id,
            customer_name,
            status: ConversationStatus::parse(&r.status).unwrap_or(ConversationStatus::Unread),
            assigned_user: r.assigned_user_id,
            message_id: r.message_id,
            at: from_ms(r.at),
            snippet,
            highlights,
        }
    }
}

/// The filters on the customer (`c`) and the hit's time (`hits.at`), over
/// `$3…$8`: status, agent, the tag as a first and as a later JSON item, from, to.
const FILTERS: &str = "($3 is null or c.status = $3) and ($4 is null or c.assigned_user_id = $4) \
     and ($5 is null or replace(c.tags, $5, '') <> c.tags or replace(c.tags, $6, '') <> c.tags \
       or replace(c.page_tags, $5, '') <> c.page_tags or replace(c.page_tags, $6, '') <> c.page_tags) \
     and ($7 is null or hits.at >= $7) and ($8 is null or hits.at < $8)";

/// The columns a hit reads from the customer.
const CUSTOMER_COLUMNS: &str = "c.first_name, c.last_name, c.email, c.external_id, c.status, c.assigned_user_id";

impl Services {
    /// A page of the tenant's hits for `query`, best first (then newest). A
    /// query without a word (letters or digits) finds nothing; one longer than
    /// [`MAX_QUERY`] is refused at `q`.
    pub async fn search(
        &self,
        tenant_id: &TenantId,
        query: &SearchQuery,
        page_request: &PageRequest,
    ) -> CoreResult<Page<SearchHit>> {
        let paging = Paging::from_request(page_request)?;
        if query.q.chars().count() > MAX_QUERY {
            return Err(CoreError::invalid(
                "q",
                "too_long",
                format!("q is at most {MAX_QUERY} characters"),
            ));
        }
        let words = words(&query.q);
        if words.is_empty() {
            // No word to look for: nothing matches.
            return Ok(paging.page(0, Vec::new()));
        }
        let tag = query
            .tag
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| serde_json::Value::from(t).to_string());
        let (count, rows) = match self.db() {
            Db::Sqlite(_) => (
                format!(
                    "select count(*) from search_index join search_docs hits on hits.doc = search_index.rowid \
                     join customers c on c.tenant_id = $1 and c.id = hits.customer_id \
                     where search_index match $2 and hits.tenant_id = $1 and {FILTERS}"
                ),
                format!(
                    "select case when hits.message_id is null then 'CUSTOMER' else 'MESSAGE' end as kind, \
                       hits.customer_id, hits.message_id, hits.at, \
                       snippet(search_index, 0, char(57344), char(57345), '…', 16) as snippet, {CUSTOMER_COLUMNS} \
                     from search_index join search_docs hits on hits.doc = search_index.rowid \
                     join customers c on c.tenant_id = $1 and c.id = hits.customer_id \
                     where search_index match $2 and hits.tenant_id = $1 and {FILTERS} \
                     order by bm25(search_index), hits.at desc, hits.doc desc limit $9 offset $10"
                ),
            ),
            Db::Postgres(_) => {
                let hits = "(select 'MESSAGE' as kind, m.customer_id, m.id as message_id, m.created_at as at, \
                       ts_rank(m.search, to_tsquery('simple', $2)) as rank, m.message as body \
                     from messages m where m.tenant_id = $1 and m.search @@ to_tsquery('simple', $2) \
                     union all \
                     select 'CUSTOMER', k.id, null, k.created_at, ts_rank(k.search, to_tsquery('simple', $2)), \
                       trim(coalesce(k.first_name, '') || ' ' || coalesce(k.last_name, '') || ' ' || \
                         coalesce(k.email, '') || ' ' || coalesce(k.external_id, '')) \
                     from customers k where k.tenant_id = $1 and k.search @@ to_tsquery('simple', $2)) hits";
                (
                    format!(
                        "select count(*) from {hits} join customers c on c.tenant_id = $1 and c.id = hits.customer_id \
                         where {FILTERS}"
                    ),
                    // The passage is cut for the page's rows only: `ts_headline`
                    // reads the whole text.
                    format!(
                        "select p.kind, p.customer_id, p.message_id, p.at, \
                           ts_headline('simple', p.body, to_tsquery('simple', $2), \
                             'StartSel=' || chr(57344) || ', StopSel=' || chr(57345) || ', MaxWords=24, MinWords=8, MaxFragments=1, FragmentDelimiter=…') as snippet, \
                           p.first_name, p.last_name, p.email, p.external_id, p.status, p.assigned_user_id \
                         from (select hits.*, {CUSTOMER_COLUMNS} from {hits} \
                           join customers c on c.tenant_id = $1 and c.id = hits.customer_id where {FILTERS} \
                           order by hits.rank desc, hits.at desc, hits.customer_id, hits.message_id limit $9 offset $10) p \
                         order by p.rank desc, p.at desc, p.customer_id, p.message_id"
                    ),
                )
            }
        };
        let matcher = match self.db() {
            Db::Sqlite(_) => fts5_query(&words),
            Db::Postgres(_) => ts_query(&words),
        };
        let args = [
            Arg::from(tenant_id),
            Arg::from(Some(matcher)),
            Arg::from(query.status.map(|s| s.as_str().to_string())),
            Arg::from(query.agent.clone()),
            Arg::from(tag.as_ref().map(|t| format!("[{t}"))),
            Arg::from(tag.as_ref().map(|t| format!(",{t}"))),
            Arg::from(query.from),
            Arg::from(query.to),
        ];
        let (total, rows): (i64, Vec<HitRow>) = page(self.db(), &count, &rows, &args, &paging).await?;
        Ok(paging.page(total, rows.into_iter().map(SearchHit::from).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_words_and_nothing_else() {
        assert_eq!(words("Refund: order #1182!"), ["refund", "order", "1182"]);
        assert_eq!(
            words(r#"" OR tenant : "x" NEAR(a b) -- ' ;"#),
            ["or", "tenant", "x", "near", "a", "b"]
        );
        assert_eq!(words("Ünïcödé ÇA"), ["ünïcödé", "ça"]);
        assert!(words("*** ---").is_empty());
        assert_eq!(words("a b c d e f g h i j").len(), MAX_WORDS);
        assert_eq!(fts5_query(&words("Refund 118")), "\"refund\"* AND \"118\"*");
        assert_eq!(ts_query(&words("Refund 118")), "refund:* & 118:*");
    }

    #[test]
    fn marks_become_highlights() {
        let marked = format!("Your {OPEN}refund{CLOSE} for {OPEN}order{CLOSE} 1182 …");
        let (text, highlights) = unmark(&marked);
        assert_eq!(text, "Your refund for order 1182 …");
        assert_eq!(highlights, [[5, 11], [16, 21]]);
        let chars: Vec<char> = text.chars().collect();
        assert_eq!(chars[5..11].iter().collect::<String>(), "refund");
    }
}
