//! Unit tests of action rules: conditions with their negation, and the checks of an imported rule.

use super::*;

fn t(hour: i32, minute: i32) -> TimeOfDay {
    TimeOfDay { hour, minute }
}

#[test]
fn a_condition_reads_its_type_and_negation_side_by_side() {
    let rule: ActionRule = serde_json::from_value(serde_json::json!({
            "name": "Checkout help",
            "trigger": "PAGE",
            "conditions": [
                {"type": "AGENTS_BUSY", "negate": true},
                {"type": "TIME_ON_PAGE", "seconds": 30},
                {"type": "OPENING_HOURS", "openingHoursId": "oh1"},
                {"type": "TIME_WINDOW", "days": ["WORKDAYS"], "from": {"hour": 9, "minute": 0}, "to": {"hour": 17, "minute": 30}}
            ],
            "action": {"type": "OPEN_CHAT", "message": "Need a hand?"}
        }))
        .unwrap();
    assert!(rule.conditions[0].negate);
    assert_eq!(rule.conditions[0].test, ActionCondition::AgentsBusy {});
    assert!(!rule.conditions[1].negate);
    assert_eq!(rule.opening_hours_ids(), ["oh1"]);
    let back = serde_json::to_value(&rule).unwrap();
    assert_eq!(
        back["conditions"][0],
        serde_json::json!({"type": "AGENTS_BUSY", "negate": true})
    );
    assert_eq!(
        back["action"],
        serde_json::json!({"type": "OPEN_CHAT", "message": "Need a hand?"})
    );
}

#[test]
fn checks_name_each_bad_field_of_an_imported_rule() {
    let mut rule = ActionRule {
        name: Some(" ".into()),
        conditions: vec![
            ActionRuleCondition {
                test: ActionCondition::TimeOnPage { seconds: 0 },
                negate: false,
            },
            ActionRuleCondition {
                test: ActionCondition::TimeWindow {
                    days: vec![],
                    from: t(9, 0),
                    to: t(24, 0),
                    time_zone: Some("Mars/Olympus".into()),
                },
                negate: false,
            },
        ],
        action: Some(ChatAction::OpenChat {
            message: Some("Hi".into()),
            flow_id: Some("f".into()),
        }),
        ..ActionRule::default()
    };
    let mut checks = Checks::new();
    check_action_rule(&mut checks, "rules[3].", &mut rule, &mut Default::default());
    let CoreError::Validation(problems) = checks.finish().unwrap_err() else {
        panic!("not a validation error")
    };
    let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "rules[3].name",
            "rules[3].trigger",
            "rules[3].conditions[0].seconds",
            "rules[3].conditions[1].to.hour",
            "rules[3].conditions[1].timeZone",
            "rules[3].action.message"
        ]
    );
}
