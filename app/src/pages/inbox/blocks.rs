//! The reply box's picker: text blocks and flows. Typing `/` and the start of a
//! shortcut as the whole draft lists the blocks it begins; the "Text blocks"
//! button lists every block and flow. Choosing a block puts its text, filled in
//! for this customer, in place of the draft, and the reply then carries the
//! block's id so that the use is counted; choosing a flow sends it at once.
//!
//! The list is code of its own ([`block_list`], a lazy chunk): the page shows
//! the button and the hint, and the list's code and the customer's blocks are
//! fetched when the agent first focuses the reply box or presses the button,
//! so an inbox opened to read costs neither.

use leptos::{lazy, prelude::*};

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::text_blocks::{inbox_picker, BlockChoice, InboxSendFlow, Picker},
    components::feedback::ActionError,
};

/// What the reply box shares with its picker.
#[derive(Clone, Copy)]
pub struct Draft {
    /// The reply's text as typed.
    pub text: RwSignal<String>,
    /// The block the text was made from; empty for none.
    pub block: RwSignal<String>,
    /// Which of the listed blocks the arrow keys point at.
    pub highlighted: RwSignal<usize>,
    /// Whether the button opened the whole list.
    pub browsing: RwSignal<bool>,
    /// The blocks the picker lists now.
    listed: RwSignal<Vec<BlockChoice>>,
    /// The reply's text box.
    pub field: NodeRef<leptos::html::Textarea>,
    /// Whether the list has been asked for (the reply box focused, or the
    /// button pressed): from then on its code and the blocks are loaded.
    pub wanted: RwSignal<bool>,
}

impl Draft {
    /// A draft with nothing typed.
    pub fn new() -> Draft {
        Draft {
            text: RwSignal::new(String::new()),
            block: RwSignal::new(String::new()),
            highlighted: RwSignal::new(0),
            browsing: RwSignal::new(false),
            listed: RwSignal::new(Vec::new()),
            field: NodeRef::new(),
            wanted: RwSignal::new(false),
        }
    }

    /// The shortcut being typed: the draft is `/` and no space.
    fn slash_query(&self) -> Option<String> {
        self.text.with(|t| {
            t.strip_prefix('/')
                .filter(|q| !q.contains(char::is_whitespace))
                .map(str::to_lowercase)
        })
    }

    /// Follows the text box: a draft emptied forgets its block, and a
    /// shortcut begun wants the list.
    pub fn typed(&self, text: String) {
        if text.is_empty() {
            self.block.set(String::new());
        }
        if text.starts_with('/') && !self.wanted.get_untracked() {
            self.wanted.set(true);
        }
        self.highlighted.set(0);
        self.text.set(text);
    }

    /// Puts `block` in the text box.
    fn insert(&self, block: &BlockChoice) {
        if let Some(field) = self.field.get_untracked() {
            field.set_value(&block.text);
            let _ = field.focus();
        }
        self.text.set(block.text.clone());
        self.block.set(block.id.clone());
        self.browsing.set(false);
    }

    /// The text box's keys while the picker lists blocks: arrows move, Enter
    /// or Tab inserts the highlighted one, Escape closes the list.
    pub fn key(&self, e: leptos::ev::KeyboardEvent) {
        let blocks = self.listed.get_untracked();
        if blocks.is_empty() {
            return;
        }
        let at = self.highlighted.get_untracked().min(blocks.len() - 1);
        match e.key().as_str() {
            "ArrowDown" => self.highlighted.set((at + 1) % blocks.len()),
            "ArrowUp" => self.highlighted.set((at + blocks.len() - 1) % blocks.len()),
            "Enter" | "Tab" => self.insert(&blocks[at]),
            "Escape" => {
                self.browsing.set(false);
                if self.slash_query().is_some() {
                    if let Some(field) = self.field.get_untracked() {
                        field.set_value("");
                    }
                    self.typed(String::new());
                }
            }
            _ => return,
        }
        e.prevent_default();
    }

    /// After a reply was sent: nothing typed, no block.
    pub fn clear(&self) {
        self.text.set(String::new());
        self.block.set(String::new());
        self.browsing.set(false);
    }
}

/// The blocks the draft lists: those whose shortcut the typed one begins, or
/// all while browsing.
fn listed(picker: &Picker, draft: &Draft) -> Vec<BlockChoice> {
    match draft.slash_query() {
        Some(q) => picker
            .blocks
            .iter()
            .filter(|b| b.shortcut.starts_with(&q))
            .cloned()
            .collect(),
        None if draft.browsing.get() => picker.blocks.clone(),
        None => Vec::new(),
    }
}

/// The picker's bar under the reply box, and its list once wanted (see
/// [`Draft::wanted`]); the text box's keys act on the list: arrows move, Enter
/// or Tab inserts, Escape closes.
#[component]
pub fn BlockPicker(customer_id: String, draft: Draft) -> impl IntoView {
    let customer = StoredValue::new(customer_id);
    view! {
        <div class="picker-bar">
            <button type="button" class="button secondary small" aria-expanded=move || draft.browsing.get().to_string()
                aria-controls="block-picker" on:click=move |_| {
                    draft.wanted.set(true);
                    draft.browsing.update(|b| *b = !*b);
                }>
                "Text blocks"
            </button>
            <span class="hint">"or type " <kbd>"/"</kbd> " and a shortcut"</span>
        </div>
        // Nothing on the server (the list is not wanted yet), so hydration
        // never waits for the list's code.
        {move || draft.wanted.get().then(|| {
            let customer_id = customer.get_value();
            view! {
                <Suspense fallback=|| ()>{Suspend::new(block_list(customer_id, draft))}</Suspense>
            }
        })}
    }
}

/// The list of blocks and flows, and what choosing one does: the lazy chunk
/// [`BlockPicker`] loads.
#[lazy]
fn block_list(customer_id: String, draft: Draft) -> AnyView {
    let customer = StoredValue::new(customer_id);
    let picker = Resource::new(move || customer.get_value(), inbox_picker);
    let send_flow = FormAction::<InboxSendFlow>::new();
    let loaded = Memo::new(move |_| picker.get().and_then(Result::ok).unwrap_or_default());
    let shown = Memo::new(move |_| loaded.with(|p| listed(p, &draft)));
    Effect::new(move |_| draft.listed.set(shown.get()));
    let flows_shown = move || draft.browsing.get() && draft.slash_query().is_none();
    view! {
        <div id="block-picker" class="block-picker" hidden=move || shown.with(Vec::is_empty) && !flows_shown()>
            <ul role="listbox" aria-label="Text blocks">
                {move || {
                    let at = draft.highlighted.get();
                    shown.get().into_iter().enumerate().map(|(i, block)| {
                        let chosen = StoredValue::new(block.clone());
                        view! {
                            <li role="option" class="block-choice" aria-selected=(i == at).to_string()
                                on:mousedown=move |e| { e.prevent_default(); chosen.with_value(|b| draft.insert(b)); }>
                                <strong>{format!("/{}", block.shortcut)}</strong>
                                {(!block.language.is_empty()).then(|| view! { " " <span class="tag">{block.language.clone()}</span> })}
                                <span class="muted clip">{block.text}</span>
                            </li>
                        }
                    }).collect_view()
                }}
            </ul>
            {move || (flows_shown() && loaded.with(|p| p.blocks.is_empty())).then(|| view! {
                <p class="empty">"No text blocks yet: admins add them under Settings › Text blocks."</p>
            })}
            {move || flows_shown().then(|| {
                let flows = loaded.with(|p| p.flows.clone());
                if flows.is_empty() {
                    return ().erase();
                }
                view! {
                    <h3>"Send a flow"</h3>
                    <ul class="plain-list flows">
                        {flows.into_iter().map(|(id, name)| view! {
                            <li>
                                <PostForm action=send_flow>
                                    <input type="hidden" name="customer_id" value=customer.get_value() />
                                    <input type="hidden" name="flow_id" value=id />
                                    <button type="submit" class="button secondary small">{format!("Send “{name}”")}</button>
                                </PostForm>
                            </li>
                        }).collect_view()}
                    </ul>
                }.erase()
            })}
        </div>
        <ActionError value=send_flow.value() />
    }
    .erase()
}
