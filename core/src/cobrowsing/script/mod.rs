//! Script co-browsing: an agent browses along on the visitor's own page.
//!
//! A co-browse is *open* while it is asked for or going on; a session has at
//! most one, and it belongs to the agent who asked: only they act in it and
//! hear its state. It ends when either side ends it, when the agent's live
//! view has not renewed it for [`AGENT_GONE_MS`] (the agent closed the tab or
//! lost the network: the visitor must not be left with an agent who is not
//! there), and when the recorded session itself ends (the visitor left). Its
//! length runs from the visitor's acceptance to its end: when a side ended it,
//! when the agent was last there, or the visitor's last batch; never earlier
//! than the acceptance.

mod state;

pub use state::{visitor_resume, ScriptCobrowse, ScriptState, VisitorAction, VisitorCobrowse};

use super::record_handover;
use crate::{
    audit::{self, Actor},
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId, UserId},
    live::{LiveEvent, LiveUpdate},
    reports::facts::{MeetingFact, MeetingKind},
    time::now_ms,
    with_db, with_tx, Services,
};

/// An open co-browse ends when the asking agent's live view has not been seen
/// for this long (it renews every 10 s while connected).
pub const AGENT_GONE_MS: i64 = 30_000;

type ScriptRow = (String, String, bool, Option<String>, String, i64);

/// The columns of a [`ScriptRow`].
const SCRIPT_COLUMNS: &str = "id, state, control, agent_user_id, agent_name, coalesce(agent_seen_at, requested_at)";

fn script_from_row((id, state, control, agent_user_id, agent_name, agent_seen_at): ScriptRow) -> ScriptCobrowse {
    ScriptCobrowse {
        id,
        state: ScriptState::parse(&state),
        control,
        agent_user_id,
        agent_name,
        agent_seen_at,
    }
}

/// Another agent co-browses with this visitor, and is there.
fn busy(other: &ScriptCobrowse) -> CoreError {
    CoreError::Conflict {
        field: None,
        code: "cobrowse_busy",
        message: format!("{} is co-browsing with this visitor", other.agent_name),
    }
}

impl Services {
    /// The latest script co-browse of a recorded session, if any.
    pub async fn script_cobrowse(&self, tenant_id: &TenantId, session_id: &str) -> CoreResult<Option<ScriptCobrowse>> {
        self.script_cobrowse_where(tenant_id, session_id, "order by requested_at desc, id desc limit 1")
            .await
    }

    /// The session's open co-browse (at most one: a unique index keeps it so).
    async fn open_script_cobrowse(&self, tenant_id: &TenantId, session_id: &str) -> CoreResult<Option<ScriptCobrowse>> {
        self.script_cobrowse_where(tenant_id, session_id, "and state in ('REQUESTED', 'ACTIVE')")
            .await
    }

    /// A co-browse of the session, picked by the SQL `rest` after its tenant
    /// and session.
    async fn script_cobrowse_where(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        rest: &str,
    ) -> CoreResult<Option<ScriptCobrowse>> {
        let sql =
            format!("select {SCRIPT_COLUMNS} from script_cobrowses where tenant_id = $1 and session_id = $2 {rest}");
        let row: Option<ScriptRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(session_id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.map(script_from_row))
    }

    /// An agent asks the visitor of a live recorded session to co-browse. Their
    /// co-browse already asked or going on is asked again (the visitor's page may
    /// have missed it). Another agent's is refused (409 `cobrowse_busy`) while
    /// that agent is there, and ended first when they are gone. Audited as
    /// `cobrowse.request`.
    pub async fn request_script_cobrowse(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        agent: &Actor,
    ) -> CoreResult<()> {
        // The session must exist in this tenant, and still take events: the
        // visitor's page is there to ask.
        self.get_recorded_session(tenant_id, session_id).await?;
        if self.recording_ended(tenant_id, session_id).await? {
            return Err(CoreError::Conflict {
                field: None,
                code: "session_ended",
                message: "the visitor has left: this session has ended".into(),
            });
        }
        let user_id = UserId::from(agent.user_id().ok_or(CoreError::Forbidden)?);
        let user = self.get_user(tenant_id, &user_id).await?;
        let name = user
            .display_name
            .clone()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or(user.email);
        let now = now_ms();
        let current = match self.open_script_cobrowse(tenant_id, session_id).await? {
            Some(c) if !c.is_agent(&user_id) && c.agent_seen_at >= now - AGENT_GONE_MS => return Err(busy(&c)),
            Some(c) if !c.is_agent(&user_id) => {
                self.end_cobrowse_if_agent_gone(tenant_id, session_id, now).await?;
                None
            }
            current => current,
        };
        let cobrowse = match current {
            Some(c) => c,
            None => {
                let id = uuid::Uuid::new_v4().simple().to_string();
                let mut tx = self.db().begin().await?;
                let inserted = with_tx!(&mut tx, |conn| {
                    sqlx::query(
                        "insert into script_cobrowses \
                         (id, tenant_id, session_id, agent_user_id, agent_name, state, requested_at, agent_seen_at) \
                         values ($1, $2, $3, $4, $5, 'REQUESTED', $6, $6) on conflict do nothing",
                    )
                    .bind(&id)
                    .bind(tenant_id)
                    .bind(session_id)
                    .bind(&user_id)
                    .bind(&name)
                    .bind(now)
                    .execute(conn)
                    .await
                    .map(|r| r.rows_affected())
                })?;
                if inserted == 0 {
                    // Asked at the same moment (a double click, or another
                    // agent): the co-browse that was stored first stands.
                    drop(tx);
                    match self.open_script_cobrowse(tenant_id, session_id).await? {
                        Some(c) if c.is_agent(&user_id) => c,
                        Some(c) => return Err(busy(&c)),
                        None => return Err(not_active()),
                    }
                } else {
                    audit::record(
                        &mut tx,
                        Some(tenant_id),
                        agent,
                        "cobrowse.request",
                        "session",
                        Some(session_id),
                    )
                    .await?;
                    tx.commit().await?;
                    ScriptCobrowse {
                        id,
                        state: ScriptState::Requested,
                        control: false,
                        agent_user_id: Some(user_id.into_string()),
                        agent_name: name,
                        agent_seen_at: now,
                    }
                }
            }
        };
        if cobrowse.state == ScriptState::Requested {
            let ask = serde_json::json!({"type": "request", "agent": cobrowse.agent_name}).to_string();
            self.signal_cobrowse(tenant_id, session_id, true, ask).await?;
        }
        self.signal_cobrowse(tenant_id, session_id, false, cobrowse.agent_view())
            .await
    }

    /// Relays a message of the agent `user_id` (pointer, highlight, click,
    /// typing, scrolling) to the visitor's page. Refused unless their co-browse
    /// is active (the visitor accepted that agent, not any), and, for what acts
    /// on the page, unless the visitor granted control.
    pub async fn relay_to_visitor(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        user_id: &UserId,
        acts: bool,
        message: String,
    ) -> CoreResult<()> {
        let current = self.open_script_cobrowse(tenant_id, session_id).await?;
        match current {
            Some(c) if c.state == ScriptState::Active && c.is_agent(user_id) => {
                if acts && !c.control {
                    return Err(CoreError::Conflict {
                        field: None,
                        code: "no_control",
                        message: "the visitor has not let you click and type".into(),
                    });
                }
                self.signal_cobrowse(tenant_id, session_id, true, message).await
            }
            _ => Err(not_active()),
        }
    }

    /// The agent ends their co-browse. Audited as `cobrowse.end`.
    pub async fn end_script_cobrowse(&self, tenant_id: &TenantId, session_id: &str, actor: &Actor) -> CoreResult<()> {
        let current = self.open_script_cobrowse(tenant_id, session_id).await?;
        match current {
            Some(c) if actor.user_id().is_some_and(|u| c.is_agent(u)) => self
                .finish_script(tenant_id, session_id, c, actor, "agent", now_ms(), None)
                .await
                .map(drop),
            _ => Err(not_active()),
        }
    }

    /// What the visitor did: accept, decline, grant or take back control, end.
    pub async fn visitor_cobrowse(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        action: VisitorAction,
        actor: &Actor,
    ) -> CoreResult<()> {
        let current = self
            .open_script_cobrowse(tenant_id, session_id)
            .await?
            .ok_or_else(not_active)?;
        let now = now_ms();
        let (state, control, audit_action) = match (action, current.state) {
            (VisitorAction::Accept, ScriptState::Requested) => (ScriptState::Active, false, "cobrowse.accept"),
            (VisitorAction::Decline, ScriptState::Requested) => (ScriptState::Declined, false, "cobrowse.decline"),
            (VisitorAction::Grant, ScriptState::Active) => (ScriptState::Active, true, "cobrowse.control"),
            (VisitorAction::Revoke, ScriptState::Active) => (ScriptState::Active, false, "cobrowse.control"),
            (VisitorAction::End, _) => {
                return self
                    .finish_script(tenant_id, session_id, current, actor, "visitor", now, None)
                    .await
                    .map(drop);
            }
            (VisitorAction::Accept, ScriptState::Active) => return Ok(()),
            _ => return Err(not_active()),
        };
        if state == current.state && control == current.control {
            return Ok(());
        }
        let granted = control && !current.control;
        let mut tx = self.db().begin().await?;
        // Only from the state read: an end at the same moment (the agent's, or
        // the session's) is not undone.
        let changed = with_tx!(&mut tx, |conn| sqlx::query(
            "update script_cobrowses set state = $1, control = $2, \
             accepted_at = case when $1 = 'ACTIVE' then coalesce(accepted_at, $3) else accepted_at end, \
             ended_at = case when $1 = 'DECLINED' then $3 else ended_at end, \
             handovers = handovers + $4 where id = $5 and state = $6"
        )
        .bind(state.as_str())
        .bind(control)
        .bind(now)
        .bind(i64::from(granted))
        .bind(&current.id)
        .bind(current.state.as_str())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if changed == 0 {
            return Err(not_active());
        }
        if granted {
            let agent = current.agent_user_id.as_deref();
            record_handover(&mut tx, tenant_id, MeetingKind::Cobrowse, now, agent, &current.id).await?;
        }
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            audit_action,
            "session",
            Some(session_id),
        )
        .await?;
        tx.commit().await?;
        let updated = ScriptCobrowse {
            state,
            control,
            ..current
        };
        self.signal_cobrowse(tenant_id, session_id, false, updated.agent_view())
            .await
    }

    /// The asking agent's live view of the session is there: renews
    /// `agent_seen_at` of the session's open co-browse, if this agent asked
    /// for it.
    pub async fn cobrowse_agent_present(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        user_id: &UserId,
    ) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update script_cobrowses set agent_seen_at = $4 \
             where tenant_id = $1 and session_id = $2 and agent_user_id = $3 \
             and state in ('REQUESTED', 'ACTIVE')"
        )
        .bind(tenant_id)
        .bind(session_id)
        .bind(user_id)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await
    }

    /// Ends the session's open co-browse if its agent has not been seen since
    /// before `now - AGENT_GONE_MS`; its length runs to when the agent was last
    /// seen. True when it ended one. A renewal that lands first keeps it.
    pub async fn end_cobrowse_if_agent_gone(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        now: i64,
    ) -> CoreResult<bool> {
        let cutoff = now - AGENT_GONE_MS;
        match self.open_script_cobrowse(tenant_id, session_id).await? {
            Some(c) if c.agent_seen_at < cutoff => {
                let seen = c.agent_seen_at;
                let actor = Actor::system("agent_left");
                self.finish_script(tenant_id, session_id, c, &actor, "agent_left", seen, Some(cutoff))
                    .await
            }
            _ => Ok(false),
        }
    }

    /// Ends every open co-browse whose agent is gone (the sweep behind
    /// [`Self::end_cobrowse_if_agent_gone`], for agents whose instance went
    /// away before it could check); returns how many.
    pub async fn end_abandoned_cobrowses(&self, now: i64) -> CoreResult<u64> {
        let due: Vec<(TenantId, String)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select tenant_id, session_id from script_cobrowses \
             where state in ('REQUESTED', 'ACTIVE') and coalesce(agent_seen_at, requested_at) < $1"
        )
        .bind(now - AGENT_GONE_MS)
        .fetch_all(pool)
        .await)?;
        let mut ended = 0;
        for (tenant_id, session_id) in due {
            ended += u64::from(self.end_cobrowse_if_agent_gone(&tenant_id, &session_id, now).await?);
        }
        Ok(ended)
    }

    /// The recorded session ended (its visitor left): so does its open
    /// co-browse, as of the session's last batch `last_at`.
    pub(crate) async fn end_session_cobrowse(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        last_at: i64,
    ) -> CoreResult<()> {
        if let Some(c) = self.open_script_cobrowse(tenant_id, session_id).await? {
            let actor = Actor::system("visitor_left");
            self.finish_script(tenant_id, session_id, c, &actor, "visitor_left", last_at, None)
                .await?;
        }
        Ok(())
    }

    /// Ends an open script co-browse as of `ended_at` (never before it was
    /// asked for or accepted); with `stale_before`, only if its agent has not
    /// been seen since. Its facts (length from the acceptance, the agent and
    /// the visitor) go to the co-browse report. True when it ended it: ending
    /// it twice (both sides at once, two instances' sweeps) does nothing the
    /// second time.
    #[allow(clippy::too_many_arguments)]
    async fn finish_script(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        current: ScriptCobrowse,
        actor: &Actor,
        by: &str,
        ended_at: i64,
        stale_before: Option<i64>,
    ) -> CoreResult<bool> {
        let mut tx = self.db().begin().await?;
        let ended: Option<(Option<i64>, i64)> = with_tx!(&mut tx, |conn| sqlx::query_as(
            "update script_cobrowses set state = 'ENDED', control = false, \
             ended_at = case when $1 < coalesce(accepted_at, requested_at) \
             then coalesce(accepted_at, requested_at) else $1 end \
             where id = $2 and state in ('REQUESTED', 'ACTIVE') \
             and (cast($3 as bigint) is null or coalesce(agent_seen_at, requested_at) < cast($3 as bigint)) \
             returning accepted_at, ended_at"
        )
        .bind(ended_at)
        .bind(&current.id)
        .bind(stale_before)
        .fetch_optional(conn)
        .await)?;
        let Some((accepted_at, ended_at)) = ended else {
            return Ok(false);
        };
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "cobrowse.end",
            "session",
            Some(session_id),
        )
        .await?;
        tx.commit().await?;
        if let Some(started_at) = accepted_at {
            let meeting = MeetingFact {
                id: current.id.clone(),
                host_user_id: current.agent_user_id.clone(),
                started_at,
                ended_at,
                // The visitor, besides the agent who hosts.
                participants: 1,
                tags: self.recording_tags(tenant_id, session_id).await?,
            };
            self.record_meeting(tenant_id, MeetingKind::Cobrowse, &meeting).await?;
        }
        let ended = ScriptCobrowse {
            state: ScriptState::Ended,
            control: false,
            ..current
        };
        let bye = serde_json::json!({"type": "ended", "by": by}).to_string();
        self.signal_cobrowse(tenant_id, session_id, true, bye).await?;
        self.signal_cobrowse(tenant_id, session_id, false, ended.agent_view())
            .await?;
        Ok(true)
    }

    /// Sends a co-browse message to the visitor's page (`to_visitor`) or to the
    /// agents' live views of the session, on every instance.
    async fn signal_cobrowse(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        to_visitor: bool,
        data: String,
    ) -> CoreResult<()> {
        self.signal_live(LiveUpdate {
            tenant_id: tenant_id.clone(),
            customer_id: CustomerId::default(),
            event: LiveEvent::Cobrowse {
                session_id: session_id.to_string(),
                to_visitor,
                data,
            },
        })
        .await
    }
}

fn not_active() -> CoreError {
    CoreError::Conflict {
        field: None,
        code: "not_active",
        message: "no co-browse is going on with this visitor".into(),
    }
}
