//! Typed ids. Each kind of id is its own type, so that a customer's id cannot
//! be passed where a tenant's is meant: the compiler checks what a bare `&str`
//! left to the reader. On the wire and in SQL an id is its text, unchanged.
//!
//! [`id_type!`] declares one; it follows svix's `create_id_type!`.

/// Declares a typed id: a `String` inside, transparent to serde (and, with the
/// `server` feature, to sqlx), readable as `&str`. In an OpenAPI schema a
/// field of one is declared `#[schema(value_type = String)]`.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "server", derive(sqlx::Type))]
        #[cfg_attr(feature = "server", sqlx(transparent))]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The id `id` names (ids are checked where they are looked up,
            /// not here: an unknown id answers as a missing row).
            pub fn new(id: impl Into<String>) -> Self {
                $name(id.into())
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id's text, given up.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                $name(id)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                $name(id.to_string())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                self == &other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }
    };
}

id_type!(
    /// A tenant (workspace). Every tenant-owned query takes one.
    TenantId
);

id_type!(
    /// A customer, and so their one conversation (a conversation is named by
    /// its customer's id).
    CustomerId
);

id_type!(
    /// A user of the dashboard: an agent, a supervisor or an admin.
    UserId
);

id_type!(
    /// A team of users, a target of routing and assignment.
    TeamId
);

id_type!(
    /// A video-conference appointment, and so its conference room and the
    /// recordings made in it.
    AppointmentId
);

id_type!(
    /// A message of a conversation.
    MessageId
);

id_type!(
    /// A webhook endpoint (a subscription), and so its deliveries.
    WebhookId
);

#[cfg(test)]
mod tests {
    use super::{CustomerId, TenantId, UserId};

    #[test]
    fn an_id_is_its_text_on_the_wire() {
        let id = TenantId::new("0190c3d2-8c1e");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"0190c3d2-8c1e\"");
        let back: TenantId = serde_json::from_str("\"0190c3d2-8c1e\"").unwrap();
        assert_eq!(back, id);
        assert_eq!(id, "0190c3d2-8c1e");
        assert_eq!(id.to_string(), "0190c3d2-8c1e");
    }

    #[test]
    fn an_id_compares_with_its_text_either_way_round() {
        let id = CustomerId::new("c-1");
        let (text, owned, other) = ("c-1", String::from("c-1"), "c-2");
        assert_eq!(id, text);
        assert_eq!(text, id);
        assert_eq!(id, owned);
        assert_eq!(owned, id);
        assert_ne!(other, id);
        assert_eq!(UserId::from("u-1").as_str(), "u-1");
    }
}
