//! A job falls due: the one place where each kind of job is handled.
//!
//! The job runner (`server/src/workers`) claims due jobs and hands each to
//! [`Services::run_job`]. Its `match` over [`JobKind`] is exhaustive, so a new
//! kind does not compile until it is handled here. The engines' timers run in
//! this crate; the work that needs the server's own settings and connections
//! (mail, retention, sweeps) is the [`InstanceJobs`] the runner passes in.

use std::future::Future;

use crate::{
    error::{CoreError, CoreResult},
    ids::CustomerId,
    jobs::{Job, JobKind},
    Services,
};

/// The kinds of job the server runs itself, with what only it has: the mail
/// settings, the retention period, the presence timeout, its test probes.
pub trait InstanceJobs: Sync {
    /// Sends one mail of the outbox ([`JobKind::Mail`]).
    fn mail(&self, job: &Job) -> impl Future<Output = CoreResult<()>> + Send;
    /// Deletes what is past the retention period ([`JobKind::Retention`]).
    fn retention(&self, job: &Job) -> impl Future<Output = CoreResult<()>> + Send;
    /// Ends the presence of agents whose dashboard went silent ([`JobKind::Presence`]).
    fn presence(&self, job: &Job) -> impl Future<Output = CoreResult<()>> + Send;
    /// Ends the recorded sessions that went quiet ([`JobKind::RecordingEnds`]).
    fn recording_ends(&self, job: &Job) -> impl Future<Output = CoreResult<()>> + Send;
    /// Tells the runner's observer that a probe ran ([`JobKind::Probe`]).
    fn probe(&self, job: &Job) -> CoreResult<()>;
}

impl Services {
    /// Runs a job that fell due, by its kind. A kind this version does not
    /// know is an error: the runner retries it, and a newer instance on the
    /// same database may know it.
    pub async fn run_job(&self, job: &Job, instance: &impl InstanceJobs) -> CoreResult<()> {
        let Some(kind) = job.job_kind() else {
            return Err(CoreError::Internal(format!("no handler for jobs of kind {}", job.kind)));
        };
        match kind {
            JobKind::NoAnswer => self.fire_no_answer(job).await,
            JobKind::QueueTimeout => self.fire_queue_timeout(job).await,
            JobKind::Drain => match job.tenant_id.as_ref() {
                Some(tenant_id) => self.drain_queue(tenant_id).await.map(|_| ()),
                None => Ok(()),
            },
            JobKind::SlaDeadline => self.fire_sla_deadline(job).await,
            JobKind::SlaStart => self.fire_sla_start(job).await,
            JobKind::WatchdogSummary => self.watchdog_summary(job).await,
            JobKind::Alert => self.run_alert_job(job).await,
            JobKind::ReplyByMail => match job.tenant_id.as_ref() {
                Some(tenant_id) => {
                    self.mail_unseen_replies(tenant_id, &CustomerId::from(job.key.as_str()))
                        .await
                }
                None => Ok(()),
            },
            JobKind::MediaCleanup => self.run_media_cleanup(job).await.map(|_| ()),
            JobKind::Mail => instance.mail(job).await,
            JobKind::Retention => instance.retention(job).await,
            JobKind::Presence => instance.presence(job).await,
            JobKind::RecordingEnds => instance.recording_ends(job).await,
            JobKind::Probe => instance.probe(job),
        }
    }
}
