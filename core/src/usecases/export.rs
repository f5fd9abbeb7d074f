//! A customer's data, as they may ask for it (GDPR art. 15 and 20): one JSON
//! document with everything Rapport holds about them, the same reach as the
//! erasure (`usecases::erasure`) has. The customer is the REST object; the rest
//! are the rows as stored, each table a list of objects keyed by column name,
//! with files' bytes in base64. What is only kept to run the service and says
//! nothing of the person (tokens, sealed mail bodies, search indexes) is left
//! out.

use base64::Engine as _;
use serde::Serialize;
use serde_json::{Map, Value};
use sqlx::{Column, Row, TypeInfo, ValueRef};

use crate::{
    audit::{self, Actor},
    customers::Customer,
    db::{placeholders, Db},
    error::CoreResult,
    ids::{CustomerId, TenantId},
    usecases::erasure::VISITORS_OF,
    with_db, Services,
};

/// Everything held about one customer.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerExport {
    /// When it was made.
    pub exported_at: chrono::DateTime<chrono::Utc>,
    /// The customer.
    pub customer: Customer,
    /// Every other table's rows about them, by table: `messages`, `notes`,
    /// `chat_files` (with `data` in base64), `csat_ratings`,
    /// `recorded_sessions`, `visits`, `visit_resources`, `script_errors`,
    /// `appointments`, `conference_recordings`, `routing_decisions`,
    /// `mail_outbox` (without the sealed bodies).
    #[schema(value_type = Object)]
    pub records: Map<String, Value>,
}

/// What each table gives: the table, its filter over `$1` (the tenant) and
/// `{customer}` / `{sessions}` / `{visitors}` / `{appointments}`, and the
/// columns left out.
const TABLES: [(&str, &str, &[&str]); 12] = [
    ("messages", "customer_id = {customer} order by created_at", &["search"]),
    ("notes", "customer_id = {customer} order by created_at", &[]),
    ("chat_files", "customer_id = {customer} order by created_at", &[]),
    ("csat_ratings", "customer_id = {customer}", &[]),
    (
        "recorded_sessions",
        "id in ({sessions}) order by started_at",
        &["write_token_hash"],
    ),
    ("visits", "visitor_id in ({visitors}) order by started_at", &[]),
    ("visit_resources", "visitor_id in ({visitors}) order by at", &[]),
    ("script_errors", "visitor_id in ({visitors}) order by at", &[]),
    (
        "appointments",
        "id in ({appointments})",
        &["join_token", "join_token_hash", "password_hash"],
    ),
    ("conference_recordings", "appointment_id in ({appointments})", &[]),
    ("routing_decisions", "customer_id = {customer} order by at", &[]),
    ("mail_outbox", "about in ({abouts})", &["body"]),
];

/// One row as a JSON object, each column by its stored type.
fn row_json<R: Row>(row: &R, skip: &[&str]) -> Map<String, Value>
where
    usize: sqlx::ColumnIndex<R>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> f64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> bool: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Vec<u8>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    let mut out = Map::new();
    for (i, column) in row.columns().iter().enumerate() {
        let name = column.name();
        if skip.contains(&name) {
            continue;
        }
        let Ok(raw) = row.try_get_raw(i) else { continue };
        let value = if raw.is_null() {
            Value::Null
        } else {
            // SQLite's type is the value's; PostgreSQL's the column's.
            let type_name = raw.type_info().name().to_ascii_uppercase();
            match type_name.as_str() {
                "INTEGER" | "INT8" | "INT4" | "INT2" | "BIGINT" => {
                    row.try_get::<i64, _>(i).map(Value::from).unwrap_or(Value::Null)
                }
                "REAL" | "FLOAT8" | "FLOAT4" | "NUMERIC" => {
                    row.try_get::<f64, _>(i).map(Value::from).unwrap_or(Value::Null)
                }
                "BOOLEAN" | "BOOL" => row.try_get::<bool, _>(i).map(Value::from).unwrap_or(Value::Null),
                "BLOB" | "BYTEA" => row
                    .try_get::<Vec<u8>, _>(i)
                    .map(|b| Value::from(base64::engine::general_purpose::STANDARD.encode(b)))
                    .unwrap_or(Value::Null),
                _ => row.try_get::<String, _>(i).map(Value::from).unwrap_or(Value::Null),
            }
        };
        out.insert(name.to_string(), value);
    }
    out
}

/// The rows of `table` about the customer, as JSON objects.
async fn rows(db: &Db, sql: &str, binds: &[String], skip: &[&str]) -> CoreResult<Vec<Value>> {
    Ok(with_db!(db, |conn| {
        let mut q = sqlx::query(sql);
        for b in binds {
            q = q.bind(b);
        }
        q.fetch_all(conn)
            .await
            .map(|rows| rows.iter().map(|r| Value::Object(row_json(r, skip))).collect())
    })?)
}

/// The first column of `sql`'s rows.
async fn ids(db: &Db, sql: &str, binds: &[&str]) -> CoreResult<Vec<String>> {
    Ok(with_db!(db, |conn| {
        let mut q = sqlx::query_scalar::<_, String>(sql);
        for b in binds {
            q = q.bind(*b);
        }
        q.fetch_all(conn).await
    })?)
}

impl Services {
    /// Everything held about a customer (404 for a customer that is not the
    /// tenant's), audited as `customer.export`. It is read from the read
    /// pool, not in a transaction: on SQLite a transaction would hold the one
    /// writer while the files are read and encoded.
    pub async fn export_customer(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        actor: &Actor,
    ) -> CoreResult<CustomerExport> {
        let customer = self.get_customer(tenant_id, customer_id).await?;
        let db = self.db();
        let (t, c) = (tenant_id.as_str(), customer_id);
        // The same reach as the erasure's: the visitor ids only they have, and
        // those visitors' sessions from before the chat knew them.
        let visitors = ids(db, VISITORS_OF, &[t, c]).await?;
        let before_chat = if visitors.is_empty() {
            String::new()
        } else {
            format!(
                " or (customer_id is null and visitor_id in ({}))",
                placeholders(3, visitors.len())
            )
        };
        let binds: Vec<&str> = [t, c].into_iter().chain(visitors.iter().map(String::as_str)).collect();
        let sessions = ids(
            db,
            &format!("select id from recorded_sessions where tenant_id = $1 and (customer_id = $2{before_chat})"),
            &binds,
        )
        .await?;
        let appointments = ids(
            db,
            "select id from appointments where tenant_id = $1 and customer_id = $2",
            &[t, c],
        )
        .await?;
        let abouts: Vec<String> = [format!("transcript:{c}"), format!("reply:{c}")]
            .into_iter()
            .chain(appointments.iter().map(|a| format!("appointment:{a}")))
            .collect();
        let mut records = Map::new();
        for (table, filter, skip) in TABLES {
            let mut binds = vec![t.to_string()];
            let list = |items: &[String], binds: &mut Vec<String>| -> String {
                if items.is_empty() {
                    // Matches nothing, and keeps the statement valid.
                    return "null".to_string();
                }
                let held = placeholders(binds.len() + 1, items.len());
                binds.extend(items.iter().cloned());
                held
            };
            let mut filter = filter.to_string();
            if filter.contains("{customer}") {
                binds.push(c.to_string());
                filter = filter.replace("{customer}", &format!("${}", binds.len()));
            }
            for (key, items) in [
                ("{sessions}", &sessions),
                ("{visitors}", &visitors),
                ("{appointments}", &appointments),
                ("{abouts}", &abouts),
            ] {
                if filter.contains(key) {
                    let held = list(items, &mut binds);
                    filter = filter.replace(key, &held);
                }
            }
            let sql = format!("select * from {table} where tenant_id = $1 and {filter}");
            records.insert(table.to_string(), Value::Array(rows(db, &sql, &binds, skip).await?));
        }
        self.inline_file_bytes(&mut records).await?;
        let mut tx = db.begin().await?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "customer.export",
            "customer",
            Some(customer_id),
        )
        .await?;
        tx.commit().await?;
        Ok(CustomerExport {
            exported_at: chrono::Utc::now(),
            customer,
            records,
        })
    }

    /// Puts each exported file's bytes in its `data`, read from the media
    /// store where the row names an object; the object's key is left out.
    async fn inline_file_bytes(&self, records: &mut Map<String, Value>) -> CoreResult<()> {
        let Some(Value::Array(files)) = records.get_mut("chat_files") else {
            return Ok(());
        };
        for file in files.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(Value::String(key)) = file.remove("blob_key") {
                let bytes = self.media().get(&key).await?;
                file.insert(
                    "data".into(),
                    Value::from(base64::engine::general_purpose::STANDARD.encode(&bytes)),
                );
            }
        }
        Ok(())
    }
}
