//! The `rapport` binary as operators and scripts use it: admin subcommands,
//! `migrate`, first-start bootstrap, and logs that never carry tokens.

use std::{
    io::{BufRead, BufReader, Read},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use rapport_core::{backend_tests, testing::TestDb};

fn rapport(db: &TestDb) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rapport"));
    cmd.env("DATABASE_URL", &db.url)
        .env_remove("RAPPORT_ADMIN_EMAIL")
        .env_remove("RAPPORT_ADMIN_PASSWORD");
    cmd
}

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{:?} failed: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

async fn admin_commands_provision_from_scripts(db: TestDb) {
    stdout_of(rapport(&db).arg("migrate"));
    let tenant: serde_json::Value = serde_json::from_str(&stdout_of(rapport(&db).args([
        "admin",
        "create-tenant",
        "--name",
        "Script Co",
        "--timezone",
        "Europe/Paris",
    ])))
    .unwrap();
    assert_eq!(tenant["slug"], "script-co");

    let user: serde_json::Value = serde_json::from_str(&stdout_of(rapport(&db).args([
        "admin",
        "create-user",
        "--tenant",
        "script-co",
        "--email",
        "ops@script.co",
        "--role",
        "admin",
        "--platform-admin",
    ])))
    .unwrap();
    assert!(user["generatedPassword"].as_str().unwrap().len() >= 16);

    let token = stdout_of(rapport(&db).args(["admin", "create-api-key", "--tenant", "script-co", "--name", "ci"]));
    let token = token.strip_suffix('\n').expect("one line");
    assert!(
        token.starts_with("rpt_") && !token.contains(char::is_whitespace),
        "only the token: {token:?}"
    );
    let principal = db.services().authenticate_token(token).await.unwrap();
    assert!(
        matches!(principal, rapport_core::auth::Principal::Tenant { tenant_id, .. } if tenant_id == tenant["id"].as_str().unwrap())
    );

    // An operator sets a tenant's bounds from a script.
    let limits: serde_json::Value = serde_json::from_str(&stdout_of(rapport(&db).args([
        "admin",
        "set-limits",
        "--tenant",
        "script-co",
        "--limits",
        r#"{"cobrowseSessions": 5, "mailsPerDay": null}"#,
    ])))
    .unwrap();
    assert_eq!(
        (&limits["cobrowseSessions"], &limits["mailsPerDay"]),
        (&serde_json::json!(5), &serde_json::json!(2000))
    );
    let out_of_range = rapport(&db)
        .args([
            "admin",
            "set-limits",
            "--tenant",
            "script-co",
            "--limits",
            r#"{"openStreams": 0}"#,
        ])
        .output()
        .unwrap();
    assert!(!out_of_range.status.success());
    assert!(String::from_utf8_lossy(&out_of_range.stderr).contains("openStreams"));

    let bad = rapport(&db)
        .args(["admin", "create-api-key", "--tenant", "nope", "--name", "x"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(bad.stdout.is_empty(), "errors go to stderr");
}

async fn first_start_prints_login_and_logs_no_tokens(db: TestDb) {
    let data = tempfile::tempdir().unwrap();
    let mut child = rapport(&db)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env("RAPPORT_DATA_DIR", data.path())
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut banner = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut line = String::new();
    while Instant::now() < deadline && !banner.contains("Rapport is running") {
        line.clear();
        if stdout.read_line(&mut line).unwrap() == 0 {
            break;
        }
        banner.push_str(&line);
    }
    assert!(banner.contains("admin@rapport.local"), "{banner}");
    let password = banner
        .lines()
        .find_map(|l| l.strip_prefix("Generated admin password (shown only now): "))
        .expect("password printed once")
        .to_string();
    let addr = banner
        .split("listening on ")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap()
        .to_string();

    // Use a real token in the query string; it must not reach the logs.
    let services = db.services();
    let tenant = services.find_tenant("default").await.unwrap();
    let key = services
        .create_api_key(&tenant.id, "log check", &rapport_core::audit::Actor::system("tests"))
        .await
        .unwrap();
    let response = reqwest::get(format!("http://{addr}/rest/v1/apikey?access_token={}", key.token))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let login = services
        .login(&rapport_core::auth::LoginInput {
            workspace: None,
            email: "admin@rapport.local".into(),
            password: password.clone(),
        })
        .await;
    assert!(login.is_ok(), "the printed password works");

    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let status = child.wait().unwrap();
    assert!(status.success(), "SIGTERM is a clean stop: {status}");
    let mut logs = String::new();
    child.stderr.take().unwrap().read_to_string(&mut logs).unwrap();
    assert!(logs.contains("/rest/v1/apikey"), "requests are logged: {logs}");
    assert!(!logs.contains(&key.token), "tokens never reach the logs");
    assert!(!logs.contains(&password), "passwords never reach the logs");
    assert!(
        logs.contains("RAPPORT_SECRET_KEY is not set") && logs.contains("plain text"),
        "a server without a secret key says so at start: {logs}"
    );
}

backend_tests!(
    admin_commands_provision_from_scripts,
    first_start_prints_login_and_logs_no_tokens
);
