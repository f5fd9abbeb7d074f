//! Where a widget visitor is: the page and language the widget reports, which
//! `URL` conditions and system messages read.

use super::{check_language, Customer};
use crate::{error::CoreResult, ids::TenantId, validate::Checks, with_tx, Services};

impl Services {
    /// Records where a widget visitor is: the page it is on and its language
    /// (each only when given), which `URL` conditions and system messages read.
    /// Writes only when something changed, so a visitor writing from the same
    /// page costs no write; fires no event (the page is context, not a change
    /// the client made).
    pub(crate) async fn set_visitor_context(
        &self,
        tenant_id: &TenantId,
        customer: &Customer,
        page_url: Option<String>,
        language: Option<String>,
    ) -> CoreResult<()> {
        let page_url = page_url.filter(|u| customer.page_url.as_ref() != Some(u));
        let language = language.filter(|l| customer.language.as_ref() != Some(l));
        if page_url.is_none() && language.is_none() {
            return Ok(());
        }
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update customers set page_url = coalesce($3, page_url), language = coalesce($4, language) \
             where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(&customer.id)
        .bind(&page_url)
        .bind(&language)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await
    }
}

/// Checks what a widget reports of a visitor's whereabouts: `pageUrl` an
/// http(s) URL, `language` a BCP 47 tag; blank means not given.
pub(crate) fn check_visitor_context(
    checks: &mut Checks,
    page_url: Option<&str>,
    language: Option<&str>,
) -> (Option<String>, Option<String>) {
    let page_url = checks.optional_text("pageUrl", page_url, 2048);
    if let Some(url) = &page_url {
        checks.http_url("pageUrl", url);
    }
    let language = check_language(checks, "language", language).flatten();
    (page_url, language)
}
