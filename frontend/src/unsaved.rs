//! Unsaved-change protection: a form marked `data-unsaved-guard` whose fields
//! differ from what the page loaded with makes the browser ask before the user
//! leaves, by closing the tab, reloading, or following a link inside the app.
//!
//! This lives in the browser entry point because it is pure DOM behaviour: the
//! fields' `defaultValue` / `defaultChecked` / `defaultSelected` are what the
//! server rendered, so no component needs to track what was typed. Saving needs
//! no special case: a hydrated form saves without leaving the page, and the
//! saved record re-renders the form with new defaults.

use wasm_bindgen::{closure::Closure, JsCast};
use web_sys::{Element, Event, HtmlFormElement, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};

const GUARDED_FORMS: &str = "form[data-unsaved-guard]";
const QUESTION: &str = "You have unsaved changes. Leave this page without saving them?";

/// Whether a field differs from its rendered default. Only named fields count:
/// they are what a save submits. Unnamed ones are the page's own controls, such
/// as a list's filter box or the rule builder, which writes into a named field.
fn field_changed(element: &Element) -> bool {
    if !element.has_attribute("name") {
        return false;
    }
    if let Some(input) = element.dyn_ref::<HtmlInputElement>() {
        return match input.type_().as_str() {
            "checkbox" | "radio" => input.checked() != input.default_checked(),
            "hidden" | "submit" | "button" | "reset" => false,
            _ => input.value() != input.default_value(),
        };
    }
    if let Some(area) = element.dyn_ref::<HtmlTextAreaElement>() {
        return area.default_value().is_ok_and(|default| area.value() != default);
    }
    if let Some(select) = element.dyn_ref::<HtmlSelectElement>() {
        let options = select.options();
        return (0..options.length())
            .filter_map(|i| options.item(i))
            .filter_map(|o| o.dyn_into::<web_sys::HtmlOptionElement>().ok())
            .any(|o| o.selected() != o.default_selected());
    }
    false
}

/// Whether any guarded form on the page has unsaved changes.
fn page_has_unsaved_changes() -> bool {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return false;
    };
    let Ok(forms) = document.query_selector_all(GUARDED_FORMS) else {
        return false;
    };
    (0..forms.length())
        .filter_map(|i| forms.item(i))
        .filter_map(|n| n.dyn_into::<HtmlFormElement>().ok())
        .any(|form| {
            let Ok(fields) = form.query_selector_all("input, select, textarea") else {
                return false;
            };
            (0..fields.length())
                .filter_map(|i| fields.item(i))
                .filter_map(|n| n.dyn_into::<Element>().ok())
                .any(|f| field_changed(&f))
        })
}

/// Installs the listeners, once per page load.
pub fn install() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Some(document) = window.document() else {
        return;
    };

    // Closing or reloading the tab: the browser shows its own question.
    let before_unload = Closure::<dyn Fn(Event)>::new(|event: Event| {
        if page_has_unsaved_changes() {
            event.prevent_default();
            if let Some(e) = event.dyn_ref::<web_sys::BeforeUnloadEvent>() {
                e.set_return_value(QUESTION);
            }
        }
    });
    let _ = window.add_event_listener_with_callback("beforeunload", before_unload.as_ref().unchecked_ref());
    before_unload.forget();

    // Links inside the app: the router navigates without unloading, so ask here,
    // in the capture phase, before the router sees the click.
    let click = Closure::<dyn Fn(Event)>::new(|event: Event| {
        let link = event
            .target()
            .and_then(|t| t.dyn_into::<Element>().ok())
            .and_then(|e| e.closest("a[href]").ok().flatten());
        let Some(link) = link else {
            return;
        };
        let new_tab = link.get_attribute("target").is_some_and(|t| t == "_blank");
        let same_page = link.get_attribute("href").is_some_and(|h| h.starts_with('#'));
        if new_tab || same_page || !page_has_unsaved_changes() {
            return;
        }
        let leave = web_sys::window()
            .and_then(|w| w.confirm_with_message(QUESTION).ok())
            .unwrap_or(true);
        if !leave {
            event.prevent_default();
            event.stop_immediate_propagation();
        }
    });
    let _ = document.add_event_listener_with_callback_and_bool("click", click.as_ref().unchecked_ref(), true);
    click.forget();
}
