//! The document's language, as screen readers and browsers read it: the
//! `lang` of `<html>`. The dashboard speaks English; a live view opened in
//! another of its five languages (`?lang=`) speaks that one.

use leptos::prelude::*;
use leptos_meta::Html;
use leptos_router::hooks::use_location;

/// The BCP 47 tag of a live-view language code. The codes are the spec's
/// (`en`, `de`, `jp`, `uk`, `ru`); `jp` names a country, and Japanese is `ja`.
/// An unknown code is English, as the page then is.
pub fn html_lang(code: &str) -> &'static str {
    match code {
        "de" => "de",
        "jp" => "ja",
        "uk" => "uk",
        "ru" => "ru",
        _ => "en",
    }
}

/// Sets `<html lang>` for the page shown, on the server and again on every
/// navigation in the browser. There is one in the app (inside the router): a
/// second would add a second `lang` to the server's `<html>`.
#[component]
pub fn DocumentLanguage() -> impl IntoView {
    let location = use_location();
    let lang = move || {
        if location.pathname.get().starts_with("/liveview/") {
            html_lang(location.query.with(|q| q.get("lang")).as_deref().unwrap_or("en"))
        } else {
            "en"
        }
    };
    view! { <Html {..} lang=lang /> }
}
