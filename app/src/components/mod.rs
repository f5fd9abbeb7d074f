//! Pieces shared by pages.

pub mod copy;
pub mod feedback;
pub mod layout;
pub mod lists;
pub mod secret;
pub mod zones;
