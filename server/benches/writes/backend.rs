//! One backend of the write benchmark: a fresh database and `rapport serve` on
//! it, each figure measured in turn against its baseline, one summary row each.

use std::{
    sync::{atomic::AtomicU64, Arc},
    time::{Duration, Instant},
};

use rapport_core::{db::Db, with_db};

use super::{
    baseline::baseline,
    databases::{add_tenant, grown, prepare_tenant, table_counts, Backend, FreshDb},
    endpoints::{failing_urls, first_attempt_delays, recording_receiver, subscribe, subscribe_failing_endpoints},
    env_f64,
    fan_out::FanOut,
    load::{closed_loop, connection, open_loop, send, Req, Target},
    phase_seconds,
    server::Server,
    stats::{ms, percentile},
    Row,
};

pub(crate) async fn run_backend(backend: Backend, rows: &mut Vec<Row>) -> Result<(), String> {
    let seconds = phase_seconds();
    let soak = Duration::from_secs_f64(env_f64("BENCH_SOAK_SECONDS", 600.0));
    let dir = tempfile::TempDir::with_prefix("rapport-bench-writes-").map_err(|e| e.to_string())?;
    let name = backend.name();
    println!("\n== {name} ==");

    let fresh = FreshDb::create(backend, dir.path(), "server").await?;
    let (_, token) = prepare_tenant(&fresh.url).await;
    let server = Server::start(&fresh.url, dir.path()).await;
    println!("server {} (log {})", server.base, server.log.display());
    let target = Target {
        base: server.base.clone(),
        token,
        seq: Arc::new(AtomicU64::new(0)),
    };
    let observer = Db::connect(&fresh.url).await.map_err(|e| e.to_string())?;

    // What one REST create writes, to hold the baseline to the same rows.
    let before = table_counts(&observer).await;
    assert!(send(&connection(), &target, Req::Create).await, "one create");
    let rest_grown = grown(&before, &table_counts(&observer).await);

    // 1. Throughput.
    let base = baseline(backend, dir.path(), seconds).await;
    println!("one REST create wrote      {rest_grown:?}");
    println!("one baseline commit wrote  {:?}", base.grown);
    let missing: Vec<_> = rest_grown.keys().filter(|t| !base.grown.contains_key(*t)).collect();
    if !missing.is_empty() {
        println!("WARNING: the baseline does not write to {missing:?}; its ratio flatters Rapport");
    }
    let mut best = 0.0f64;
    for conns in [1, 4, 16] {
        let load = closed_loop(&target, Req::Create, conns, seconds, None).await;
        println!(
            "creates, {conns:>2} connections: {:>7.0}/s  p50 {:.2} ms  p99 {:.2} ms  max {:.1} ms  errors {}",
            load.rate(),
            ms(percentile(&load.latencies, 50.0)),
            ms(percentile(&load.latencies, 99.0)),
            ms(load.latencies.last().copied().unwrap_or_default()),
            load.errors
        );
        best = best.max(load.rate());
    }
    println!("baseline raw transactions: {:.0}/s", base.rate);
    let ratio = best / base.rate;
    rows.push(Row {
        backend,
        figure: "create throughput (best of 1/4/16 conns)",
        value: format!("{best:.0}/s"),
        baseline: format!("{:.0}/s raw tx", base.rate),
        ratio: format!("{ratio:.2}"),
        target: Some((">= 0.5", ratio >= 0.5)),
    });

    // 2. Latency at half the maximum rate.
    let half = best / 2.0;
    let load = open_loop(&target, half, 4, seconds).await;
    let (p50, p99) = (percentile(&load.latencies, 50.0), percentile(&load.latencies, 99.0));
    let (b50, b99) = (percentile(&base.latencies, 50.0), percentile(&base.latencies, 99.0));
    println!(
        "open loop at {half:.0}/s on 4 connections: p50 {:.2} ms  p99 {:.2} ms  max {:.1} ms  errors {}",
        ms(p50),
        ms(p99),
        ms(load.latencies.last().copied().unwrap_or_default()),
        load.errors
    );
    rows.push(Row {
        backend,
        figure: "create p50 at half max rate",
        value: format!("{:.2} ms", ms(p50)),
        baseline: format!("{:.3} ms raw commit p50", ms(b50)),
        ratio: format!("{:.1}", ms(p50) / ms(b50).max(1e-6)),
        target: None,
    });
    rows.push(Row {
        backend,
        figure: "create p99 at half max rate",
        value: format!("{:.2} ms", ms(p99)),
        baseline: format!("{:.3} ms raw commit p99", ms(b99)),
        ratio: format!("{:.1}", ms(p99) / ms(b99).max(1e-6)),
        target: Some(("<= 10 ms", ms(p99) <= 10.0)),
    });

    // 3. Fan-out after commit: a tenant's create p99 with one endpoint and with
    // twenty (one answering in 50 ms, 9 that do not resolve, 10 answering 500), at the
    // rate of figure 2, and how soon each event reaches the answering endpoint
    // while the creates flow (its first attempt), against the same delay for
    // creates made one at a time.
    let fan_tenant = add_tenant(&observer, "Fan-out").await;
    let fan = Target {
        base: target.base.clone(),
        token: fan_tenant.1.clone(),
        seq: target.seq.clone(),
    };
    let (answering, arrivals) = recording_receiver().await;
    subscribe(&fan, &[format!("{answering}/hook")]).await;
    let client = connection();
    for _ in 0..50 {
        send(&client, &fan, Req::Create).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle = first_attempt_delays(&observer, &fan_tenant.0, &arrivals).await?;
    arrivals.lock().unwrap().clear();
    let mark = chrono::Utc::now().timestamp_millis();
    let one = open_loop(&fan, half, 4, seconds).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let burst = first_attempt_delays(&observer, &fan_tenant.0, &arrivals).await?;
    let burst: Vec<Duration> = burst
        .into_iter()
        .filter(|(at, _)| *at >= mark)
        .map(|(_, d)| d)
        .collect();
    let idle: Vec<Duration> = idle.into_iter().map(|(_, d)| d).collect();
    let (idle99, burst99) = (percentile(&idle, 99.0), percentile(&burst, 99.0));
    println!(
        "first attempt after the commit: p99 {:.1} ms (p50 {:.1} ms, {} events) while creating at {half:.0}/s; \
         p99 {:.1} ms one at a time",
        ms(burst99),
        ms(percentile(&burst, 50.0)),
        burst.len(),
        ms(idle99)
    );
    rows.push(Row {
        backend,
        figure: "enqueue -> first attempt p99, writes flowing",
        value: format!("{:.1} ms", ms(burst99)),
        baseline: format!("{:.1} ms one at a time", ms(idle99)),
        ratio: format!("{:.2}", ms(burst99) / ms(idle99).max(1e-6)),
        target: Some(("<= 100 ms", ms(burst99) <= 100.0)),
    });
    subscribe(&fan, &failing_urls(9, 10).await).await;
    // Its baseline: a second tenant with the one answering endpoint, measured
    // with the twenty in turn and then side by side (`fan_out`), round after
    // round, so that the machine's drift falls on both. Each round starts once
    // the answering endpoints have sent everything, so neither inherits the
    // other's queue. The first round has the nineteen fresh, before any of
    // their attempts came back.
    let solo_tenant = add_tenant(&observer, "Fan-out, one endpoint").await;
    let solo = Target {
        base: target.base.clone(),
        token: solo_tenant.1.clone(),
        seq: target.seq.clone(),
    };
    subscribe(&solo, &[format!("{answering}/hook")]).await;
    println!(
        "creates at {half:.0}/s on 4 connections before the 19 were added: p99 {:.2} ms with 1 endpoint",
        ms(percentile(&one.latencies, 99.0))
    );
    let fan_out = FanOut {
        observer: &observer,
        answering: &answering,
        twenty: &fan,
        one: &solo,
        rate: half,
        seconds,
    };
    // The target is the side-by-side figure's; in turn is for information.
    for (pooled, figure, checked) in [
        (
            fan_out.in_turn().await,
            "create p99, 20 endpoints, in turn (pooled)",
            false,
        ),
        (
            fan_out.side_by_side().await,
            "create p99, 20 endpoints, side by side (pooled)",
            true,
        ),
    ] {
        let ((p99_twenty, p99_one), ratio) = (pooled.p99s(), pooled.ratio());
        rows.push(Row {
            backend,
            figure,
            value: format!("{:.2} ms", ms(p99_twenty)),
            baseline: format!("{:.2} ms with 1", ms(p99_one)),
            ratio: format!("{ratio:.2}"),
            target: checked.then_some(("<= 1.2", ratio <= 1.2)),
        });
    }

    // 4. The same p99 while another tenant's 20 endpoints fail, 5,000 events behind
    // each (100,000 deliveries owed), against the p99 just measured, on the database
    // as it is now (it only grows by the neighbour's 5,000 customers). The failing
    // endpoints belong to a neighbour: the promise is that one tenant's dead
    // endpoints slow no one else. Its creates are reported as they go; the rows
    // printed show what its endpoints were queued before they fell behind.
    let neighbour = Target {
        base: target.base.clone(),
        token: add_tenant(&observer, "Noisy neighbour").await.1,
        seq: target.seq.clone(),
    };
    subscribe_failing_endpoints(&neighbour).await;
    let built = Instant::now();
    let queued = closed_loop(&neighbour, Req::Create, 16, Duration::from_secs(3600), Some(5_000)).await;
    let fan_out_rate = 5_000.0 / built.elapsed().as_secs_f64();
    let by_state: Vec<(String, i64)> = with_db!(&observer, |pool| sqlx::query_as(
        "select state, count(*) from webhook_deliveries group by state order by state"
    )
    .fetch_all(pool)
    .await)
    .map_err(|e| e.to_string())?;
    let deliveries: i64 = by_state.iter().map(|(_, n)| n).sum();
    println!(
        "backlog: the neighbour's 5,000 creates, its 20 endpoints failing, at {fan_out_rate:.0}/s ({} errors); webhook_deliveries {deliveries} {by_state:?}",
        queued.errors
    );
    rows.push(Row {
        backend,
        figure: "creates, 20 endpoints failing (16 conns)",
        value: format!("{fan_out_rate:.0}/s"),
        baseline: format!("{best:.0}/s without"),
        ratio: format!("{:.2}", fan_out_rate / best),
        target: None,
    });
    let with_backlog = open_loop(&target, half, 4, seconds).await;
    let p99_backlog = percentile(&with_backlog.latencies, 99.0);
    println!(
        "open loop at {half:.0}/s beside the neighbour's backlog: p99 {:.2} ms (p50 {:.2} ms, max {:.1} ms, errors {}), {:.2} ms without",
        ms(p99_backlog),
        ms(percentile(&with_backlog.latencies, 50.0)),
        ms(with_backlog.latencies.last().copied().unwrap_or_default()),
        with_backlog.errors,
        ms(p99)
    );
    let ratio = ms(p99_backlog) / ms(p99).max(1e-6);
    rows.push(Row {
        backend,
        figure: "create p99 beside 20 failing endpoints + backlog",
        value: format!("{:.2} ms ({deliveries} dlv)", ms(p99_backlog)),
        baseline: format!("{:.2} ms without", ms(p99)),
        ratio: format!("{ratio:.2}"),
        target: Some(("<= 2.0", ratio <= 2.0)),
    });

    // 5. The list read against /health, same connections and duration.
    let health = closed_loop(&target, Req::Health, 4, seconds, None).await;
    let list = closed_loop(&target, Req::List, 4, seconds, None).await;
    println!(
        "4 connections: /health {:.0}/s (errors {}), list {:.0}/s (p99 {:.2} ms, errors {})",
        health.rate(),
        health.errors,
        list.rate(),
        ms(percentile(&list.latencies, 99.0)),
        list.errors
    );
    let ratio = list.rate() / health.rate();
    rows.push(Row {
        backend,
        figure: "list read (4 conns)",
        value: format!("{:.0}/s", list.rate()),
        baseline: format!("{:.0}/s /health", health.rate()),
        ratio: format!("{ratio:.2}"),
        target: Some((">= 0.4", ratio >= 0.4)),
    });

    // 6. The list read alone and while two connections create.
    let alone = closed_loop(&target, Req::List, 2, seconds, None).await;
    let (during, creates) = tokio::join!(
        closed_loop(&target, Req::List, 2, seconds, None),
        closed_loop(&target, Req::Create, 2, seconds, None)
    );
    println!(
        "2 list connections: alone {:.0}/s; with 2 creating {:.0}/s (p99 {:.2} ms), creates {:.0}/s (p99 {:.2} ms), errors {}",
        alone.rate(),
        during.rate(),
        ms(percentile(&during.latencies, 99.0)),
        creates.rate(),
        ms(percentile(&creates.latencies, 99.0)),
        alone.errors + during.errors + creates.errors
    );
    let ratio = during.rate() / alone.rate();
    rows.push(Row {
        backend,
        figure: "list read under 2 writers (2 conns)",
        value: format!("{:.0}/s", during.rate()),
        baseline: format!("{:.0}/s alone", alone.rate()),
        ratio: format!("{ratio:.2}"),
        target: Some((">= 0.5", ratio >= 0.5)),
    });

    // 7. Memory through a mixed soak.
    let samples = {
        let soak_load = async {
            tokio::join!(
                closed_loop(&target, Req::Create, 2, soak, None),
                closed_loop(&target, Req::List, 2, soak, None)
            )
        };
        let sampler = async {
            let mut samples = vec![(0.0, server.rss_kib())];
            let started = Instant::now();
            let mut tick = tokio::time::interval_at(
                tokio::time::Instant::now() + Duration::from_secs(10),
                Duration::from_secs(10),
            );
            while started.elapsed() + Duration::from_secs(10) <= soak + Duration::from_millis(500) {
                tick.tick().await;
                samples.push((started.elapsed().as_secs_f64(), server.rss_kib()));
            }
            samples
        };
        let ((creates, lists), samples) = tokio::join!(soak_load, sampler);
        println!(
            "soak {:.0} s: creates {:.0}/s (p99 {:.2} ms), lists {:.0}/s (p99 {:.2} ms), errors {}",
            soak.as_secs_f64(),
            creates.rate(),
            ms(percentile(&creates.latencies, 99.0)),
            lists.rate(),
            ms(percentile(&lists.latencies, 99.0)),
            creates.errors + lists.errors
        );
        let mut samples = samples;
        if samples.last().is_some_and(|s| s.0 < soak.as_secs_f64() - 1.0) {
            samples.push((soak.as_secs_f64(), server.rss_kib()));
        }
        samples
    };
    let line: Vec<String> = samples
        .iter()
        .map(|(t, kib)| format!("{t:.0}s {:.1}", *kib as f64 / 1024.0))
        .collect();
    println!("RSS (MiB): {}", line.join(", "));
    let start_rss = samples[0].1 as f64 / 1024.0;
    let mid_at = soak.as_secs_f64() / 2.0;
    let mid_rss = samples
        .iter()
        .min_by(|a, b| (a.0 - mid_at).abs().total_cmp(&(b.0 - mid_at).abs()))
        .map(|s| s.1 as f64 / 1024.0)
        .unwrap_or(start_rss);
    let end_rss = samples.last().map(|s| s.1 as f64 / 1024.0).unwrap_or(start_rss);
    let growth = end_rss / mid_rss.max(1e-9);
    rows.push(Row {
        backend,
        figure: "RSS start / middle of soak",
        value: format!("{start_rss:.1} / {mid_rss:.1} MiB"),
        baseline: "-".into(),
        ratio: "-".into(),
        target: None,
    });
    rows.push(Row {
        backend,
        figure: "RSS end of soak (2nd-half growth)",
        value: format!("{end_rss:.1} MiB"),
        baseline: format!("{mid_rss:.1} MiB middle"),
        ratio: format!("{growth:.3}"),
        target: Some(("<= 1.10", growth <= 1.10)),
    });

    let cpu = std::fs::read_to_string(format!("/proc/{}/stat", server.child.id())).unwrap_or_default();
    if let Some(fields) = cpu.rsplit(')').next() {
        let f: Vec<&str> = fields.split_whitespace().collect();
        if f.len() > 13 {
            println!("server CPU so far: utime {} + stime {} ticks", f[11], f[12]);
        }
    }

    observer.close().await;
    drop(server);
    fresh.drop_now().await;
    Ok(())
}
