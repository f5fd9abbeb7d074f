//! Co-browsing as it happens (issue 25), beside the links of [`crate::links`].
//!
//! - **Universal co-browsing**: a link's session runs one Chromium on one
//!   instance. The instance *claims* the session (`instance_url`, renewed while
//!   the browser runs) so that participants reaching another instance are relayed
//!   to it; a claim not renewed for [`CLAIM_STALE_MS`] may be taken over. When the
//!   session ends its facts (length, participants) go to the universal co-browse
//!   report and it is audited; an ended session stays ended.
//! - **Script co-browsing**: an agent watching a visitor's live view asks to
//!   browse along; the visitor script shows the request, and the visitor accepts,
//!   grants or takes back control, and ends it. The state lives in
//!   `script_cobrowses`, and every message between the two sides travels as a
//!   [`LiveEvent::Cobrowse`], so the agent and the visitor may be served by
//!   different instances. Its facts go to the (script) co-browse report.

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    error::{CoreError, CoreResult},
    live::{LiveEvent, LiveUpdate},
    reports::{
        catalogue::{COBROWSE_HANDOVER, COBROWSE_UNIVERSAL_HANDOVER},
        facts::{MeetingFact, MeetingKind},
    },
    time::now_ms,
    with_db, with_tx, Services,
};

/// An instance's claim on a universal session lapses when not renewed this long.
pub const CLAIM_STALE_MS: i64 = 30_000;

/// Where a universal co-browsing session's browser runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CobrowseClaim {
    /// On the asking instance: it runs (or starts) the browser.
    Mine,
    /// On another instance, reachable at this internal URL.
    Elsewhere(String),
}

/// How a universal co-browsing session went, for its facts.
#[derive(Debug, Clone)]
pub struct UniversalEnd {
    /// The tenant.
    pub tenant_id: String,
    /// The session.
    pub session_id: String,
    /// Why it ended: `idle`, `expired`, `ended_by_host`, `browser_crashed`, `shutdown`.
    pub reason: String,
    /// When the browser started, unix ms.
    pub started_at: i64,
    /// The host, when one was named.
    pub host_user_id: Option<String>,
    /// People who joined besides the host.
    pub guests: i64,
}

/// The state of a script co-browse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ScriptState {
    /// The agent asked; the visitor has not answered.
    Requested,
    /// The visitor accepted: the agent's pointer shows on the visitor's page.
    Active,
    /// The visitor declined.
    Declined,
    /// One side ended it.
    Ended,
}

impl ScriptState {
    fn as_str(self) -> &'static str {
        match self {
            ScriptState::Requested => "REQUESTED",
            ScriptState::Active => "ACTIVE",
            ScriptState::Declined => "DECLINED",
            ScriptState::Ended => "ENDED",
        }
    }

    fn parse(s: &str) -> ScriptState {
        match s {
            "REQUESTED" => ScriptState::Requested,
            "ACTIVE" => ScriptState::Active,
            "DECLINED" => ScriptState::Declined,
            _ => ScriptState::Ended,
        }
    }

    /// Whether the co-browse still goes on (asked or accepted).
    pub fn open(self) -> bool {
        matches!(self, ScriptState::Requested | ScriptState::Active)
    }
}

/// The latest script co-browse of a recorded session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptCobrowse {
    /// Its id.
    pub id: String,
    /// Where it stands.
    pub state: ScriptState,
    /// Whether the visitor lets the agent click and type now.
    pub control: bool,
    /// The agent who asked.
    pub agent_user_id: Option<String>,
    /// The agent's name as the visitor sees it.
    pub agent_name: String,
}

impl ScriptCobrowse {
    /// What the agent's live view hears: `{"state": "active", "control": false}`.
    pub fn agent_view(&self) -> String {
        serde_json::json!({"state": self.state.as_str().to_lowercase(), "control": self.control}).to_string()
    }
}

/// What the visitor does with a script co-browse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VisitorAction {
    /// Accept the agent's request.
    Accept,
    /// Decline it.
    Decline,
    /// Let the agent click and type.
    Grant,
    /// Take control back.
    Revoke,
    /// End the co-browse.
    End,
}

/// The visitor script's answer to a co-browse request, or its end.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct VisitorCobrowse {
    /// `accept` or `decline` the agent's request; `grant` the agent control
    /// (click and type) or `revoke` it; `end` the co-browse.
    #[serde(rename = "type")]
    #[schema(required = true)]
    pub action: VisitorAction,
}

/// What the visitor's page hears when its control stream (re)connects while
/// a co-browse is asked for or going on: the request again, or where it
/// stands (`{"type": "active", "agent": …, "control": …}`), so that the next
/// page of a site carries on.
pub fn visitor_resume(cobrowse: &ScriptCobrowse) -> Option<String> {
    match cobrowse.state {
        ScriptState::Requested => {
            Some(serde_json::json!({"type": "request", "agent": cobrowse.agent_name}).to_string())
        }
        ScriptState::Active => Some(
            serde_json::json!({"type": "active", "agent": cobrowse.agent_name, "control": cobrowse.control})
                .to_string(),
        ),
        _ => None,
    }
}

type ScriptRow = (String, String, bool, Option<String>, String, i64, Option<i64>, i64);

impl Services {
    /// Claims a universal session for the instance at `instance_url`, unless
    /// another instance holds a fresh claim. Refuses a session that ended.
    pub async fn claim_cobrowse(&self, session_id: &str, instance_url: &str) -> CoreResult<CobrowseClaim> {
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        let claimed = with_tx!(&mut tx, |conn| sqlx::query(
            "update cobrowse_sessions set instance_url = $1, instance_seen_at = $2, \
             started_at = coalesce(started_at, $2) \
             where id = $3 and ended_at is null \
             and (instance_url is null or instance_url = $1 or instance_seen_at < $4)"
        )
        .bind(instance_url)
        .bind(now)
        .bind(session_id)
        .bind(now - CLAIM_STALE_MS)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        let owner: Option<(Option<String>, Option<i64>)> = with_tx!(&mut tx, |conn| sqlx::query_as(
            "select instance_url, ended_at from cobrowse_sessions where id = $1"
        )
        .bind(session_id)
        .fetch_optional(conn)
        .await)?;
        tx.commit().await?;
        match owner {
            None => Err(CoreError::NotFound("co-browsing session")),
            Some((_, Some(_))) => Err(session_ended()),
            Some(_) if claimed == 1 => Ok(CobrowseClaim::Mine),
            Some((Some(url), None)) => Ok(CobrowseClaim::Elsewhere(url)),
            Some((None, None)) => Err(CoreError::Internal("co-browsing claim vanished".into())),
        }
    }

    /// Renews this instance's claim while its browser runs.
    pub async fn renew_cobrowse(&self, session_id: &str, instance_url: &str) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update cobrowse_sessions set instance_seen_at = $1 where id = $2 and instance_url = $3"
        )
        .bind(now_ms())
        .bind(session_id)
        .bind(instance_url)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await
    }

    /// Gives up a claim whose browser never started, so that the next attempt
    /// (on any instance) may try again.
    pub async fn release_cobrowse(&self, session_id: &str, instance_url: &str) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update cobrowse_sessions set instance_url = null, instance_seen_at = null \
             where id = $1 and instance_url = $2"
        )
        .bind(session_id)
        .bind(instance_url)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await
    }

    /// Marks a universal session ended, records its facts for the universal
    /// co-browse report and audits it (`cobrowse.end`).
    pub async fn end_cobrowse(&self, end: &UniversalEnd) -> CoreResult<()> {
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        let ended = with_tx!(&mut tx, |conn| sqlx::query(
            "update cobrowse_sessions set ended_at = $1, end_reason = $2, instance_url = null \
             where id = $3 and tenant_id = $4 and ended_at is null"
        )
        .bind(now)
        .bind(&end.reason)
        .bind(&end.session_id)
        .bind(&end.tenant_id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if ended == 0 {
            return Ok(());
        }
        audit::record(
            &mut tx,
            Some(&end.tenant_id),
            &Actor::system(&end.reason),
            "cobrowse.end",
            "cobrowse",
            Some(&end.session_id),
        )
        .await?;
        tx.commit().await?;
        let meeting = MeetingFact {
            id: end.session_id.clone(),
            host_user_id: end.host_user_id.clone(),
            started_at: end.started_at,
            ended_at: now.max(end.started_at),
            participants: end.guests,
            tags: Vec::new(),
        };
        self.record_meeting(&end.tenant_id, MeetingKind::UniversalCobrowse, &meeting)
            .await
    }

    /// Audits a participant joining a universal session (`cobrowse.join`).
    pub async fn audit_cobrowse(
        &self,
        tenant_id: &str,
        session_id: &str,
        actor: &Actor,
        action: &str,
    ) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        audit::record(&mut tx, Some(tenant_id), actor, action, "cobrowse", Some(session_id)).await?;
        tx.commit().await
    }

    /// Records a hand-over of control (either kind of co-browsing): a fact for
    /// the report's `CONTROL_HANDOVERS` and an audit entry (`cobrowse.control`).
    pub async fn record_cobrowse_handover(
        &self,
        tenant_id: &str,
        kind: MeetingKind,
        session_id: &str,
        host_user_id: Option<&str>,
        actor: &Actor,
    ) -> CoreResult<()> {
        let fact_kind = match kind {
            MeetingKind::UniversalCobrowse => COBROWSE_UNIVERSAL_HANDOVER,
            _ => COBROWSE_HANDOVER,
        };
        let mut tx = self.db().begin().await?;
        let fact = crate::reports::facts::Fact {
            kind: fact_kind,
            at: now_ms(),
            value: 1,
            agent: host_user_id,
            subject: Some(session_id),
            ..Default::default()
        };
        crate::reports::facts::record(&mut tx, tenant_id, &fact).await?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "cobrowse.control",
            "cobrowse",
            Some(session_id),
        )
        .await?;
        tx.commit().await
    }

    /// The latest script co-browse of a recorded session, if any.
    pub async fn script_cobrowse(&self, tenant_id: &str, session_id: &str) -> CoreResult<Option<ScriptCobrowse>> {
        let row: Option<ScriptRow> = with_db!(self.db(), |pool| sqlx::query_as(
            "select id, state, control, agent_user_id, agent_name, requested_at, accepted_at, handovers \
             from script_cobrowses where tenant_id = $1 and session_id = $2 \
             order by requested_at desc, id desc limit 1"
        )
        .bind(tenant_id)
        .bind(session_id)
        .fetch_optional(pool)
        .await)?;
        Ok(
            row.map(|(id, state, control, agent_user_id, agent_name, ..)| ScriptCobrowse {
                id,
                state: ScriptState::parse(&state),
                control,
                agent_user_id,
                agent_name,
            }),
        )
    }

    /// An agent asks the visitor of a live recorded session to co-browse. A
    /// co-browse already asked or going on is asked again (the visitor's page may
    /// have missed it). Audited as `cobrowse.request`.
    pub async fn request_script_cobrowse(&self, tenant_id: &str, session_id: &str, agent: &Actor) -> CoreResult<()> {
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
        let user_id = agent.user_id().ok_or(CoreError::Forbidden)?.to_string();
        let user = self.get_user(tenant_id, &user_id).await?;
        let name = user
            .display_name
            .clone()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or(user.email);
        let current = self.script_cobrowse(tenant_id, session_id).await?;
        let cobrowse = match current {
            Some(c) if c.state.open() => c,
            _ => {
                let id = uuid::Uuid::new_v4().simple().to_string();
                let mut tx = self.db().begin().await?;
                with_tx!(&mut tx, |conn| {
                    sqlx::query(
                    "insert into script_cobrowses (id, tenant_id, session_id, agent_user_id, agent_name, state, requested_at) \
                     values ($1, $2, $3, $4, $5, 'REQUESTED', $6)"
                )
                .bind(&id)
                .bind(tenant_id)
                .bind(session_id)
                .bind(&user_id)
                .bind(&name)
                .bind(now_ms())
                .execute(conn)
                .await
                .map(|r| r.rows_affected())
                })?;
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
                    agent_user_id: Some(user_id),
                    agent_name: name,
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

    /// Relays an agent's message (pointer, highlight, click, typing, scrolling)
    /// to the visitor's page. Refused unless the co-browse is active, and, for
    /// what acts on the page, unless the visitor granted control.
    pub async fn relay_to_visitor(
        &self,
        tenant_id: &str,
        session_id: &str,
        acts: bool,
        message: String,
    ) -> CoreResult<()> {
        let current = self.script_cobrowse(tenant_id, session_id).await?;
        match current {
            Some(c) if c.state == ScriptState::Active => {
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

    /// The agent ends the co-browse. Audited as `cobrowse.end`.
    pub async fn end_script_cobrowse(&self, tenant_id: &str, session_id: &str, actor: &Actor) -> CoreResult<()> {
        let current = self.script_cobrowse(tenant_id, session_id).await?;
        match current {
            Some(c) if c.state.open() => self.finish_script(tenant_id, session_id, c, actor, "agent").await,
            _ => Err(not_active()),
        }
    }

    /// What the visitor did: accept, decline, grant or take back control, end.
    pub async fn visitor_cobrowse(
        &self,
        tenant_id: &str,
        session_id: &str,
        action: VisitorAction,
        actor: &Actor,
    ) -> CoreResult<()> {
        let current = self
            .script_cobrowse(tenant_id, session_id)
            .await?
            .filter(|c| c.state.open())
            .ok_or_else(not_active)?;
        let now = now_ms();
        let (state, control, audit_action) = match (action, current.state) {
            (VisitorAction::Accept, ScriptState::Requested) => (ScriptState::Active, false, "cobrowse.accept"),
            (VisitorAction::Decline, ScriptState::Requested) => (ScriptState::Declined, false, "cobrowse.decline"),
            (VisitorAction::Grant, ScriptState::Active) => (ScriptState::Active, true, "cobrowse.control"),
            (VisitorAction::Revoke, ScriptState::Active) => (ScriptState::Active, false, "cobrowse.control"),
            (VisitorAction::End, _) => {
                return self
                    .finish_script(tenant_id, session_id, current, actor, "visitor")
                    .await;
            }
            (VisitorAction::Accept, ScriptState::Active) => return Ok(()),
            _ => return Err(not_active()),
        };
        if state == current.state && control == current.control {
            return Ok(());
        }
        let granted = control && !current.control;
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update script_cobrowses set state = $1, control = $2, \
             accepted_at = case when $1 = 'ACTIVE' then coalesce(accepted_at, $3) else accepted_at end, \
             ended_at = case when $1 = 'DECLINED' then $3 else ended_at end, \
             handovers = handovers + $4 where id = $5"
        )
        .bind(state.as_str())
        .bind(control)
        .bind(now)
        .bind(i64::from(granted))
        .bind(&current.id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if granted {
            let fact = crate::reports::facts::Fact {
                kind: COBROWSE_HANDOVER,
                at: now,
                value: 1,
                agent: current.agent_user_id.as_deref(),
                subject: Some(&current.id),
                ..Default::default()
            };
            crate::reports::facts::record(&mut tx, tenant_id, &fact).await?;
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

    /// Ends an open script co-browse: its facts (length from the acceptance,
    /// the agent and the visitor) go to the co-browse report.
    async fn finish_script(
        &self,
        tenant_id: &str,
        session_id: &str,
        current: ScriptCobrowse,
        actor: &Actor,
        by: &str,
    ) -> CoreResult<()> {
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        let accepted_at: Option<i64> = with_tx!(&mut tx, |conn| sqlx::query_scalar(
            "update script_cobrowses set state = 'ENDED', control = false, ended_at = $1 where id = $2 \
             returning accepted_at"
        )
        .bind(now)
        .bind(&current.id)
        .fetch_one(conn)
        .await)?;
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
                ended_at: now.max(started_at),
                // The visitor, besides the agent who hosts.
                participants: 1,
                tags: Vec::new(),
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
            .await
    }

    /// Sends a co-browse message to the visitor's page (`to_visitor`) or to the
    /// agents' live views of the session, on every instance.
    async fn signal_cobrowse(
        &self,
        tenant_id: &str,
        session_id: &str,
        to_visitor: bool,
        data: String,
    ) -> CoreResult<()> {
        self.signal_live(LiveUpdate {
            tenant_id: tenant_id.to_string(),
            customer_id: String::new(),
            event: LiveEvent::Cobrowse {
                session_id: session_id.to_string(),
                to_visitor,
                data,
            },
        })
        .await
    }
}

fn session_ended() -> CoreError {
    CoreError::Conflict {
        field: None,
        code: "session_ended",
        message: "this co-browsing session has ended; ask for a new link".into(),
    }
}

fn not_active() -> CoreError {
    CoreError::Conflict {
        field: None,
        code: "not_active",
        message: "no co-browse is going on with this visitor".into(),
    }
}
