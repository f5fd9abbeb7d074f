//! An agent (or an integration) writes a private note in a conversation, in one
//! transaction: the note is stored (`conversations::notes`) with the users its
//! `@`s name, each of them gets a notification (the dashboard's bell, as
//! alerts do), `note.created` is queued for webhooks, the write is audited, and
//! after the commit the tenant's inbox and the named users' bells hear it. No
//! engine is told: a note is no answer, so no SLA clock or routing timer moves.

use crate::{
    audit::{self, Actor},
    conversations::{
        mentioned_names, mentioned_users,
        notes::{self, Note},
        NoteIn, MAX_NOTE,
    },
    db::TenantTable,
    engine::alerts::{notify_user, Alert},
    error::CoreResult,
    events::{self, EventType},
    ids::{CustomerId, TenantId, UserId},
    live::LiveEvent,
    validate::Checks,
    Services,
};

/// The `kind` of a mention's notification.
pub const MENTION: &str = "MENTION";

impl Services {
    /// Writes a note in `customer_id`'s conversation (404 for a customer that
    /// is not the tenant's). The author is not told of their own mention.
    pub async fn add_note(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        input: &NoteIn,
        actor: &Actor,
    ) -> CoreResult<Note> {
        let mut checks = Checks::new();
        let text = checks.required_text("text", input.text.as_deref(), MAX_NOTE);
        checks.finish()?;
        let names = mentioned_names(&text);
        // Who tells the named users, read before the transaction: a read from
        // the pool inside it would take a second connection on PostgreSQL.
        let author = if names.is_empty() {
            String::new()
        } else {
            self.user_names(tenant_id, &[actor.id.as_str()])
                .await?
                .remove(&actor.id)
                .unwrap_or_else(|| "An integration".to_string())
        };
        let mut tx = self.db().begin().await?;
        let (name,): (String,) = TenantTable::new("customers", "customer")
            .read_in(
                &mut tx,
                tenant_id,
                customer_id,
                "coalesce(nullif(trim(coalesce(first_name, '') || ' ' || coalesce(last_name, '')), ''), id)",
            )
            .await?;
        // The users are read only when an `@` names someone.
        let users = if names.is_empty() {
            Vec::new()
        } else {
            notes::users_in(&mut tx, tenant_id).await?
        };
        let mentioned: Vec<String> = mentioned_users(&names, &users)
            .into_iter()
            .filter(|id| *id != actor.id)
            .collect();
        let note = notes::insert_in(&mut tx, tenant_id, customer_id, actor, &text, &mentioned).await?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "note.create",
            "customer",
            Some(customer_id),
        )
        .await?;
        events::enqueue(
            &mut tx,
            tenant_id,
            actor,
            EventType::NoteCreated,
            Some(customer_id),
            &note,
        )
        .await?;
        let mut updates = vec![(
            customer_id.clone(),
            LiveEvent::Note {
                note_id: note.id.clone(),
            },
        )];
        for user_id in &mentioned {
            let alert = Alert {
                kind: MENTION.into(),
                title: format!("{author} mentioned you"),
                body: format!("In the conversation with {name}: {}", excerpt(&text)),
                link: Some(format!("/inbox/{customer_id}")),
                count: 1,
                at: note.created_at.timestamp_millis(),
            };
            if notify_user(&mut tx, tenant_id, &UserId::from(user_id.as_str()), &alert).await? {
                updates.push((
                    CustomerId::default(),
                    LiveEvent::Notification {
                        user_id: UserId::from(user_id.as_str()),
                    },
                ));
            }
        }
        for (customer, event) in &updates {
            self.announce_live(&mut tx, tenant_id, customer, event).await?;
        }
        tx.commit().await?;
        for (customer, event) in updates {
            self.after_commit(tenant_id, &customer, event);
        }
        self.wake_outbox();
        Ok(note)
    }
}

/// The start of a note, for a notification: at most 140 characters, on one line.
fn excerpt(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(140) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}
