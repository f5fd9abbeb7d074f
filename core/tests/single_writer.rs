//! SQLite's single writer (see `rapport_core::db`): reads go through read-only
//! connections, so a write that bypasses the writer fails instead of quietly
//! competing for the file lock; and many concurrent writers all commit, queued for
//! the one connection, without a `database is locked` error.

use rapport_core::{audit::Actor, customers::CustomerIn, db::Db, tenants::NewTenant, testing::TestDb, with_db};

#[tokio::test]
async fn reads_are_read_only_and_writes_queue_for_the_one_writer() {
    let t = TestDb::sqlite().await.unwrap();
    let s = t.services();
    let tenant = s
        .create_tenant(
            NewTenant {
                name: Some("Alpha".into()),
                ..Default::default()
            },
            &Actor::system("tests"),
        )
        .await
        .unwrap()
        .id;

    // A write through the read pool is refused by SQLite itself.
    let Db::Sqlite(pools) = s.db() else {
        unreachable!("a SQLite test database")
    };
    let err = sqlx::query("update tenants set name = 'Sneaky' where id = $1")
        .bind(&tenant)
        .execute(&pools.reads)
        .await
        .expect_err("the read pool must refuse writes");
    assert!(err.to_string().contains("readonly"), "{err}");
    // Through the writer it works.
    let done = with_db!(s.writer(), |pool| sqlx::query(
        "update tenants set name = 'Alpha 2' where id = $1"
    )
    .bind(&tenant)
    .execute(pool)
    .await
    .map(|r| r.rows_affected()))
    .unwrap();
    assert_eq!(done, 1);
    assert!(matches!(s.writer(), Db::Sqlite(p) if p.writes.size() <= 1));

    // Many writers at once: every one commits, and each reads its own write at once.
    let mut tasks = Vec::new();
    for n in 0..64 {
        let (s, tenant) = (s.clone(), tenant.clone());
        tasks.push(tokio::spawn(async move {
            let created = s
                .save_customer(
                    &tenant,
                    CustomerIn {
                        external_id: Some(format!("c-{n}")),
                        ..Default::default()
                    },
                    &Actor::system("tests"),
                )
                .await?;
            s.get_customer(&tenant, &created.id).await
        }));
    }
    for task in tasks {
        task.await
            .unwrap()
            .expect("each concurrent create commits and is read back");
    }
    let page = s
        .list_customers(&tenant, &Default::default(), &Default::default())
        .await
        .unwrap();
    assert_eq!(page.page.total_elements, 64);
}
