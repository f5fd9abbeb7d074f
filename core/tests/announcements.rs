//! On PostgreSQL a transaction's notifications (`Tx::notify_after_commit`, how
//! live changes reach the other instances) go out once it has committed, never
//! before, and never for a transaction that rolled back.

use std::time::Duration;

use rapport_core::testing::TestDb;
use sqlx::postgres::PgListener;

const CHANNEL: &str = "rapport_test_announcements";

/// The next notification on the channel within `wait`, if any.
async fn heard(listener: &mut PgListener, wait: Duration) -> Option<String> {
    tokio::time::timeout(wait, listener.recv())
        .await
        .ok()
        .map(|n| n.expect("the listener stays connected").payload().to_string())
}

#[tokio::test]
async fn notifications_go_out_after_the_commit_and_only_with_it() {
    let Some(db) = TestDb::postgres().await.unwrap() else {
        eprintln!("RAPPORT_TEST_POSTGRES_URL is unset: PostgreSQL only");
        return;
    };
    let s = db.services();
    let mut listener = PgListener::connect(&db.url).await.unwrap();
    listener.listen(CHANNEL).await.unwrap();
    let quiet = Duration::from_millis(300);

    // Noted, and the transaction still open: nobody hears it yet.
    let mut tx = s.db().begin().await.unwrap();
    assert!(tx.notifies());
    tx.notify_after_commit(CHANNEL, "first".into());
    tx.notify_after_commit(CHANNEL, "second".into());
    assert_eq!(heard(&mut listener, quiet).await, None, "nothing before the commit");
    tx.commit().await.unwrap();
    let wait = Duration::from_secs(5);
    assert_eq!(heard(&mut listener, wait).await.as_deref(), Some("first"));
    assert_eq!(
        heard(&mut listener, wait).await.as_deref(),
        Some("second"),
        "in the order noted"
    );

    // A transaction dropped without a commit announces nothing.
    let mut tx = s.db().begin().await.unwrap();
    tx.notify_after_commit(CHANNEL, "rolled back".into());
    drop(tx);
    assert_eq!(heard(&mut listener, quiet).await, None);

    // On SQLite there is nobody else to tell.
    let sqlite = TestDb::sqlite().await.unwrap();
    let mut tx = sqlite.services().db().begin().await.unwrap();
    assert!(!tx.notifies());
    tx.notify_after_commit(CHANNEL, "nobody".into());
    tx.commit().await.unwrap();
    assert_eq!(heard(&mut listener, quiet).await, None);
}
