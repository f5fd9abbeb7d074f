//! Rows that every write of a tenant adds to (its customer count, its report
//! rollups) are added to as each transaction commits (`rapport_core::db::Tx::add`),
//! on both backends: concurrent writes all count, a rolled-back write counts
//! nothing, and two transactions that add to the same rows in opposite orders
//! never deadlock.

use rapport_core::{
    audit::Actor,
    customers::CustomerIn,
    db::{KeyPart, SumTable, Tx},
    ids::TenantId,
    tenants::NewTenant,
    testing::TestDb,
    with_db, with_tx, Services,
};

/// The customer counts, as a table a test may add to.
static COUNTS: SumTable = SumTable {
    table: "customer_counts",
    keys: &["tenant_id"],
    values: &["customers"],
};

async fn databases() -> Vec<(&'static str, TestDb)> {
    let mut out = vec![("sqlite", TestDb::sqlite().await.unwrap())];
    if let Some(pg) = TestDb::postgres().await.unwrap() {
        out.push(("postgres", pg));
    }
    out
}

async fn tenant(s: &Services, name: &str) -> TenantId {
    s.create_tenant(
        NewTenant {
            name: Some(name.into()),
            ..Default::default()
        },
        &Actor::system("tests"),
    )
    .await
    .unwrap()
    .id
}

/// The tenant's kept customer count, and the conversations its hourly and daily
/// rollups count.
async fn kept(s: &Services, tenant: &TenantId) -> (i64, i64, i64) {
    let count: Option<i64> = with_db!(s.db(), |pool| sqlx::query_scalar(
        "select customers from customer_counts where tenant_id = $1"
    )
    .bind(tenant)
    .fetch_optional(pool)
    .await)
    .unwrap();
    let sum = |table: &'static str| {
        let sql = format!(
            "select cast(coalesce(sum(total), 0) as bigint) from {table} \
             where tenant_id = $1 and kind = 'CONVERSATION_NEW' and group_kind = ''"
        );
        async move {
            with_db!(s.db(), |pool| sqlx::query_scalar::<_, i64>(&sql)
                .bind(tenant)
                .fetch_one(pool)
                .await)
            .unwrap()
        }
    };
    (
        count.unwrap_or(0),
        sum("report_rollups").await,
        sum("report_day_rollups").await,
    )
}

/// The customer count as `tx` reads it.
async fn count_in(tx: &mut Tx, tenant: &TenantId) -> Option<i64> {
    with_tx!(tx, |conn| sqlx::query_scalar(
        "select customers from customer_counts where tenant_id = $1"
    )
    .bind(tenant)
    .fetch_optional(conn)
    .await)
    .unwrap()
}

#[tokio::test]
async fn concurrent_creates_all_count_in_the_shared_rows() {
    for (backend, db) in databases().await {
        let s = db.services();
        let tenant = tenant(&s, "Counted").await;
        let mut tasks = Vec::new();
        for n in 0..48 {
            let (s, tenant) = (s.clone(), tenant.clone());
            tasks.push(tokio::spawn(async move {
                s.save_customer(
                    &tenant,
                    CustomerIn {
                        external_id: Some(format!("c-{n}")),
                        ..Default::default()
                    },
                    &Actor::system("tests"),
                )
                .await
            }));
        }
        let mut ids = Vec::new();
        for task in tasks {
            ids.push(task.await.unwrap().unwrap().id);
        }
        assert_eq!(kept(&s, &tenant).await, (48, 48, 48), "{backend}");
        let page = s
            .list_customers(&tenant, &Default::default(), &Default::default())
            .await
            .unwrap();
        assert_eq!(page.page.total_elements, 48, "{backend}");

        // Deletes take away from the same row, concurrently too.
        let mut tasks = Vec::new();
        for id in ids.into_iter().take(10) {
            let (s, tenant) = (s.clone(), tenant.clone());
            tasks.push(tokio::spawn(async move {
                s.delete_customer(&tenant, &id, &Actor::system("tests")).await
            }));
        }
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        assert_eq!(kept(&s, &tenant).await.0, 38, "{backend}");
    }
}

#[tokio::test]
async fn additions_are_summed_at_commit_and_dropped_with_a_rollback() {
    for (backend, db) in databases().await {
        let s = db.services();
        let tenant = tenant(&s, "Added").await;
        let key = || vec![KeyPart::from(tenant.as_str())];

        // Noted, not yet written: inside the transaction the row reads as it
        // was until the additions are applied.
        let mut tx = s.db().begin().await.unwrap();
        assert_eq!(
            count_in(&mut tx, &tenant).await,
            None,
            "{backend}: a tenant without customers"
        );
        tx.add(&COUNTS, key(), &[2]);
        tx.add(&COUNTS, key(), &[3]);
        assert_eq!(count_in(&mut tx, &tenant).await, None, "{backend}: noted only");
        tx.apply_sums().await.unwrap();
        assert_eq!(count_in(&mut tx, &tenant).await, Some(5), "{backend}: summed");
        tx.add(&COUNTS, key(), &[1]);
        tx.commit().await.unwrap();
        assert_eq!(kept(&s, &tenant).await.0, 6, "{backend}: the rest added at commit");

        // A transaction dropped without a commit adds nothing.
        let mut tx = s.db().begin().await.unwrap();
        tx.add(&COUNTS, key(), &[100]);
        tx.apply_sums().await.unwrap();
        drop(tx);
        let mut tx = s.db().begin().await.unwrap();
        tx.add(&COUNTS, key(), &[100]);
        drop(tx);
        assert_eq!(kept(&s, &tenant).await.0, 6, "{backend}: rolled back");
    }
}

#[tokio::test]
async fn opposite_orders_of_addition_never_deadlock() {
    for (backend, db) in databases().await {
        let s = db.services();
        let (a, b) = (tenant(&s, "A").await, tenant(&s, "B").await);
        // Two transactions at a time add to both tenants' rows, one in each order,
        // and hold their transactions open a moment before committing: added at
        // once, in the order noted, each would wait for the other's second row.
        for round in 0..20 {
            let mut tasks = Vec::new();
            for (first, second) in [(a.clone(), b.clone()), (b.clone(), a.clone())] {
                let s = s.clone();
                tasks.push(tokio::spawn(async move {
                    let mut tx = s.db().begin().await?;
                    tx.add(&COUNTS, vec![KeyPart::from(first.as_str())], &[1]);
                    tokio::task::yield_now().await;
                    tx.add(&COUNTS, vec![KeyPart::from(second.as_str())], &[1]);
                    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                    tx.commit().await
                }));
            }
            for task in tasks {
                task.await
                    .unwrap()
                    .unwrap_or_else(|e| panic!("{backend}, round {round}: {e}"));
            }
        }
        assert_eq!(kept(&s, &a).await.0, 40, "{backend}");
        assert_eq!(kept(&s, &b).await.0, 40, "{backend}");
    }
}
