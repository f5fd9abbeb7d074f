//! What a page reads from its route.

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

/// The path parameter `name` of the page's route (`id` in
/// `/settings/users/{id}`), read where it is called: in a reactive closure it
/// is tracked, so a page the router reuses for another item follows it, and
/// inside `untrack` it is read once. Empty when the route has no such
/// parameter.
pub fn use_path_param(name: &'static str) -> impl Fn() -> String + Copy + Send + Sync + 'static {
    let params = use_params_map();
    move || params.with(|p| p.get(name).unwrap_or_default())
}
