//! Visitors' forms: an offline or contact form sent from the widget.
//!
//! A form is a customer reaching out, so it is stored where an agent looks: as
//! the visitor's message (type `MESSAGE`, channel `WIDGET`) in its
//! conversation, its text laid out from the form's parts. Like any customer
//! message it makes the conversation `UNREAD`, fires `message.received` and the
//! `MESSAGE_RECEIVED` watchdogs, and is routed and timed by the SLA rules. The
//! form itself is then audited (`form.submit`) and fires the `FORM_SUBMISSION`
//! watchdogs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::messages::{Content, MessageType};
use crate::{
    error::CoreResult,
    validate::{is_email, Checks},
    Services,
};

/// Most extra fields in a form.
pub const MAX_FIELDS: usize = 50;

/// A visitor's offline or contact form.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"name": "Eve Ng", "email": "eve@example.com", "message": "Please call me back about my order.", "fields": {"order": "1042"}, "url": "https://shop.example.com/contact"}))]
pub struct FormIn {
    /// The name the visitor gave (at most 200 characters).
    #[schema(max_length = 200)]
    pub name: Option<String>,
    /// The e-mail address the visitor gave, to be answered at.
    #[schema(format = "email", max_length = 254)]
    pub email: Option<String>,
    /// Required: what the visitor wrote (1–10,000 characters).
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 10000,
        pattern = r"\S"
    )]
    pub message: Option<String>,
    /// The form's other fields, by label (at most 50; labels 1–100 characters,
    /// values at most 1,000).
    #[schema(schema_with = fields_schema)]
    pub fields: Option<BTreeMap<String, String>>,
    /// The page the form was sent from (an http(s) URL).
    #[schema(format = "uri", max_length = 2048)]
    pub url: Option<String>,
}

/// `fields`' schema: an object of at most 50 string values (at most 1,000
/// characters) whose labels have 1 to 100 characters, not all blank.
fn fields_schema() -> utoipa::openapi::Object {
    use utoipa::openapi::{schema::Type, ObjectBuilder};
    let value = ObjectBuilder::new().schema_type(Type::String).max_length(Some(1000));
    let label = ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(100))
        .pattern(Some(r"\S"));
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .additional_properties(Some(value))
        .property_names(Some(label))
        .max_properties(Some(MAX_FIELDS))
        .description(Some("The form's other fields, by label."))
        .build()
}

/// The form, checked.
struct ValidForm {
    name: Option<String>,
    email: Option<String>,
    message: String,
    fields: Vec<(String, String)>,
    url: Option<String>,
}

fn validate(input: &FormIn) -> CoreResult<ValidForm> {
    let mut checks = Checks::new();
    let name = checks.optional_text("name", input.name.as_deref(), 200);
    let email = checks.optional_text("email", input.email.as_deref(), 254);
    if email.as_deref().is_some_and(|e| !is_email(e)) {
        checks.push("email", "invalid_email", "email must be an e-mail address");
    }
    let message = checks.required_text("message", input.message.as_deref(), 10_000);
    let given = input.fields.clone().unwrap_or_default();
    if given.len() > MAX_FIELDS {
        checks.push("fields", "too_many", format!("a form has at most {MAX_FIELDS} fields"));
    }
    let mut fields = Vec::new();
    for (label, value) in given.into_iter().take(MAX_FIELDS) {
        let at = format!("fields.{label}");
        if label.trim().is_empty() || label.chars().count() > 100 {
            checks.push(&at, "invalid_label", "a field's label has 1 to 100 characters");
        }
        if value.chars().count() > 1000 {
            checks.push(&at, "too_long", "a field's value has at most 1000 characters");
        }
        fields.push((label.trim().to_string(), value.trim().to_string()));
    }
    let url = checks.optional_text("url", input.url.as_deref(), 2048);
    if let Some(u) = &url {
        checks.http_url("url", u);
    }
    checks.finish()?;
    Ok(ValidForm {
        name,
        email,
        message,
        fields,
        url,
    })
}

/// The message text an agent reads: a heading, who and where, what was
/// written, then the other fields.
fn layout(form: &ValidForm) -> String {
    let mut text = String::from("Contact form\n");
    if let Some(name) = &form.name {
        text.push_str(&format!("Name: {name}\n"));
    }
    if let Some(email) = &form.email {
        text.push_str(&format!("E-mail: {email}\n"));
    }
    if let Some(url) = &form.url {
        text.push_str(&format!("Page: {url}\n"));
    }
    text.push('\n');
    text.push_str(&form.message);
    if !form.fields.is_empty() {
        text.push('\n');
        for (label, value) in &form.fields {
            text.push_str(&format!("\n{label}: {value}"));
        }
    }
    text
}

impl Services {}

/// A visitor's form, read: the message an agent gets, and the one-line
/// summary the `FORM_SUBMISSION` watchdogs send. A form that fails its checks
/// is a validation error naming each field.
pub(crate) struct ReadForm {
    /// The form as the customer's message.
    pub content: Content,
    /// Who sent it, what they wrote, and from which page.
    pub summary: String,
    /// The address the visitor gave, where replies can go by mail.
    pub email: Option<String>,
}

/// Checks a visitor's form and lays it out (see [`ReadForm`]).
pub(crate) fn read_form(input: &FormIn) -> CoreResult<ReadForm> {
    let form = validate(input)?;
    let who = form.name.as_deref().or(form.email.as_deref()).unwrap_or("A visitor");
    let mut summary = format!("{who} sent a form: {}", form.message);
    if let Some(url) = &form.url {
        summary.push_str(&format!(" (on {url})"));
    }
    let content = Content {
        kind: MessageType::Message,
        message: Some(layout(&form)),
        url: None,
        button_text: None,
        button_link: None,
    };
    Ok(ReadForm {
        content,
        summary,
        email: form.email,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;

    fn codes(input: FormIn) -> Vec<(String, String)> {
        match validate(&input) {
            Ok(_) => vec![],
            Err(CoreError::Validation(errors)) => errors.into_iter().map(|e| (e.field, e.code)).collect(),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn a_form_needs_a_message_and_checks_what_else_it_has() {
        assert_eq!(
            codes(FormIn::default()),
            [("message".to_string(), "required".to_string())]
        );
        let bad = FormIn {
            message: Some("hi".into()),
            email: Some("not mail".into()),
            url: Some("ftp://x".into()),
            fields: Some(BTreeMap::from([(" ".to_string(), "x".to_string())])),
            ..FormIn::default()
        };
        let fields: Vec<String> = codes(bad).into_iter().map(|(f, _)| f).collect();
        assert_eq!(fields, ["email", "fields. ", "url"]);
    }

    #[test]
    fn the_message_reads_like_the_form() {
        let form = validate(&FormIn {
            name: Some("Eve".into()),
            email: Some("eve@example.com".into()),
            message: Some("Call me".into()),
            fields: Some(BTreeMap::from([("Order".to_string(), "1042".to_string())])),
            url: Some("https://shop.example.com/contact".into()),
        })
        .unwrap();
        assert_eq!(
            layout(&form),
            "Contact form\nName: Eve\nE-mail: eve@example.com\nPage: https://shop.example.com/contact\n\n\
             Call me\n\nOrder: 1042"
        );
    }
}
