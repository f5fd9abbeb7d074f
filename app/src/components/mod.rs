//! Pieces shared by pages.

pub mod copy;
pub mod detail;
pub mod feedback;
pub mod fields;
pub mod layout;
pub mod lists;
pub mod post_form;
pub mod route;
pub mod rule_builder;
pub mod secret;
pub mod zones;
