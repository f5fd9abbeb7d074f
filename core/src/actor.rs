//! Who performs a write, and from where: what the audit log records, webhook
//! deliveries name and every write service takes. It sits on the ground floor
//! so that the webhook outbox (`events`) can name it without naming the log.

use serde::{Deserialize, Serialize};

/// Who performs a write, and from where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// `user`, `apikey`, `platformkey` or `system`.
    pub kind: ActorKind,
    /// The user's or key's id; for `system`, what acted (e.g. `cli`).
    pub id: String,
    /// Client IP address, when there is a client.
    pub ip: Option<String>,
    /// The request id, when there is a request.
    pub request_id: Option<String>,
}

/// The kinds of actor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ActorKind {
    /// A dashboard user.
    User,
    /// A tenant API key.
    Apikey,
    /// A platform key.
    Platformkey,
    /// Rapport itself, or its CLI.
    System,
    /// A customer, writing through the visitor widget.
    Customer,
}

impl ActorKind {
    /// The wire value (`user`, `apikey`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::User => "user",
            ActorKind::Apikey => "apikey",
            ActorKind::Platformkey => "platformkey",
            ActorKind::System => "system",
            ActorKind::Customer => "customer",
        }
    }

    /// Parses a wire value; anything unknown is `system`.
    pub fn parse(s: &str) -> ActorKind {
        match s {
            "user" => ActorKind::User,
            "apikey" => ActorKind::Apikey,
            "platformkey" => ActorKind::Platformkey,
            "customer" => ActorKind::Customer,
            _ => ActorKind::System,
        }
    }
}

impl Actor {
    /// `kind:id`, as webhook deliveries name their actor (`rapport-actor`).
    pub fn label(&self) -> String {
        format!("{}:{}", self.kind.as_str(), self.id)
    }

    /// The user's id when a dashboard user acts.
    pub fn user_id(&self) -> Option<&str> {
        (self.kind == ActorKind::User).then_some(self.id.as_str())
    }

    /// Rapport itself or a named tool (e.g. `cli`), with no client.
    pub fn system(what: &str) -> Actor {
        Actor {
            kind: ActorKind::System,
            id: what.to_string(),
            ip: None,
            request_id: None,
        }
    }
}
