//! Unit tests of a report's one statement: renumbered placeholders, tagged branches and interval tags.

use super::*;

#[test]
fn placeholders_are_renumbered_after_the_earlier_branches() {
    assert_eq!(renumber("a = $1 and b in ($2, $10)", 3), "a = $4 and b in ($5, $13)");
    assert_eq!(renumber("no placeholders, $ alone", 5), "no placeholders, $ alone");
}

#[test]
fn a_union_tags_rows_and_concatenates_binds() {
    let branch = |tag, sql: &str, n| Branch {
        tag,
        sql: sql.to_string(),
        binds: (0..n).map(Bind::Int).collect(),
    };
    let (sql, binds) = union(&[
        &branch(4, "select $1 as b, '' as k, 0 as t, 0 as n", 1),
        &branch(-3, "select $1 + $2 as b, '' as k, 0 as t, 0 as n", 2),
    ]);
    assert_eq!(
        sql,
        "select cast(4 as bigint) as tag, b, k, t, n from (select $1 as b, '' as k, 0 as t, 0 as n) as r0 \
             union all select cast(-3 as bigint) as tag, b, k, t, n from \
             (select $2 + $3 as b, '' as k, 0 as t, 0 as n) as r1"
    );
    assert_eq!(binds.len(), 3);
}

#[test]
fn interval_tags_lie_below_the_check_and_do_not_meet() {
    assert!(interval_tag(0) < CHECK_TAG);
    assert_eq!(interval_tag(0) - 1, interval_tag(1));
    assert_eq!((CHECK_TAG - 1 - interval_tag(7)) as usize, 7);
}
