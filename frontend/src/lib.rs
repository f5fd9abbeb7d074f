//! The browser entry point: hydrates the server-rendered dashboard.

mod unsaved;

/// Called by the hydration script once the wasm module is loaded.
///
/// Most pages are lazy routes whose code is a separate wasm chunk, so
/// hydration waits for the current page's chunk (the server preloads it) before
/// it walks the server's HTML. This is `leptos::mount::hydrate_lazy`, with a
/// point at which we know hydration is done.
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    wasm_bindgen_futures::spawn_local(async {
        leptos::mount::hydrate_from_async(leptos::tachys::dom::body(), rapport_app::App)
            .await
            .forget();
        unsaved::install();
        // Tells browser tests (and anyone curious) that the page is interactive now.
        if let Some(root) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element())
        {
            let _ = root.set_attribute("data-hydrated", "true");
        }
    });
}
