//! A key's answer changes the moment anything that decides it commits, even once
//! the key has been resolved (and, on SQLite, kept in memory): a revoked key, a
//! deleted tenant, and a platform key whose owner is gone all stop at once.

use rapport_core::{
    audit::Actor, auth::Principal, backend_tests, ids::TenantId, model::Role, tenants::NewTenant, testing::TestDb,
    users::NewUser, CoreError, Services,
};

fn actor() -> Actor {
    Actor::system("tests")
}

async fn tenant(s: &Services, name: &str) -> TenantId {
    s.create_tenant(
        NewTenant {
            name: Some(name.into()),
            ..Default::default()
        },
        &actor(),
    )
    .await
    .unwrap()
    .id
}

async fn platform_admin(s: &Services, tenant_id: &str, email: &str) -> rapport_core::ids::UserId {
    s.create_user(
        NewUser {
            tenant_id: tenant_id.into(),
            email: email.into(),
            password: Some("password-123".into()),
            role: Role::Admin,
            display_name: None,
            platform_admin: true,
        },
        &actor(),
    )
    .await
    .unwrap()
    .id
}

/// Resolves `token` twice (the second time from memory where the backend keeps
/// keys), then expects it to fail after `change`.
async fn resolved(s: &Services, token: &str) {
    for _ in 0..2 {
        s.authenticate_token(token)
            .await
            .expect("the key works before the change");
    }
}

fn refused(result: Result<Principal, CoreError>) {
    assert!(matches!(result, Err(CoreError::Unauthenticated)), "{result:?}");
}

async fn keys_stop_the_moment_what_decides_them_changes(t: TestDb) {
    let s = t.services();
    // A revoked tenant key.
    let alpha = tenant(&s, "Alpha").await;
    let key = s.create_api_key(&alpha, "k", &actor()).await.unwrap();
    resolved(&s, &key.token).await;
    s.revoke_api_key(&alpha, &key.key.id, &actor()).await.unwrap();
    refused(s.authenticate_token(&key.token).await);

    // A deleted tenant's key.
    let beta = tenant(&s, "Beta").await;
    let key = s.create_api_key(&beta, "k", &actor()).await.unwrap();
    resolved(&s, &key.token).await;
    s.delete_tenant(&beta, &actor()).await.unwrap();
    refused(s.authenticate_token(&key.token).await);

    // A platform key whose owner is deleted (another platform admin remains).
    let ops = tenant(&s, "Operators").await;
    platform_admin(&s, &ops, "keeper@example.com").await;
    let owner = platform_admin(&s, &ops, "leaver@example.com").await;
    let key = s.create_platform_key(&owner, "ops", &actor()).await.unwrap();
    resolved(&s, &key.token).await;
    s.delete_user(&ops, &owner, &actor()).await.unwrap();
    refused(s.authenticate_token(&key.token).await);

    // A revoked platform key.
    let keeper = s.find_user(&ops, "keeper@example.com").await.unwrap().id;
    let key = s.create_platform_key(&keeper, "ops", &actor()).await.unwrap();
    resolved(&s, &key.token).await;
    s.revoke_platform_key(&keeper, &key.key.id, &actor()).await.unwrap();
    refused(s.authenticate_token(&key.token).await);
}

backend_tests!(keys_stop_the_moment_what_decides_them_changes);
