//! Unit tests of the watchdogs: windows on the clock, which audit actions are settings, and summaries.

use super::*;

#[test]
fn windows_are_aligned_to_the_clock() {
    let five = 300_000;
    assert_eq!(window_start(1_000_000_123, five), 999_900_000);
    assert_eq!(window_start(999_900_000, five), 999_900_000);
    assert_eq!(window_start(999_899_999, five), 999_600_000);
}

#[test]
fn settings_are_everything_but_conversations_and_their_like() {
    for action in [
        "user.update",
        "user.password",
        "team.delete",
        "watchdog.create",
        "routingrule.update",
        "openinghours.delete",
        "webhook.update",
        "webhook.rotate_secret",
        "apikey.revoke",
        "tenant.update",
        "widget.rotate_key",
        "alertsecret.rotate",
        "flow.create",
    ] {
        assert!(is_setting_action(action), "{action}");
    }
    for action in [
        "customer.assign",
        "customer.tags",
        "conversation.status",
        "message.send",
        "appointment.create",
        "session.record",
        "liveview.open",
        "cobrowse.create",
        "notification.read",
        "form.submit",
        "webhook.test",
        "webhook.replay",
    ] {
        assert!(!is_setting_action(action), "{action}");
    }
}

#[test]
fn long_summaries_are_cut() {
    assert_eq!(cut("abc", 5), "abc");
    assert_eq!(cut("abcdef", 3), "abc…");
}
