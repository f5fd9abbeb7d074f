// rules.js: the workspace's action rules, evaluated in the visitor's browser so
// that a page view costs Rapport nothing (core/src/config/rules/action.rs). The
// loader loads it only when its cached or fetched list has rules, and hands it
// the rules, the page's events so far and a door to the chat.
//
// PAGE rules are evaluated as the page opens and again whenever an input
// changes (a timer, a sent message, a page event, a tag, a single-page app's
// navigation, the agents' state); CHAT rules as the panel opens, and again
// while it is open. A rule fires once per page (each page of a single-page
// app) the moment all its conditions hold: its match goes into the tracking
// batch and to the page (`ruleMatched`), and its action is taken.

import type { ActionRule, Core, RuleCondition, RulesFactory, RulesHost, WidgetConfig } from '../types';
import { cut, load, newId, save } from '../util';

/** Pages remembered for REVISIT, most recent first. */
const MAX_PAGES = 200;
/** What this script can do; a rule with another action (a newer server's) never matches. */
const ACTIONS = ['SHOW_BUTTON', 'HIDE_BUTTON', 'OPEN_CHAT', 'SHOW_OFFLINE_FORM', 'OFFER_CALL'];
/** A timer waits at most this long, then looks again (setTimeout takes at most 2^31-1 ms). */
const MAX_WAIT_MS = 86_400_000;

/** Whether `text` is `pattern`, where `*` matches any run of characters.
 * Leftmost matching of the parts between stars is enough, and never
 * backtracks: a pattern cannot make the page slow. */
function glob(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (parts.length === 1) return pattern === text;
  const end = text.length - last.length;
  if (end < first.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = text.indexOf(parts[i], at);
    if (found < 0 || found + parts[i].length > end) return false;
    at = found + parts[i].length;
  }
  return true;
}

const startRules: RulesFactory = (core: Core, given: ActionRule[], host: RulesHost) => {
  // A rule this script cannot read is left out rather than breaking the others.
  const rules = given.filter((r) => r && r.id && Array.isArray(r.conditions) && r.action);

  // REVISIT: the pages (origin and path) of earlier page loads, kept under the
  // loader's prefix. The test asks about earlier loads, so it reads the list
  // as this page found it.
  const pagesKey = `rapport:${core.key}:pages`;
  const here = () => cut(location.origin + location.pathname, 1000);
  let pages: string[] = [];
  try {
    pages = JSON.parse(load(pagesKey) || '[]');
  } catch {
    // A damaged list starts again.
  }
  if (!Array.isArray(pages)) pages = [];
  const before = pages.slice();
  const visited = () => {
    const page = here();
    pages = [page].concat(pages.filter((p) => p !== page)).slice(0, MAX_PAGES);
    save(pagesKey, JSON.stringify(pages));
  };
  visited();

  // The inputs. The agents' state is unknown until the config comes (asked
  // only when a rule tests it); a test of an unknown input fails either way,
  // negated or not.
  let agents: WidgetConfig['agents'];
  const testsAgents = rules.some((r) => r.conditions.some((c) => c && /^AGENTS?_/.test(c.type)));
  // The launcher waits for the agents where a rule tests them: a rule that
  // hides it may yet match.
  let settled = !testsAgents;
  let sent = false;
  const chat = host.chat();
  let panelOpen = !!chat && chat.isOpen();
  // The visitor closed the panel on this page: no rule opens it again.
  let dismissed = false;
  // A page rule opened the panel on this page: no other does.
  let opened = false;
  let button = true;
  const fired: Record<string, 1> = {};
  let timer: ReturnType<typeof setTimeout> | undefined;

  const lower = (s: string) => String(s).toLowerCase();
  /** The plain test's result; undefined when it cannot be made (an input not
   * known yet, or a type this script does not know). */
  const test = (c: RuleCondition): boolean | undefined => {
    switch (c.type) {
      case 'AGENT_ONLINE':
        return agents && agents.online;
      case 'AGENTS_OFFLINE':
        return agents && !agents.online;
      case 'AGENTS_BUSY':
        return agents && !agents.available;
      case 'TIME_ON_PAGE':
        // Since the navigation started, a single-page app's pages included.
        return performance.now() >= c.seconds * 1000;
      case 'REVISIT':
        return before.indexOf(here()) >= 0;
      case 'SENDS_MESSAGE':
        return sent;
      case 'TIME': {
        const now = Date.now();
        return c.intervals.some(([start, end]) => now >= start && now < end);
      }
      case 'URL':
        return c.urls.some((url) => glob(url, location.href));
      case 'HAS_TAG': {
        const mine = core.tags().map(lower);
        const has = (tag: string) => mine.indexOf(lower(tag)) >= 0;
        return c.match === 'ALL' ? c.tags.every(has) : c.tags.some(has);
      }
      case 'JS_EVENT':
        return host.events.indexOf(c.name.trim()) >= 0;
    }
    return undefined;
  };
  const matches = (rule: ActionRule): boolean => {
    if (ACTIONS.indexOf(rule.action.type) < 0) return false;
    try {
      return rule.conditions.every((c) => {
        const result = test(c);
        return result !== undefined && result !== !!c.negate;
      });
    } catch {
      // A condition this script cannot read never holds.
      return false;
    }
  };

  const fire = (rule: ActionRule) => {
    fired[rule.id] = 1;
    host.track({
      type: 'ACTION_RULE_MATCH',
      id: newId(),
      ruleId: rule.id,
      at: Date.now(),
      visitorId: core.visitorId,
      url: cut(location.href, 2000),
    });
    core.emit('ruleMatched', { ruleId: rule.id });
    const action = rule.action;
    if (action.type === 'SHOW_BUTTON' || action.type === 'HIDE_BUTTON') {
      // The latest match wins.
      button = action.type === 'SHOW_BUTTON';
      return;
    }
    // A page rule opens the panel once a page view, and never on a visitor
    // who has it open or closed it: no nagging. A chat rule acts in the open panel.
    const page = rule.trigger === 'PAGE';
    if (page && (opened || dismissed || panelOpen)) return;
    if (page) opened = true;
    host.withChat((chat) => {
      // The chat may have opened while it loaded.
      if (page && (dismissed || chat.isOpen())) return;
      if (action.type === 'OPEN_CHAT') chat.proactive(rule.id, action);
      else if (action.type === 'OFFER_CALL') chat.offerCall(action.message);
      else chat.offlineForm();
    });
  };

  // Wakes up when a time condition of a rule not fired yet changes.
  const schedule = () => {
    clearTimeout(timer);
    let next = Infinity;
    const wait = (ms: number) => {
      if (ms > 0 && ms < next) next = ms;
    };
    for (const rule of rules) {
      if (fired[rule.id]) continue;
      for (const c of rule.conditions) {
        if (c && c.type === 'TIME_ON_PAGE') wait(c.seconds * 1000 - performance.now());
        if (c && c.type === 'TIME') {
          for (const [start, end] of c.intervals) {
            wait(start - Date.now());
            wait(end - Date.now());
          }
        }
      }
    }
    // A few ms late rather than early: the test compares with the clock again.
    if (next < Infinity) timer = setTimeout(evaluate, Math.min(next, MAX_WAIT_MS) + 5);
  };

  // Taking an action may open the panel, which asks for an evaluation inside
  // this one: it runs after, as another round.
  let running = false;
  let again = false;
  function evaluate() {
    again = true;
    if (running) return;
    running = true;
    try {
      while (again) {
        again = false;
        for (const rule of rules) {
          const live = rule.trigger === 'PAGE' || (rule.trigger === 'CHAT' && panelOpen);
          if (live && !fired[rule.id] && matches(rule)) fire(rule);
        }
      }
      if (settled) host.launcher(button);
      schedule();
    } catch (e) {
      core.emit('error', e);
    }
    running = false;
  }

  core.on('open', () => {
    panelOpen = true;
    evaluate();
  });
  core.on('close', () => {
    panelOpen = false;
    dismissed = true;
  });
  core.on('messageSent', () => {
    sent = true;
    evaluate();
  });
  core.on('_input', evaluate);
  // A single-page app's new page: its page rules may fire again, and the
  // launcher starts from shown.
  core.on('_page', () => {
    visited();
    for (const rule of rules) if (rule.trigger === 'PAGE') delete fired[rule.id];
    button = true;
    evaluate();
  });
  // The chat read the config again: the agents may have come or gone.
  core.on('_config', (config) => {
    const now = (config as WidgetConfig).agents;
    if (now) {
      agents = now;
      evaluate();
    }
  });
  if (testsAgents) {
    host.config().then((config) => {
      if (config && config.agents) agents = config.agents;
      settled = true;
      evaluate();
    });
  }
  evaluate();
};

// The loader injects this script only after setting up the registry.
if (window.__rapportChunks) window.__rapportChunks.push(['rules', startRules]);
