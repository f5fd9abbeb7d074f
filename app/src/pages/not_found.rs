//! Unknown pages.

use leptos::prelude::*;
use leptos_meta::Title;

/// 404 page; sets the status on the server.
#[component]
pub fn NotFound() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(axum::http::StatusCode::NOT_FOUND);
    }
    view! {
        <Title text="Not found" />
        <main id="main" class="page">
            <section class="card empty-state">
                <h1>"Page not found"</h1>
                <p>"The address may be mistyped, or the page has moved."</p>
                <p><a href="/">"Go to the start page"</a></p>
            </section>
        </main>
    }
}
