//! The kinds of job, and the typed payload each carries.

/// The kinds of job. Each names the module that handles it; every kind is
/// handled in one place, `usecases::jobs`, whose `match` the compiler checks
/// for a kind nobody handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    /// A waiting customer message reached a `NO_ANSWER` threshold (`engine::routing`).
    NoAnswer,
    /// A queued conversation waited `maxWaitSeconds` (`engine::routing`).
    QueueTimeout,
    /// Capacity freed or an agent came online: queued conversations of a tenant
    /// are offered again, in arrival order (`engine::dispatch`).
    Drain,
    /// An SLA clock's deadline (`engine::sla`).
    SlaDeadline,
    /// A waiting message reached the `NO_ANSWER` seconds of an SLA rule: its
    /// clock starts if the rule holds then (`engine::sla`).
    SlaStart,
    /// The end of a watchdog's grouping window (`engine::watchdogs`).
    WatchdogSummary,
    /// Delivering one alert (watchdog or SLA) to its receivers, once
    /// (`engine::alerts`).
    Alert,
    /// Deleting finished work older than the retention period (`retention`).
    Retention,
    /// Sending one mail of the outbox (`server/src/mail.rs`), keyed by the mail id.
    Mail,
    /// Ending the recorded sessions that went quiet (recurring, every minute;
    /// `core/src/recordings/ends.rs`).
    RecordingEnds,
    /// Closing the presence of agents whose dashboard stopped sending heartbeats
    /// (recurring, every 30 s; `server/src/workers`).
    Presence,
    /// Mailing a customer's replies that no page carried in time, keyed by the
    /// customer (`conversations::replies_by_mail`).
    ReplyByMail,
    /// Deleting the media objects whose rows were deleted, and sweeping one
    /// past hour's uploads for objects no row names (recurring, every minute;
    /// `core/src/media_store/cleanup.rs`).
    MediaCleanup,
    /// Does nothing but tell the runner's observer when it fired: the timer
    /// benchmark and the runner's tests measure the runner with it. Its payload may
    /// ask it to fail its first runs (`{"fail": 2}`), to exercise retries. Nothing
    /// in Rapport schedules it.
    Probe,
}

impl JobKind {
    /// Every kind.
    pub const ALL: [JobKind; 14] = [
        JobKind::NoAnswer,
        JobKind::QueueTimeout,
        JobKind::Drain,
        JobKind::SlaDeadline,
        JobKind::SlaStart,
        JobKind::WatchdogSummary,
        JobKind::Alert,
        JobKind::Retention,
        JobKind::Mail,
        JobKind::RecordingEnds,
        JobKind::Presence,
        JobKind::ReplyByMail,
        JobKind::MediaCleanup,
        JobKind::Probe,
    ];

    /// The kind as stored (`jobs.kind`).
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::NoAnswer => "routing.no_answer",
            JobKind::QueueTimeout => "routing.queue_timeout",
            JobKind::Drain => "routing.drain",
            JobKind::SlaDeadline => "sla.deadline",
            JobKind::SlaStart => "sla.start",
            JobKind::WatchdogSummary => "watchdog.summary",
            JobKind::Alert => "alert.deliver",
            JobKind::Retention => "retention",
            JobKind::Mail => "mail.deliver",
            JobKind::RecordingEnds => "recording.ends",
            JobKind::Presence => "presence.sweep",
            JobKind::ReplyByMail => "conversation.reply_mail",
            JobKind::MediaCleanup => "media.cleanup",
            JobKind::Probe => "probe",
        }
    }

    /// The kind stored as `s`, if this version knows it.
    pub fn parse(s: &str) -> Option<JobKind> {
        JobKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl std::fmt::Display for JobKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a kind of job carries: its payload, typed, and the kind it belongs to.
/// Schedulers write it with [`super::schedule_payload`] and handlers read it with
/// [`super::Job::read`], so a field is named once, in the payload's type, instead of
/// by a string at each end. Payloads are JSON with camelCase keys.
pub trait Payload: serde::Serialize + serde::de::DeserializeOwned {
    /// The kind of job it is the payload of.
    const KIND: JobKind;
}
