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
//!   admits them.

use chrono::Utc;

use crate::{
    appointments::{Appointment, AppointmentIn, AppointmentPermissions, ValidType},
    audit::Actor,
    conversations::{Channel, Message, MessageIn, MessageType},
    error::CoreResult,
    Services,
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
        tenant_id: &str,
        customer_id: &str,
        owner: Option<&str>,
        waiting_room: bool,
        channel: Channel,
        actor: &Actor,
    ) -> CoreResult<StartedCall> {
        let customer = self.get_customer(tenant_id, customer_id).await?;
        let who = customer_label(&customer);
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
                    customer_id: Some(customer.id),
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

    /// A visitor asked for a video call from the chat: the conversation is
    /// routed by the rules for `CALL`, and a call owned by whoever has it
    /// then (notified in the dashboard) is started, with a waiting room.
    pub async fn request_call(&self, tenant_id: &str, customer_id: &str) -> CoreResult<StartedCall> {
        let customer = self.get_customer(tenant_id, customer_id).await?;
        let who = customer_label(&customer);
        let owner = self.route_call(tenant_id, customer_id, &who).await?;
        self.start_call(
            tenant_id,
            customer_id,
            owner.as_deref(),
            true,
            Channel::Automation,
            &Actor::system("routing"),
        )
        .await
    }
}

/// How a customer is named to agents: their name, else their e-mail, else
/// "A visitor".
fn customer_label(customer: &crate::customers::Customer) -> String {
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
