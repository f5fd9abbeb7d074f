//! The inbox's panel about the open conversation's customer: whether its
//! identity is verified (and what it only claims), the page the visitor is on
//! (with its recorded visit, to watch live or replay), its language, its tags,
//! which agents add and remove here, and the tags its page set (routing rules'
//! `HAS_TAG` reads both). Each form works without JavaScript.

use leptos::prelude::*;

use crate::api::inbox::{InboxTags, ThreadView};
use crate::components::{
    feedback::{action_problem, field_invalid, reset_on_success, ActionError, FieldMessage},
    post_form::{FormAction, PostForm},
};

/// Page, language and tags of the thread's customer.
#[component]
pub fn CustomerFacts(thread: ThreadView, tags: FormAction<InboxTags>) -> impl IntoView {
    let id = StoredValue::new(thread.customer_id.clone());
    let problem = action_problem(tags.value());
    let form = NodeRef::<leptos::html::Form>::new();
    reset_on_success(tags.value(), form);
    let page = thread.page_url.map(|url| {
        let href = url.clone();
        view! {
            <p class="customer-page">
                "On the page "
                <a href=href target="_blank" rel="noopener noreferrer">{url}</a>
            </p>
        }
    });
    let language = thread
        .language
        .map(|l| view! { <p class="muted">{format!("Language: {l}")}</p> });
    // Full loads (`rel="external"`): the player's script comes with the page.
    let recording = thread.recording.map(|id| {
        view! {
            <p class="customer-recording">
                <a class="button secondary" rel="external" href=format!("/sessions/{id}/live-view")>"Watch live"</a>
                " "
                <a rel="external" href=format!("/sessions/{id}")>"Replay the visit"</a>
            </p>
        }
    });
    // Anyone can type an e-mail address into a page: what the site did not
    // sign is shown as a claim, never as the customer's.
    let identity = thread
        .identity_verified
        .then(|| view! { <p class="identity verified">"✓ Identity verified by your website"</p> });
    let claims = (!thread.claims.is_empty()).then(|| {
        view! {
            <p class="identity unverified">
                <strong>"Unverified: "</strong>
                {thread.claims.iter().map(|(what, value)| format!("says their {what} is {value}")).collect::<Vec<_>>().join("; ")}
            </p>
        }
    });
    let page_tags = (!thread.page_tags.is_empty()).then(|| {
        view! {
            <p class="muted page-tags-note">"Tags from the visitor's page (any page can set these):"</p>
            <ul class="tags page-tags" aria-label="Tags from the page">
                {thread.page_tags.into_iter().map(|tag| view! { <li class="tag">{tag}</li> }).collect_view()}
            </ul>
        }
    });
    view! {
        <section class="customer-facts" aria-label="About the customer">
            {identity}
            {claims}
            {page}
            {recording}
            {language}
            <ul class="tags" aria-label="Tags">
                {thread.tags.into_iter().map(|tag| view! {
                    <li class="tag">
                        {tag.clone()}
                        <PostForm action=tags attr:class="inline">
                            <input type="hidden" name="customer_id" value=id.get_value() />
                            <input type="hidden" name="remove" value=tag.clone() />
                            <button type="submit" class="link" aria-label=format!("Remove the tag {tag}")>"×"</button>
                        </PostForm>
                    </li>
                }).collect_view()}
            </ul>
            <PostForm action=tags node_ref=form attr:class="add-tags">
                <input type="hidden" name="customer_id" value=id.get_value() />
                <label for="add-tags">"Add tags"</label>
                <input id="add-tags" name="add" type="text" placeholder="vip, billing" autocomplete="off"
                    aria-invalid=field_invalid(problem, "tags") aria-describedby="add-tags-error" />
                <button type="submit" class="button secondary" disabled=move || tags.pending().get()>"Add"</button>
                <FieldMessage problem field="tags" id="add-tags-error" />
            </PostForm>
            <ActionError value=tags.value() />
            {page_tags}
        </section>
    }
}
