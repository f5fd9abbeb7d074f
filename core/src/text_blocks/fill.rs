//! Filling a block in for one conversation: its variables, and which of the
//! blocks sharing a shortcut fits the customer best.

use std::collections::BTreeMap;

use super::{Scope, TextBlock};

/// The variables a block's text may name, each as `{name}` or `{name|fallback}`.
pub const VARIABLES: [&str; 5] = [
    "customer.firstName",
    "customer.lastName",
    "customer.name",
    "agent.displayName",
    "agent.firstName",
];

/// The values a block's variables take in one conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variables {
    /// The customer's first name.
    pub customer_first_name: Option<String>,
    /// The customer's last name.
    pub customer_last_name: Option<String>,
    /// The agent's shown name (display name, else e-mail).
    pub agent_display_name: Option<String>,
}

impl Variables {
    fn value(&self, name: &str) -> Option<String> {
        let nonblank = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        match name {
            "customer.firstName" => nonblank(&self.customer_first_name),
            "customer.lastName" => nonblank(&self.customer_last_name),
            "customer.name" => {
                let parts: Vec<String> = [&self.customer_first_name, &self.customer_last_name]
                    .into_iter()
                    .filter_map(nonblank)
                    .collect();
                (!parts.is_empty()).then(|| parts.join(" "))
            }
            "agent.displayName" => nonblank(&self.agent_display_name),
            "agent.firstName" => {
                nonblank(&self.agent_display_name).and_then(|n| n.split_whitespace().next().map(str::to_string))
            }
            _ => None,
        }
    }
}

/// One `{…}` of a text: where it is, the variable and its fallback.
pub(super) struct Placeholder<'a> {
    /// Where it is in the text, braces included.
    pub(super) range: std::ops::Range<usize>,
    /// The variable's name.
    pub(super) name: &'a str,
    /// What stands for a missing value.
    pub(super) fallback: &'a str,
}

/// The `{…}` placeholders of `text`, in order. A `{` without a closing `}` on
/// the same line is text.
pub(super) fn placeholders(text: &str) -> Vec<Placeholder<'_>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find('{').map(|i| i + from) {
        let Some(close) = text[open..].find(['}', '\n']).map(|i| i + open) else {
            break;
        };
        if text.as_bytes()[close] == b'\n' {
            from = close;
            continue;
        }
        let inner = &text[open + 1..close];
        let (name, fallback) = inner.split_once('|').unwrap_or((inner, ""));
        out.push(Placeholder {
            range: open..close + 1,
            name: name.trim(),
            fallback,
        });
        from = close + 1;
    }
    out
}

/// `text` with each variable filled in: its value, else its fallback, else nothing.
pub fn render(text: &str, variables: &Variables) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for p in placeholders(text) {
        out.push_str(&text[at..p.range.start]);
        match variables.value(p.name) {
            Some(value) => out.push_str(&value),
            None => out.push_str(p.fallback),
        }
        at = p.range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Of the blocks an agent may use, per shortcut, the one for this customer:
/// the closest owner (user, then team, then workspace), then the customer's
/// language, its primary language, every language, the workspace's language,
/// then any. The result is sorted by shortcut.
pub fn best_fit<'a>(blocks: &'a [TextBlock], customer: Option<&str>, workspace: &str) -> Vec<&'a TextBlock> {
    let primary = |tag: &str| tag.split('-').next().unwrap_or(tag).to_ascii_lowercase();
    let rank = |b: &TextBlock| {
        let owner = match b.scope {
            Scope::User => 0,
            Scope::Team => 1,
            Scope::Tenant => 2,
        };
        let language = match (b.language.as_deref(), customer) {
            (Some(l), Some(c)) if l.eq_ignore_ascii_case(c) => 0,
            (Some(l), Some(c)) if primary(l) == primary(c) => 1,
            (None, _) => 2,
            (Some(l), _) if l.eq_ignore_ascii_case(workspace) || primary(l) == primary(workspace) => 3,
            _ => 4,
        };
        (owner, language)
    };
    let mut best: BTreeMap<&str, &TextBlock> = BTreeMap::new();
    for block in blocks {
        match best.get(block.shortcut.as_str()) {
            Some(held) if rank(held) <= rank(block) => {}
            _ => {
                best.insert(&block.shortcut, block);
            }
        }
    }
    best.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::from_ms;

    fn block(shortcut: &str, language: Option<&str>, scope: Scope) -> TextBlock {
        TextBlock {
            id: format!("{shortcut}-{language:?}-{scope:?}"),
            shortcut: shortcut.into(),
            language: language.map(str::to_string),
            text: String::new(),
            scope,
            team_id: None,
            user_id: None,
            uses: 0,
            created_at: from_ms(0),
            updated_at: from_ms(0),
        }
    }

    #[test]
    fn variables_are_filled_with_their_values_or_fallbacks() {
        let vars = Variables {
            customer_first_name: Some("Eve".into()),
            customer_last_name: None,
            agent_display_name: Some("Sam Smith".into()),
        };
        assert_eq!(
            render(
                "Hi {customer.firstName}, I am {agent.firstName} ({agent.displayName}).",
                &vars
            ),
            "Hi Eve, I am Sam (Sam Smith)."
        );
        assert_eq!(render("Dear {customer.lastName|customer}", &vars), "Dear customer");
        assert_eq!(render("{customer.name}", &vars), "Eve");
        // A brace that closes no placeholder on its line is text.
        assert_eq!(render("a { b\n} c {customer.firstName}", &vars), "a { b\n} c Eve");
        assert_eq!(render("no variables", &Variables::default()), "no variables");
        assert_eq!(render("{customer.firstName}!", &Variables::default()), "!");
    }

    #[test]
    fn the_best_fit_prefers_the_closest_owner_then_the_customers_language() {
        let blocks = [
            block("hello", Some("en"), Scope::Tenant),
            block("hello", Some("de"), Scope::Tenant),
            block("hello", None, Scope::Tenant),
            block("bye", None, Scope::Tenant),
            block("bye", Some("fr"), Scope::User),
            block("thanks", Some("en-GB"), Scope::Tenant),
            block("thanks", Some("it"), Scope::Tenant),
        ];
        let pick = |customer: Option<&str>| -> Vec<String> {
            best_fit(&blocks, customer, "en")
                .into_iter()
                .map(|b| b.id.clone())
                .collect()
        };
        assert_eq!(
            pick(Some("de-CH")),
            [
                "bye-Some(\"fr\")-User",
                "hello-Some(\"de\")-Tenant",
                "thanks-Some(\"en-GB\")-Tenant"
            ]
        );
        // No language known: the block for every language, then the workspace's.
        assert_eq!(
            pick(None),
            [
                "bye-Some(\"fr\")-User",
                "hello-None-Tenant",
                "thanks-Some(\"en-GB\")-Tenant"
            ]
        );
        assert_eq!(pick(Some("it"))[2], "thanks-Some(\"it\")-Tenant");
    }
}
