//! Ad-hoc video calls with a conversation's customer.
//!
//! A call is an appointment like any other (its conference, recording and
//! report are the same), made on the spot: it starts now, its link works for
//! [`CALL_LINK_HOURS`] after its end, it belongs to the customer, and the
//! invitation is a `CARD` message in the conversation, whose button opens the
//! join link. The visitor's chat shows it as a *Join the video call* button;
//! an integration hears it as `message.sent` like any card.
//!
//! - An agent starts one from the inbox ([`Services::start_call`]): the call is
//!   theirs, and the customer joins without a waiting room.
//! - A visitor asks for one from the chat ([`Services::request_call`]): the
//!   conversation is routed by the rules whose `types` include `CALL` (not
//!   those for `CHAT`), and the call belongs to whoever it is assigned to. The
//!   visitor waits in the waiting room until one of the tenant's agents
//!   admits them. Asking again while that call is open gives the same
//!   invitation, so a visitor cannot make calls (and notifications) without
//!   end; the general rate limits bound new visitors.

use chrono::Utc;

use crate::{
    appointments::{Appointment, AppointmentIn, AppointmentPermissions, ValidType},
    audit::Actor,
    conversations::{Channel, Message, MessageIn, MessageType},
    error::{CoreError, CoreResult},
    ids::{CustomerId, MessageId, TenantId},
    time::now_ms,
    with_db, Services,
};

/// Minutes an ad-hoc call is planned for.
pub const CALL_MINUTES: i32 = 30;
/// Hours after its planned end that a call's link still works.
pub const CALL_LINK_HOURS: i32 = 2;

/// A call that was started: its appointment and the invitation sent.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StartedCall {
    /// The call's appointment; its `joinLink` opens the call.
    pub appointment: Appointment,
    /// The `CARD` message inviting the customer.
    pub invitation: Message,
}

impl Services {
    /// Starts a call with `customer_id` owned by `owner` (a user id), and
    /// invites the customer in the conversation. `waiting_room` makes the
    /// customer wait to be admitted.
    pub async fn start_call(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        owner: Option<&str>,
        waiting_room: bool,
        channel: Channel,
        actor: &Actor,
    ) -> CoreResult<StartedCall> {
        let customer = self.get_customer(tenant_id, customer_id).await?;
        // A long name or address still makes a title within its 200 characters.
        let mut who = customer_label(&customer);
        if who.chars().count() > TITLE_NAME_CHARS {
            who = who.chars().take(TITLE_NAME_CHARS - 1).chain(['…']).collect();
        }
        let appointment = self
            .create_appointment(
                tenant_id,
                AppointmentIn {
                    title: Some(format!("Video call with {who}")),
                    date: Some(Utc::now()),
                    duration_in_minutes: Some(CALL_MINUTES),
                    owner: owner.map(str::to_string),
                    customer_id: Some(customer.id.clone()),
                    valid_type: Some(ValidType::Hours),
                    valid_before: Some(0),
                    valid_after: Some(CALL_LINK_HOURS),
                    permissions: Some(AppointmentPermissions {
                        enable_waiting_room: waiting_room,
                        ..AppointmentPermissions::default()
                    }),
                    ..AppointmentIn::default()
                },
                actor,
            )
            .await?;
        let invitation = self
            .send_message(
                tenant_id,
                MessageIn {
                    customer_id: Some(customer.id.into_string()),
                    is_external_id: Some(false),
                    kind: Some(MessageType::Card),
                    message: Some("Let's talk face to face: join the video call.".into()),
                    button_text: Some("Join the video call".into()),
                    button_link: Some(appointment.join_link.clone()),
                    url: None,
                },
                channel,
                actor,
            )
            .await?;
        Ok(StartedCall {
            appointment,
            invitation,
        })
    }

    /// The invitation to the customer's latest call, if its link still works.
    pub(crate) async fn open_call_invitation(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
    ) -> CoreResult<Option<Message>> {
        let since = now_ms() - i64::from(CALL_MINUTES + CALL_LINK_HOURS * 60) * 60_000;
        let latest: Option<(MessageId, Option<String>)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select id, button_link from messages where tenant_id = $1 and customer_id = $2 and type = 'CARD' \
             and direction = 'OUTBOUND' and created_at >= $3 order by created_at desc, id desc limit 1"
        )
        .bind(tenant_id)
        .bind(customer_id)
        .bind(since)
        .fetch_optional(pool)
        .await)?;
        let Some((message_id, Some(link))) = latest else {
            return Ok(None);
        };
        let Some(token) = link
            .strip_prefix(self.public_url())
            .and_then(|path| path.strip_prefix("/join/"))
        else {
            return Ok(None); // a card of another kind
        };
        let open = match self.appointment_by_join_token(token).await {
            Ok((tenant, appointment)) => {
                tenant == *tenant_id
                    && appointment.customer_id.as_deref() == Some(customer_id)
                    && appointment.is_open_at(Utc::now())
            }
            Err(CoreError::NotFound(_)) => false,
            Err(e) => return Err(e),
        };
        if !open {
            return Ok(None);
        }
        self.get_message(tenant_id, &message_id).await.map(Some)
    }
}

/// Most characters of the customer's name in a call's title (`Video call with …`).
const TITLE_NAME_CHARS: usize = 180;

/// How a customer is named to agents: their name, else their e-mail, else
/// "A visitor".
pub(crate) fn customer_label(customer: &crate::customers::Customer) -> String {
    let name = [customer.first_name.as_deref(), customer.last_name.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    if !name.trim().is_empty() {
        name
    } else {
        customer.email.clone().unwrap_or_else(|| "A visitor".into())
    }
}
