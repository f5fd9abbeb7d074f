//! One message of the open thread, rendered by its type, and the form that
//! sends the customer a file.

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use crate::{api::inbox::MessageView, components::layout::encode_query, erase::EraseView};

/// Sends a file to the customer: a plain multipart form to
/// `/inbox/{customerId}/file` (see `server/src/http/files.rs`), which returns to
/// this view, with `file_error=<code>` when the file was refused.
#[component]
pub fn AttachForm(customer_id: String, back: String) -> impl IntoView {
    let error = use_query_map()
        .with_untracked(|q| q.get("file_error"))
        .map(|code| match code.as_str() {
            "file_too_large" => "The file is larger than this server accepts.",
            "file_storage_full" => "This workspace's file storage is full. Delete old conversations' files first.",
            "empty" => "The file is empty.",
            "files_off" => "This server does not accept files.",
            "missing" => "Choose a file first.",
            _ => "The file could not be sent. Try again.",
        });
    view! {
        <form class="attach" method="post" enctype="multipart/form-data"
            action=format!("/inbox/{}/file", encode_query(&customer_id))>
            // Before the file: the server reads the way back first.
            <input type="hidden" name="back" value=back />
            <label for="attach-file">"Attach a file"</label>
            <input id="attach-file" type="file" name="file" required=true
                aria-invalid=error.map(|_| "true") aria-describedby="attach-file-error" />
            {error.map(|message| view! { <p class="field-error" id="attach-file-error" role="alert">{message}</p> })}
            <button type="submit" class="button secondary">"Send file"</button>
        </form>
    }
}

/// One message, rendered by its type.
#[component]
pub fn MessageItem(message: MessageView, seen: Option<AnyView>) -> impl IntoView {
    let MessageView {
        inbound,
        kind,
        text,
        url,
        button,
        sender,
        at,
        ..
    } = message;
    let caption = text.map(|t| view! { <p class="text">{t}</p> });
    let body = match (kind.as_str(), url) {
        ("AUDIO", Some(url)) => view! {
            <audio controls=true preload="none" src=url.clone()></audio>
            <a class="muted" href=url target="_blank" rel="noopener noreferrer">"Open the audio"</a>
        }
        .erase(),
        ("VIDEO", Some(url)) => view! {
            <video controls=true preload="none" src=url.clone()></video>
            <a class="muted" href=url target="_blank" rel="noopener noreferrer">"Open the video"</a>
        }
        .erase(),
        ("FILE", Some(url)) => {
            let name = file_name(&url);
            view! { <a class="file" href=url target="_blank" rel="noopener noreferrer">"📎 " {name}</a> }.erase()
        }
        _ => ().erase(),
    };
    let card = button.map(|(label, link)| {
        view! { <a class="button secondary card-button" href=link target="_blank" rel="noopener noreferrer">{label}</a> }
    });
    view! {
        <li class=if inbound { "message inbound" } else { "message outbound" }>
            <p class="meta"><span class="who">{sender}</span> " · " <time>{at}</time>{seen}</p>
            {caption}
            {body}
            {card}
        </li>
    }
}

/// The last path segment of a URL, for a file link's text.
fn file_name(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.rsplit('/')
        .find(|s| !s.is_empty())
        .filter(|s| !s.contains(':'))
        .unwrap_or("Download the file")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_links_are_named_after_the_file() {
        assert_eq!(file_name("https://cdn.example.com/docs/invoice.pdf?x=1"), "invoice.pdf");
        assert_eq!(file_name("https://cdn.example.com/"), "cdn.example.com");
        assert_eq!(file_name("https://"), "Download the file");
    }
}
