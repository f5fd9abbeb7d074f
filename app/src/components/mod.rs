//! Pieces shared by pages.

pub mod feedback;
pub mod layout;
pub mod secret;
