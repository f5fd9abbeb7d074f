//! Action rules as the visitor script evaluates them: each condition turned
//! into a test the browser can make alone (opening hours and time windows as
//! the UTC intervals they are open in), and each flow into its messages.

use chrono::{DateTime, Datelike, Duration, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use super::{ActionCondition, ActionRule, ActionTrigger, ChatAction};
use crate::{
    config::{
        flows::{Flow, FlowMessage},
        opening_hours::{schedule::days_of, schedule::Schedule, OpeningHours, TimeOfDay, Weekday},
        rules::TagMatch,
    },
    error::{CoreError, CoreResult},
    ids::TenantId,
    Services,
};

/// How long the visitor script may keep compiled rules before it asks again.
pub const COMPILED_MAX_AGE_SECONDS: u32 = 300;
/// How far ahead opening hours and time windows are compiled: well past the
/// longest a script keeps its copy.
const COMPILED_DAYS: i64 = 8;

/// What the visitor script evaluates: the tenant's active action rules.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompiledRules {
    /// How long the script may keep this before it asks again, seconds.
    pub max_age_seconds: u32,
    /// The rules, in the order to evaluate them.
    pub rules: Vec<CompiledRule>,
}

/// One action rule as the visitor script evaluates it.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CompiledRule {
    /// The rule's id, reported with each match.
    pub id: String,
    /// When it runs.
    pub trigger: ActionTrigger,
    /// Conditions, all of which must hold.
    pub conditions: Vec<CompiledCondition>,
    /// What it does.
    pub action: CompiledAction,
}

/// A condition as the script tests it.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CompiledCondition {
    /// What it tests.
    #[serde(flatten)]
    pub test: CompiledTest,
    /// True: the condition holds when the test does not.
    pub negate: bool,
}

/// A test the script can make itself. Opening hours and time windows arrive as
/// the UTC intervals they are open in over the next days.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type")]
pub enum CompiledTest {
    /// At least one agent is online (`GET /widget/config`'s `agents.online`).
    #[serde(rename = "AGENT_ONLINE")]
    AgentOnline {},
    /// No agent is online.
    #[serde(rename = "AGENTS_OFFLINE")]
    AgentsOffline {},
    /// No agent is available (`agents.available` is false).
    #[serde(rename = "AGENTS_BUSY")]
    AgentsBusy {},
    /// On the page for `seconds`.
    #[serde(rename = "TIME_ON_PAGE")]
    TimeOnPage {
        /// Seconds.
        seconds: i64,
    },
    /// The page was opened before.
    #[serde(rename = "REVISIT")]
    Revisit {},
    /// The visitor sent a message on this page.
    #[serde(rename = "SENDS_MESSAGE")]
    SendsMessage {},
    /// Now is inside one of `intervals`.
    #[serde(rename = "TIME")]
    Time {
        /// `[start, end)` pairs, unix ms.
        intervals: Vec<[i64; 2]>,
    },
    /// The address matches a pattern.
    #[serde(rename = "URL")]
    Url {
        /// Patterns; `*` matches any run of characters.
        urls: Vec<String>,
    },
    /// The visitor has the tags.
    #[serde(rename = "HAS_TAG")]
    HasTag {
        /// Tags.
        tags: Vec<String>,
        /// `ANY` or `ALL`.
        #[serde(rename = "match")]
        mode: TagMatch,
    },
    /// The page fired the event.
    #[serde(rename = "JS_EVENT")]
    JsEvent {
        /// Its name.
        name: String,
    },
}

/// An action as the script takes it.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type")]
pub enum CompiledAction {
    /// Show the chat button.
    #[serde(rename = "SHOW_BUTTON")]
    ShowButton {},
    /// Hide the chat button.
    #[serde(rename = "HIDE_BUTTON")]
    HideButton {},
    /// Open the chat with `message` or the flow's `messages`.
    #[serde(rename = "OPEN_CHAT")]
    OpenChat {
        /// The text, for a text rule.
        message: Option<String>,
        /// The flow's messages, for a flow rule.
        messages: Option<Vec<FlowMessage>>,
    },
    /// Open the chat on the offline form.
    #[serde(rename = "SHOW_OFFLINE_FORM")]
    ShowOfflineForm {},
    /// Open the chat offering a video call.
    #[serde(rename = "OFFER_CALL")]
    OfferCall {
        /// The offer's text, if the rule has one.
        message: Option<String>,
    },
}

/// The `[start, end)` UTC intervals, from `now` to `until`, in which a daily
/// window from `from` to `to` in `zone` is open on `days` (none: every day).
/// A window whose `to` is not after `from` runs into the next day; a local
/// time that a clock change skips starts or ends the window at the next
/// minute that exists.
pub fn window_intervals(
    days: &[Weekday],
    from: TimeOfDay,
    to: TimeOfDay,
    zone: Tz,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Vec<[i64; 2]> {
    let on_day = |weekday: usize| days.is_empty() || days.iter().any(|d| days_of(*d).contains(&weekday));
    let time = |t: TimeOfDay| NaiveTime::from_hms_opt(t.hour as u32, t.minute as u32, 0).unwrap_or_default();
    let local = |date: chrono::NaiveDate, t: NaiveTime| {
        let mut at = date.and_time(t);
        // A skipped local time (spring forward): the first minute after it.
        for _ in 0..180 {
            if let Some(instant) = zone.from_local_datetime(&at).earliest() {
                return instant.with_timezone(&Utc);
            }
            at += Duration::minutes(1);
        }
        at.and_utc()
    };
    let mut out: Vec<[i64; 2]> = Vec::new();
    // From the day before today (a window past midnight may still be open).
    let mut date = now.with_timezone(&zone).date_naive() - Duration::days(1);
    let last = until.with_timezone(&zone).date_naive();
    while date <= last {
        if on_day(date.weekday().num_days_from_monday() as usize) {
            let start = local(date, time(from));
            let end_date = if to <= from { date + Duration::days(1) } else { date };
            let end = local(end_date, time(to));
            if end > now && start < until && start < end {
                let interval = [start.timestamp_millis(), end.timestamp_millis()];
                // Windows that touch (a window of nearly a day, every day)
                // join into one.
                match out.last_mut() {
                    Some(previous) if previous[1] >= interval[0] => previous[1] = previous[1].max(interval[1]),
                    _ => out.push(interval),
                }
            }
        }
        date += Duration::days(1);
    }
    out
}

/// The `[start, end)` UTC intervals, from `now` to `until`, in which `schedule`
/// is open.
pub fn schedule_intervals(schedule: &Schedule, now: DateTime<Utc>, until: DateTime<Utc>) -> Vec<[i64; 2]> {
    let mut out = Vec::new();
    let mut at = now;
    let mut open = schedule.is_open(at);
    // Each step moves to the next change; a week of opening hours has a few
    // dozen, and the bound only guards against a schedule that never settles.
    for _ in 0..1000 {
        if at >= until {
            break;
        }
        let next = schedule.next_change(at).filter(|n| *n > at).unwrap_or(until).min(until);
        if open {
            out.push([at.timestamp_millis(), next.timestamp_millis()]);
        }
        at = next;
        open = schedule.is_open(at);
    }
    out
}

impl Services {
    /// The tenant's active action rules as the visitor script evaluates them,
    /// at `now`.
    pub async fn compiled_action_rules(&self, tenant_id: &TenantId, now: DateTime<Utc>) -> CoreResult<CompiledRules> {
        let rules: Vec<ActionRule> = self
            .config_all::<ActionRule>(tenant_id)
            .await?
            .into_iter()
            .filter(|r| r.active != Some(false))
            .collect();
        let until = now + Duration::days(COMPILED_DAYS);
        let mut zone: Option<Tz> = None;
        let mut compiled = Vec::with_capacity(rules.len());
        for rule in rules {
            let (Some(id), Some(trigger), Some(action)) = (rule.meta.id, rule.trigger, rule.action) else {
                continue;
            };
            let mut conditions = Vec::with_capacity(rule.conditions.len());
            for c in rule.conditions {
                let test = match c.test {
                    ActionCondition::AgentOnline {} => CompiledTest::AgentOnline {},
                    ActionCondition::AgentsOffline {} => CompiledTest::AgentsOffline {},
                    ActionCondition::AgentsBusy {} => CompiledTest::AgentsBusy {},
                    ActionCondition::TimeOnPage { seconds } => CompiledTest::TimeOnPage { seconds },
                    ActionCondition::Revisit {} => CompiledTest::Revisit {},
                    ActionCondition::SendsMessage {} => CompiledTest::SendsMessage {},
                    ActionCondition::TimeWindow {
                        days,
                        from,
                        to,
                        time_zone,
                    } => {
                        let tz = match time_zone.and_then(|z| z.parse::<Tz>().ok()) {
                            Some(tz) => tz,
                            None => match zone {
                                Some(tz) => tz,
                                None => {
                                    let tz = self.tenant_zone(tenant_id).await?;
                                    zone = Some(tz);
                                    tz
                                }
                            },
                        };
                        CompiledTest::Time {
                            intervals: window_intervals(&days, from, to, tz, now, until),
                        }
                    }
                    ActionCondition::OpeningHours { opening_hours_id } => {
                        // Hours deleted since (a rule keeps them from being
                        // deleted, so only by a race) are never open.
                        let intervals = match self.config_get::<OpeningHours>(tenant_id, &opening_hours_id).await {
                            Ok(hours) => schedule_intervals(&Schedule::new(&hours), now, until),
                            Err(CoreError::NotFound(_)) => Vec::new(),
                            Err(e) => return Err(e),
                        };
                        CompiledTest::Time { intervals }
                    }
                    ActionCondition::Url { urls } => CompiledTest::Url { urls },
                    ActionCondition::HasTag { tags, mode } => CompiledTest::HasTag { tags, mode },
                    ActionCondition::JsEvent { name } => CompiledTest::JsEvent { name },
                };
                conditions.push(CompiledCondition { test, negate: c.negate });
            }
            let action = match action {
                ChatAction::ShowButton {} => CompiledAction::ShowButton {},
                ChatAction::HideButton {} => CompiledAction::HideButton {},
                ChatAction::ShowOfflineForm {} => CompiledAction::ShowOfflineForm {},
                ChatAction::OfferCall { message } => CompiledAction::OfferCall { message },
                ChatAction::OpenChat { message, flow_id } => {
                    let messages = match flow_id {
                        Some(flow_id) => match self.config_get::<Flow>(tenant_id, &flow_id).await {
                            Ok(flow) => Some(flow.messages),
                            // A flow deleted since: the rule has nothing to say.
                            Err(CoreError::NotFound(_)) => continue,
                            Err(e) => return Err(e),
                        },
                        None => None,
                    };
                    CompiledAction::OpenChat { message, messages }
                }
            };
            compiled.push(CompiledRule {
                id,
                trigger,
                conditions,
                action,
            });
        }
        Ok(CompiledRules {
            max_age_seconds: COMPILED_MAX_AGE_SECONDS,
            rules: compiled,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(hour: i32, minute: i32) -> TimeOfDay {
        TimeOfDay { hour, minute }
    }

    fn utc(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn a_window_is_open_on_its_days_in_its_zone() {
        // Friday 2026-11-27 06:00 UTC is 07:00 in Berlin.
        let now = utc("2026-11-27T06:00:00Z");
        let zone: Tz = "Europe/Berlin".parse().unwrap();
        let got = window_intervals(
            &[Weekday::Friday, Weekday::Monday],
            t(9, 0),
            t(17, 0),
            zone,
            now,
            now + Duration::days(4),
        );
        assert_eq!(
            got,
            [
                [
                    utc("2026-11-27T08:00:00Z").timestamp_millis(),
                    utc("2026-11-27T16:00:00Z").timestamp_millis()
                ],
                [
                    utc("2026-11-30T08:00:00Z").timestamp_millis(),
                    utc("2026-11-30T16:00:00Z").timestamp_millis()
                ],
            ]
        );
    }

    #[test]
    fn a_window_past_midnight_ends_the_next_day_and_yesterdays_may_still_be_open() {
        let now = utc("2026-11-27T01:00:00Z");
        let got = window_intervals(&[], t(22, 0), t(2, 0), Tz::UTC, now, now + Duration::hours(23));
        assert_eq!(
            got,
            [
                [
                    utc("2026-11-26T22:00:00Z").timestamp_millis(),
                    utc("2026-11-27T02:00:00Z").timestamp_millis()
                ],
                [
                    utc("2026-11-27T22:00:00Z").timestamp_millis(),
                    utc("2026-11-28T02:00:00Z").timestamp_millis()
                ],
            ]
        );
    }

    #[test]
    fn a_window_across_a_clock_change_keeps_local_times() {
        // Berlin moves from CEST to CET on 2026-10-25: 09:00 local is 07:00
        // UTC the day before and 08:00 UTC the day after.
        let zone: Tz = "Europe/Berlin".parse().unwrap();
        let now = utc("2026-10-24T00:00:00Z");
        let got = window_intervals(&[], t(9, 0), t(10, 0), zone, now, now + Duration::days(3));
        assert_eq!(got[0][0], utc("2026-10-24T07:00:00Z").timestamp_millis());
        assert_eq!(got[2][0], utc("2026-10-26T08:00:00Z").timestamp_millis());
    }

    #[test]
    fn schedule_intervals_follow_opening_and_closing() {
        let now = utc("2026-11-27T06:00:00Z");
        let always = schedule_intervals(&Schedule::always(), now, now + Duration::days(1));
        assert_eq!(
            always,
            [[now.timestamp_millis(), (now + Duration::days(1)).timestamp_millis()]]
        );
    }
}
