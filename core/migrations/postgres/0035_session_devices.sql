-- Where each dashboard session signed in from, so that its owner can tell
-- their sessions apart on their account page and end the ones that are not
-- theirs any more (see core/src/sign_ins.rs). Sessions from before this
-- migration show neither. Keep in step with migrations/sqlite.
alter table sessions add column ip text;
alter table sessions add column user_agent text;
