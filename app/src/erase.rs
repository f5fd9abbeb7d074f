//! Type-erased views that hydrate synchronously: [`EraseView::erase`], used
//! everywhere in place of Leptos' `into_any`.
//!
//! The dashboard hydrates asynchronously (`hydrate_from_async`), because a
//! lazy page's code must arrive before its HTML can be hydrated. Leptos
//! therefore compiles an async twin of every view's hydration
//! (`RenderHtml::hydrate_async`), and `into_any` keeps a pointer to that twin
//! for every type it erases, whether or not anything awaits there. Those
//! twins are state machines nested as deep as the views they hydrate: measured
//! on the linked bundle they were 15 % of all code, over four times the size of
//! the synchronous hydration they wrap.
//!
//! Nothing inside a page waits for code: the router has loaded the page's
//! chunk before it hydrates the page. So [`SyncHydrated`] gives a view the
//! async hydration that runs the synchronous one at once, and only the path
//! from the root to the router's outlet keeps Leptos' own.
//! `into_any` is refused by clippy (see `clippy.toml`) so that no page brings
//! the twins back.

use std::{future::Future, sync::Arc};

use leptos::{
    children::ToChildren,
    prelude::AnyView,
    tachys::{
        html::attribute::{any_attribute::AnyAttribute, Attribute},
        hydration::Cursor,
        ssr::StreamBuilder,
        view::{add_attr::AddAnyAttr, Position, PositionState, Render, RenderHtml},
    },
};

/// A view that hydrates synchronously even when its parent hydrates
/// asynchronously; in every other respect it is the view it wraps.
pub struct SyncHydrated<V>(V);

impl<V: Render> Render for SyncHydrated<V> {
    type State = V::State;

    fn build(self) -> Self::State {
        self.0.build()
    }

    fn rebuild(self, state: &mut Self::State) {
        self.0.rebuild(state)
    }
}

impl<V: AddAnyAttr> AddAnyAttr for SyncHydrated<V> {
    type Output<SomeNewAttr: Attribute> = SyncHydrated<V::Output<SomeNewAttr>>;

    fn add_any_attr<NewAttr: Attribute>(self, attr: NewAttr) -> Self::Output<NewAttr>
    where
        Self::Output<NewAttr>: RenderHtml,
    {
        SyncHydrated(self.0.add_any_attr(attr))
    }
}

impl<V: RenderHtml> RenderHtml for SyncHydrated<V> {
    type AsyncOutput = SyncHydrated<V::AsyncOutput>;
    type Owned = SyncHydrated<V::Owned>;

    const MIN_LENGTH: usize = V::MIN_LENGTH;
    const EXISTS: bool = V::EXISTS;

    fn dry_resolve(&mut self) {
        self.0.dry_resolve()
    }

    fn resolve(self) -> impl Future<Output = Self::AsyncOutput> + Send {
        let inner = self.0.resolve();
        async move { SyncHydrated(inner.await) }
    }

    fn html_len(&self) -> usize {
        self.0.html_len()
    }

    fn to_html_with_buf(
        self,
        buf: &mut String,
        position: &mut Position,
        escape: bool,
        mark_branches: bool,
        extra_attrs: Vec<AnyAttribute>,
    ) {
        self.0
            .to_html_with_buf(buf, position, escape, mark_branches, extra_attrs)
    }

    fn to_html_async_with_buf<const OUT_OF_ORDER: bool>(
        self,
        buf: &mut StreamBuilder,
        position: &mut Position,
        escape: bool,
        mark_branches: bool,
        extra_attrs: Vec<AnyAttribute>,
    ) where
        Self: Sized,
    {
        self.0
            .to_html_async_with_buf::<OUT_OF_ORDER>(buf, position, escape, mark_branches, extra_attrs)
    }

    fn hydrate<const FROM_SERVER: bool>(self, cursor: &Cursor, position: &PositionState) -> Self::State {
        self.0.hydrate::<FROM_SERVER>(cursor, position)
    }

    /// Hydrates at once, synchronously: a future with no state to keep.
    fn hydrate_async(self, cursor: &Cursor, position: &PositionState) -> impl Future<Output = Self::State> {
        std::future::ready(self.hydrate::<true>(cursor, position))
    }

    fn into_owned(self) -> Self::Owned {
        SyncHydrated(self.0.into_owned())
    }
}

/// Erases a view's type, as `into_any` does, without compiling its async
/// hydration (see the module's documentation).
pub trait EraseView {
    /// The view as an [`AnyView`] that hydrates synchronously.
    fn erase(self) -> AnyView;
}

impl<V: RenderHtml + Send + 'static> EraseView for V {
    fn erase(self) -> AnyView {
        #[allow(clippy::disallowed_methods)] // The one place `into_any` is meant.
        leptos::prelude::IntoAny::into_any(SyncHydrated(self))
    }
}

/// A component's children, erased with [`EraseView::erase`]: Leptos'
/// `Children` without the async hydration twin (see the module's
/// documentation). Shown once, with [`SyncChildren::view`].
pub struct SyncChildren(Box<dyn FnOnce() -> AnyView + Send>);

impl SyncChildren {
    /// The children's view.
    pub fn view(self) -> AnyView {
        (self.0)()
    }
}

impl<F, C> ToChildren<F> for SyncChildren
where
    F: FnOnce() -> C + Send + 'static,
    C: RenderHtml + Send + 'static,
{
    fn to_children(f: F) -> Self {
        SyncChildren(Box::new(move || f().erase()))
    }
}

/// Like [`SyncChildren`], for children shown more than once (Leptos'
/// `ChildrenFn`).
#[derive(Clone)]
pub struct SyncChildrenFn(Arc<dyn Fn() -> AnyView + Send + Sync>);

impl SyncChildrenFn {
    /// The children's view, made afresh.
    pub fn view(&self) -> AnyView {
        (self.0)()
    }
}

impl<F, C> ToChildren<F> for SyncChildrenFn
where
    F: Fn() -> C + Send + Sync + 'static,
    C: RenderHtml + Send + 'static,
{
    fn to_children(f: F) -> Self {
        SyncChildrenFn(Arc::new(move || f().erase()))
    }
}
