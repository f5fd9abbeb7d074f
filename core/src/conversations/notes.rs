//! Private notes in a conversation: what agents write for each other. A note is
//! kept apart from the messages (its own table), so no path that serves or
//! sends messages (the widget, transcripts, replies by mail, `message.*`
//! webhooks, the message report) can carry one. A note answers nobody: it
//! stops no SLA clock and starts none.
//!
//! `@` names a user: `@` then their e-mail address (`@sam@example.com`), or
//! the part of it before the `@` (`@sam`) when no other user of the tenant
//! shares it. A name that matches nobody stays text. Writing the note, telling
//! the named users and queuing `note.created` is one use case
//! (`usecases::notes`).

use serde::{Deserialize, Serialize};

use crate::{
    audit::{Actor, ActorKind},
    db::{keyed_page, Tx},
    error::CoreResult,
    ids::{CustomerId, TenantId},
    model::{Page, PageRequest},
    time::{from_ms, now_ms},
    validate::Paging,
    with_tx, Services,
};

/// Longest note, in characters.
pub const MAX_NOTE: usize = 4000;

/// A private note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    /// Id.
    pub id: String,
    /// The customer whose conversation it is in.
    #[schema(value_type = String)]
    pub customer_id: CustomerId,
    /// Who wrote it: `user` (an agent) or `apikey` (an integration).
    pub author_type: ActorKind,
    /// The user's or key's id.
    pub author_id: Option<String>,
    /// The text.
    pub text: String,
    /// Ids of the users it mentions (`@`), who were notified.
    pub mentions: Vec<String>,
    /// When it was written.
    pub created_at: chrono::DateTime<chrono::Utc>,
}

/// A note to write.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"text": "Asked billing about the refund. @sam can you confirm?"}))]
pub struct NoteIn {
    /// The text (1–4000 characters). `@` and a user's e-mail address, or the
    /// part before its `@` when no other user shares it, notifies that user.
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 4000,
        pattern = r"\S"
    )]
    pub text: Option<String>,
}

/// The names `@` introduces in `text`, in order and each once: an `@` at the
/// start or after a character that is not part of a name, then letters,
/// digits, `.`, `_`, `+` and `-`, optionally `@` and a domain. Trailing dots
/// are punctuation.
pub fn mentioned_names(text: &str) -> Vec<String> {
    let is_name = |c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '+' | '-');
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut names: Vec<String> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let starts = c == '@' && (i == 0 || !is_name(chars[i - 1].1) && chars[i - 1].1 != '@');
        if !starts {
            i += 1;
            continue;
        }
        let mut end = i + 1;
        while end < chars.len() && is_name(chars[end].1) {
            end += 1;
        }
        // An e-mail address: the local part, `@`, a domain.
        if end > i + 1 && end + 1 < chars.len() && chars[end].1 == '@' && is_name(chars[end + 1].1) {
            end += 1;
            while end < chars.len() && is_name(chars[end].1) {
                end += 1;
            }
        }
        let stop = chars.get(end).map_or(text.len(), |(b, _)| *b);
        let name = text[at + 1..stop].trim_end_matches(['.', '-']).to_lowercase();
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
        i = end.max(i + 1);
    }
    names
}

/// Of the tenant's users (`(id, e-mail)`), the ids `names` mention: by whole
/// address, or by the part before the `@` when it is unique among them.
pub fn mentioned_users(names: &[String], users: &[(String, String)]) -> Vec<String> {
    let local = |email: &str| email.split('@').next().unwrap_or_default().to_lowercase();
    let mut ids: Vec<String> = Vec::new();
    for name in names {
        let found = if name.contains('@') {
            users.iter().find(|(_, email)| email.eq_ignore_ascii_case(name))
        } else {
            let mut same = users.iter().filter(|(_, email)| local(email) == *name);
            match (same.next(), same.next()) {
                (Some(one), None) => Some(one),
                _ => None,
            }
        };
        if let Some((id, _)) = found {
            if !ids.contains(id) {
                ids.push(id.clone());
            }
        }
    }
    ids
}

#[derive(sqlx::FromRow)]
struct NoteRow {
    id: String,
    customer_id: CustomerId,
    author_kind: String,
    author_id: Option<String>,
    body: String,
    mentions: String,
    created_at: i64,
}

impl From<NoteRow> for Note {
    fn from(r: NoteRow) -> Self {
        Note {
            id: r.id,
            customer_id: r.customer_id,
            author_type: ActorKind::parse(&r.author_kind),
            author_id: r.author_id,
            text: r.body,
            mentions: serde_json::from_str(&r.mentions).unwrap_or_default(),
            created_at: from_ms(r.created_at),
        }
    }
}

/// The tenant's users as `(id, e-mail)`, to resolve mentions against.
pub(crate) async fn users_in(tx: &mut Tx, tenant_id: &TenantId) -> CoreResult<Vec<(String, String)>> {
    Ok(with_tx!(tx, |conn| sqlx::query_as(
        "select id, email from users where tenant_id = $1"
    )
    .bind(tenant_id)
    .fetch_all(conn)
    .await)?)
}

/// Stores a note by `author` in `customer_id`'s conversation (the caller has
/// checked the customer and the text).
pub(crate) async fn insert_in(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    author: &Actor,
    text: &str,
    mentions: &[String],
) -> CoreResult<Note> {
    let note = Note {
        id: uuid::Uuid::now_v7().to_string(),
        customer_id: customer_id.clone(),
        author_type: author.kind,
        author_id: Some(author.id.clone()),
        text: text.to_string(),
        mentions: mentions.to_vec(),
        created_at: from_ms(now_ms()),
    };
    let mentions = serde_json::to_string(&note.mentions).unwrap_or_else(|_| "[]".into());
    with_tx!(tx, |conn| sqlx::query(
        "insert into notes (id, tenant_id, customer_id, author_kind, author_id, body, mentions, created_at) \
         values ($1, $2, $3, $4, $5, $6, $7, $8)"
    )
    .bind(&note.id)
    .bind(tenant_id)
    .bind(customer_id)
    .bind(note.author_type.as_str())
    .bind(&note.author_id)
    .bind(&note.text)
    .bind(&mentions)
    .bind(note.created_at.timestamp_millis())
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(note)
}

impl Services {
    /// A page of the notes in `customer_id`'s conversation, newest first. A
    /// customer of another tenant has none.
    pub async fn list_notes(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        page: &PageRequest,
    ) -> CoreResult<Page<Note>> {
        let paging = Paging::from_request(page)?;
        let (total, rows): (i64, Vec<NoteRow>) = keyed_page(
            self.db(),
            "select count(*) from notes where tenant_id = $1 and customer_id = $2",
            "select id, customer_id, author_kind, author_id, body, mentions, created_at from notes \
             where tenant_id = $1 and customer_id = $2 order by created_at desc, id desc limit $3 offset $4",
            tenant_id,
            customer_id,
            &paging,
        )
        .await?;
        Ok(paging.page(total, rows.into_iter().map(Note::from).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_are_names_after_an_at_sign_not_addresses_in_text() {
        assert_eq!(
            mentioned_names("@sam, please ask @Ann.Lee. Mail bob@example.com or @kim@example.com! @sam"),
            ["sam", "ann.lee", "kim@example.com"]
        );
        assert_eq!(mentioned_names("no one @ all, @@x"), Vec::<String>::new());
        assert_eq!(mentioned_names("(@jo)"), ["jo"]);
    }

    #[test]
    fn a_short_name_mentions_only_the_one_user_it_fits() {
        let users = [
            ("u1".to_string(), "sam@alpha.example".to_string()),
            ("u2".to_string(), "kim@alpha.example".to_string()),
            ("u3".to_string(), "kim@beta.example".to_string()),
        ];
        let names: Vec<String> = ["sam", "kim", "kim@beta.example", "nobody"].map(String::from).to_vec();
        assert_eq!(mentioned_users(&names, &users), ["u1", "u3"]);
    }
}
