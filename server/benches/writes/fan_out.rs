//! Figure 3 of the write benchmark: the creates of a tenant with 20 webhook
//! endpoints against those of a tenant with the answering one alone, measured
//! in turn and side by side, each over [`FANOUT_ROUNDS`] rounds pooled.

use super::*;

/// Rounds of each design of figure 3, whose creates are pooled for the figure.
const FANOUT_ROUNDS: usize = 5;

/// The two tenants of figure 3 and what their phases wait for.
pub(crate) struct FanOut<'a> {
    pub(crate) observer: &'a Db,
    /// The answering endpoint's URL: a phase starts once it has sent everything.
    pub(crate) answering: &'a str,
    /// The tenant with 20 endpoints.
    pub(crate) twenty: &'a Target,
    /// The tenant with the answering endpoint alone.
    pub(crate) one: &'a Target,
    /// Creates per second, in all.
    pub(crate) rate: f64,
    pub(crate) seconds: Duration,
}

/// Every round's creates of each tenant, pooled: one phase's p99 is its worst
/// 1 %, which a single stall of the machine fills; pooled, that stall is a
/// fifth of the worst 1 % at most.
pub(crate) struct Pooled {
    pub(crate) twenty: Vec<Duration>,
    pub(crate) one: Vec<Duration>,
}

impl Pooled {
    fn of(twenties: Vec<Load>, ones: Vec<Load>) -> Pooled {
        Pooled {
            twenty: Load::merge(twenties, Duration::ZERO).latencies,
            one: Load::merge(ones, Duration::ZERO).latencies,
        }
    }

    /// The p99 with 20 endpoints and with 1.
    pub(crate) fn p99s(&self) -> (Duration, Duration) {
        (percentile(&self.twenty, 99.0), percentile(&self.one, 99.0))
    }

    /// The p99 with 20 endpoints against that with 1.
    pub(crate) fn ratio(&self) -> f64 {
        let (twenty, one) = self.p99s();
        ms(twenty) / ms(one).max(1e-6)
    }

    /// Prints the pooled figure after `label`, with `more` at the end.
    fn print(&self, label: &str, more: &str) {
        let (twenty, one) = self.p99s();
        println!(
            "{label}all {FANOUT_ROUNDS} rounds: p99 {:.2} ms with 20 endpoints ({} creates), {:.2} ms with 1 ({}): {:.2}{more}",
            ms(twenty),
            self.twenty.len(),
            ms(one),
            self.one.len(),
            self.ratio()
        );
    }
}

impl FanOut<'_> {
    /// In turn: each round a phase of each tenant at the full rate on 4
    /// connections, which goes first alternating, so that neither always
    /// follows the other's background work. A phase with 20 endpoints also
    /// carries the work their failures cause the whole server.
    pub(crate) async fn in_turn(&self) -> Pooled {
        let (mut rounds, mut twenties, mut ones) = (Vec::new(), Vec::new(), Vec::new());
        for round in 1..=FANOUT_ROUNDS {
            let twenty_first = round % 2 == 1;
            let (first, second) = if twenty_first {
                (self.twenty, self.one)
            } else {
                (self.one, self.twenty)
            };
            settle(self.observer, self.answering).await;
            let first = open_loop(first, self.rate, 4, self.seconds).await;
            settle(self.observer, self.answering).await;
            let second = open_loop(second, self.rate, 4, self.seconds).await;
            let (twenty, one) = if twenty_first { (first, second) } else { (second, first) };
            let (p99_one, p99_twenty) = (percentile(&one.latencies, 99.0), percentile(&twenty.latencies, 99.0));
            let ratio = ms(p99_twenty) / ms(p99_one).max(1e-6);
            println!(
                "round {round}: creates at {:.0}/s on 4 connections: p99 {:.2} ms with 20 endpoints, {:.2} ms with 1: {ratio:.2} (errors {})",
                self.rate,
                ms(p99_twenty),
                ms(p99_one),
                one.errors + twenty.errors
            );
            rounds.push(ratio);
            twenties.push(twenty);
            ones.push(one);
        }
        rounds.sort_by(f64::total_cmp);
        let pooled = Pooled::of(twenties, ones);
        pooled.print("", &format!("; median round {:.2}", rounds[rounds.len() / 2]));
        pooled
    }

    /// Side by side: each round both tenants create at once, each at half the
    /// rate on 2 of the 4 connections, so that every stall of the machine and
    /// every piece of the worker's background work falls on both alike, and
    /// what differs is what a create costs its own tenant.
    pub(crate) async fn side_by_side(&self) -> Pooled {
        let (mut twenties, mut ones) = (Vec::new(), Vec::new());
        let rate = self.rate / 2.0;
        for round in 1..=FANOUT_ROUNDS {
            settle(self.observer, self.answering).await;
            let (twenty, one) = tokio::join!(
                open_loop(self.twenty, rate, 2, self.seconds),
                open_loop(self.one, rate, 2, self.seconds)
            );
            println!(
                "side by side, round {round}: creates at {rate:.0}/s each on 2 connections each: p99 {:.2} ms with 20 endpoints, {:.2} ms with 1 (errors {})",
                ms(percentile(&twenty.latencies, 99.0)),
                ms(percentile(&one.latencies, 99.0)),
                one.errors + twenty.errors
            );
            twenties.push(twenty);
            ones.push(one);
        }
        let pooled = Pooled::of(twenties, ones);
        pooled.print("side by side, ", "");
        pooled
    }
}
