//! A realistic history for a tenant (`rapport admin demo-data`), so a newcomer sees
//! living dashboards and the benchmark has data.
//!
//! Every fact goes through the same recording functions as live traffic (in large
//! transactions), so rollups and raw facts agree exactly as they do in production.
//! The generator is seeded: the same options give the same history.

use chrono::{Datelike, Days, NaiveTime, TimeZone, Weekday};
use rand::{rngs::StdRng, Rng, SeedableRng};

use super::{
    catalogue::*,
    facts::{record, Fact},
    ingest::{store_visit, VisitIn},
    presence::insert_closed,
};
use crate::{
    audit::Actor,
    db::Tx,
    error::{CoreError, CoreResult},
    ids::{TenantId, UserId},
    time::now_ms,
    users::UserIn,
    with_db, Services,
};

/// What to generate.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Days of history, ending now.
    pub days: u32,
    /// Agents (created as `agent<n>@demo.rapport.invalid` when missing).
    pub agents: u32,
    /// Traffic multiplier: 1.0 is a small team's day (about 470 facts per agent-day).
    pub scale: f64,
    /// Random seed.
    pub seed: u64,
}

/// What was generated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DemoSummary {
    /// Facts written (presence intervals, report facts, visits, resources, errors).
    pub facts: u64,
    /// Agents used.
    pub agents: usize,
}

/// Facts per transaction.
const BATCH: u64 = 20_000;
const MINUTE: i64 = 60_000;
const REASONS: [&str; 5] = ["CHAT", "COBROWSE", "ERROR", "RULE", "MANUAL"];
const MESSAGE_TYPES: [&str; 5] = ["MESSAGE", "MESSAGE", "MESSAGE", "FILE", "AUDIO"];
const PAGES: [&str; 8] = [
    "/",
    "/pricing",
    "/checkout",
    "/docs",
    "/blog/launch",
    "/support",
    "/account",
    "/contact",
];
const RESOURCES: [(&str, &str); 8] = [
    ("app.js", "script"),
    ("vendor.js", "script"),
    ("style.css", "css"),
    ("logo.svg", "img"),
    ("hero.jpg", "img"),
    ("inter.woff2", "font"),
    ("api/cart", "fetch"),
    ("analytics.js", "script"),
];
/// Script errors as browsers report them: each error comes from one place in
/// one file, so it keeps its line and column.
const ERRORS: [(&str, &str, i32, i32); 6] = [
    (
        "TypeError: cannot read properties of undefined (reading 'price')",
        "app.js",
        412,
        31,
    ),
    ("ReferenceError: gtag is not defined", "analytics.js", 1, 1),
    ("NetworkError when attempting to fetch resource.", "app.js", 1288, 9),
    ("SyntaxError: Unexpected token '<'", "vendor.js", 1, 1),
    ("TypeError: Failed to fetch", "app.js", 1302, 17),
    (
        "ResizeObserver loop completed with undelivered notifications.",
        "vendor.js",
        2210,
        44,
    ),
];

struct Writer<'a> {
    services: &'a Services,
    tenant_id: &'a TenantId,
    zone: chrono_tz::Tz,
    tx: Option<Tx>,
    written: u64,
    pending: u64,
}

impl Writer<'_> {
    async fn tx(&mut self) -> CoreResult<&mut Tx> {
        if self.tx.is_none() {
            self.tx = Some(self.services.db().begin().await?);
        }
        Ok(self.tx.as_mut().expect("just opened"))
    }

    async fn counted(&mut self, n: u64) -> CoreResult<()> {
        self.written += n;
        self.pending += n;
        if self.pending >= BATCH {
            self.flush().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> CoreResult<()> {
        if let Some(tx) = self.tx.take() {
            tx.commit().await?;
        }
        self.pending = 0;
        Ok(())
    }

    async fn fact(&mut self, fact: Fact<'_>) -> CoreResult<()> {
        let tenant_id = self.tenant_id;
        record(self.tx().await?, tenant_id, &fact).await?;
        self.counted(1).await
    }

    async fn interval(&mut self, user: &UserId, state: &str, start: i64, end: i64) -> CoreResult<()> {
        let tenant_id = self.tenant_id;
        insert_closed(self.tx().await?, tenant_id, user, state, start, end).await?;
        self.counted(1).await
    }
}

impl Services {
    /// Fills a tenant with `options.days` of history for `options.agents` agents.
    pub async fn generate_demo_data(&self, tenant_id: &TenantId, options: &DemoOptions) -> CoreResult<DemoSummary> {
        if options.days == 0 || options.days > 3660 || options.agents == 0 || options.agents > 1000 {
            return Err(CoreError::invalid(
                "days",
                "out_of_range",
                "days 1–3660 and agents 1–1000",
            ));
        }
        if !(options.scale > 0.0 && options.scale <= 1000.0) {
            return Err(CoreError::invalid(
                "scale",
                "out_of_range",
                "scale must be in (0, 1000]",
            ));
        }
        let tenant = self.get_tenant(tenant_id).await?;
        let tz: chrono_tz::Tz = tenant.timezone.parse().unwrap_or(chrono_tz::UTC);
        let agents = self.demo_agents(tenant_id, options.agents).await?;
        let rules = self.demo_rule_ids(tenant_id).await?;
        let mut rng = StdRng::seed_from_u64(options.seed);
        let now = now_ms();
        let today = tz.timestamp_millis_opt(now).single().expect("now").date_naive();
        let mut w = Writer {
            services: self,
            tenant_id,
            zone: tz,
            tx: None,
            written: 0,
            pending: 0,
        };
        let per = |base: f64, rng: &mut StdRng| -> u32 {
            let mean = base * options.scale;
            // Poisson-like spread around the mean, never negative.
            (mean * rng.gen_range(0.6..1.4)).round().max(0.0) as u32
        };
        for day_back in (0..options.days).rev() {
            let date = today - Days::new(u64::from(day_back));
            let weekend = matches!(date.weekday(), Weekday::Sat | Weekday::Sun);
            let at_local = |h: u32, m: u32| {
                let t = date.and_time(NaiveTime::from_hms_opt(h, m, 0).expect("valid"));
                tz.from_local_datetime(&t).earliest().map(|d| d.timestamp_millis())
            };
            for (i, agent) in agents.iter().enumerate() {
                // Most agents work weekdays; a few cover weekends.
                if weekend && i % 5 != 0 {
                    continue;
                }
                let Some(shift_start) = at_local(7 + (i as u32 % 4), rng.gen_range(0..50)) else {
                    continue;
                };
                let shift_end = shift_start + 8 * 60 * MINUTE + rng.gen_range(0..40) * MINUTE;
                if shift_start >= now {
                    continue;
                }
                let shift_end = shift_end.min(now);
                w.interval(agent, "LOGGED_IN", shift_start - 5 * MINUTE, shift_end)
                    .await?;
                // Two breaks: mid-morning and lunch.
                let break1 = shift_start + rng.gen_range(100..160) * MINUTE;
                let break2 = shift_start + rng.gen_range(230..280) * MINUTE;
                let mut t = shift_start;
                for (b, len) in [(break1, rng.gen_range(10..20)), (break2, rng.gen_range(30..50))] {
                    let b_end = (b + len * MINUTE).min(shift_end);
                    if b >= shift_end {
                        break;
                    }
                    w.interval(agent, "ONLINE", t, b).await?;
                    w.interval(agent, "AWAY", b, b_end).await?;
                    t = b_end;
                }
                if t < shift_end {
                    w.interval(agent, "ONLINE", t, shift_end).await?;
                }
                let span = (shift_end - shift_start).max(MINUTE);
                for _ in 0..per(12.0, &mut rng) {
                    let start = shift_start + rng.gen_range(0..span);
                    self.demo_conversation(&mut w, &mut rng, agent, start, &rules, now)
                        .await?;
                }
                for (kind, people) in [
                    (COBROWSE, COBROWSE_PARTICIPANTS),
                    (COBROWSE_UNIVERSAL, COBROWSE_UNIVERSAL_PARTICIPANTS),
                    (CONFERENCE, CONFERENCE_PARTICIPANTS),
                ] {
                    if rng.gen_bool((0.3 * options.scale).min(1.0)) {
                        let start = shift_start + rng.gen_range(0..span);
                        let length = rng.gen_range(3..60) * MINUTE;
                        if start + length > now {
                            continue;
                        }
                        let id = uuid::Uuid::now_v7().to_string();
                        let tags = vec![if rng.gen_bool(0.5) { "vip" } else { "trial" }.to_string()];
                        let base = Fact {
                            kind,
                            at: start,
                            value: length,
                            agent: Some(agent),
                            subject: Some(&id),
                            tags: &tags,
                            dedupe: Some(&id),
                            ..Fact::default()
                        };
                        w.fact(base.clone()).await?;
                        w.fact(Fact {
                            kind: people,
                            value: rng.gen_range(1..4),
                            ..base
                        })
                        .await?;
                    }
                }
            }
            // Website traffic around the clock, busiest in the afternoon.
            let visits = per(40.0 * agents.len() as f64, &mut rng);
            for _ in 0..visits {
                let hour = if rng.gen_bool(0.8) {
                    rng.gen_range(8..22)
                } else {
                    rng.gen_range(0..24)
                };
                let Some(start) = at_local(hour, rng.gen_range(0..60)) else {
                    continue;
                };
                if start >= now {
                    continue;
                }
                self.demo_visit(&mut w, &mut rng, start, now).await?;
            }
        }
        w.flush().await?;
        Ok(DemoSummary {
            facts: w.written,
            agents: agents.len(),
        })
    }

    async fn demo_conversation(
        &self,
        w: &mut Writer<'_>,
        rng: &mut StdRng,
        agent: &str,
        start: i64,
        rules: &[String],
        now: i64,
    ) -> CoreResult<()> {
        let customer = uuid::Uuid::now_v7().to_string();
        let fact = |kind, at, value| Fact {
            kind,
            at,
            value,
            agent: Some(agent),
            subject: Some(&customer),
            ..Fact::default()
        };
        w.fact(fact(CONVERSATION_NEW, start, 1)).await?;
        if let Some(rule) = rules.get(rng.gen_range(0..rules.len().max(1))) {
            w.fact(Fact {
                dim: Some(rule),
                ..fact(ROUTING_RULE_MATCH, start, 1)
            })
            .await?;
            if rng.gen_bool(0.5) {
                w.fact(Fact {
                    dim: Some(rule),
                    ..fact(ACTION_RULE_MATCH, start, 1)
                })
                .await?;
            }
            w.fact(Fact {
                dim: Some(rule),
                ..fact(SLA_1_MATCH, start, 1)
            })
            .await?;
        }
        let mut t = start;
        let mut first = true;
        for _ in 0..rng.gen_range(1..5) {
            let kind = MESSAGE_TYPES[rng.gen_range(0..MESSAGE_TYPES.len())];
            w.fact(Fact {
                dim: Some(kind),
                ..fact(MESSAGE_IN, t, 1)
            })
            .await?;
            let wait = rng.gen_range(10_000..600_000);
            if t + wait > now {
                return Ok(());
            }
            t += wait;
            w.fact(Fact {
                dim: Some("MESSAGE"),
                ..fact(MESSAGE_OUT, t, 1)
            })
            .await?;
            if first {
                w.fact(fact(FIRST_RESPONSE, t, t - start)).await?;
                if wait > 300_000 {
                    if let Some(rule) = rules.first() {
                        w.fact(Fact {
                            dim: Some(rule),
                            ..fact(SLA_1_MISS, start, 1)
                        })
                        .await?;
                    }
                }
                first = false;
            }
            w.fact(fact(RESPONSE, t, wait)).await?;
            t += rng.gen_range(20_000..300_000);
            if t > now {
                return Ok(());
            }
        }
        let status = if rng.gen_bool(0.85) { "DONE" } else { "UNRESOLVED" };
        w.fact(Fact {
            dim: Some(status),
            ..fact(STATUS_CHANGE, t, 1)
        })
        .await?;
        if status == "DONE" {
            w.fact(fact(CONVERSATION_DONE, t, 1)).await?;
        }
        Ok(())
    }

    async fn demo_visit(&self, w: &mut Writer<'_>, rng: &mut StdRng, start: i64, now: i64) -> CoreResult<()> {
        let visit_id = uuid::Uuid::now_v7().to_string();
        let visitor = format!("v{}", rng.gen_range(0..5_000));
        let page = PAGES[rng.gen_range(0..PAGES.len())];
        let url = format!("https://www.example.com{page}");
        let tags = if rng.gen_bool(0.2) {
            vec!["vip".to_string()]
        } else {
            vec![]
        };
        let visit = VisitIn {
            id: visit_id.clone(),
            visitor_id: visitor.clone(),
            external_id: rng.gen_bool(0.3).then(|| format!("crm-{}", rng.gen_range(0..2_000))),
            url: url.clone(),
            started_at: start,
            duration_ms: rng.gen_range(5_000..900_000).min(now - start),
            page_views: rng.gen_range(1..9),
            tags: tags.clone(),
        };
        let (tenant_id, zone) = (w.tenant_id, w.zone);
        store_visit(w.tx().await?, tenant_id, zone, &visit).await?;
        w.counted(1).await?;
        for (name, kind) in RESOURCES.iter().take(rng.gen_range(3..RESOURCES.len() + 1)) {
            let slow = rng.gen_bool(0.05);
            let resource = super::ingest::ResourceIn {
                id: uuid::Uuid::now_v7().to_string(),
                at: start + rng.gen_range(0..3_000),
                visit_id: Some(visit_id.clone()),
                session_id: None,
                visitor_id: Some(visitor.clone()),
                external_id: visit.external_id.clone(),
                name: name.to_string(),
                kind: kind.to_string(),
                url: url.clone(),
                status_code: Some(if rng.gen_bool(0.02) { 404 } else { 200 }),
                duration_ms: if slow {
                    rng.gen_range(1_500..6_000)
                } else {
                    rng.gen_range(20..400)
                },
                transfer_bytes: Some(rng.gen_range(1_000..400_000)),
                tags: tags.clone(),
            };
            super::ingest::store_resource(w.tx().await?, tenant_id, zone, &resource).await?;
            w.counted(1).await?;
        }
        if rng.gen_bool(0.05) {
            let (message, file, line, column) = ERRORS[rng.gen_range(0..ERRORS.len())];
            let error = super::ingest::ScriptErrorIn {
                id: uuid::Uuid::now_v7().to_string(),
                at: start + rng.gen_range(0..60_000).min(now - start),
                visit_id: Some(visit_id.clone()),
                session_id: None,
                visitor_id: Some(visitor.clone()),
                external_id: None,
                url: url.clone(),
                message: message.to_string(),
                file_name: Some(format!("https://www.example.com/static/{file}")),
                line: Some(line),
                column: Some(column),
                stack: Some(format!(
                    "{message}\n    at https://www.example.com/static/{file}:{line}:{column}"
                )),
                tags: tags.clone(),
            };
            super::ingest::store_script_error(w.tx().await?, tenant_id, zone, &error).await?;
            w.counted(1).await?;
        }
        if rng.gen_bool(0.1) {
            let reason = REASONS[rng.gen_range(0..REASONS.len())];
            w.fact(Fact {
                kind: SESSION,
                at: start,
                value: visit.duration_ms,
                dim: Some(reason),
                subject: Some(&visit_id),
                tags: &tags,
                dedupe: Some(&visit_id),
                ..Fact::default()
            })
            .await?;
        }
        Ok(())
    }

    /// The demo agents, created when missing (without a password: they cannot sign in).
    async fn demo_agents(&self, tenant_id: &TenantId, count: u32) -> CoreResult<Vec<UserId>> {
        let mut ids = Vec::new();
        for n in 1..=count {
            let email = format!("agent{n:02}@demo.rapport.invalid");
            let existing: Option<UserId> = with_db!(self.db(), |pool| sqlx::query_scalar(
                "select id from users where tenant_id = $1 and email = $2"
            )
            .bind(tenant_id)
            .bind(&email)
            .fetch_optional(pool)
            .await)?;
            let id = match existing {
                Some(id) => id,
                None => {
                    let user = UserIn {
                        email: Some(email),
                        display_name: Some(format!("Demo Agent {n}")),
                        role_id: Some("AGENT".into()),
                        ..UserIn::default()
                    };
                    self.save_user(tenant_id, user, &Actor::system("demo-data")).await?.id
                }
            };
            ids.push(id);
        }
        Ok(ids)
    }

    /// Rule ids to attribute matches to: the tenant's, else made-up ones.
    async fn demo_rule_ids(&self, tenant_id: &TenantId) -> CoreResult<Vec<String>> {
        let mut ids: Vec<String> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select id from config_objects where tenant_id = $1 and kind in ('routingrule', 'slarule', 'actionrule') limit 20"
        )
        .bind(tenant_id)
        .fetch_all(pool)
        .await)
        .unwrap_or_default();
        if ids.is_empty() {
            ids = (1..=4).map(|n| format!("demo-rule-{n}")).collect();
        }
        Ok(ids)
    }
}
