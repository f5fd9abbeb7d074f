//! The REST API reference, rendered from the server's OpenAPI document. Works
//! offline: no external scripts or fonts.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::erase::EraseView;
use crate::{
    api::reference::{api_operations, Operation},
    components::{feedback::ErrorNote, layout::Guard},
};

/// The API reference page.
#[component]
pub fn ApiReferencePage() -> impl IntoView {
    let ops = Resource::new(|| (), |_| api_operations());
    view! {
        <Title text="API reference" />
        <Guard allowed=|_| true>
            <h1>"REST API reference"</h1>
            <p class="lead">
                "Base path "<code>"/rest/v1"</code>". The machine-readable OpenAPI 3.1 document is at "
                <a href="/rest/v1/openapi.json">"/rest/v1/openapi.json"</a>
                ". Errors are "<code>"application/problem+json"</code>" with a stable "<code>"code"</code>"."
            </p>
            <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match ops.await {
                        Ok(list) => list.into_iter().map(|op| view! { <OperationCard op=op /> }).collect_view().erase(),
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Suspense>
        </Guard>
    }
}

#[component]
fn OperationCard(op: Operation) -> impl IntoView {
    let method_class = format!("method {}", op.method.to_lowercase());
    view! {
        <details class="card operation">
            <summary>
                <span class=method_class>{op.method.clone()}</span>
                <code class="path">{op.path.clone()}</code>
                <span class="summary">{op.summary.clone()}</span>
            </summary>
            {(!op.description.is_empty()).then(|| view! { <p>{op.description.clone()}</p> })}
            <dl>
                {(!op.security.is_empty()).then(|| view! { <dt>"Authentication"</dt><dd>{op.security.join(" or ")}</dd> })}
                {(!op.parameters.is_empty()).then(|| view! {
                    <dt>"Parameters"</dt>
                    <dd><ul>{op.parameters.iter().map(|p| view! { <li>{p.clone()}</li> }).collect_view()}</ul></dd>
                })}
                {op.request_body.clone().map(|b| view! { <dt>"Request body"</dt><dd><code>{b}</code></dd> })}
                <dt>"Responses"</dt>
                <dd><ul>{op.responses.iter().map(|r| view! { <li>{r.clone()}</li> }).collect_view()}</ul></dd>
            </dl>
        </details>
    }
}
