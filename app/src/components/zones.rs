//! The time zone picker's suggestions.

use leptos::prelude::*;

use crate::api::workspace::time_zones;

/// Every IANA zone name, loaded from the server so that the wasm bundle
/// carries no zone database.
pub type ZonesResource = Resource<Result<Vec<String>, ServerFnError>>;

/// Starts loading the zone names. Call it at the top of a page component, not
/// inside a `Suspense`: a resource created while another one resolves would
/// be registered in a different order on the server and in the browser, and
/// hydration would fail.
pub fn load_zone_names() -> ZonesResource {
    Resource::new(|| (), |_| time_zones())
}

/// A `<datalist>` of the zone names, for an input with `list=id`.
#[component]
pub fn ZoneNames(zones: ZonesResource, #[prop(into)] id: String) -> impl IntoView {
    view! {
        <Suspense>
            {move || {
                let id = id.clone();
                Suspend::new(async move {
                    zones.await.ok().map(|zones| view! {
                        <datalist id=id>
                            {zones.into_iter().map(|z| view! { <option value=z></option> }).collect_view()}
                        </datalist>
                    })
                })
            }}
        </Suspense>
    }
}
