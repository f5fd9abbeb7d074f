//! Sign in. A plain form posting to `/auth/login`, so it works the same without
//! JavaScript; with it, the button shows progress and cannot be double-clicked.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

/// Why the last attempt failed, from the `error` query parameter set by the server.
fn error_message(code: &str) -> &'static str {
    match code {
        "invalid" => "The e-mail or password is not right.",
        "workspace_required" => "This e-mail belongs to several workspaces: enter the workspace too.",
        "rate_limited" => "Too many attempts. Wait a minute, then try again.",
        "link_invalid" => "That link has expired or was already used. Ask for a new one, or sign in.",
        "signed_out" => "",
        _ => "Signing in failed. Please try again.",
    }
}

/// The login page.
#[component]
pub fn LoginPage() -> impl IntoView {
    let query = use_query_map();
    let error = move || {
        query
            .with(|q| q.get("error"))
            .map(|c| error_message(&c))
            .filter(|m| !m.is_empty())
    };
    let signed_out = move || query.with(|q| q.get("error").as_deref() == Some("signed_out"));
    let email = move || query.with(|q| q.get("email")).unwrap_or_default();
    let workspace = move || query.with(|q| q.get("workspace")).unwrap_or_default();
    let next = move || {
        query
            .with(|q| q.get("next"))
            .filter(|n| rapport_core::redirects::local_path(n).is_some())
            .unwrap_or_else(|| "/".into())
    };
    let pending = RwSignal::new(false);
    view! {
        <Title text="Sign in" />
        <main id="main" class="login">
            <form class="card login-card" method="post" action="/auth/login" on:submit=move |_| pending.set(true)>
                <h1>"Sign in to Rapport"</h1>
                {move || signed_out().then(|| view! { <p class="note" role="status">"You are signed out."</p> })}
                {move || error().map(|m| view! { <p class="note error" role="alert">{m}</p> })}
                <input type="hidden" name="next" value=next />
                <label for="email">"E-mail"</label>
                <input id="email" name="email" type="email" autocomplete="username" required=true value=email() />
                <label for="password">"Password"</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required=true />
                <details class="workspace" open=move || !workspace().is_empty()>
                    <summary>"Sign in to a specific workspace"</summary>
                    <label for="workspace">"Workspace"</label>
                    <input id="workspace" name="workspace" type="text" autocomplete="organization" placeholder="e.g. acme" value=workspace() />
                    <p class="hint">"Needed only when your e-mail is used in several workspaces."</p>
                </details>
                <button type="submit" class="button primary" disabled=move || pending.get()>
                    {move || if pending.get() { "Signing in…" } else { "Sign in" }}
                </button>
            </form>
        </main>
    }
}
