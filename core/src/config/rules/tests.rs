//! Unit tests of routing rules: cycles through else-rules, and the documented shapes of conditions and actions.

use super::*;

#[test]
fn cycles_are_found_through_several_rules() {
    let mut edges = HashMap::new();
    edges.insert("a".to_string(), vec!["b".to_string()]);
    edges.insert("b".to_string(), vec!["c".to_string()]);
    edges.insert("c".to_string(), vec![]);
    assert!(!closes_cycle("a", &edges));
    edges.insert("c".to_string(), vec!["a".to_string()]);
    assert!(closes_cycle("a", &edges));
    edges.insert("d".to_string(), vec!["d".to_string()]);
    assert!(closes_cycle("d", &edges));
}

#[test]
fn conditions_and_actions_read_the_documented_shapes() {
    let rule: RoutingRule = serde_json::from_value(serde_json::json!({
            "name": "VIP",
            "types": ["CHAT"],
            "conditions": [
                {"type": "URL", "urls": ["https://shop.example/*"]},
                {"type": "HAS_TAG", "tags": ["vip"], "match": "ALL"},
                {"type": "OPENING_HOUR", "openingHoursId": "oh1"}
            ],
            "actions": [
                {"type": "QUEUE", "target": {"type": "TEAM", "value": "t1"}, "agentState": "AVAILABLE"},
                {"type": "ROUTING_TO", "ruleId": "r2"}
            ],
            "elseRules": [{"name": "fallback", "types": ["CHAT"], "actions": [{"type": "SYSTEM_MESSAGE", "systemMessageId": "m1"}]}]
        }))
        .unwrap();
    assert_eq!(rule.opening_hours_ids(), ["oh1"]);
    assert_eq!(rule.routed_rule_ids(), ["r2"]);
    assert_eq!(rule.system_message_ids(), ["m1"]);
    assert!(matches!(
        rule.conditions[2],
        Condition::OpeningHour { inside: true, .. }
    ));
    assert!(matches!(
        rule.actions[0],
        Action::Queue {
            max_wait_seconds: 5400,
            ..
        }
    ));
}
