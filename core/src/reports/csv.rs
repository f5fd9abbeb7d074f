//! Every report as CSV, for spreadsheets. Cells that a spreadsheet would run as a
//! formula (starting with `=`, `+`, `-`, `@`, tab or carriage return) are prefixed
//! with `'`, unless they are plain numbers; quoting is the `csv` crate's.

use super::api::{AgentConversationReport, AgentTimes, AggregationResponse, ResourceReport, ScriptErrorReport};

/// A cell made safe against formula injection (OWASP "CSV injection").
pub fn safe_cell(value: &str) -> String {
    let risky = value.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && value.parse::<f64>().is_err() {
        format!("'{value}")
    } else {
        value.to_string()
    }
}

fn write(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = writer.write_record(header);
    for row in rows {
        let _ = writer.write_record(row.iter().map(|c| safe_cell(c)));
    }
    String::from_utf8(writer.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// `bucket,key,value`, one line per cell.
pub fn aggregation(report: &AggregationResponse) -> String {
    write(
        &["bucket", "key", "value"],
        report.results.iter().flat_map(|(bucket, cells)| {
            cells
                .iter()
                .map(move |(key, value)| vec![bucket.clone(), key.clone(), value.clone()])
        }),
    )
}

/// `bucket,agent,metric,value`.
pub fn agent_conversations(report: &AgentConversationReport) -> String {
    write(
        &["bucket", "agent", "metric", "value"],
        report.results.iter().flat_map(|(bucket, agents)| {
            agents.iter().flat_map(move |(agent, metrics)| {
                metrics
                    .iter()
                    .map(move |(m, v)| vec![bucket.clone(), agent.clone(), m.clone(), v.clone()])
            })
        }),
    )
}

/// `userId,start,end,minutes`, one line per interval.
pub fn agent_times(times: &[AgentTimes]) -> String {
    write(
        &["userId", "start", "end", "minutes"],
        times.iter().flat_map(|t| {
            t.time_ranges.iter().map(move |r| {
                vec![
                    t.user_id.to_string(),
                    r.start.to_rfc3339(),
                    r.end.to_rfc3339(),
                    ((r.end - r.start).num_seconds() / 60).to_string(),
                ]
            })
        }),
    )
}

/// One line per resource row.
pub fn resources(report: &ResourceReport) -> String {
    write(
        &[
            "group",
            "resourceName",
            "type",
            "count",
            "avgDurationMs",
            "maxDurationMs",
            "avgTransferBytes",
            "errorCount",
        ],
        report.rows.iter().map(|r| {
            vec![
                r.group.clone().unwrap_or_default(),
                r.resource_name.clone(),
                r.kind.clone(),
                r.count.to_string(),
                r.avg_duration_ms.to_string(),
                r.max_duration_ms.to_string(),
                r.avg_transfer_bytes.map(|b| b.to_string()).unwrap_or_default(),
                r.error_count.to_string(),
            ]
        }),
    )
}

/// One line per distinct error.
pub fn script_errors(report: &ScriptErrorReport) -> String {
    write(
        &[
            "message",
            "fileName",
            "line",
            "count",
            "visitors",
            "firstSeen",
            "lastSeen",
            "stack",
        ],
        report.errors.iter().map(|e| {
            vec![
                e.message.clone(),
                e.file_name.clone().unwrap_or_default(),
                e.line.map(|l| l.to_string()).unwrap_or_default(),
                e.count.to_string(),
                e.visitors.to_string(),
                e.first_seen.to_rfc3339(),
                e.last_seen.to_rfc3339(),
                e.stack.clone().unwrap_or_default(),
            ]
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_neutralised_numbers_are_not() {
        assert_eq!(safe_cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(safe_cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(safe_cell("+1+2"), "'+1+2");
        assert_eq!(safe_cell("-5"), "-5");
        assert_eq!(safe_cell("12.5"), "12.5");
        assert_eq!(safe_cell("/checkout"), "/checkout");
        let report = AggregationResponse {
            results: [(
                "2026/11/21".to_string(),
                [("=cmd|' /C calc'!A0".to_string(), "3".to_string())].into(),
            )]
            .into(),
        };
        assert_eq!(
            aggregation(&report),
            "bucket,key,value\n2026/11/21,'=cmd|' /C calc'!A0,3\n"
        );
    }
}
