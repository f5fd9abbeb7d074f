//! Deleting a customer erases everything Rapport holds about them (GDPR art.
//! 17), in one transaction:
//!
//! 1. the conversation is locked, and what hangs off the customer by other
//!    keys is collected: their recorded sessions and the visitor ids those
//!    name (a visitor id another customer's sessions also name is left: it is
//!    theirs too), their appointments (calls) and those calls' recordings;
//! 2. report facts keep their numbers and lose whom they were about (subject
//!    and dedupe key cleared), and the unique-visitor rollups keyed by the
//!    visitor get a random key, so every total stays as it was;
//! 3. the visitor's visits, page resources and script errors (its
//!    visitor-day marks get the random key too), the recorded sessions
//!    (theirs, and their visitor's from before the chat knew them; their
//!    batches, tags and co-browses by cascade) and live-view links to them,
//!    the appointments (their conference recordings by cascade), the mails
//!    about the customer (transcripts, replies, invitations: never by address,
//!    which a visitor may have given as anyone's), the jobs,
//!    notifications and routing decisions naming them, and the webhook events
//!    about them that no worker is sending right now (with their deliveries)
//!    are deleted, and the audit log forgets the visitor's IP addresses;
//! 4. the customer row goes, and with it (by cascade) the messages, notes,
//!    files, visitor tokens, ratings, continue links, queue places, SLA clocks
//!    and search documents;
//! 5. `customer.erase` is audited (without the erased data), and
//!    `customer.deleted` is queued with the ids integrators need to erase on
//!    their side, and nothing else.

use serde::Serialize;

use crate::{
    audit::{self, Actor},
    conversations::lock_conversation,
    customers::{count_customers, CustomerErased},
    db::{placeholders, Tx},
    error::CoreResult,
    events::{self, EventType},
    ids::{CustomerId, TenantId},
    live::LiveEvent,
    with_tx, Services,
};

/// How much was erased, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Erased {
    /// Recorded sessions.
    pub sessions: u64,
    /// Visits, page resources and script errors.
    pub tracking: u64,
    /// Appointments (calls), with their recordings.
    pub appointments: u64,
    /// Mails to or about the customer.
    pub mails: u64,
    /// Webhook events about the customer, with their deliveries.
    pub events: u64,
    /// Report facts that lost their subject.
    pub facts_anonymised: u64,
}

/// The visitor ids of customer `$2`'s recorded sessions that no other
/// customer's sessions name (a shared browser's id is theirs too).
pub(crate) const VISITORS_OF: &str = "select distinct visitor_id from recorded_sessions s \
     where tenant_id = $1 and customer_id = $2 and not exists (select 1 from recorded_sessions o \
       where o.tenant_id = s.tenant_id and o.visitor_id = s.visitor_id and o.customer_id is not null \
       and o.customer_id <> s.customer_id)";

/// Runs `sql` with `binds` as `$1…` in order.
async fn run(tx: &mut Tx, sql: &str, binds: &[&str]) -> CoreResult<u64> {
    Ok(with_tx!(tx, |conn| {
        let mut q = sqlx::query(sql);
        for b in binds {
            q = q.bind(*b);
        }
        q.execute(conn).await.map(|r| r.rows_affected())
    })?)
}

/// The first column of `sql`'s rows, with `binds` as `$1…`.
async fn column(tx: &mut Tx, sql: &str, binds: &[&str]) -> CoreResult<Vec<String>> {
    Ok(with_tx!(tx, |conn| {
        let mut q = sqlx::query_scalar::<_, String>(sql);
        for b in binds {
            q = q.bind(*b);
        }
        q.fetch_all(conn).await
    })?)
}

/// `sql` with `{ids}` replaced by placeholders for `ids` after `fixed`
/// binds, run with the fixed binds then the ids; nothing when `ids` is empty.
async fn run_in(tx: &mut Tx, sql: &str, fixed: &[&str], ids: &[String]) -> CoreResult<u64> {
    if ids.is_empty() {
        return Ok(0);
    }
    let sql = sql.replace("{ids}", &placeholders(fixed.len() + 1, ids.len()));
    let binds: Vec<&str> = fixed.iter().copied().chain(ids.iter().map(String::as_str)).collect();
    run(tx, &sql, &binds).await
}

impl Services {
    /// Erases a customer and everything held about them (see the module docs).
    /// 404 for a customer that is not the tenant's.
    pub async fn erase_customer(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        actor: &Actor,
    ) -> CoreResult<Erased> {
        let mut tx = self.db().begin().await?;
        lock_conversation(&mut tx, tenant_id, customer_id).await?;
        let (t, c) = (tenant_id.as_str(), customer_id);
        let mut erased = Erased::default();

        // 1. What hangs off the customer by other keys.
        let visitors = column(&mut tx, VISITORS_OF, &[t, c]).await?;
        // Theirs, and their visitor's from before the chat knew them.
        let before_chat = if visitors.is_empty() {
            String::new()
        } else {
            format!(
                " or (customer_id is null and visitor_id in ({}))",
                placeholders(3, visitors.len())
            )
        };
        let binds: Vec<&str> = [t, c].into_iter().chain(visitors.iter().map(String::as_str)).collect();
        let sessions = column(
            &mut tx,
            &format!("select id from recorded_sessions where tenant_id = $1 and (customer_id = $2{before_chat})"),
            &binds,
        )
        .await?;
        let appointments = column(
            &mut tx,
            "select id from appointments where tenant_id = $1 and customer_id = $2",
            &[t, c],
        )
        .await?;
        let cobrowses = if sessions.is_empty() {
            Vec::new()
        } else {
            let sql = format!(
                "select id from script_cobrowses where tenant_id = $1 and session_id in ({})",
                placeholders(2, sessions.len())
            );
            let binds: Vec<&str> = std::iter::once(t).chain(sessions.iter().map(String::as_str)).collect();
            column(&mut tx, &sql, &binds).await?
        };
        let recordings = if appointments.is_empty() {
            Vec::new()
        } else {
            let sql = format!(
                "select id from conference_recordings where tenant_id = $1 and appointment_id in ({})",
                placeholders(2, appointments.len())
            );
            let binds: Vec<&str> = std::iter::once(t)
                .chain(appointments.iter().map(String::as_str))
                .collect();
            column(&mut tx, &sql, &binds).await?
        };

        // 2. Reports keep their numbers, not whom they were about.
        let subjects: Vec<String> = std::iter::once(c.to_string())
            .chain(sessions.iter().cloned())
            .chain(cobrowses.iter().cloned())
            .chain(appointments.iter().cloned())
            .chain(recordings.iter().cloned())
            .chain(visitors.iter().cloned())
            .collect();
        erased.facts_anonymised = run_in(
            &mut tx,
            "update report_facts set subject = null where tenant_id = $1 and subject in ({ids})",
            &[t],
            &subjects,
        )
        .await?;
        run_in(
            &mut tx,
            "update report_facts set dedupe_key = null where tenant_id = $1 and dedupe_key in ({ids})",
            &[t],
            &subjects,
        )
        .await?;
        for visitor in &visitors {
            let pseudonym = uuid::Uuid::new_v4().to_string();
            for sql in [
                "update report_rollups set group_key = $3 where tenant_id = $1 and group_kind = 'VISITOR' and group_key = $2",
                // The marks that count a visitor once a day keep doing so.
                "update visitor_days set visitor_id = $3 where tenant_id = $1 and visitor_id = $2",
                "update error_visitor_days set visitor_id = $3 where tenant_id = $1 and visitor_id = $2",
            ] {
                run(&mut tx, sql, &[t, visitor, &pseudonym]).await?;
            }
        }

        // 3. What is about them, by those keys.
        for table in ["visits", "visit_resources", "script_errors"] {
            erased.tracking += run_in(
                &mut tx,
                &format!("delete from {table} where tenant_id = $1 and visitor_id in ({{ids}})"),
                &[t],
                &visitors,
            )
            .await?;
        }
        run_in(
            &mut tx,
            "delete from liveview_tokens where tenant_id = $1 and session_id in ({ids})",
            &[t],
            &sessions,
        )
        .await?;
        erased.sessions = run_in(
            &mut tx,
            "delete from recorded_sessions where tenant_id = $1 and id in ({ids})",
            &[t],
            &sessions,
        )
        .await?;
        let abouts: Vec<String> = [format!("transcript:{c}"), format!("reply:{c}")]
            .into_iter()
            .chain(appointments.iter().map(|a| format!("appointment:{a}")))
            .collect();
        // By what they are about, never by address: an address a visitor gave
        // may be anyone's, an agent's too.
        erased.mails = run_in(
            &mut tx,
            "delete from mail_outbox where tenant_id = $1 and about in ({ids})",
            &[t],
            &abouts,
        )
        .await?;
        erased.appointments = run_in(
            &mut tx,
            "delete from appointments where tenant_id = $1 and id in ({ids})",
            &[t],
            &appointments,
        )
        .await?;
        let key_prefix = format!("{t}:{c}:");
        let queue_key = format!("{t}:{c}");
        let link = format!("/inbox/{c}");
        let link_pattern = format!("%{link}%");
        run(
            &mut tx,
            "delete from jobs where tenant_id = $1 and ((kind in ('routing.no_answer', 'sla.start', 'sla.deadline') \
               and substr(job_key, 1, length($2)) = $2) or (kind = 'routing.queue_timeout' and job_key = $3) \
               or (kind = 'conversation.reply_mail' and job_key = $4) or payload like $5)",
            &[t, &key_prefix, &queue_key, c, &link_pattern],
        )
        .await?;
        run(
            &mut tx,
            "delete from notifications where tenant_id = $1 and link = $2",
            &[t, &link],
        )
        .await?;
        run(
            &mut tx,
            "update watchdog_windows set last_summary = '', last_link = null where tenant_id = $1 and last_link = $2",
            &[t, &link],
        )
        .await?;
        run(
            &mut tx,
            "delete from routing_decisions where tenant_id = $1 and customer_id = $2",
            &[t, c],
        )
        .await?;
        // An event a worker is sending now stays until it is sent: deleting
        // its delivery under the worker would undo the worker's batch.
        let actor_key = format!("customer:{c}");
        erased.events = run(
            &mut tx,
            "delete from events where tenant_id = $1 and (customer_id = $2 or actor = $3 or payload like $4) \
             and not exists (select 1 from webhook_deliveries d where d.event_id = events.id and d.state = 'delivering')",
            &[t, c, &actor_key, &format!("%{c}%")],
        )
        .await?;
        let session_actors: Vec<String> = std::iter::once(c.to_string())
            .chain(sessions.iter().map(|s| format!("session:{s}")))
            .collect();
        run_in(
            &mut tx,
            "update audit_log set ip = null where tenant_id = $1 and actor_type = 'customer' and actor_id in ({ids})",
            &[t],
            &session_actors,
        )
        .await?;

        // 4. The customer, and by cascade what hangs off the row.
        let external_id: Option<String> = column(
            &mut tx,
            "select external_id from customers where tenant_id = $1 and id = $2 and external_id is not null",
            &[t, c],
        )
        .await?
        .pop();
        run(
            &mut tx,
            "delete from customers where tenant_id = $1 and id = $2",
            &[t, c],
        )
        .await?;
        count_customers(&mut tx, tenant_id, -1);

        // 5. The record of it, without the data.
        audit::record(&mut tx, Some(tenant_id), actor, "customer.erase", "customer", Some(c)).await?;
        let body = CustomerErased {
            id: c.to_string(),
            external_id,
        };
        events::enqueue(&mut tx, tenant_id, actor, EventType::CustomerDeleted, Some(c), &body).await?;
        self.commit_live(tx, tenant_id, c, LiveEvent::Conversation).await?;
        self.wake_outbox();
        Ok(erased)
    }
}
