//! Appointments, co-browsing and live-view links, and recorded sessions.

mod appointments;
mod cobrowse_links;
mod live_view;
