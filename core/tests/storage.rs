//! Storage and service behaviour, on SQLite and PostgreSQL alike.

use rapport_core::{
    audit::Actor,
    auth::{LoginInput, Principal},
    backend_tests,
    ids::TenantId,
    model::{PageRequest, Role},
    tenants::{NewTenant, TenantUpdate},
    testing::TestDb,
    users::NewUser,
    CoreError, Services,
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

async fn user(s: &Services, tenant_id: &TenantId, email: &str, role: Role) {
    s.create_user(
        NewUser {
            tenant_id: tenant_id.clone(),
            email: email.into(),
            password: Some("password-123".into()),
            role,
            display_name: None,
            platform_admin: false,
        },
        &actor(),
    )
    .await
    .unwrap();
}

async fn tenant_lifecycle(t: TestDb) {
    let s = t.services();
    let created = s
        .create_tenant(
            NewTenant {
                name: Some("ACME Corp".into()),
                slug: None,
                timezone: Some("Europe/Berlin".into()),
            },
            &actor(),
        )
        .await
        .unwrap();
    assert_eq!(created.slug, "acme-corp");
    assert_eq!(s.find_tenant("acme-corp").await.unwrap().id, created.id);
    assert_eq!(s.find_tenant(&created.id).await.unwrap().name, "ACME Corp");

    let dup = s
        .create_tenant(
            NewTenant {
                name: Some("ACME Corp".into()),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(dup, CoreError::Conflict { field: Some(ref f), .. } if f == "slug"),
        "{dup:?}"
    );

    let bad = s
        .create_tenant(
            NewTenant {
                name: Some(" ".into()),
                slug: None,
                timezone: Some("Nowhere/Land".into()),
            },
            &actor(),
        )
        .await
        .unwrap_err();
    let CoreError::Validation(fields) = bad else {
        panic!("expected validation")
    };
    let names: Vec<_> = fields.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(names, ["name", "timezone"]);

    let updated = s
        .update_tenant(
            &created.id,
            TenantUpdate {
                name: Some("ACME".into()),
                slug: Some("acme".into()),
                timezone: None,
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap();
    assert_eq!(
        (updated.name.as_str(), updated.slug.as_str(), updated.timezone.as_str()),
        ("ACME", "acme", "Europe/Berlin")
    );

    let page = s
        .list_tenants(&PageRequest {
            page_size: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.page.total_elements, 1);
    s.delete_tenant(&created.id, &actor()).await.unwrap();
    assert!(matches!(s.get_tenant(&created.id).await, Err(CoreError::NotFound(_))));
    assert!(matches!(
        s.delete_tenant(&created.id, &actor()).await,
        Err(CoreError::NotFound(_))
    ));
}

async fn bootstrap_once_and_login(t: TestDb) {
    let s = t.services();
    let first = s.bootstrap(None, None).await.unwrap().expect("first start bootstraps");
    let password = first.generated_password.clone().expect("a password is generated");
    assert!(
        s.bootstrap(None, None).await.unwrap().is_none(),
        "second start does nothing"
    );

    let login = s
        .login(&LoginInput {
            workspace: None,
            email: "ADMIN@rapport.local".into(),
            password: password.clone(),
        })
        .await
        .unwrap();
    assert_eq!(login.user.role, Role::Admin);
    assert!(login.user.platform_admin);
    let again = s.session_user(&login.session_token).await.unwrap().unwrap();
    assert_eq!(again.id, login.user.id);

    let wrong = s
        .login(&LoginInput {
            workspace: None,
            email: first.admin_email.clone(),
            password: "nope-nope".into(),
        })
        .await;
    assert!(matches!(wrong, Err(CoreError::Unauthenticated)));
    let unknown = s
        .login(&LoginInput {
            workspace: None,
            email: "who@x.io".into(),
            password: password.clone(),
        })
        .await;
    assert!(matches!(unknown, Err(CoreError::Unauthenticated)));

    // A second login rotates: a new, different session.
    let second = s
        .login(&LoginInput {
            workspace: None,
            email: first.admin_email.clone(),
            password,
        })
        .await
        .unwrap();
    assert_ne!(second.session_token, login.session_token);

    s.logout(&login.session_token).await.unwrap();
    assert!(s.session_user(&login.session_token).await.unwrap().is_none());
    assert!(s.session_user(&second.session_token).await.unwrap().is_some());

    // The last platform admin's tenant cannot be deleted.
    let default = s.find_tenant("default").await.unwrap();
    assert!(matches!(
        s.delete_tenant(&default.id, &actor()).await,
        Err(CoreError::Conflict { .. })
    ));
}

async fn same_email_in_two_tenants_needs_workspace(t: TestDb) {
    let s = t.services();
    let a = tenant(&s, "Alpha").await;
    let b = tenant(&s, "Beta").await;
    user(&s, &a, "sam@example.com", Role::Agent).await;
    user(&s, &b, "sam@example.com", Role::Supervisor).await;
    let dup = s
        .create_user(
            NewUser {
                tenant_id: a.clone(),
                email: "Sam@Example.com".into(),
                password: Some("password-123".into()),
                role: Role::Agent,
                display_name: None,
                platform_admin: false,
            },
            &actor(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(dup, CoreError::Conflict { field: Some(ref f), .. } if f == "email"),
        "{dup:?}"
    );

    let ambiguous = s
        .login(&LoginInput {
            workspace: None,
            email: "sam@example.com".into(),
            password: "password-123".into(),
        })
        .await
        .unwrap_err();
    assert!(matches!(ambiguous, CoreError::Validation(ref f) if f[0].field == "workspace"));
    let beta = s
        .login(&LoginInput {
            workspace: Some("beta".into()),
            email: "sam@example.com".into(),
            password: "password-123".into(),
        })
        .await
        .unwrap();
    assert_eq!(beta.user.role, Role::Supervisor);
    assert_eq!(beta.user.tenant_id, b);
}

async fn api_keys_are_tenant_scoped_and_revocable(t: TestDb) {
    let s = t.services();
    let a = tenant(&s, "Alpha").await;
    let b = tenant(&s, "Beta").await;
    let key = s.create_api_key(&a, "CRM sync", &actor()).await.unwrap();
    assert!(key.token.starts_with("rpt_"));
    assert!(key.token.starts_with(&key.key.prefix));

    match s.authenticate_token(&key.token).await.unwrap() {
        Principal::Tenant { tenant_id, key_id } => {
            assert_eq!(tenant_id, a);
            assert_eq!(key_id, key.key.id);
        }
        other => panic!("unexpected {other:?}"),
    }
    let listed = s.get_api_key(&a, &key.key.id).await.unwrap();
    assert!(listed.last_used_at.is_some(), "use is recorded");

    // Another tenant cannot see, or revoke, the key.
    assert!(matches!(
        s.get_api_key(&b, &key.key.id).await,
        Err(CoreError::NotFound(_))
    ));
    assert!(matches!(
        s.revoke_api_key(&b, &key.key.id, &actor()).await,
        Err(CoreError::NotFound(_))
    ));
    assert_eq!(
        s.list_api_keys(&b, &PageRequest::default())
            .await
            .unwrap()
            .page
            .total_elements,
        0
    );
    assert!(s.authenticate_token(&key.token).await.is_ok());

    let revoked = s.revoke_api_key(&a, &key.key.id, &actor()).await.unwrap();
    assert!(revoked.revoked_at.is_some());
    assert!(matches!(
        s.authenticate_token(&key.token).await,
        Err(CoreError::Unauthenticated)
    ));
    assert!(matches!(
        s.authenticate_token("rpt_garbage").await,
        Err(CoreError::Unauthenticated)
    ));
    assert!(matches!(
        s.authenticate_token("").await,
        Err(CoreError::Unauthenticated)
    ));

    let empty_name = s.create_api_key(&a, "  ", &actor()).await.unwrap_err();
    assert!(matches!(empty_name, CoreError::Validation(ref f) if f[0].field == "name"));
}

async fn platform_keys_need_a_platform_admin(t: TestDb) {
    let s = t.services();
    s.bootstrap(Some("root@example.com"), Some("password-123"))
        .await
        .unwrap();
    let root = s
        .login(&LoginInput {
            workspace: None,
            email: "root@example.com".into(),
            password: "password-123".into(),
        })
        .await
        .unwrap()
        .user;
    let key = s.create_platform_key(&root.id, "ops", &actor()).await.unwrap();
    assert!(key.token.starts_with("rpp_"));
    assert!(matches!(
        s.authenticate_token(&key.token).await.unwrap(),
        Principal::Platform { .. }
    ));
    assert_eq!(s.list_platform_keys(&root.id).await.unwrap().len(), 1);

    let other = tenant(&s, "Other").await;
    user(&s, &other, "plain@example.com", Role::Admin).await;
    let plain = s
        .login(&LoginInput {
            workspace: None,
            email: "plain@example.com".into(),
            password: "password-123".into(),
        })
        .await
        .unwrap()
        .user;
    assert!(matches!(
        s.create_platform_key(&plain.id, "nope", &actor()).await,
        Err(CoreError::Forbidden)
    ));
    assert!(matches!(
        s.revoke_platform_key(&plain.id, &key.key.id, &actor()).await,
        Err(CoreError::NotFound(_))
    ));

    s.revoke_platform_key(&root.id, &key.key.id, &actor()).await.unwrap();
    assert!(matches!(
        s.authenticate_token(&key.token).await,
        Err(CoreError::Unauthenticated)
    ));
}

async fn password_change_ends_sessions(t: TestDb) {
    let s = t.services();
    let a = tenant(&s, "Alpha").await;
    user(&s, &a, "kim@example.com", Role::Agent).await;
    let login = s
        .login(&LoginInput {
            workspace: None,
            email: "kim@example.com".into(),
            password: "password-123".into(),
        })
        .await
        .unwrap();
    let b = tenant(&s, "Beta").await;
    assert!(matches!(
        s.set_password(&b, &login.user.id, "another-pass", &actor()).await,
        Err(CoreError::NotFound(_))
    ));
    s.set_password(&a, &login.user.id, "another-pass", &actor())
        .await
        .unwrap();
    assert!(s.session_user(&login.session_token).await.unwrap().is_none());
}

async fn user_names_are_read_for_the_tenant_only(t: TestDb) {
    let s = t.services();
    let a = tenant(&s, "Alpha").await;
    let b = tenant(&s, "Beta").await;
    user(&s, &a, "kim@example.com", Role::Agent).await;
    user(&s, &b, "lee@example.com", Role::Agent).await;
    let page = PageRequest::default();
    let kim = s.list_users(&a, None, &page).await.unwrap().results.remove(0);
    let lee = s.list_users(&b, None, &page).await.unwrap().results.remove(0);
    s.update_user(
        &a,
        &kim.id,
        rapport_core::users::UserIn {
            email: Some("kim@example.com".into()),
            display_name: Some("Kim Agent".into()),
            ..Default::default()
        },
        &actor(),
    )
    .await
    .unwrap();
    let names = s
        .user_names(&a, &[kim.id.as_str(), lee.id.as_str(), "no-such-id"])
        .await
        .unwrap();
    assert_eq!(names.len(), 1, "another tenant's user stays unknown: {names:?}");
    assert_eq!(names[kim.id.as_str()], "Kim Agent");
    let names = s.user_names(&b, &[lee.id.as_str()]).await.unwrap();
    assert_eq!(names[lee.id.as_str()], "lee@example.com", "no display name: the e-mail");
    assert!(s.user_names(&a, &[]).await.unwrap().is_empty());
}

backend_tests!(
    user_names_are_read_for_the_tenant_only,
    tenant_lifecycle,
    bootstrap_once_and_login,
    same_email_in_two_tenants_needs_workspace,
    api_keys_are_tenant_scoped_and_revocable,
    platform_keys_need_a_platform_admin,
    password_change_ends_sessions,
);
