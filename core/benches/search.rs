//! Search benchmark (run: `cargo xtask bench search`, or
//! `cargo bench -p rapport-core --bench search`).
//!
//! Loads one tenant with `BENCH_MESSAGES` messages (default 1,000,000) across
//! `BENCH_MESSAGES / 20` customers, written through the same tables and
//! triggers as the service writes them, plus a second tenant with a tenth as
//! many, on SQLite and (with `RAPPORT_TEST_POSTGRES_URL`) on PostgreSQL. The
//! text is ten words each, drawn by Zipf's law from 5,000, and half the
//! messages name an order number. Then, for an order number, a middling word,
//! a common word and two words together, measures latency p50 and p95 of:
//! - **Rapport**: `Services::search`, the first page of 20 ranked hits with
//!   their passages, and the total;
//! - **baseline**: the same page found with a `LIKE '%word%'` scan over the
//!   tenant's messages, newest first, in the same run.
//!
//! Figures are ratios to the baseline: the machines are shared and noisy.
//! Samples per case: `BENCH_SAMPLES` (default 30); `BENCH_BACKENDS=sqlite` or
//! `postgres` measures one backend. The loaded database is analysed first,
//! as a live one is.

use std::time::{Duration, Instant};

use rapport_core::{
    audit::Actor, db::Db, ids::TenantId, model::PageRequest, search::SearchQuery, tenants::NewTenant, testing::TestDb,
    Services,
};

/// How many distinct words the generated text uses, drawn by Zipf's law as
/// natural text is: a few words are everywhere, most are rare.
const VOCABULARY: usize = 5_000;
/// Syllables the generated words are made of.
const SYLLABLES: [&str; 20] = [
    "ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "be", "di", "fa", "go", "hu", "ji", "ko", "la", "me", "no", "pi",
    "ro",
];

/// The `rank`-th word of the vocabulary: two or three syllables.
fn word_of(rank: usize) -> String {
    let (a, b, c) = (rank % 20, (rank / 20) % 20, rank / 400);
    let mut w = format!("{}{}", SYLLABLES[a], SYLLABLES[b]);
    if c > 0 {
        w.push_str(SYLLABLES[(c - 1) % 20]);
        w.push_str(&c.to_string());
    }
    w
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A small deterministic generator (xorshift), so every run loads the same text.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A word's rank, by Zipf's law (weight 1 / (rank + 1)).
    fn zipf(&mut self, cumulative: &[f64]) -> usize {
        let total = cumulative[cumulative.len() - 1];
        let x = (self.next() % 1_000_000_007) as f64 / 1_000_000_007.0 * total;
        cumulative.partition_point(|&c| c < x).min(cumulative.len() - 1)
    }
}

/// The running sums of the Zipf weights of the vocabulary.
fn zipf_table() -> Vec<f64> {
    let mut sum = 0.0;
    (0..VOCABULARY)
        .map(|r| {
            sum += 1.0 / (r as f64 + 1.0);
            sum
        })
        .collect()
}

/// Writes `messages` messages for a new tenant, 20 per customer, in
/// transactions of 5,000 rows; returns the tenant.
async fn load(services: &Services, name: &str, messages: u64, rng: &mut Rng, zipf: &[f64]) -> TenantId {
    let tenant = services
        .create_tenant(
            NewTenant {
                name: Some(format!("Bench {name}")),
                ..Default::default()
            },
            &Actor::system("bench"),
        )
        .await
        .unwrap()
        .id;
    let now = chrono::Utc::now().timestamp_millis();
    let mut tx;
    let customers = messages.div_ceil(20);
    let mut written = 0;
    tx = services.db().begin().await.unwrap();
    for c in 0..customers {
        let customer = format!("{name}-c{c}");
        let first = format!("Customer{c}");
        exec(
            &mut tx,
            "insert into customers (id, tenant_id, first_name, created_at, updated_at) values ($1, $2, $3, 0, 0)",
            &[customer.clone(), tenant.to_string(), first],
        )
        .await;
        for m in 0..20 {
            let mut words: Vec<String> = (0..10).map(|_| word_of(rng.zipf(zipf))).collect();
            // Half the messages name an order, as support chats do.
            if rng.next().is_multiple_of(2) {
                words.push(format!("order {}", 1_000_000 + rng.next() % 9_000_000));
            }
            let at = now - ((customers - c) * 20 + (20 - m)) as i64 * 60_000;
            let sql = format!(
                "insert into messages (id, tenant_id, customer_id, direction, type, message, channel, sender_kind, created_at) \
                 values ($1, $2, $3, 'INBOUND', 'MESSAGE', $4, 'API', 'customer', {at})"
            );
            exec(
                &mut tx,
                &sql,
                &[
                    format!("{customer}-m{m}"),
                    tenant.to_string(),
                    customer.clone(),
                    words.join(" "),
                ],
            )
            .await;
            written += 1;
            if written % 5_000 == 0 {
                tx.commit().await.unwrap();
                tx = services.db().begin().await.unwrap();
            }
        }
    }
    tx.commit().await.unwrap();
    tenant
}

async fn exec(tx: &mut rapport_core::db::Tx, sql: &str, args: &[String]) {
    match tx.conn_mut() {
        rapport_core::db::TxConn::Sqlite(t) => {
            let mut q = sqlx::query(sql);
            for a in args {
                q = q.bind(a);
            }
            q.execute(&mut **t).await.unwrap();
        }
        rapport_core::db::TxConn::Postgres(t) => {
            let mut q = sqlx::query(sql);
            for a in args {
                q = q.bind(a);
            }
            q.execute(&mut **t).await.unwrap();
        }
    }
}

/// The baseline: the newest 20 messages of the tenant whose text contains
/// every word, and how many there are, by scanning.
async fn like_scan(db: &Db, tenant: &TenantId, words: &[&str]) -> usize {
    let conditions: Vec<String> = (0..words.len())
        .map(|i| format!("lower(message) like ${}", i + 2))
        .collect();
    let filter = conditions.join(" and ");
    let rows_sql =
        format!("select id from messages where tenant_id = $1 and {filter} order by created_at desc limit 20");
    let count_sql = format!("select count(*) from messages where tenant_id = $1 and {filter}");
    let patterns: Vec<String> = words.iter().map(|w| format!("%{w}%")).collect();
    macro_rules! run {
        ($pool:expr) => {{
            let mut q = sqlx::query_scalar::<_, String>(&rows_sql).bind(tenant.to_string());
            let mut c = sqlx::query_scalar::<_, i64>(&count_sql).bind(tenant.to_string());
            for p in &patterns {
                q = q.bind(p.clone());
                c = c.bind(p.clone());
            }
            let rows = q.fetch_all($pool).await.unwrap();
            let _total = c.fetch_one($pool).await.unwrap();
            rows.len()
        }};
    }
    match db {
        Db::Sqlite(pools) => run!(&pools.reads),
        Db::Postgres(pool) => run!(pool),
    }
}

async fn measure<F, Fut>(samples: u64, mut f: F) -> (Duration, Duration)
where
    F: FnMut(u64) -> Fut,
    Fut: std::future::Future<Output = usize>,
{
    let mut times = Vec::with_capacity(samples as usize);
    for i in 0..samples {
        let started = Instant::now();
        std::hint::black_box(f(i).await);
        times.push(started.elapsed());
    }
    times.sort();
    (percentile(&times, 50.0), percentile(&times, 95.0))
}

async fn bench(backend: &str, services: Services) {
    let messages = env_or("BENCH_MESSAGES", 1_000_000);
    let samples = env_or("BENCH_SAMPLES", 30);
    let mut rng = Rng(0x5eed_5ea2c4);
    let zipf = zipf_table();
    let started = Instant::now();
    let tenant = load(&services, "main", messages, &mut rng, &zipf).await;
    load(&services, "other", messages / 10, &mut rng, &zipf).await;
    println!(
        "{backend}: loaded {messages} messages (and {} in another tenant) in {:.0} s",
        messages / 10,
        started.elapsed().as_secs_f64()
    );
    // The statistics a live database has (autovacuum gathers them on
    // PostgreSQL): without them the planner guesses a tenant is small.
    let mut tx = services.db().begin().await.unwrap();
    exec(&mut tx, "analyze", &[]).await;
    tx.commit().await.unwrap();
    let page = PageRequest {
        page_size: Some(20),
        ..Default::default()
    };
    // An order number the text names (read back, so it exists), a word of
    // middling frequency, a common one, and two words together.
    let order: String = match services.db() {
        Db::Sqlite(pools) => {
            sqlx::query_scalar("select message from messages where tenant_id = $1 and message like '%order %' limit 1")
                .bind(tenant.to_string())
                .fetch_one(&pools.reads)
                .await
                .unwrap()
        }
        Db::Postgres(pool) => {
            sqlx::query_scalar("select message from messages where tenant_id = $1 and message like '%order %' limit 1")
                .bind(tenant.to_string())
                .fetch_one(pool)
                .await
                .unwrap()
        }
    };
    let order = order
        .split("order ")
        .nth(1)
        .unwrap_or_default()
        .split(' ')
        .next()
        .unwrap_or_default()
        .to_string();
    let cases: [(&str, Vec<String>); 4] = [
        ("an order number", vec![order]),
        ("a word of rank 500", vec![word_of(500)]),
        ("a word of rank 20", vec![word_of(20)]),
        ("two words (ranks 50, 300)", vec![word_of(50), word_of(300)]),
    ];
    for (what, words) in cases {
        let q = words.join(" ");
        let hits = services
            .search(
                &tenant,
                &SearchQuery {
                    q: q.clone(),
                    ..Default::default()
                },
                &page,
            )
            .await
            .unwrap()
            .page
            .total_elements;
        let (fts50, fts95) = measure(samples, |_| {
            let q = q.clone();
            let services = &services;
            let tenant = &tenant;
            let page = &page;
            async move {
                let found = services
                    .search(
                        tenant,
                        &SearchQuery {
                            q,
                            ..Default::default()
                        },
                        page,
                    )
                    .await
                    .unwrap();
                found.results.len()
            }
        })
        .await;
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
        let (like50, like95) = measure(samples, |_| {
            let db = services.db();
            let tenant = &tenant;
            let refs = refs.clone();
            async move { like_scan(db, tenant, &refs).await }
        })
        .await;
        println!(
            "{backend}, {what} ({hits} hits): search p50 {:.1} ms, p95 {:.1} ms; LIKE scan p50 {:.1} ms, p95 {:.1} ms; \
             search p95 = {:.3}× the scan's",
            ms(fts50),
            ms(fts95),
            ms(like50),
            ms(like95),
            fts95.as_secs_f64() / like95.as_secs_f64(),
        );
    }
}

#[tokio::main]
async fn main() {
    // `BENCH_BACKENDS=sqlite` or `postgres` measures one; both by default.
    let only = std::env::var("BENCH_BACKENDS").unwrap_or_default();
    if only.is_empty() || only.contains("sqlite") {
        let sqlite = TestDb::sqlite().await.unwrap();
        bench("SQLite", sqlite.services()).await;
    }
    if only.is_empty() || only.contains("postgres") {
        match TestDb::postgres().await.unwrap() {
            Some(postgres) => bench("PostgreSQL", postgres.services()).await,
            None => println!("PostgreSQL: skipped (set RAPPORT_TEST_POSTGRES_URL)"),
        }
    }
}
