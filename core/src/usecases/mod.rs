//! The top floor: use cases. Each file is one thing a person or an integration
//! does, read top-down in one transaction: the domain writes its rows (the
//! middle floor), the engines react (routing, the queue, watchdogs), and the
//! live update goes out after the commit. Domain modules never call up here,
//! nor into the engines; use cases are where those meet.

pub mod assignment;
pub mod calls;
pub mod csat;
pub mod erasure;
pub mod export;
pub mod jobs;
pub mod messages;
pub mod notes;
pub mod presence;
pub mod sign_out;
pub mod status;
pub mod tracking;
