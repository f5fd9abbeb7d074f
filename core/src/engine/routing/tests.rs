//! The routing decision, tried on situations built by hand.

use super::*;
use crate::config::{rules::QueueTargetType, Meta};

fn rule(id: &str, conditions: Vec<Condition>, actions: Vec<Action>) -> RoutingRule {
    RoutingRule {
        meta: Meta {
            id: (!id.is_empty()).then(|| id.to_string()),
            ..Meta::default()
        },
        name: Some(format!("rule {id}")),
        active: Some(true),
        conditions,
        types: vec![Channel::Chat],
        else_rules: Vec::new(),
        actions,
        priority: None,
    }
}

fn queue(team: &str) -> Action {
    Action::Queue {
        target: QueueTarget {
            kind: QueueTargetType::Team,
            value: team.to_string(),
        },
        agent_state: AgentState::Any,
        max_wait_seconds: 60,
    }
}

fn tag(t: &str) -> Condition {
    Condition::HasTag {
        tags: vec![t.to_string()],
        mode: TagMatch::Any,
        source: TagSource::Any,
    }
}

struct Fixture {
    tags: Vec<String>,
    page_tags: Vec<String>,
    hours: HashMap<String, Schedule>,
}

impl Fixture {
    fn new(tags: &[&str]) -> Fixture {
        Fixture {
            tags: tags.iter().map(|t| t.to_string()).collect(),
            page_tags: vec!["checkout".into()],
            hours: HashMap::new(),
        }
    }

    fn situation(&self) -> Situation<'_> {
        Situation {
            channel: Channel::Chat,
            customer_id: "c1",
            external_id: Some("crm-7"),
            tags: &self.tags,
            page_tags: &self.page_tags,
            url: Some("https://shop.example/cart?x=1"),
            waiting_seconds: Some(0),
            now: "2026-11-25T12:00:00Z".parse().unwrap(),
            hours: &self.hours,
        }
    }
}

#[test]
fn a_tag_condition_reads_the_tags_of_the_source_it_names() {
    let f = Fixture::new(&["vip"]);
    let s = f.situation();
    let from = |tag: &str, source| Condition::HasTag {
        tags: vec![tag.into()],
        mode: TagMatch::Any,
        source,
    };
    // "vip" was set by an agent, "checkout" by the page.
    for (condition, expected) in [
        (from("vip", TagSource::Any), true),
        (from("checkout", TagSource::Any), true),
        (from("vip", TagSource::Trusted), true),
        (from("checkout", TagSource::Trusted), false),
        (from("vip", TagSource::Page), false),
        (from("checkout", TagSource::Page), true),
    ] {
        assert_eq!(condition_holds(&condition, &s), expected, "{condition:?}");
    }
}

fn queued_team(d: &Decision) -> Option<&str> {
    d.plan.iter().find_map(|p| match p {
        Planned::Queue { target, .. } => Some(target.value.as_str()),
        _ => None,
    })
}

#[test]
fn each_condition_holds_exactly_when_it_should() {
    let f = Fixture::new(&["vip", "de"]);
    let s = f.situation();
    let table: Vec<(Condition, bool)> = vec![
        (Condition::HasId { ids: vec!["c1".into()] }, true),
        (
            Condition::HasId {
                ids: vec!["crm-7".into()],
            },
            true,
        ),
        (Condition::HasId { ids: vec!["c2".into()] }, false),
        (tag("vip"), true),
        (tag("VIP"), true),
        (tag("gold"), false),
        (
            Condition::HasTag {
                tags: vec!["vip".into(), "gold".into()],
                mode: TagMatch::Any,
                source: TagSource::Any,
            },
            true,
        ),
        (
            Condition::HasTag {
                tags: vec!["vip".into(), "gold".into()],
                mode: TagMatch::All,
                source: TagSource::Any,
            },
            false,
        ),
        (
            Condition::HasTag {
                tags: vec!["vip".into(), "de".into()],
                mode: TagMatch::All,
                source: TagSource::Any,
            },
            true,
        ),
        (Condition::NoAnswer { seconds: 1 }, false),
        (
            Condition::UrlRouting {
                urls: vec!["https://shop.example/*".into()],
            },
            true,
        ),
        (
            Condition::UrlRouting {
                urls: vec!["https://shop.example/checkout*".into()],
            },
            false,
        ),
        (
            Condition::UrlRouting {
                urls: vec!["https://shop.example/cart?x=1".into()],
            },
            true,
        ),
        (
            Condition::OpeningHour {
                opening_hours_id: "gone".into(),
                inside: true,
            },
            false,
        ),
        (
            Condition::OpeningHour {
                opening_hours_id: "gone".into(),
                inside: false,
            },
            true,
        ),
    ];
    for (condition, expected) in table {
        assert_eq!(condition_holds(&condition, &s), expected, "{condition:?}");
    }
    let waited = Situation {
        waiting_seconds: Some(30),
        ..s.clone()
    };
    assert!(condition_holds(&Condition::NoAnswer { seconds: 30 }, &waited));
    assert!(!condition_holds(&Condition::NoAnswer { seconds: 31 }, &waited));
    let none_waiting = Situation {
        waiting_seconds: None,
        ..s.clone()
    };
    assert!(!condition_holds(&Condition::NoAnswer { seconds: 1 }, &none_waiting));
}

#[test]
fn opening_hour_conditions_read_the_schedule() {
    let mut f = Fixture::new(&[]);
    f.hours.insert("always".into(), Schedule::always());
    let s = f.situation();
    let inside = Condition::OpeningHour {
        opening_hours_id: "always".into(),
        inside: true,
    };
    let outside = Condition::OpeningHour {
        opening_hours_id: "always".into(),
        inside: false,
    };
    assert!(condition_holds(&inside, &s));
    assert!(!condition_holds(&outside, &s));
}

#[test]
fn url_patterns() {
    for (pattern, url, expected) in [
        ("https://a.example/*", "https://a.example/", true),
        ("https://a.example/*", "https://a.example", false),
        ("*checkout*", "https://a.example/checkout/1", true),
        ("*/help", "https://a.example/help", true),
        ("*/help", "https://a.example/help/x", false),
        ("https://*.example/*/x", "https://b.example/y/x", true),
        ("https://*.example/*/x", "https://b.example/x", false),
        ("a*a", "a", false),
        ("a*a", "aa", true),
    ] {
        assert_eq!(url_matches(pattern, url), expected, "{pattern} {url}");
    }
}

#[test]
fn the_first_matching_rule_in_order_decides() {
    let rules = vec![
        rule("a", vec![tag("gold")], vec![queue("gold-team")]),
        rule("b", vec![tag("vip")], vec![queue("vip-team")]),
        rule("c", vec![], vec![queue("everyone")]),
    ];
    let f = Fixture::new(&["vip"]);
    let d = decide(&rules, &f.situation());
    assert_eq!(d.matched, Some(RulePath::top("b")));
    assert_eq!(queued_team(&d), Some("vip-team"));
    assert_eq!(
        d.tried.iter().map(|t| (t.path.as_str(), t.matched)).collect::<Vec<_>>(),
        [("a", false), ("b", true)]
    );
    let f = Fixture::new(&[]);
    assert_eq!(queued_team(&decide(&rules, &f.situation())), Some("everyone"));
    // Reordered, the catch-all wins.
    let reordered = vec![rules[2].clone(), rules[0].clone(), rules[1].clone()];
    let f = Fixture::new(&["vip"]);
    assert_eq!(queued_team(&decide(&reordered, &f.situation())), Some("everyone"));
}

#[test]
fn else_rules_are_tried_when_their_parent_does_not_match() {
    let mut parent = rule("p", vec![tag("vip")], vec![queue("vip-team")]);
    let mut first_else = rule("", vec![tag("de")], vec![queue("german")]);
    first_else.else_rules = vec![rule("", vec![], vec![queue("deep")])];
    parent.else_rules = vec![first_else, rule("", vec![], vec![queue("fallback")])];
    let rules = vec![parent, rule("z", vec![], vec![queue("never")])];
    let cases: [(&[&str], &str, &str); 3] = [
        (&["vip"], "vip-team", "p"),
        (&["de"], "german", "p/0"),
        (&[], "deep", "p/0/0"),
    ];
    for (tags, team, path) in cases {
        let f = Fixture::new(tags);
        let d = decide(&rules, &f.situation());
        assert_eq!(queued_team(&d), Some(team), "{tags:?}");
        assert_eq!(d.matched.as_ref().map(|p| p.to_string()).as_deref(), Some(path));
    }
    let f = Fixture::new(&[]);
    let d = decide(&rules, &f.situation());
    assert_eq!(d.matched_names, ["rule p", "rule ", "rule "]);
}

#[test]
fn an_else_rule_switched_off_is_passed_over_with_its_own() {
    let mut off = rule("", vec![], vec![queue("off")]);
    off.active = Some(false);
    off.else_rules = vec![rule("", vec![], vec![queue("under-off")])];
    let mut parent = rule("p", vec![tag("vip")], vec![queue("vip-team")]);
    parent.else_rules = vec![off, rule("", vec![], vec![queue("fallback")])];
    let rules = vec![parent];
    let f = Fixture::new(&[]);
    let d = decide(&rules, &f.situation());
    assert_eq!(queued_team(&d), Some("fallback"));
    assert_eq!(d.matched.as_ref().map(|p| p.to_string()).as_deref(), Some("p/1"));
    // From a queue's timeout too.
    let from = RulePath::parse("p").unwrap();
    assert_eq!(
        queued_team(&decide_else(&rules, &from, &f.situation())),
        Some("fallback")
    );
}

#[test]
fn a_rule_for_calls_is_not_tried_for_chats() {
    let mut calls = rule("calls", vec![], vec![queue("phone")]);
    calls.types = vec![Channel::Call];
    let rules = vec![calls, rule("chat", vec![], vec![queue("chat")])];
    let f = Fixture::new(&[]);
    let d = decide(&rules, &f.situation());
    assert_eq!(queued_team(&d), Some("chat"));
    assert_eq!(d.tried.len(), 1);
    let call = Situation {
        channel: Channel::Call,
        ..f.situation()
    };
    assert_eq!(queued_team(&decide(&rules, &call)), Some("phone"));
}

#[test]
fn routing_to_runs_the_named_rule_and_chains_stop_at_a_loop() {
    let rules = vec![
        rule(
            "a",
            vec![],
            vec![
                Action::SystemMessage {
                    system_message_id: "hello".into(),
                },
                Action::RoutingTo { rule_id: "b".into() },
            ],
        ),
        rule(
            "b",
            vec![tag("vip")],
            vec![queue("vip-team"), Action::RoutingTo { rule_id: "a".into() }],
        ),
    ];
    let f = Fixture::new(&["vip"]);
    let d = decide(&rules, &f.situation());
    assert_eq!(d.matched, Some(RulePath::top("a")));
    assert_eq!(d.plan[0], Planned::SystemMessage { id: "hello".into() });
    assert_eq!(queued_team(&d), Some("vip-team"));
    assert_eq!(d.skipped, ["ROUTING_TO a: already on this path"]);
    // When the named rule does not match, its actions do not join the plan.
    let f = Fixture::new(&[]);
    let d = decide(&rules, &f.situation());
    assert_eq!(queued_team(&d), None);
    assert_eq!(d.plan.len(), 1);
}

#[test]
fn only_the_first_queue_of_a_plan_queues() {
    let rules = vec![rule("a", vec![], vec![queue("one"), queue("two")])];
    let f = Fixture::new(&[]);
    let d = decide(&rules, &f.situation());
    assert_eq!(queued_team(&d), Some("one"));
    assert_eq!(d.plan.len(), 1);
    assert_eq!(d.skipped.len(), 1);
}

#[test]
fn a_finished_wait_asks_the_queuing_rules_else_rules() {
    let mut parent = rule("p", vec![], vec![queue("first")]);
    parent.else_rules = vec![
        rule("", vec![tag("vip")], vec![queue("vip-overflow")]),
        rule("", vec![], vec![queue("overflow")]),
    ];
    let rules = vec![parent];
    let f = Fixture::new(&[]);
    let d = decide_else(&rules, &RulePath::top("p"), &f.situation());
    assert_eq!(queued_team(&d), Some("overflow"));
    assert_eq!(d.matched.unwrap().to_string(), "p/1");
    let f = Fixture::new(&["vip"]);
    let d = decide_else(&rules, &RulePath::top("p"), &f.situation());
    assert_eq!(queued_team(&d), Some("vip-overflow"));
    // An else-rule without else-rules: nothing decides.
    let d = decide_else(&rules, &RulePath::parse("p/1").unwrap(), &f.situation());
    assert_eq!(d.matched, None);
    assert!(d.plan.is_empty());
}

#[test]
fn paths_read_back_what_they_write() {
    for written in ["r1", "r1/0", "0196f0c2-7a1e/3/1"] {
        assert_eq!(RulePath::parse(written).unwrap().to_string(), written);
    }
    assert_eq!(RulePath::parse(""), None);
    assert_eq!(RulePath::parse("r/x"), None);
}
