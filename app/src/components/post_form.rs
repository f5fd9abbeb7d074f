//! Forms that post their own body: [`FormAction`] and [`PostForm`], used in
//! place of Leptos' `ServerAction` and `ActionForm` for every form.
//!
//! `ActionForm` reads the form into the server function's argument type
//! (serde_qs), and `ServerAction` writes that value back out (serde_qs again)
//! to post it. That is two generated (de)serialisers per form in the browser
//! bundle, to rebuild a body the browser already has. `PostForm` posts the
//! form's own URL-encoded fields instead, the very body the browser sends
//! without JavaScript, so the server reads one format from both paths and the
//! bundle keeps only the decoder of each function's JSON answer.
//!
//! A form the server refuses comes back the same way as with Leptos: as the
//! action's error, or after a post without JavaScript, as the error Leptos
//! puts in the URL of the page it redirects back to.

use std::{marker::PhantomData, ops::Deref};

use leptos::{
    ev::SubmitEvent,
    prelude::*,
    server::ServerActionError,
    server_fn::{error::ServerFnUrlError, ServerFn},
};
use serde::de::DeserializeOwned;

use crate::erase::SyncChildren;

/// The value of a form's last submission, and whether one is under way.
/// Derefs to the [`Action`] that posts the form's body, so `value()`,
/// `version()` and `pending()` read as on a `ServerAction`.
pub struct FormAction<S: ServerFn> {
    action: Action<String, Result<S::Output, ServerFnError>>,
    server_fn: PhantomData<fn() -> S>,
}

impl<S> FormAction<S>
where
    S: ServerFn<Error = ServerFnError> + 'static,
    S::Output: DeserializeOwned + Send + Sync + 'static,
{
    /// An action that posts a form to the server function `S`.
    #[allow(clippy::new_without_default)] // Like `ServerAction::new`: it reads the context.
    pub fn new() -> Self {
        // After a post without JavaScript that failed, the server redirects
        // back with the error in the URL, for the action of the same path.
        let failed = use_context::<ServerActionError>()
            .filter(|error| error.path() == S::PATH)
            .map(|error| Err(ServerFnUrlError::<ServerFnError>::decode_err(error.err())));
        let action = Action::new_with_value(failed, |body: &String| {
            let answer = post(S::PATH, body.clone());
            async move {
                let text = answer.await?;
                serde_json::from_str(&text).map_err(|e| ServerFnError::Deserialization(e.to_string()))
            }
        });
        FormAction {
            action,
            server_fn: PhantomData,
        }
    }
}

impl<S: ServerFn> Clone for FormAction<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S: ServerFn> Copy for FormAction<S> {}

impl<S: ServerFn> Deref for FormAction<S> {
    type Target = Action<String, Result<S::Output, ServerFnError>>;

    fn deref(&self) -> &Self::Target {
        &self.action
    }
}

/// A `<form>` that posts to `action`'s server function: in place, with the
/// form's own fields, once hydrated, and as a plain form post before or
/// without JavaScript.
#[component]
pub fn PostForm<S>(
    /// The action that posts the form.
    action: FormAction<S>,
    /// Where to keep the `<form>` element.
    #[prop(optional)]
    node_ref: Option<NodeRef<leptos::html::Form>>,
    children: SyncChildren,
) -> impl IntoView
where
    S: ServerFn<Error = ServerFnError> + 'static,
    S::Output: DeserializeOwned + Send + Sync + 'static,
{
    let on_submit = move |event: SubmitEvent| {
        if event.default_prevented() {
            return;
        }
        event.prevent_default();
        match form_body(&event) {
            Some(body) => {
                action.dispatch(body);
            }
            None => action.value().set(Some(Err(ServerFnError::Request(
                "The form could not be read; reload the page and try again.".into(),
            )))),
        }
    };
    view! {
        <form action=S::url() method="post" on:submit=on_submit node_ref=node_ref.unwrap_or_default()>
            {children.view()}
        </form>
    }
}

/// The submitted form's fields, with the button that submitted it, URL-encoded
/// as the browser would post them.
fn form_body(event: &SubmitEvent) -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        let data = leptos::form::form_data_from_event(event).ok()?;
        let query = leptos::web_sys::UrlSearchParams::new_with_str_sequence_sequence(&data).ok()?;
        query.to_string().as_string()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        // Submit events happen in the browser only.
        let _ = event;
        None
    }
}

/// Posts `body` to the server function at `path` and returns its answer's
/// text, or its error. A redirect it asks for goes through Leptos' redirect
/// hook, as with any server function.
#[cfg(feature = "hydrate")]
async fn post(path: &'static str, body: String) -> Result<String, ServerFnError> {
    use leptos::server_fn::{
        client::{browser::BrowserClient, Client},
        codec::{Json, PostUrl},
        error::FromServerFnError,
        redirect::call_redirect_hook,
        request::{browser::BrowserRequest, ClientReq},
        response::{browser::BrowserResponse, ClientRes},
        ContentType,
    };

    let request = <BrowserRequest as ClientReq<ServerFnError>>::try_new_post(
        path,
        PostUrl::CONTENT_TYPE,
        Json::CONTENT_TYPE,
        body,
    )?;
    let response: BrowserResponse = <BrowserClient as Client<ServerFnError>>::send(request).await?;
    let status = <BrowserResponse as ClientRes<ServerFnError>>::status(&response);
    let location = <BrowserResponse as ClientRes<ServerFnError>>::location(&response);
    let redirect =
        (300..400).contains(&status) || <BrowserResponse as ClientRes<ServerFnError>>::has_redirect(&response);
    let failed = (400..600).contains(&status);
    let text = <BrowserResponse as ClientRes<ServerFnError>>::try_into_string(response).await?;
    if failed {
        return Err(ServerFnError::de(text.into()));
    }
    if redirect {
        call_redirect_hook(&location);
    }
    Ok(text)
}

/// On the server a form arrives as an HTTP post to its server function; the
/// action itself is never dispatched there.
#[cfg(not(feature = "hydrate"))]
async fn post(_path: &'static str, _body: String) -> Result<String, ServerFnError> {
    Err(ServerFnError::Request("forms are posted by the browser".into()))
}
