//! The rules that keep an installation manageable whatever a caller asks: a
//! user with platform rights is out of a tenant's reach, and the last admin
//! of a tenant, or of the installation, stays.

use super::USERS;
use crate::{
    audit::{Actor, ActorKind},
    db::{Db, Tx},
    error::{CoreError, CoreResult},
    ids::TenantId,
    with_db, with_tx,
};

/// Refuses a change to user `id` of the tenant that `actor` may not make,
/// before anything is validated or written; returns whether the user has
/// platform rights. Every write to a user (its fields, password, role,
/// deletion, and so its sessions) starts here.
///
/// A user with platform rights manages every tenant, so only a platform
/// admin changes them: a platform key (valid only while its owner holds
/// those rights), a signed-in platform admin (rights read again here, not
/// taken from the request), or Rapport itself (the CLI, on the machine).
/// Anyone else, a tenant's API key or admin included, gets 403
/// `platform_admin_protected`. Not 404: the same caller reads the user with
/// 200, so "not found" would be untrue, and would hide nothing.
pub(super) async fn ensure_within_reach(db: &Db, tenant_id: &TenantId, id: &str, actor: &Actor) -> CoreResult<bool> {
    let (platform_admin,): (bool,) = USERS.read(db, tenant_id, id, "platform_admin").await?;
    if !platform_admin {
        return Ok(false);
    }
    let allowed = match actor.kind {
        ActorKind::System | ActorKind::Platformkey => true,
        ActorKind::User => {
            let actor_is_platform_admin: Option<bool> = with_db!(db, |pool| sqlx::query_scalar(
                "select platform_admin from users where id = $1"
            )
            .bind(&actor.id)
            .fetch_optional(pool)
            .await)?;
            actor_is_platform_admin == Some(true)
        }
        ActorKind::Apikey | ActorKind::Customer => false,
    };
    if !allowed {
        return Err(CoreError::Denied {
            code: "platform_admin_protected",
            message: "this user has platform rights; only a platform admin can change them".into(),
        });
    }
    Ok(true)
}

/// Refuses to remove the installation's last platform admin, who alone can
/// manage tenants.
pub(super) async fn ensure_another_platform_admin(tx: &mut Tx, except: &str) -> CoreResult<()> {
    let others: i64 = with_tx!(tx, |conn| sqlx::query_scalar(
        "select count(*) from users where platform_admin = $1 and id <> $2"
    )
    .bind(true)
    .bind(except)
    .fetch_one(conn)
    .await)?;
    if others == 0 {
        return Err(CoreError::Conflict {
            field: None,
            code: "last_platform_admin",
            message: "the installation keeps at least one platform admin; make another user platform admin first"
                .into(),
        });
    }
    Ok(())
}

pub(super) async fn ensure_another_admin(tx: &mut Tx, tenant_id: &TenantId, except: &str) -> CoreResult<()> {
    let others: i64 = with_tx!(tx, |conn| sqlx::query_scalar(
        "select count(*) from users where tenant_id = $1 and role_id = 'ADMIN' and id <> $2"
    )
    .bind(tenant_id)
    .bind(except)
    .fetch_one(conn)
    .await)?;
    if others == 0 {
        return Err(CoreError::Conflict {
            field: Some("roleId".into()),
            code: "last_admin",
            message: "a tenant keeps at least one admin; make another user admin first".into(),
        });
    }
    Ok(())
}
