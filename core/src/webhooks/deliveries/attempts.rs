//! Recording what came of attempts: done, a retry, failed, or a disabled endpoint.

use super::{circuit::CircuitRow, *};
use crate::ids::{TenantId, WebhookId};

/// Attempts written per `insert` (10 parameters each, well within both backends'
/// limits).
pub const ATTEMPT_ROWS: usize = 200;

/// `($1, …, $cols), ($cols+1, …), …` for a multi-row `insert` of `rows` rows.
fn value_rows(rows: usize, cols: usize) -> String {
    (0..rows)
        .map(|row| format!("({})", placeholders(row * cols + 1, cols)))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Services {
    /// Records finished attempts in one short transaction and decides what follows
    /// each: done, a retry (per `policy` and `Retry-After`), failed, or a disabled
    /// endpoint; and moves each endpoint's circuit. The log rows go in with one
    /// statement per [`ATTEMPT_ROWS`], successes with one per status code; only
    /// failures (which the circuits keep few) take a statement each. Returns the ids
    /// of endpoints disabled now.
    pub async fn record_attempts(&self, results: &[AttemptResult], policy: &RetryPolicy) -> CoreResult<Vec<WebhookId>> {
        if results.is_empty() {
            return Ok(vec![]);
        }
        let now = now_ms();
        let backend = self.db().backend();
        let mut disabled = Vec::new();
        let mut tx = self.db().begin().await?;
        for chunk in results.chunks(ATTEMPT_ROWS) {
            let sql = format!(
                "insert into webhook_attempts (id, delivery_id, endpoint_id, tenant_id, attempt, started_at, \
                 duration_ms, status_code, error, response_excerpt) values {}",
                value_rows(chunk.len(), 10)
            );
            with_tx!(&mut tx, |conn| {
                let mut q = sqlx::query(&sql);
                for r in chunk {
                    q = q
                        .bind(uuid::Uuid::now_v7().to_string())
                        .bind(&r.delivery_id)
                        .bind(&r.endpoint_id)
                        .bind(&r.tenant_id)
                        .bind(r.attempt)
                        .bind(r.started_at)
                        .bind(r.duration_ms)
                        .bind(r.status_code.map(i64::from))
                        .bind(&r.error)
                        .bind(&r.response_excerpt);
                }
                q.execute(conn).await.map(|r| r.rows_affected())
            })?;
        }
        // Successes, one statement per status code.
        let mut succeeded: BTreeMap<Option<u16>, Vec<i64>> = BTreeMap::new();
        for r in results.iter().filter(|r| r.outcome == Outcome::Delivered) {
            succeeded.entry(r.status_code).or_default().push(r.seq);
        }
        for (status, seqs) in &succeeded {
            for seqs in seqs.chunks(ATTEMPT_ROWS) {
                let sql = format!(
                    "update webhook_deliveries set state = 'succeeded', completed_at = $1, last_status = $2, \
                     last_error = null, lease_until = null where seq in ({})",
                    placeholders(3, seqs.len())
                );
                with_tx!(&mut tx, |conn| {
                    let mut q = sqlx::query(&sql).bind(now).bind(status.map(i64::from));
                    for seq in seqs {
                        q = q.bind(*seq);
                    }
                    q.execute(conn).await.map(|r| r.rows_affected())
                })?;
            }
        }
        for r in results {
            let status = r.status_code.map(i64::from);
            match &r.outcome {
                Outcome::Delivered => {}
                Outcome::Failed { retry_after } => {
                    let next = policy
                        .schedule
                        .after(r.attempt)
                        .map(|wait| now + duration_ms(wait.max(policy.asked(*retry_after))));
                    with_tx!(&mut tx, |conn| sqlx::query(
                        "update webhook_deliveries set state = $2, next_attempt_at = coalesce($3, next_attempt_at), \
                         completed_at = $4, last_status = $5, last_error = $6, lease_until = null where seq = $1"
                    )
                    .bind(r.seq)
                    .bind(if next.is_some() { "pending" } else { "failed" })
                    .bind(next)
                    .bind(if next.is_some() { None } else { Some(now) })
                    .bind(status)
                    .bind(&r.error)
                    .execute(conn)
                    .await
                    .map(|r| r.rows_affected()))?;
                }
                Outcome::Gone => {
                    with_tx!(&mut tx, |conn| sqlx::query(
                        "update webhook_deliveries set state = 'failed', completed_at = $2, last_status = $3, \
                         last_error = 'the endpoint answered 410 Gone', lease_until = null where seq = $1"
                    )
                    .bind(r.seq)
                    .bind(now)
                    .bind(status)
                    .execute(conn)
                    .await
                    .map(|r| r.rows_affected()))?;
                    if disable_endpoint(
                        &mut tx,
                        backend,
                        &r.tenant_id,
                        &r.endpoint_id,
                        "the endpoint answered 410 Gone",
                    )
                    .await?
                    {
                        disabled.push(r.endpoint_id.clone());
                    }
                }
            }
        }
        // Each endpoint's circuit, moved by its attempts in the order they ended.
        let mut endpoints: Vec<&str> = results.iter().map(|r| r.endpoint_id.as_str()).collect();
        endpoints.sort_unstable();
        endpoints.dedup();
        let sql = format!(
            "select id, tenant_id, failures, next_attempt_at, last_failure_at, failing_since from webhook_endpoints \
             where id in ({})",
            placeholders(1, endpoints.len())
        );
        let rows: Vec<CircuitRow> = with_tx!(&mut tx, |conn| {
            let mut q = sqlx::query_as(&sql);
            for id in &endpoints {
                q = q.bind(*id);
            }
            q.fetch_all(conn).await
        })?;
        for row in rows {
            let before = row.circuit();
            let mut circuit = before;
            let mut failed = false;
            for r in results.iter().filter(|r| r.endpoint_id == row.id) {
                circuit.record(r.started_at, &r.outcome, policy, now);
                failed |= matches!(r.outcome, Outcome::Failed { .. });
            }
            if circuit != before {
                with_tx!(&mut tx, |conn| sqlx::query(
                    "update webhook_endpoints set failures = $2, next_attempt_at = $3, last_failure_at = $4, \
                     failing_since = $5 where id = $1"
                )
                .bind(&row.id)
                .bind(circuit.failures)
                .bind(circuit.next_attempt_at)
                .bind(circuit.last_failure_at)
                .bind(circuit.failing_since)
                .execute(conn)
                .await
                .map(|r| r.rows_affected()))?;
            }
            if failed && circuit.failing_for(now) >= duration_ms(policy.disable_after) {
                let reason = format!(
                    "every delivery failed for {} s; enable it again once the receiver works",
                    policy.disable_after.as_secs()
                );
                if disable_endpoint(&mut tx, backend, &row.tenant_id, &row.id, &reason).await? {
                    disabled.push(row.id.clone());
                }
            }
        }
        tx.commit().await?;
        Ok(disabled)
    }
}

/// Disables an endpoint (once) and audits it as Rapport's own act. An endpoint
/// behind in the event stream opens a gap there (see [`super::catch_up`]).
async fn disable_endpoint(
    tx: &mut crate::db::Tx,
    backend: Backend,
    tenant_id: &TenantId,
    endpoint_id: &WebhookId,
    reason: &str,
) -> CoreResult<bool> {
    super::open_gap(tx, backend, tenant_id, endpoint_id).await?;
    let sql = "update webhook_endpoints set enabled = false, disabled_reason = $2, updated_at = $3 \
               where id = $1 and tenant_id = $4 and enabled";
    let changed = with_tx!(tx, |conn| {
        sqlx::query(sql)
            .bind(endpoint_id)
            .bind(reason)
            .bind(now_ms())
            .bind(tenant_id)
            .execute(conn)
            .await
            .map(|r| r.rows_affected())
    })?;
    if changed > 0 {
        audit::record(
            tx,
            Some(tenant_id),
            &Actor::system("webhooks"),
            "webhook.disable",
            "webhook",
            Some(endpoint_id),
        )
        .await?;
    }
    Ok(changed > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_row_values() {
        assert_eq!(value_rows(2, 3), "($1, $2, $3), ($4, $5, $6)");
    }
}
