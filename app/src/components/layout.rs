//! The signed-in frame: top bar with navigation that follows the user's role,
//! the notifications bell with its unread count, and the page below. Signed-out
//! visitors are sent to the login page.

use leptos::prelude::*;
use leptos_router::{
    components::{Outlet, Redirect, A},
    hooks::use_location,
};
use rapport_core::{
    model::{Role, SessionUser},
    reports::api::PresenceStatus,
};

use crate::api::{
    notifications::{notification_count, NOTIFICATIONS_PATH},
    presence::{my_presence, presence_heartbeat, SetMyPresence},
    session::current_user,
};
use crate::components::post_form::{FormAction, PostForm};
use crate::erase::{EraseView, SyncChildrenFn};

/// The signed-in user, loaded once per page and shared with every page.
pub type UserResource = Resource<Result<Option<SessionUser>, ServerFnError>>;

/// Bumped when the user's notifications may have changed (a live event, or
/// the user marked them read): the bell reads its count again. Provided by
/// [`Layout`] to every page.
#[derive(Clone, Copy)]
pub struct BellTick(pub RwSignal<u32>);

impl BellTick {
    /// Asks the bell to read its count again.
    pub fn bump(self) {
        self.0.update(|n| *n = n.wrapping_add(1));
    }
}

/// One navigation entry and who sees it.
struct NavItem {
    href: &'static str,
    label: &'static str,
    visible: fn(&SessionUser) -> bool,
}

const NAV: &[NavItem] = &[
    NavItem {
        href: "/",
        label: "Home",
        visible: |_| true,
    },
    NavItem {
        href: "/inbox",
        label: "Inbox",
        visible: agents,
    },
    NavItem {
        href: "/appointments",
        label: "Appointments",
        visible: agents,
    },
    NavItem {
        href: "/sessions",
        label: "Sessions",
        visible: agents,
    },
    NavItem {
        href: "/links",
        label: "Links",
        visible: agents,
    },
    NavItem {
        href: "/reports",
        label: "Reports",
        visible: supervisors,
    },
    NavItem {
        href: "/settings",
        label: "Settings",
        visible: supervisors,
    },
    NavItem {
        href: "/platform/tenants",
        label: "Tenants",
        visible: |u| u.platform_admin,
    },
    NavItem {
        href: "/platform/api",
        label: "Platform API",
        visible: |u| u.platform_admin,
    },
    NavItem {
        href: "/docs/api",
        label: "API reference",
        visible: |_| true,
    },
];

/// Who may open an admin page ([`Guard`]'s `allowed`).
pub fn admins(user: &SessionUser) -> bool {
    user.role.includes(Role::Admin)
}

/// Who may open a supervisor page.
pub fn supervisors(user: &SessionUser) -> bool {
    user.role.includes(Role::Supervisor)
}

/// Who may open an agent page: every user of a tenant.
pub fn agents(user: &SessionUser) -> bool {
    user.role.includes(Role::Agent)
}

/// An RFC 3339 instant as the dashboard prints it, in UTC (to the second when
/// `seconds`); unparsable text is shown as it came.
pub fn utc_time(rfc3339: &str, seconds: bool) -> String {
    let format = if seconds {
        "%Y-%m-%d %H:%M:%S UTC"
    } else {
        "%Y-%m-%d %H:%M UTC"
    };
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .map(|t| t.with_timezone(&chrono::Utc).format(format).to_string())
        .unwrap_or_else(|_| rfc3339.to_string())
}

/// Percent-encodes a query value for a link.
pub fn encode_query(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The login page's address for someone signed out at `path` (with its `search`,
/// the query string): `/login?next=…`, so that signing in comes back here.
pub fn login_path(path: &str, search: &str) -> String {
    let search = search.trim_start_matches('?');
    let next = if search.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{search}")
    };
    if next == "/" || next.is_empty() {
        "/login".to_string()
    } else {
        format!("/login?next={}", encode_query(&next))
    }
}

/// [`login_path`] for the page shown when it is called (read when the redirect
/// happens, not when the frame was built, since the frame stays across pages).
fn login_here() -> impl Fn() -> String + Copy + Send + Sync + 'static {
    let location = use_location();
    let (pathname, search) = (location.pathname, location.search);
    move || login_path(&pathname.get_untracked(), &search.get_untracked())
}

/// Frame of every signed-in page.
#[component]
pub fn Layout() -> impl IntoView {
    let user: UserResource = Resource::new(|| (), |_| current_user());
    let login = login_here();
    provide_context(user);
    // Created here, outside the suspended top bar, so that the server and the
    // browser register them in the same order while hydrating.
    let presence = Resource::new(|| (), |_| my_presence());
    // The count the page is rendered with; later counts are read by the bell
    // itself, so that neither this resource nor the top bar is ever redone.
    let unread = Resource::new(|| (), |_| notification_count());
    let tick = BellTick(RwSignal::new(0));
    provide_context(tick);
    // Effects run in the browser only: the bell follows the event stream once
    // the page is live.
    Effect::new(move |_| {
        #[cfg(feature = "hydrate")]
        bell_live::follow(tick);
    });
    view! {
        <a class="skip-link" href="#main">"Skip to content"</a>
        <Suspense fallback=|| view! { <header class="topbar"><span class="brand">"Rapport"</span></header> }>
            {move || Suspend::new(async move {
                match user.await {
                    Ok(Some(u)) => {
                        let status = presence.await.ok().flatten();
                        let unread = unread.await.unwrap_or(0);
                        view! { <TopBar user=u presence=status unread tick /> }.erase()
                    }
                    Ok(None) => view! { <Redirect path=login() /> }.erase(),
                    Err(_) => view! { <header class="topbar"><span class="brand">"Rapport"</span></header> }.erase(),
                }
            })}
        </Suspense>
        <main id="main" class="page">
            <Outlet />
        </main>
    }
}

#[component]
fn TopBar(user: SessionUser, presence: Option<PresenceStatus>, unread: i64, tick: BellTick) -> impl IntoView {
    let items: Vec<_> = NAV.iter().filter(|item| (item.visible)(&user)).collect();
    view! {
        <header class="topbar">
            <a class="brand" href="/">"Rapport"</a>
            <nav aria-label="Main">
                <ul class="nav">
                    {items
                        .into_iter()
                        // A section stays marked on its sub-pages (`/settings/users`); Home only on itself.
                        .map(|item| view! { <li><A href=item.href exact={item.href == "/"}>{item.label}</A></li> })
                        .collect_view()}
                </ul>
            </nav>
            <div class="account">
                <Bell unread tick />
                <PresenceSwitch initial=presence />
                <a class="who" href="/account" title="Your account and where you are signed in">
                    <span class="name">{user.name().to_string()}</span>
                    <span class="meta">{format!("{} · {}", user.role.label(), user.tenant_name)}</span>
                </a>
                <form method="post" action="/auth/logout">
                    <button type="submit" class="button secondary">"Sign out"</button>
                </form>
            </div>
        </header>
    }
}

/// The bell: a link to the notifications with the unread count, which follows
/// live (read again whenever [`BellTick`] moves). The count is also said in
/// words in a polite live region, so a screen reader hears when a notification
/// arrives. No `Suspense` in here: the top bar sits in the frame's own, which
/// the server may render twice, and a nested one would shift the ids of the
/// page's resources.
#[component]
fn Bell(unread: i64, tick: BellTick) -> impl IntoView {
    let count = RwSignal::new(unread);
    // Effects run in the browser only: a tick reads the count again.
    Effect::new(move |_| {
        if tick.0.get() > 0 {
            leptos::task::spawn_local(async move {
                if let Ok(n) = notification_count().await {
                    count.set(n);
                }
            });
        }
    });
    let words = move || match count.get() {
        0 => "No unread notifications".to_string(),
        1 => "1 unread notification".to_string(),
        n => format!("{n} unread notifications"),
    };
    view! {
        <a class="bell" href=NOTIFICATIONS_PATH aria-describedby="bell-count">
            <span class="bell-icon" aria-hidden="true">"🔔"</span>
            <span class="visually-hidden">"Notifications"</span>
            <span class="bell-badge" aria-hidden="true" hidden=move || count.get() == 0>{move || count.get().to_string()}</span>
        </a>
        <span id="bell-count" class="visually-hidden" role="status" aria-live="polite">{words}</span>
    }
}

/// How often the open dashboard tells the server the user is still there; well
/// inside the server's presence timeout (3 minutes by default).
const HEARTBEAT_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// Online / away / offline, as three buttons (each its own form, so it works
/// without JavaScript); the pressed one is the current status. While the page is
/// open it sends a heartbeat, so presence ends when the dashboard is closed.
#[component]
fn PresenceSwitch(initial: Option<PresenceStatus>) -> impl IntoView {
    let set = FormAction::<SetMyPresence>::new();
    // The newest status known here: from a change or a heartbeat.
    let latest = RwSignal::new(None::<PresenceStatus>);
    Effect::new(move |_| {
        if let Some(Ok(status)) = set.value().get() {
            latest.set(Some(status));
        }
    });
    // Effects run in the browser only: the heartbeat starts after hydration.
    Effect::new(move |_| {
        let handle = set_interval_with_handle(
            move || {
                leptos::task::spawn_local(async move {
                    if let Ok(status) = presence_heartbeat().await {
                        latest.set(Some(status));
                    }
                })
            },
            HEARTBEAT_EVERY,
        );
        on_cleanup(move || {
            if let Ok(handle) = handle {
                handle.clear();
            }
        });
    });
    view! {
        <div class="presence" role="group" aria-label="Your status">
            {PresenceStatus::ALL
                .into_iter()
                .map(|status| {
                    view! {
                        <PostForm action=set>
                            <input type="hidden" name="status" value=status.as_str() />
                            <button
                                type="submit"
                                class=format!("presence-option {}", status.as_str().to_lowercase())
                                aria-pressed=move || (latest.get().or(initial) == Some(status)).to_string()
                                disabled=move || set.pending().get()
                            >
                                <span class="dot" aria-hidden="true"></span>
                                {status.label()}
                            </button>
                        </PostForm>
                    }
                })
                .collect_view()}
        </div>
    }
}

/// Renders `children` only for users `allowed` lets in; others see why not.
///
/// Create a page's resources before the guard, never in its children: the
/// children sit in a `Suspense`, which the server renders twice (once to find
/// the resources it waits for, once for real) and the browser hydrates once. A
/// resource created in there is registered twice on the server, whenever the
/// signed-in user was already known at the first pass, so the browser reads
/// another resource's data and hydration fails.
#[component]
pub fn Guard(allowed: fn(&SessionUser) -> bool, children: SyncChildrenFn) -> impl IntoView {
    let user = expect_context::<UserResource>();
    let children = StoredValue::new(children);
    let login = login_here();
    view! {
        <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match user.await {
                    Ok(Some(u)) if allowed(&u) => children.with_value(SyncChildrenFn::view),
                    Ok(Some(_)) => view! { <Forbidden /> }.erase(),
                    Ok(None) => view! { <Redirect path=login() /> }.erase(),
                    Err(e) => view! { <crate::components::feedback::ErrorNote error=e.to_string() /> }.erase(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Forbidden() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(axum::http::StatusCode::FORBIDDEN);
    }
    view! {
        <section class="card empty-state">
            <h1>"Not available to your role"</h1>
            <p>"Ask an admin of your workspace if you need access to this page."</p>
            <p><a href="/">"Back to the start page"</a></p>
        </section>
    }
}

#[cfg(feature = "hydrate")]
mod bell_live {
    //! The bell's side of `GET /inbox/events?only=notifications`: a notification
    //! for this user (or a resync) makes the bell read its count again.

    use leptos::prelude::*;
    use wasm_bindgen::{closure::Closure, JsCast};

    use super::BellTick;

    /// Opens the stream for as long as the frame is shown; the browser
    /// reconnects by itself after a network error, and after an error answer
    /// this opens a new stream a few seconds later.
    pub(super) fn follow(tick: BellTick) {
        let current = StoredValue::new_local(None::<web_sys::EventSource>);
        let shown = StoredValue::new(true);
        connect(tick, current, shown, false);
        on_cleanup(move || {
            shown.set_value(false);
            current.with_value(|s| {
                if let Some(s) = s {
                    s.close();
                }
            });
        });
    }

    /// `after_outage`: a stream was down before this one, so notifications
    /// may have been missed and the count is read again once it opens.
    fn connect(
        tick: BellTick,
        current: StoredValue<Option<web_sys::EventSource>, LocalStorage>,
        shown: StoredValue<bool>,
        after_outage: bool,
    ) {
        let Ok(source) = web_sys::EventSource::new("/inbox/events?only=notifications") else {
            return;
        };
        let down = std::rc::Rc::new(std::cell::Cell::new(after_outage));
        let failed = source.clone();
        let went_down = down.clone();
        let on_error = Closure::<dyn FnMut()>::new(move || {
            went_down.set(true);
            if failed.ready_state() == web_sys::EventSource::CLOSED && shown.get_value() {
                set_timeout(
                    move || connect(tick, current, shown, true),
                    std::time::Duration::from_secs(5),
                );
            }
        });
        let on_open = Closure::<dyn FnMut()>::new(move || {
            if down.replace(false) {
                tick.bump();
            }
        });
        let on_event = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| tick.bump());
        source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        for name in ["notification", "resync"] {
            let _ = source.add_event_listener_with_callback(name, on_event.as_ref().unchecked_ref());
        }
        // The closures live as long as the source; once it is closed they are
        // never called again.
        on_error.forget();
        on_open.forget();
        on_event.forget();
        current.set_value(Some(source));
    }
}

#[cfg(test)]
mod login_path_tests {
    use super::login_path;

    #[test]
    fn the_login_page_leads_back_to_the_page_asked_for() {
        assert_eq!(login_path("/", ""), "/login");
        assert_eq!(login_path("/inbox/abc", ""), "/login?next=%2Finbox%2Fabc");
        assert_eq!(
            login_path("/inbox", "?status=DONE&c=a"),
            "/login?next=%2Finbox%3Fstatus%3DDONE%26c%3Da"
        );
        assert_eq!(login_path("/inbox", "c=a"), "/login?next=%2Finbox%3Fc%3Da");
    }
}
