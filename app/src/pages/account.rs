//! Your account: who you are signed in as, and every browser signed in as you,
//! with a way to sign any of them out (a lost laptop, a shared computer).

use leptos::prelude::*;
use leptos_meta::Title;
use rapport_core::model::SignInSession;

use crate::{
    api::account::{my_sessions, EndMyOtherSessions, EndMySession},
    components::{
        feedback::{ActionError, ErrorNote},
        layout::{agents, Guard, UserResource},
        post_form::{FormAction, PostForm},
    },
    erase::EraseView,
};

fn when(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// `/account`.
#[component]
pub fn AccountPage() -> impl IntoView {
    let end_one = FormAction::<EndMySession>::new();
    let end_others = FormAction::<EndMyOtherSessions>::new();
    // Created outside the guard's `Suspense` (see `Guard`).
    let sessions = Resource::new(
        move || (end_one.version().get(), end_others.version().get()),
        |_| my_sessions(),
    );
    let user = expect_context::<UserResource>();
    view! {
        <Title text="Your account" />
        <Guard allowed=agents>
            <h1>"Your account"</h1>
            <Suspense>
                {move || Suspend::new(async move {
                    user.await.ok().flatten().map(|u| view! {
                        <p class="lead">
                            {format!("Signed in as {} ({}), {} of {}.", u.name(), u.email, u.role.label(), u.tenant_name)}
                        </p>
                    })
                })}
            </Suspense>
            <section class="card">
                <h2>"Where you are signed in"</h2>
                <p class="hint">
                    "Each browser signed in as you. A session ends after 7 days unused, and 30 days after signing in. "
                    "Sign out a browser you no longer use or do not know: it is asked to sign in again at once."
                </p>
                <ActionError value=end_one.value() />
                <ActionError value=end_others.value() />
                <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading sessions…"</p> }>
                    {move || Suspend::new(async move {
                        match sessions.await {
                            Ok(list) => view! { <SessionTable sessions=list end_one end_others /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Suspense>
            </section>
        </Guard>
    }
}

#[component]
fn SessionTable(
    sessions: Vec<SignInSession>,
    end_one: FormAction<EndMySession>,
    end_others: FormAction<EndMyOtherSessions>,
) -> impl IntoView {
    let others = sessions.iter().filter(|s| !s.current).count();
    view! {
        <div class="table-wrap">
            <table class="sign-ins">
                <thead>
                    <tr>
                        <th scope="col">"Browser"</th>
                        <th scope="col">"Address"</th>
                        <th scope="col">"Signed in"</th>
                        <th scope="col">"Last used"</th>
                        <th scope="col">"Ends"</th>
                        <th scope="col"><span class="visually-hidden">"Actions"</span></th>
                    </tr>
                </thead>
                <tbody>
                    {sessions
                        .into_iter()
                        .map(|s| {
                            let device = s.device.clone().unwrap_or_else(|| "Unknown browser".into());
                            let label = format!("Sign out {device}, last used {}", when(s.last_seen_at));
                            view! {
                                <tr class:current=s.current>
                                    <td>
                                        {device.clone()}
                                        {s.current.then(|| view! { " " <span class="badge ok">"This browser"</span> })}
                                    </td>
                                    <td>{s.ip.clone().unwrap_or_else(|| "—".into())}</td>
                                    <td>{when(s.created_at)}</td>
                                    <td>{when(s.last_seen_at)}</td>
                                    <td>{when(s.ends_at)}</td>
                                    <td>
                                        {(!s.current).then(|| view! {
                                            <PostForm action=end_one>
                                                <input type="hidden" name="id" value=s.id.clone() />
                                                <button type="submit" class="button danger small" aria-label=label.clone()>"Sign out"</button>
                                            </PostForm>
                                        })}
                                    </td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
        {if others > 0 {
            view! {
                <PostForm action=end_others>
                    <button type="submit" class="button danger">
                        {if others == 1 { "Sign out the other browser".to_string() } else { format!("Sign out the other {others} browsers") }}
                    </button>
                </PostForm>
            }.erase()
        } else {
            view! { <p class="empty">"No other browser is signed in as you."</p> }.erase()
        }}
    }
}
