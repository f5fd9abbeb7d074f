//! The table of every metric of every report (see the parent module for what
//! each field means). A new metric is one entry here.

use super::*;

pub(super) const AGENT: GroupBy = GroupBy {
    name: "AGENT",
    group_kind: "AGENT",
};
/// The agent again, keyed by e-mail rather than user id: the key of the
/// product's published example, for integrators who read reports by it.
pub(super) const AGENT_EMAIL: GroupBy = GroupBy {
    name: "AGENT_EMAIL",
    group_kind: "AGENT",
};
const TEXT_BLOCK: GroupBy = GroupBy {
    name: "TEXT_BLOCK",
    group_kind: "DIM",
};
const TYPE: GroupBy = GroupBy {
    name: "TYPE",
    group_kind: "DIM",
};
const STATUS: GroupBy = GroupBy {
    name: "STATUS",
    group_kind: "DIM",
};
const REASON: GroupBy = GroupBy {
    name: "REASON",
    group_kind: "DIM",
};
const RULE: GroupBy = GroupBy {
    name: "RULE",
    group_kind: "DIM",
};
const PAGE: GroupBy = GroupBy {
    name: "PAGE",
    group_kind: "DIM",
};

const ONLINE: Source = Source::Presence("ONLINE");
const LOGGED_IN: Source = Source::Presence("LOGGED_IN");
const AWAY: Source = Source::Presence("AWAY");

macro_rules! metric {
    ($report:ident, $name:literal, $measure:expr, $unit:ident, [$($g:ident),*], $doc:literal) => {
        MetricDef {
            report: Report::$report,
            name: $name,
            measure: $measure,
            unit: Unit::$unit,
            group_by: &[$($g),*],
            description: $doc,
        }
    };
}

/// Every metric.
pub static METRICS: &[MetricDef] = &[
    metric!(
        Agent,
        "ONLINE_TIME",
        Measure::Sum(&[ONLINE]),
        Seconds,
        [AGENT, AGENT_EMAIL],
        "Time agents were online."
    ),
    metric!(
        Agent,
        "LOGGED_IN_TIME",
        Measure::Sum(&[LOGGED_IN]),
        Seconds,
        [AGENT, AGENT_EMAIL],
        "Time agents had the dashboard open and signed in."
    ),
    metric!(
        Agent,
        "AWAY_TIME",
        Measure::Sum(&[AWAY]),
        Seconds,
        [AGENT, AGENT_EMAIL],
        "Time agents were set to away."
    ),
    metric!(
        Chat,
        "CONVERSATIONS",
        Measure::Count(&[Source::Fact(CONVERSATION_NEW)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "Conversations started (new customers and reopened conversations); agent = assignee."
    ),
    metric!(
        Chat,
        "CONVERSATIONS_DONE",
        Measure::Count(&[Source::Fact(CONVERSATION_DONE)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "Conversations set to DONE."
    ),
    metric!(
        Chat,
        "STATUS_CHANGES",
        Measure::Count(&[Source::Fact(STATUS_CHANGE)]),
        Count,
        [AGENT, AGENT_EMAIL, STATUS],
        "Status changes; by STATUS, keyed by the new status."
    ),
    metric!(
        Chat,
        "CONVERSATIONS_ANSWERED",
        Measure::Count(&[Source::Fact(FIRST_RESPONSE)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "Conversations that got a first agent reply."
    ),
    metric!(
        Chat,
        "FIRST_RESPONSE_TIME",
        Measure::Average(Source::Fact(FIRST_RESPONSE)),
        Seconds,
        [AGENT, AGENT_EMAIL],
        "Mean time from a conversation's start to the first agent reply."
    ),
    metric!(
        Chat,
        "RESPONSE_TIME",
        Measure::Average(Source::Fact(RESPONSE)),
        Seconds,
        [AGENT, AGENT_EMAIL],
        "Mean time from a customer's waiting message to the agent's reply."
    ),
    metric!(
        Chat,
        "CSAT_RESPONSES",
        Measure::Count(&[Source::Fact(CSAT)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "Ratings visitors gave closed conversations (CSAT); agent = assignee when it was closed."
    ),
    metric!(
        Chat,
        "CSAT_AVERAGE",
        Measure::Average(Source::Fact(CSAT)),
        Rating,
        [AGENT, AGENT_EMAIL],
        "Mean rating (1–5) visitors gave closed conversations; agent = assignee when it was closed."
    ),
    metric!(
        Message,
        "MESSAGES",
        Measure::Count(&[Source::Fact(MESSAGE_IN), Source::Fact(MESSAGE_OUT)]),
        Count,
        [AGENT, AGENT_EMAIL, TYPE],
        "Messages in both directions."
    ),
    metric!(
        Message,
        "MESSAGES_IN",
        Measure::Count(&[Source::Fact(MESSAGE_IN)]),
        Count,
        [AGENT, AGENT_EMAIL, TYPE],
        "Messages from customers; agent = assignee."
    ),
    metric!(
        Message,
        "MESSAGES_OUT",
        Measure::Count(&[Source::Fact(MESSAGE_OUT)]),
        Count,
        [AGENT, AGENT_EMAIL, TYPE],
        "Messages to customers; agent = sender."
    ),
    metric!(
        Message,
        "TEXT_BLOCKS_USED",
        Measure::Count(&[Source::Fact(TEXT_BLOCK_USED)]),
        Count,
        [AGENT, AGENT_EMAIL, TEXT_BLOCK],
        "Messages agents sent from a text block; agent = sender, TEXT_BLOCK = the block's id."
    ),
    metric!(
        Session,
        "SESSIONS",
        Measure::Count(&[Source::Fact(SESSION)]),
        Count,
        [REASON],
        "Recorded sessions that ended."
    ),
    metric!(
        Session,
        "SESSION_DURATION",
        Measure::Sum(&[Source::Fact(SESSION)]),
        Seconds,
        [REASON],
        "Total length of recorded sessions."
    ),
    metric!(
        Session,
        "AVG_SESSION_DURATION",
        Measure::Average(Source::Fact(SESSION)),
        Seconds,
        [REASON],
        "Mean length of recorded sessions."
    ),
    metric!(
        SessionReason,
        "SESSIONS",
        Measure::Count(&[Source::Fact(SESSION)]),
        Count,
        [REASON],
        "Recorded sessions by reason."
    ),
    metric!(
        SessionReason,
        "AVG_SESSION_DURATION",
        Measure::Average(Source::Fact(SESSION)),
        Seconds,
        [REASON],
        "Mean session length by reason."
    ),
    metric!(
        Visit,
        "VISITS",
        Measure::Count(&[Source::Visits]),
        Count,
        [PAGE],
        "Website visits; by PAGE, keyed by entry path."
    ),
    metric!(
        Visit,
        "UNIQUE_VISITORS",
        Measure::DistinctVisitors,
        Count,
        [],
        "Distinct visitors in each bucket."
    ),
    metric!(
        Visit,
        "PAGE_VIEWS",
        Measure::Sum(&[Source::PageViews]),
        Count,
        [PAGE],
        "Pages viewed."
    ),
    metric!(
        Visit,
        "AVG_VISIT_DURATION",
        Measure::Average(Source::Visits),
        Seconds,
        [PAGE],
        "Mean visit length."
    ),
    metric!(
        VisitPages,
        "VISITS",
        Measure::Count(&[Source::Visits]),
        Count,
        [PAGE],
        "Visits by entry path."
    ),
    metric!(
        VisitPages,
        "PAGE_VIEWS",
        Measure::Sum(&[Source::PageViews]),
        Count,
        [PAGE],
        "Pages viewed, by entry path."
    ),
    metric!(
        VisitPages,
        "AVG_VISIT_DURATION",
        Measure::Average(Source::Visits),
        Seconds,
        [PAGE],
        "Mean visit length by entry path."
    ),
    metric!(
        Cobrowse,
        "COBROWSE_SESSIONS",
        Measure::Count(&[Source::Fact(COBROWSE)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "Co-browse sessions; agent = host."
    ),
    metric!(
        Cobrowse,
        "COBROWSE_MINUTES",
        Measure::Sum(&[Source::Fact(COBROWSE)]),
        Minutes,
        [AGENT, AGENT_EMAIL],
        "Co-browse time."
    ),
    metric!(
        Cobrowse,
        "AVG_COBROWSE_DURATION",
        Measure::Average(Source::Fact(COBROWSE)),
        Seconds,
        [AGENT, AGENT_EMAIL],
        "Mean co-browse session length."
    ),
    metric!(
        Cobrowse,
        "COBROWSE_PARTICIPANTS",
        Measure::Sum(&[Source::Fact(COBROWSE_PARTICIPANTS)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "People who joined co-browse sessions."
    ),
    metric!(
        Cobrowse,
        "CONTROL_HANDOVERS",
        Measure::Count(&[Source::Fact(COBROWSE_HANDOVER)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "Times a visitor let the agent click and type."
    ),
    metric!(
        CobrowseUniversal,
        "COBROWSE_SESSIONS",
        Measure::Count(&[Source::Fact(COBROWSE_UNIVERSAL)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "Universal co-browse sessions; agent = host."
    ),
    metric!(
        CobrowseUniversal,
        "COBROWSE_MINUTES",
        Measure::Sum(&[Source::Fact(COBROWSE_UNIVERSAL)]),
        Minutes,
        [AGENT, AGENT_EMAIL],
        "Universal co-browse time."
    ),
    metric!(
        CobrowseUniversal,
        "AVG_COBROWSE_DURATION",
        Measure::Average(Source::Fact(COBROWSE_UNIVERSAL)),
        Seconds,
        [AGENT, AGENT_EMAIL],
        "Mean universal co-browse session length."
    ),
    metric!(
        CobrowseUniversal,
        "COBROWSE_PARTICIPANTS",
        Measure::Sum(&[Source::Fact(COBROWSE_UNIVERSAL_PARTICIPANTS)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "People who joined universal co-browse sessions."
    ),
    metric!(
        CobrowseUniversal,
        "CONTROL_HANDOVERS",
        Measure::Count(&[Source::Fact(COBROWSE_UNIVERSAL_HANDOVER)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "Times the host handed control to a guest or took it back."
    ),
    metric!(
        Conference,
        "CONFERENCES",
        Measure::Count(&[Source::Fact(CONFERENCE)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "Conferences held; agent = host."
    ),
    metric!(
        Conference,
        "CONFERENCE_MINUTES",
        Measure::Sum(&[Source::Fact(CONFERENCE)]),
        Minutes,
        [AGENT, AGENT_EMAIL],
        "Conference time."
    ),
    metric!(
        Conference,
        "AVG_CONFERENCE_DURATION",
        Measure::Average(Source::Fact(CONFERENCE)),
        Seconds,
        [AGENT, AGENT_EMAIL],
        "Mean conference length."
    ),
    metric!(
        Conference,
        "CONFERENCE_PARTICIPANTS",
        Measure::Sum(&[Source::Fact(CONFERENCE_PARTICIPANTS)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "People who joined conferences."
    ),
    metric!(
        Conference,
        "CONFERENCE_RECORDINGS",
        Measure::Count(&[Source::Fact(CONFERENCE_RECORDING)]),
        Count,
        [AGENT, AGENT_EMAIL],
        "Recordings stored (one per participant and camera or screen)."
    ),
    metric!(
        Conference,
        "CONFERENCE_RECORDED_MINUTES",
        Measure::Sum(&[Source::Fact(CONFERENCE_RECORDING)]),
        Minutes,
        [AGENT, AGENT_EMAIL],
        "Time recorded, summed over recordings."
    ),
    metric!(
        Rule,
        "ROUTING_RULE_MATCH_COUNT",
        Measure::Count(&[Source::Fact(ROUTING_RULE_MATCH)]),
        Count,
        [RULE],
        "Routing rule matches."
    ),
    metric!(
        Rule,
        "ACTION_RULE_MATCH_COUNT",
        Measure::Count(&[Source::Fact(ACTION_RULE_MATCH)]),
        Count,
        [RULE],
        "Action rule matches."
    ),
    metric!(
        Rule,
        "SLA_1_RULE_MATCH_COUNT",
        Measure::Count(&[Source::Fact(SLA_1_MATCH)]),
        Count,
        [RULE],
        "SLA first-response measurements started."
    ),
    metric!(
        Rule,
        "SLA_2_RULE_MATCH_COUNT",
        Measure::Count(&[Source::Fact(SLA_2_MATCH)]),
        Count,
        [RULE],
        "SLA second-response measurements started."
    ),
    metric!(
        Rule,
        "SLA_1_RULE_MISS_COUNT",
        Measure::Count(&[Source::Fact(SLA_1_MISS)]),
        Count,
        [RULE],
        "SLA first-response targets missed."
    ),
    metric!(
        Rule,
        "SLA_2_RULE_MISS_COUNT",
        Measure::Count(&[Source::Fact(SLA_2_MISS)]),
        Count,
        [RULE],
        "SLA second-response targets missed."
    ),
    metric!(
        Rule,
        "SLA_HIT_RATE",
        Measure::HitRate {
            matched: &[Source::Fact(SLA_1_MATCH), Source::Fact(SLA_2_MATCH)],
            missed: &[Source::Fact(SLA_1_MISS), Source::Fact(SLA_2_MISS)]
        },
        Percent,
        [RULE],
        "Share of SLA measurements that met their target."
    ),
];
