//! Co-browsing as it happens (issue 25), beside the links of [`crate::links`].
//!
//! - **Universal co-browsing** ([`universal`]): a link's session runs one
//!   Chromium on one instance. The instance *claims* the session
//!   (`instance_url`, renewed while the browser runs) so that participants
//!   reaching another instance are relayed to it; a claim not renewed for
//!   [`CLAIM_STALE_MS`] may be taken over. When the session ends its facts
//!   (length, participants) go to the universal co-browse report and it is
//!   audited; an ended session stays ended.
//! - **Script co-browsing** ([`script`]): an agent watching a visitor's live
//!   view asks to browse along; the visitor script shows the request, and the
//!   visitor accepts, grants or takes back control, and ends it. The state lives
//!   in `script_cobrowses`, and every message between the two sides travels as
//!   a [`crate::live::LiveEvent::Cobrowse`], so the agent and the visitor may be
//!   served by different instances. Its facts go to the (script) co-browse
//!   report.

pub mod script;
pub mod universal;

pub use script::{visitor_resume, ScriptCobrowse, ScriptState, VisitorAction, VisitorCobrowse, AGENT_GONE_MS};
pub use universal::{CobrowseClaim, UniversalEnd, CLAIM_STALE_MS};

use crate::{
    audit::{self, Actor},
    db::Tx,
    error::{CoreError, CoreResult},
    ids::TenantId,
    reports::{
        catalogue::{COBROWSE_HANDOVER, COBROWSE_UNIVERSAL_HANDOVER},
        facts::{Fact, MeetingKind},
    },
    time::now_ms,
    Services,
};

impl Services {
    /// Records a hand-over of control (either kind of co-browsing): a fact for
    /// the report's `CONTROL_HANDOVERS` and an audit entry (`cobrowse.control`).
    pub async fn record_cobrowse_handover(
        &self,
        tenant_id: &TenantId,
        kind: MeetingKind,
        session_id: &str,
        host_user_id: Option<&str>,
        actor: &Actor,
    ) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        record_handover(&mut tx, tenant_id, kind, now_ms(), host_user_id, session_id).await?;
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
}

/// Stores one hand-over of control as a fact of `kind`'s co-browse report
/// (`CONTROL_HANDOVERS`), credited to the host.
async fn record_handover(
    tx: &mut Tx,
    tenant_id: &TenantId,
    kind: MeetingKind,
    at: i64,
    host_user_id: Option<&str>,
    subject: &str,
) -> CoreResult<()> {
    let fact = Fact {
        kind: match kind {
            MeetingKind::UniversalCobrowse => COBROWSE_UNIVERSAL_HANDOVER,
            _ => COBROWSE_HANDOVER,
        },
        at,
        value: 1,
        agent: host_user_id,
        subject: Some(subject),
        ..Default::default()
    };
    crate::reports::facts::record(tx, tenant_id, &fact).await.map(drop)
}

/// A universal session that ended stays ended: its links open nothing more.
pub(crate) fn session_ended() -> CoreError {
    CoreError::Conflict {
        field: None,
        code: "session_ended",
        message: "this co-browsing session has ended; ask for a new link".into(),
    }
}
