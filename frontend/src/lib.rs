//! The browser entry point: hydrates the server-rendered dashboard.

mod unsaved;

/// Called by the hydration script once the wasm module is loaded.
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(rapport_app::App);
    unsaved::install();
    // Tells browser tests (and anyone curious) that the page is interactive now.
    if let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = root.set_attribute("data-hydrated", "true");
    }
}
