//! The inbox's panel about the open conversation's customer: the page the
//! visitor is on (with its recorded visit, to watch live or replay), its
//! language, and its tags, which agents add and remove here
//! (routing rules' `HAS_TAG` reads them). Each form works without JavaScript.

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
    view! {
        <section class="customer-facts" aria-label="About the customer">
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
        </section>
    }
}
