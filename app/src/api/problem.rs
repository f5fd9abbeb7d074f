//! A server function's failure as the dashboard shows it: one sentence for the
//! form, and a message per field it concerns.
//!
//! Server functions fail with a plain [`ServerFnError`], whose only payload is a
//! string; it also travels in the URL after a form post without JavaScript. A
//! validation failure puts a [`Problem`] there as JSON, so that both the hydrated
//! form and the no-JavaScript page can show each message next to its field.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// What went wrong.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// One sentence for the whole form.
    pub message: String,
    /// The fields concerned, with what is wrong with each.
    #[serde(default)]
    pub fields: Vec<FieldProblem>,
}

/// What is wrong with one field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldProblem {
    /// The field's path in the API's terms, e.g. `url` or `eventTypes[1]`.
    pub field: String,
    /// The explanation.
    pub message: String,
}

/// Marks a [`Problem`] inside a server function error's text.
const MARKER: &str = "problem:";

impl Problem {
    /// The error a server function returns for this problem.
    pub fn into_error(self) -> ServerFnError {
        ServerFnError::new(format!("{MARKER}{}", serde_json::to_string(&self).unwrap_or_default()))
    }

    /// Reads a server function's error: a problem it carries, or its text.
    pub fn of(error: &ServerFnError) -> Problem {
        match error {
            ServerFnError::ServerError(text) => Problem::from_text(text),
            other => Problem::from_text(&other.to_string()),
        }
    }

    /// Reads an error's text: a problem it carries, or the text itself.
    pub fn from_text(text: &str) -> Problem {
        let text = text
            .trim_start_matches("error running server function: ")
            .trim_start_matches("ServerFnError: ");
        text.strip_prefix(MARKER)
            .and_then(|json| serde_json::from_str(json).ok())
            .unwrap_or_else(|| Problem {
                message: text.to_string(),
                fields: Vec::new(),
            })
    }

    /// The message for the form field `name` (an API field path, matched with
    /// its indices and sub-fields: `eventTypes` covers `eventTypes[1]`).
    pub fn field(&self, name: &str) -> Option<String> {
        let messages: Vec<&str> = self
            .fields
            .iter()
            .filter(|f| {
                f.field == name
                    || f.field
                        .strip_prefix(name)
                        .is_some_and(|rest| rest.starts_with('[') || rest.starts_with('.'))
            })
            .map(|f| f.message.as_str())
            .collect();
        (!messages.is_empty()).then(|| messages.join("; "))
    }

    /// The message for exactly the field `name`, not its items or sub-fields:
    /// for a list as a whole (`actions`), whose items show their own.
    pub fn exact_field(&self, name: &str) -> Option<String> {
        let messages: Vec<&str> = self
            .fields
            .iter()
            .filter(|f| f.field == name)
            .map(|f| f.message.as_str())
            .collect();
        (!messages.is_empty()).then(|| messages.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_survives_the_error_text_and_finds_its_fields() {
        let problem = Problem {
            message: "check the form".into(),
            fields: vec![
                FieldProblem {
                    field: "eventTypes[1]".into(),
                    message: "unknown event type".into(),
                },
                FieldProblem {
                    field: "url".into(),
                    message: "must be https".into(),
                },
            ],
        };
        let read = Problem::of(&problem.clone().into_error());
        assert_eq!(read, problem);
        assert_eq!(read.field("eventTypes").as_deref(), Some("unknown event type"));
        assert_eq!(read.field("url").as_deref(), Some("must be https"));
        assert_eq!(read.field("urls"), None);
        assert_eq!(read.field("description"), None);
        assert_eq!(read.exact_field("eventTypes"), None);
        assert_eq!(read.exact_field("url").as_deref(), Some("must be https"));
    }

    #[test]
    fn a_plain_error_is_its_message() {
        let read = Problem::of(&ServerFnError::new("not found"));
        assert_eq!(read.message, "not found");
        assert!(read.fields.is_empty());
    }
}
