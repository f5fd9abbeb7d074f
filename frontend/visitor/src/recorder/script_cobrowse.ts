// Script co-browsing, the visitor's side (issue 25, protocol B): an agent who
// watches this page live asks to browse along; the visitor accepts or declines
// in a prompt; while it lasts the agent's pointer and highlights are drawn on
// the page, and, once the visitor lets them, the agent's clicks, typing, keys
// and scrolling are played here. The recorder feeds it the `cobrowse` events of
// its control stream and sends the visitor's answers for it.
//
// - Everything is drawn in an open shadow root on a `rapport-cobrowse` element,
//   styled only by an adopted stylesheet (as the chat widget: a hostile page
//   stylesheet cannot restyle it, a strict CSP cannot block it). The recorder
//   blocks that element, so the agent never sees it in the live view, and agent
//   clicks pass through it to the page: the agent cannot press its buttons.
// - The agent acts only with control, and this page checks it itself rather
//   than trusting the server alone. Typing reaches only the page's own focused
//   field (not Rapport's UI, not a shadow root's or a frame's insides), never
//   a blocked one, and never a private one (a password or card field, or one
//   the workspace masks by class or selector): the recorder decides. Ordinary
//   fields stay masked in the live view while the agent types into them.
// - Co-browsing outlives a page: the agent's clicks may follow a link. When the
//   control stream (re)connects, Rapport says where a co-browse stands (the
//   request again, or `active` with the agent and control), and the next page
//   shows the prompt or the bar again. Control carries over only if this tab
//   also remembers granting it (sessionStorage, by recording session): a
//   "Take back control" still on its way when the page changed must not come
//   back as a grant; Rapport is then told control is off.
// Nothing here may throw into the host page.

import { h } from '../dom';
import { pickLanguage, STRINGS } from './script_cobrowse_strings';
import { CSS } from './script_cobrowse_styles';
import { load, save } from '../util';
import { createAgentInput } from './script_cobrowse_input';

/** The element co-browsing draws in (the recorder keeps it out of recordings). */
export const HOST = 'rapport-cobrowse';

/** How long the visitor reads that the agent stopped. */
const FAREWELL_MS = 6000;

export type Answer = 'accept' | 'decline' | 'grant' | 'revoke' | 'end';

export interface CobrowseOptions {
  /** The id of the recording session, once it exists. */
  session(): string | null;
  /** Tells Rapport the visitor's answer; resolves to whether it was taken. */
  send(type: Answer): Promise<boolean>;
  /** Whether the recording leaves this element out (blocked, or Rapport's UI). */
  blocked(el: Element): boolean;
  /** Whether the element is private (password, card, the workspace's mask
   * class or selector): the agent never types into it. */
  masked(el: Element): boolean;
  /** The sessionStorage key under which this tab remembers granting control. */
  storageKey: string;
}

export interface Cobrowse {
  /** One `event: cobrowse` of the control stream, as its JSON text. */
  message(data: string): void;
  /** Removes all co-browsing UI; `tell` also ends it on Rapport (the recording stops). */
  stop(tell: boolean): void;
}

/** A co-browse under way. */
interface Active {
  session: string;
  agent: string;
  control: boolean;
}

/** An `event: cobrowse` message; which fields are there depends on `type`. */
interface Message {
  type?: unknown;
  by?: unknown;
  agent?: unknown;
  control?: unknown;
  x?: unknown;
  y?: unknown;
  text?: unknown;
  key?: unknown;
  deltaX?: unknown;
  deltaY?: unknown;
}

/** The pointer's arrow, its tip at the top left. */
const ARROW = 'M2 2l6.5 18 2.8-7.3 7.3-2.8z';
const HIGHLIGHT_MS = 1500;
const finite = (v: unknown): v is number => typeof v === 'number' && isFinite(v);

export function createCobrowse(o: CobrowseOptions): Cobrowse {
  const lang = pickLanguage();
  const t = STRINGS[lang];
  let active: Active | null = null;
  /** Grows whenever co-browsing ends or is asked again: an answer still on its
   * way then belongs to a request that is over. */
  let epoch = 0;
  let shadow: ShadowRoot | null = null;
  let host: HTMLElement | null = null;
  let dialog: HTMLElement | null = null;
  let bar: HTMLElement | null = null;
  let pointer: HTMLElement | null = null;
  /** The line saying the agent stopped, while it shows. */
  let note: HTMLElement | null = null;
  /** Where focus was before the prompt took it, to give it back. */
  let before: Element | null = null;

  /** The shadow root, made on first use (and again if the page removed it:
   * what was drawn before is then detached, and drawn anew when needed). */
  const ui = (): ShadowRoot => {
    if (shadow && host && host.isConnected) return shadow;
    host = document.createElement(HOST);
    shadow = host.attachShadow({ mode: 'open' });
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    shadow.adoptedStyleSheets = [sheet];
    shadow.append(h('div', { class: 'ui', lang }));
    (document.body || document.documentElement).append(host);
    return shadow;
  };
  const root = (): HTMLElement => ui().firstChild as HTMLElement;
  const named = (text: string, agent: string) => text.replace('{agent}', agent);
  const button = (text: string, onclick: () => void, primary?: boolean): HTMLButtonElement => {
    const b = h('button', { type: 'button' }, text) as HTMLButtonElement;
    if (primary) b.className = 'primary';
    b.addEventListener('click', onclick);
    return b;
  };

  /** Remembers whether this tab's visitor has control granted, for the next page. */
  const persist = () => save(o.storageKey, active && active.control ? active.session : null, true);

  // The prompt. It takes focus (the dialog itself, not a button: a visitor who
  // was typing must not accept with the next Space) and gives it back after.
  const closePrompt = () => {
    if (!dialog) return;
    const had = !!shadow && !!shadow.activeElement && dialog.contains(shadow.activeElement);
    dialog.remove();
    dialog = null;
    if (had && before instanceof HTMLElement) before.focus({ preventScroll: true });
    before = null;
  };
  const dropNote = () => {
    if (note) note.remove();
    note = null;
  };
  const ask = (agent: string) => {
    dropNote();
    closePrompt();
    const gen = ++epoch;
    const answer = async (yes: boolean) => {
      if (gen !== epoch) return;
      closePrompt();
      if (!yes) return void o.send('decline');
      const session = o.session();
      if (session && (await o.send('accept')) && gen === epoch) begin({ session, agent, control: false });
    };
    const text = h('p', { id: 'rapport-cobrowse-text' }, named(t.request, agent));
    dialog = h(
      'div',
      { class: 'box dialog', role: 'dialog', 'aria-label': t.requestLabel, 'aria-describedby': text.id, tabindex: '-1' },
      text,
      h(
        'div',
        { class: 'actions' },
        button(t.decline, () => void answer(false)),
        button(t.accept, () => void answer(true), true),
      ),
    );
    dialog.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') void answer(false);
    });
    root().append(dialog);
    before = document.activeElement;
    dialog.focus({ preventScroll: true });
  };

  // The bar, while co-browsing. Control is given once Rapport took the grant
  // (the agent's clicks only come after that anyway), but taken back at once.
  const begin = (state: Active) => {
    dropNote();
    active = state;
    if (!bar || !bar.isConnected) {
      const toggle = button('', () => {
        if (!active) return;
        if (active.control) {
          active.control = false;
          persist();
          render();
          void o.send('revoke');
        } else {
          const gen = epoch;
          void o.send('grant').then((ok) => {
            if (!ok || !active || gen !== epoch) return;
            active.control = true;
            persist();
            render();
          });
        }
      });
      bar = h(
        'div',
        { class: 'box bar', role: 'region', 'aria-label': t.barLabel },
        h('p'),
        toggle,
        button(t.end, () => end(true)),
      );
      root().append(bar);
    }
    render();
  };
  const render = () => {
    if (!bar || !active) return;
    const [text, toggle] = Array.from(bar.children) as HTMLElement[];
    text.textContent = named(t.bar, active.agent);
    toggle.textContent = active.control ? t.revoke : t.grant;
    if (pointer && pointer.lastChild) pointer.lastChild.textContent = active.agent;
  };

  /** Ends co-browsing here; `tell`: the visitor (or this page) ends it, so Rapport is told. */
  const end = (tell: boolean) => {
    epoch++;
    if (tell && (active || dialog)) void o.send(active ? 'end' : 'decline');
    closePrompt();
    active = null;
    save(o.storageKey, null, true);
    if (host) host.remove();
    host = shadow = dialog = bar = pointer = note = null;
  };

  /** A short status line once the agent is gone; it goes by itself, and makes
   * way for a new request. */
  const farewell = (text: string) => {
    const gen = epoch;
    note = h('div', { class: 'box bar', role: 'status' }, h('p', {}, text));
    root().append(note);
    setTimeout(() => {
      if (gen !== epoch) return;
      dropNote();
      if (host) host.remove();
      host = shadow = null;
    }, FAREWELL_MS);
  };

  // What the agent shows: a labelled pointer and a ring that fades.
  const point = (x: unknown, y: unknown) => {
    if (!finite(x) || !finite(y)) {
      if (pointer) pointer.hidden = true;
      return;
    }
    if (!pointer || !pointer.isConnected) {
      const ns = 'http://www.w3.org/2000/svg';
      const svg = document.createElementNS(ns, 'svg');
      svg.setAttribute('viewBox', '0 0 22 22');
      const path = document.createElementNS(ns, 'path');
      path.setAttribute('d', ARROW);
      svg.append(path);
      pointer = h('div', { class: 'rapport-cobrowse-pointer', 'aria-hidden': 'true' }, svg, h('span', {}, active ? active.agent : t.someone));
      root().append(pointer);
    }
    pointer.hidden = false;
    pointer.style.transform = `translate(${x}px, ${y}px)`;
  };
  const highlight = (x: unknown, y: unknown) => {
    if (!finite(x) || !finite(y)) return;
    const ring = h('div', { class: 'rapport-cobrowse-highlight', 'aria-hidden': 'true' });
    ring.style.left = `${x}px`;
    ring.style.top = `${y}px`;
    root().append(ring);
    setTimeout(() => ring.remove(), HIGHLIGHT_MS);
  };

  // What the agent does, with control.
  const input = createAgentInput({ host: HOST, blocked: o.blocked, masked: o.masked });

  const handle = (m: Message) => {
    const name = typeof m.agent === 'string' && m.agent.trim() ? m.agent.trim().slice(0, 100) : t.someone;
    switch (m.type) {
      case 'request':
        // Asked again (another agent, or the same after a new page): a new prompt.
        if (active) end(false);
        return ask(name);
      case 'active': {
        // Where a co-browse stands, as the control stream (re)connects.
        const session = o.session();
        if (!session) return;
        closePrompt();
        const granted = load(o.storageKey, true) === session;
        if (m.control === true && !granted) void o.send('revoke');
        begin({ session, agent: name, control: m.control === true && granted });
        return persist();
      }
      case 'pointer':
        return point(m.x, m.y);
      case 'highlight':
        return highlight(m.x, m.y);
      case 'ended': {
        // The agent ended it, or left: say so, rather than let the bar vanish.
        const agent = active ? active.agent : null;
        end(false);
        const byAgent = m.by === 'agent' || m.by === 'agent_left';
        return agent && byAgent ? farewell(named(t.ended, agent)) : undefined;
      }
    }
    // The rest needs control, as this page knows it.
    if (!active || !active.control || active.session !== o.session()) return;
    if (m.type === 'click' && finite(m.x) && finite(m.y)) input.click(m.x, m.y);
    else if (m.type === 'type' && typeof m.text === 'string') input.type(m.text);
    else if (m.type === 'key' && typeof m.key === 'string') input.key(m.key);
    else if (m.type === 'scroll') scrollBy(finite(m.deltaX) ? m.deltaX : 0, finite(m.deltaY) ? m.deltaY : 0);
  };

  return {
    message(data) {
      try {
        const m = JSON.parse(data) as Message;
        if (m && typeof m === 'object') handle(m);
      } catch {
        // A malformed event, or a page that made an action fail: nothing to do.
      }
    },
    stop(tell) {
      try {
        end(tell);
      } catch {
        // Never into the page.
      }
    },
  };
}
