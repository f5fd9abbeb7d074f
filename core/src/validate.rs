//! Input rules shared by every entry point. Each check appends [`FieldError`]s to a
//! [`Checks`] collector so one answer names every offending field at once.

use crate::{
    error::{CoreError, CoreResult, FieldError},
    model::PageRequest,
};

/// Collects field errors; [`Checks::finish`] turns them into one validation error.
#[derive(Debug, Default)]
pub struct Checks(Vec<FieldError>);

impl Checks {
    /// An empty collector.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an error.
    pub fn push(&mut self, field: &str, code: &str, message: impl Into<String>) {
        self.0.push(FieldError::new(field, code, message));
    }

    /// A required, non-blank string of at most `max` characters; returns it trimmed.
    pub fn required_text(&mut self, field: &str, value: Option<&str>, max: usize) -> String {
        match value.map(str::trim) {
            None | Some("") => {
                self.push(field, "required", format!("{field} is required"));
                String::new()
            }
            Some(v) => {
                self.max_len(field, v, max);
                v.to_string()
            }
        }
    }

    /// An optional string of at most `max` characters; blank becomes `None`.
    pub fn optional_text(&mut self, field: &str, value: Option<&str>, max: usize) -> Option<String> {
        let v = value.map(str::trim).filter(|v| !v.is_empty())?;
        self.max_len(field, v, max);
        Some(v.to_string())
    }

    fn max_len(&mut self, field: &str, value: &str, max: usize) {
        if value.chars().count() > max {
            self.push(field, "too_long", format!("{field} must be at most {max} characters"));
        }
    }

    /// A required e-mail address; returns it lower-cased.
    pub fn email(&mut self, field: &str, value: Option<&str>) -> String {
        let v = self.required_text(field, value, 254);
        if !v.is_empty() && !is_email(&v) {
            self.push(field, "invalid_email", format!("{field} must be an e-mail address"));
        }
        v.to_lowercase()
    }

    /// A password of 8 to 256 characters.
    pub fn password(&mut self, field: &str, value: &str) {
        let n = value.chars().count();
        if n < 8 {
            self.push(field, "too_short", format!("{field} must be at least 8 characters"));
        } else if n > 256 {
            self.push(field, "too_long", format!("{field} must be at most 256 characters"));
        }
    }

    /// An IANA time zone name such as `Europe/Berlin`.
    pub fn timezone(&mut self, field: &str, value: &str) {
        if value.parse::<chrono_tz::Tz>().is_err() {
            self.push(
                field,
                "invalid_timezone",
                format!("{field} must be an IANA time zone such as Europe/Berlin"),
            );
        }
    }

    /// A slug: 2–63 of `a-z`, `0-9` and `-`, starting with a letter or digit.
    pub fn slug(&mut self, field: &str, value: &str) {
        let ok = (2..=63).contains(&value.len())
            && value
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !value.starts_with('-');
        if !ok {
            self.push(
                field,
                "invalid_slug",
                format!("{field} must be 2 to 63 characters of a-z, 0-9 and '-', not starting with '-'"),
            );
        }
    }

    /// Unique tags, each 1–64 characters, at most `max` of them. A duplicate is an
    /// error at its index (`tags[2]`), never silently merged.
    pub fn tags(&mut self, field: &str, tags: &[String], max: usize) {
        if tags.len() > max {
            self.push(field, "too_many", format!("{field} may hold at most {max} items"));
        }
        for (i, tag) in tags.iter().enumerate() {
            let at = format!("{field}[{i}]");
            if tag.trim().is_empty() || tag.chars().count() > 64 {
                self.push(&at, "invalid_value", format!("{at} must be 1 to 64 characters"));
            } else if tags[..i].contains(tag) {
                self.push(
                    &at,
                    "duplicate",
                    format!("{at} repeats \"{tag}\"; items must be unique"),
                );
            }
        }
    }

    /// Unique items, at most `max` of them, each checked by `each` (which gets the
    /// item's field path).
    pub fn unique_items<T: PartialEq>(
        &mut self,
        field: &str,
        items: &[T],
        max: usize,
        mut each: impl FnMut(&mut Self, &str, &T),
    ) {
        if items.len() > max {
            self.push(field, "too_many", format!("{field} may hold at most {max} items"));
        }
        for (i, item) in items.iter().enumerate() {
            let at = format!("{field}[{i}]");
            if items[..i].contains(item) {
                self.push(&at, "duplicate", format!("{at} is repeated; items must be unique"));
            } else {
                each(self, &at, item);
            }
        }
    }

    /// An absolute `http` or `https` URL.
    pub fn http_url(&mut self, field: &str, value: &str) {
        let ok = url::Url::parse(value).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
        if !ok || value.len() > 2048 {
            self.push(field, "invalid_url", format!("{field} must be an absolute http(s) URL"));
        }
    }

    /// A BCP 47 language tag such as `en` or `de-CH`, in the form
    /// [`LANGUAGE_PATTERN`] states (callers bound its length); returns it in its
    /// canonical case, or `None` after recording an error.
    pub fn language(&mut self, field: &str, value: &str) -> Option<String> {
        if is_language_tag(value) {
            // Every tag of the pattern is well-formed, so parsing only fixes the case.
            Some(language_tags::LanguageTag::parse(value).map_or_else(|_| value.to_string(), |tag| tag.to_string()))
        } else {
            self.push(
                field,
                "invalid_language",
                format!("{field} must be a BCP 47 tag such as en or de-CH"),
            );
            None
        }
    }

    /// A number within `range`.
    pub fn in_range(&mut self, field: &str, value: i64, range: std::ops::RangeInclusive<i64>) {
        if !range.contains(&value) {
            self.push(
                field,
                "out_of_range",
                format!("{field} must be between {} and {}", range.start(), range.end()),
            );
        }
    }

    /// Records that `field` names a `what` (`"user"`, `"team"`, …) that this
    /// tenant does not have: 422 `unknown_reference`, worded alike everywhere.
    pub fn unknown_reference(&mut self, field: &str, what: &str, id: &str) {
        self.push(field, "unknown_reference", format!("no {what} {id} in this tenant"));
    }

    /// Reads the lookup of the `what` that `field` names by `id`: the row it
    /// found, or `None` with [`Checks::unknown_reference`] recorded when the
    /// tenant has no such row. Any other error (the database's) is returned,
    /// never mistaken for a missing row.
    pub fn reference<T>(&mut self, field: &str, what: &str, id: &str, lookup: CoreResult<T>) -> CoreResult<Option<T>> {
        match lookup {
            Ok(row) => Ok(Some(row)),
            Err(CoreError::NotFound(_)) => {
                self.unknown_reference(field, what, id);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Whether nothing has been recorded yet.
    pub fn is_clean(&self) -> bool {
        self.0.is_empty()
    }

    /// Ends validation: `Ok` if nothing was recorded.
    pub fn finish(self) -> CoreResult<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(CoreError::Validation(self.0))
        }
    }
}

/// The language tags Rapport takes, as the OpenAPI document states them (the
/// schemas repeat it as a literal, which `#[schema(pattern)]` requires): a
/// BCP 47 language (2–3 letters), then optionally a script (4 letters), a
/// region (2 letters or 3 digits), variants (5–8 letters or digits, or a digit
/// and 3), extensions (`-u-co-phonebk`) and a private use (`-x-mine`), as
/// browsers report them.
pub const LANGUAGE_PATTERN: &str = r"^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*(-[0-9A-WY-Za-wy-z](-[A-Za-z0-9]{2,8})+)*(-[Xx](-[A-Za-z0-9]{1,8})+)?$";

/// [`LANGUAGE_PATTERN`], or blank: where a blank language removes the one held.
pub const LANGUAGE_OR_BLANK_PATTERN: &str = r"^\s*$|^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*(-[0-9A-WY-Za-wy-z](-[A-Za-z0-9]{2,8})+)*(-[Xx](-[A-Za-z0-9]{1,8})+)?$";

/// Whether `value` matches [`LANGUAGE_PATTERN`]. Each kind of subtag has its own
/// shape, so taking them in order, each at most once, decides it.
pub fn is_language_tag(value: &str) -> bool {
    let letters = |s: &str, n: std::ops::RangeInclusive<usize>| {
        n.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphabetic())
    };
    let digits = |s: &str| s.len() == 3 && s.bytes().all(|b| b.is_ascii_digit());
    let variant = |s: &str| {
        s.bytes().all(|b| b.is_ascii_alphanumeric())
            && ((5..=8).contains(&s.len()) || (s.len() == 4 && s.as_bytes()[0].is_ascii_digit()))
    };
    let alnum = |s: &str, n: std::ops::RangeInclusive<usize>| {
        n.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric())
    };
    let mut parts = value.split('-').peekable();
    if !parts.next().is_some_and(|language| letters(language, 2..=3)) {
        return false;
    }
    parts.next_if(|script| letters(script, 4..=4));
    parts.next_if(|region| letters(region, 2..=2) || digits(region));
    while parts.next_if(|v| variant(v)).is_some() {}
    // Extensions (`-u-co-phonebk`): a singleton other than `x`, then subtags.
    while let Some(singleton) = parts.next_if(|s| alnum(s, 1..=1) && !s.eq_ignore_ascii_case("x")) {
        let _ = singleton;
        if parts.next_if(|s| alnum(s, 2..=8)).is_none() {
            return false;
        }
        while parts.next_if(|s| alnum(s, 2..=8)).is_some() {}
    }
    // Private use (`-x-mine`): `x`, then subtags of 1 to 8.
    if parts.next_if(|s| s.eq_ignore_ascii_case("x")).is_some() {
        if parts.next_if(|s| alnum(s, 1..=8)).is_none() {
            return false;
        }
        while parts.next_if(|s| alnum(s, 1..=8)).is_some() {}
    }
    parts.next().is_none()
}

/// Most tags on one user or team.
pub const MAX_TAGS: usize = 50;

/// The bounds of a concurrent-chat capacity, the workspace's `maxChats` and a
/// user's `maxConcurrentChats` alike.
pub const MAX_CHATS_RANGE: std::ops::RangeInclusive<i64> = 1..=100;

/// The schema of one tag, as [`Checks::tags`] takes it: 1–64 characters, not blank.
pub struct Tag;

impl utoipa::PartialSchema for Tag {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .min_length(Some(1))
            .max_length(Some(64))
            .pattern(Some(r"\S"))
            .description(Some("A tag: 1–64 characters, not blank."))
            .into()
    }
}

impl utoipa::ToSchema for Tag {}

/// A pragmatic e-mail check: one `@`, a non-empty local part, a dotted domain, no spaces.
pub fn is_email(value: &str) -> bool {
    let Some((local, domain)) = value.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !value.chars().any(char::is_whitespace)
}

/// Makes a slug out of a name: lower-case ASCII letters and digits, dashes between words.
pub fn slugify(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-').to_string();
    slug.chars().take(63).collect()
}

/// A validated page request: `(limit, offset)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    /// Items per page.
    pub limit: i64,
    /// Items to skip.
    pub offset: i64,
}

impl Paging {
    /// Checks a [`PageRequest`]: page size 1..=MAX, no negative numbers.
    pub fn from_request(req: &PageRequest) -> CoreResult<Paging> {
        let mut checks = Checks::new();
        let limit = req.page_size.unwrap_or(PageRequest::DEFAULT_PAGE_SIZE);
        if !(1..=PageRequest::MAX_PAGE_SIZE).contains(&limit) {
            checks.push(
                "pageSize",
                "out_of_range",
                format!("pageSize must be between 1 and {}", PageRequest::MAX_PAGE_SIZE),
            );
        }
        let page_number = req.page_number.unwrap_or(0);
        if page_number < 0 {
            checks.push("pageNumber", "out_of_range", "pageNumber must not be negative");
        }
        if req.offset.is_some_and(|o| o < 0) {
            checks.push("offset", "out_of_range", "offset must not be negative");
        }
        checks.finish()?;
        let offset = req.offset.unwrap_or(page_number.saturating_mul(limit));
        Ok(Paging { limit, offset })
    }

    /// Wraps results and the total count into a [`crate::model::Page`].
    pub fn page<T>(&self, total: i64, results: Vec<T>) -> crate::model::Page<T> {
        crate::model::Page {
            page: crate::model::PageInfo {
                page_number: self.offset / self.limit,
                page_size: self.limit,
                offset: self.offset,
                total_elements: total,
                total_pages: (total + self.limit - 1) / self.limit,
            },
            results,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_reference_is_a_field_problem_and_a_failed_lookup_is_not() {
        let mut checks = Checks::new();
        assert_eq!(checks.reference("owner", "user", "u1", Ok(7)).unwrap(), Some(7));
        assert!(checks.is_clean());
        let missing: CoreResult<i32> = Err(CoreError::NotFound("user"));
        assert_eq!(checks.reference("owner", "user", "u2", missing).unwrap(), None);
        let failed: CoreResult<i32> = Err(CoreError::Internal("database gone".into()));
        assert!(matches!(
            checks.reference("teamId", "team", "t1", failed),
            Err(CoreError::Internal(_))
        ));
        match checks.finish() {
            Err(CoreError::Validation(errors)) => {
                assert_eq!(errors.len(), 1);
                assert_eq!(
                    (errors[0].field.as_str(), errors[0].code.as_str()),
                    ("owner", "unknown_reference")
                );
                assert_eq!(errors[0].message, "no user u2 in this tenant");
            }
            other => panic!("expected one field problem, got {other:?}"),
        }
    }

    #[test]
    fn emails() {
        assert!(is_email("a@b.co"));
        assert!(!is_email("a@b"));
        assert!(!is_email("@b.co"));
        assert!(!is_email("a b@c.de"));
        assert!(!is_email("a@@c.de"));
    }

    #[test]
    fn language_tags_follow_the_documented_pattern() {
        for tag in [
            "en",
            "de-CH",
            "zh-Hant-TW",
            "es-419",
            "sl-rozaj",
            "de-CH-1996",
            "qq",
            "EN-us",
            "de-DE-u-co-phonebk",
            "en-US-x-twain",
            "de-CH-x-y",
            "th-TH-u-nu-thai-x-a",
        ] {
            assert!(is_language_tag(tag), "{tag}");
            assert!(language_tags::LanguageTag::parse(tag).is_ok(), "{tag} is well-formed");
        }
        for tag in [
            "",
            "e",
            "english",
            "en-",
            "en--US",
            "en-US-abcd",
            "x-private",
            "en_US",
            "1en",
            "en-u",
            "en-x",
            "en-u-x-a",
            "en-x-toolongtag",
        ] {
            assert!(!is_language_tag(tag), "{tag}");
        }
        let mut checks = Checks::new();
        assert_eq!(checks.language("language", "EN-us").as_deref(), Some("en-US"));
        assert!(checks.is_clean());
    }

    #[test]
    fn slugs() {
        assert_eq!(slugify("ACME Corp. (EU)"), "acme-corp-eu");
        let mut c = Checks::new();
        c.slug("slug", "ok-slug");
        c.slug("slug", "-bad");
        c.slug("slug", "Bad");
        assert_eq!(c.0.len(), 2);
    }

    #[test]
    fn paging_bounds_are_errors_not_clamps() {
        let p = Paging::from_request(&PageRequest::default()).unwrap();
        assert_eq!(p, Paging { limit: 20, offset: 0 });
        let p = Paging::from_request(&PageRequest {
            page_number: Some(2),
            page_size: Some(10),
            offset: None,
        })
        .unwrap();
        assert_eq!(p.offset, 20);
        let err = Paging::from_request(&PageRequest {
            page_size: Some(201),
            ..Default::default()
        })
        .unwrap_err();
        match err {
            CoreError::Validation(fields) => assert_eq!(fields[0].field, "pageSize"),
            other => panic!("unexpected {other:?}"),
        }
        assert!(Paging::from_request(&PageRequest {
            page_size: Some(0),
            ..Default::default()
        })
        .is_err());
        let page = p.page(21, vec![1]);
        assert_eq!(page.page.total_pages, 3);
        assert_eq!(page.page.page_number, 2);
    }

    #[test]
    fn timezones() {
        let mut c = Checks::new();
        c.timezone("timezone", "Europe/Berlin");
        c.timezone("timezone", "UTC");
        assert!(c.finish().is_ok());
        let mut c = Checks::new();
        c.timezone("timezone", "Mars/Olympus");
        assert!(c.finish().is_err());
    }
}
