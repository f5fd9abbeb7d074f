//! The load generator of the write benchmark: keep-alive connections in a
//! closed loop (as fast as answers come) or an open loop (at a fixed rate,
//! latency counted from the scheduled time).

use super::*;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Req {
    Create,
    List,
    Health,
}

/// What the load generator needs to address the server.
#[derive(Clone)]
pub(crate) struct Target {
    pub(crate) base: String,
    pub(crate) token: String,
    /// Numbers the e-mail addresses of created customers.
    pub(crate) seq: Arc<AtomicU64>,
}

/// Results of one load phase.
#[derive(Default)]
pub(crate) struct Load {
    pub(crate) ok: u64,
    pub(crate) errors: u64,
    pub(crate) elapsed: Duration,
    pub(crate) latencies: Vec<Duration>,
}

impl Load {
    pub(crate) fn rate(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    pub(crate) fn merge(mut parts: Vec<Load>, elapsed: Duration) -> Load {
        let mut all = Load {
            elapsed,
            ..Load::default()
        };
        for p in parts.iter_mut() {
            all.ok += p.ok;
            all.errors += p.errors;
            all.latencies.append(&mut p.latencies);
        }
        all.latencies.sort();
        all
    }
}

/// One keep-alive connection: a client that keeps at most one idle connection.
pub(crate) fn connection() -> reqwest::Client {
    reqwest::Client::builder().pool_max_idle_per_host(1).build().unwrap()
}

/// Sends one request and reads the whole answer (so the connection is reused).
pub(crate) async fn send(client: &reqwest::Client, target: &Target, req: Req) -> bool {
    let builder = match req {
        Req::Create => {
            let n = target.seq.fetch_add(1, Ordering::Relaxed);
            client
                .post(format!("{}/rest/v1/customer", target.base))
                .bearer_auth(&target.token)
                .header("content-type", "application/json")
                .body(format!(
                    r#"{{"firstName":"Ada","lastName":"Lovelace","email":"ada+{n}@example.com"}}"#
                ))
        }
        Req::List => client
            .get(format!("{}/rest/v1/customer?pageSize=20", target.base))
            .bearer_auth(&target.token),
        Req::Health => client.get(format!("{}/health", target.base)),
    };
    match builder.send().await {
        Ok(r) => {
            let ok = r.status().is_success();
            r.bytes().await.is_ok() && ok
        }
        Err(_) => false,
    }
}

/// Closed loop: `conns` connections each send `req` back to back for `duration`,
/// or until `limit` requests have been sent in all.
pub(crate) async fn closed_loop(
    target: &Target,
    req: Req,
    conns: usize,
    duration: Duration,
    limit: Option<u64>,
) -> Load {
    let started = Instant::now();
    let deadline = started + duration;
    let tickets = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..conns)
        .map(|_| {
            let (target, tickets) = (target.clone(), tickets.clone());
            tokio::spawn(async move {
                let client = connection();
                let mut load = Load::default();
                while Instant::now() < deadline {
                    if limit.is_some_and(|l| tickets.fetch_add(1, Ordering::Relaxed) >= l) {
                        break;
                    }
                    let t0 = Instant::now();
                    if send(&client, &target, req).await {
                        load.ok += 1;
                        load.latencies.push(t0.elapsed());
                    } else {
                        load.errors += 1;
                    }
                }
                load
            })
        })
        .collect();
    let mut parts = Vec::new();
    for t in tasks {
        parts.push(t.await.unwrap());
    }
    Load::merge(parts, started.elapsed())
}

/// Open loop: creates scheduled every `1/rate` s for `duration`, dealt round-robin to
/// `conns` connections; a connection still busy sends its next request late, and
/// latency counts from the scheduled time, so waiting in line counts.
pub(crate) async fn open_loop(target: &Target, rate: f64, conns: usize, duration: Duration) -> Load {
    let total = (rate * duration.as_secs_f64()).round().max(1.0) as usize;
    let interval = Duration::from_secs_f64(1.0 / rate.max(1e-3));
    let start = tokio::time::Instant::now() + Duration::from_millis(20);
    let tasks: Vec<_> = (0..conns)
        .map(|c| {
            let target = target.clone();
            tokio::spawn(async move {
                let client = connection();
                let mut load = Load::default();
                for i in (c..total).step_by(conns) {
                    let scheduled = start + interval * i as u32;
                    tokio::time::sleep_until(scheduled).await;
                    if send(&client, &target, Req::Create).await {
                        load.ok += 1;
                        load.latencies.push(scheduled.elapsed());
                    } else {
                        load.errors += 1;
                    }
                }
                load
            })
        })
        .collect();
    let mut parts = Vec::new();
    for t in tasks {
        parts.push(t.await.unwrap());
    }
    Load::merge(parts, start.elapsed())
}
