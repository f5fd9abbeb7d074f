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
/** Kinds of input one types text into (the others are clicked). */
const TEXT_INPUTS = ['text', 'search', 'email', 'url', 'tel', 'password', 'number'];
/** What Tab may move focus to (then filtered to what is focusable and shown). */
const FOCUSABLE = 'a[href],area[href],button,input,select,textarea,iframe,summary,[tabindex],[contenteditable]';
/** What a click focuses: the nearest focusable ancestor of the element hit. */
const CLICK_FOCUS = `${FOCUSABLE},label`;
/** Legacy key codes of the special keys, for pages that still read `keyCode`
 * (their `code` is their name). */
const KEY_CODES: Record<string, number> = {
  Backspace: 8,
  Tab: 9,
  Enter: 13,
  Escape: 27,
  PageUp: 33,
  PageDown: 34,
  End: 35,
  Home: 36,
  ArrowLeft: 37,
  ArrowUp: 38,
  ArrowRight: 39,
  ArrowDown: 40,
  Delete: 46,
};
/** What Enter activates when it is focused (other elements handle keydown). */
const ENTER_CLICKS = 'a[href],button,summary,input[type=submit],input[type=button],input[type=reset]';

type Field = HTMLInputElement | HTMLTextAreaElement;

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

  /** The page's element at a viewport point, looking through Rapport's own
   * overlay (the agent does not see it); null if the recording leaves it out. */
  const at = (x: number, y: number): Element | null => {
    const hit = document.elementsFromPoint(x, y).find((e) => !e.closest(HOST));
    return hit && !o.blocked(hit) ? hit : null;
  };
  const fire = (target: Element, type: string, x: number, y: number): boolean => {
    const init = { bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y, view: window, button: 0 };
    const pointerEvent = type.startsWith('pointer') && typeof PointerEvent === 'function';
    return target.dispatchEvent(pointerEvent ? new PointerEvent(type, { ...init, isPrimary: true, pointerType: 'mouse' }) : new MouseEvent(type, init));
  };
  /** A click as a mouse makes it: press (which focuses, unless the page prevents
   * it), release, click (whose default follows links, toggles boxes, submits). */
  const click = (x: number, y: number) => {
    const target = at(x, y);
    if (!target) return;
    fire(target, 'pointerdown', x, y);
    if (fire(target, 'mousedown', x, y)) {
      const closest = target.closest(CLICK_FOCUS);
      // A label focuses its control.
      const focusable = closest instanceof HTMLLabelElement ? closest.control : closest;
      if (focusable instanceof HTMLElement) {
        focusable.focus({ preventScroll: true });
        if (focusable.isContentEditable) caret(x, y);
      } else if (document.activeElement instanceof HTMLElement && !document.activeElement.closest(HOST)) {
        // A click on nothing focusable takes focus away, as a real one does.
        document.activeElement.blur();
      }
    }
    fire(target, 'pointerup', x, y);
    fire(target, 'mouseup', x, y);
    fire(target, 'click', x, y);
  };
  /** Puts the caret of an editable region where the agent clicked. */
  const caret = (x: number, y: number) => {
    const selection = getSelection();
    if (!selection) return;
    if (document.caretPositionFromPoint) {
      const position = document.caretPositionFromPoint(x, y);
      if (position) selection.collapse(position.offsetNode, position.offset);
    } else if (document.caretRangeFromPoint) {
      const range = document.caretRangeFromPoint(x, y);
      if (range) selection.collapse(range.startContainer, range.startOffset);
    }
  };

  /** The page's focused element (the body if none), if the agent may act on
   * it at all: not when the visitor is in Rapport's UI (the chat) or in
   * anything else the recording leaves out. */
  const focused = (): HTMLElement | null => {
    const el = document.activeElement || document.body;
    return el instanceof HTMLElement && !el.closest(HOST) && !o.blocked(el) ? el : null;
  };
  /** A text field one can type into now (not read-only, not disabled). */
  const field = (el: Element | null): Field | null => {
    if (el instanceof HTMLTextAreaElement || (el instanceof HTMLInputElement && TEXT_INPUTS.includes(el.type))) {
      return el.readOnly || el.disabled ? null : el;
    }
    return null;
  };
  /** Where typing goes: a text field or an editable region, unless the
   * recording masks it (for a region: also where its caret is). */
  const editable = (): HTMLElement | null => {
    const el = focused();
    if (!el || o.masked(el)) return null;
    if (field(el)) return el;
    if (!el.isContentEditable) return null;
    const selection = getSelection();
    const node = selection && selection.anchorNode;
    const caretAt = node && (node instanceof Element ? node : node.parentElement);
    return caretAt && el.contains(caretAt) && !o.masked(caretAt) ? el : null;
  };
  /** Replaces a field's selection (or `from`…`to`) with `text`, as typing does:
   * the native setter, so frameworks that wrap `value` see a change, then `input`. */
  const edit = (f: Field, text: string, inputType: string, from?: number, to?: number) => {
    const value = f.value;
    // Some kinds (email, number) have no selection: they are typed at the end.
    const start = from !== undefined ? from : f.selectionStart !== null ? f.selectionStart : value.length;
    const stop = to !== undefined ? to : f.selectionEnd !== null ? f.selectionEnd : value.length;
    if (f.maxLength >= 0) text = text.slice(0, Math.max(0, f.maxLength - value.length + (stop - start)));
    const proto = f instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, 'value');
    if (setter && setter.set) setter.set.call(f, value.slice(0, start) + text + value.slice(stop));
    else f.value = value.slice(0, start) + text + value.slice(stop);
    moveCaret(f, start + text.length);
    f.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, inputType, data: text || null }));
  };
  const moveCaret = (f: Field, at: number) => {
    try {
      f.setSelectionRange(at, at);
    } catch {
      // Kinds without a selection (email, number).
    }
  };
  const type = (text: string) => {
    const el = editable();
    if (!el) return;
    const f = field(el);
    if (f) edit(f, f instanceof HTMLInputElement ? text.replace(/[\r\n]+/g, '') : text, 'insertText');
    else document.execCommand('insertText', false, text);
  };

  /** A special key: the page's keydown handlers first (they may take it), then
   * what the browser would do. A masked field takes no key but Tab. */
  const key = (name: string) => {
    const el = focused();
    if (!el || (o.masked(el) && name !== 'Tab')) return;
    const keyCode = KEY_CODES[name] || 0;
    const init = { key: name, code: name, keyCode, which: keyCode, bubbles: true, cancelable: true, composed: true };
    if (el.dispatchEvent(new KeyboardEvent('keydown', init))) perform(name, el);
    el.dispatchEvent(new KeyboardEvent('keyup', init));
  };
  const perform = (name: string, el: HTMLElement) => {
    if (name === 'Tab') return tab(el);
    const target = editable();
    const f = field(target);
    if (f) {
      const start = f.selectionStart;
      const stop = f.selectionEnd;
      const length = f.value.length;
      if (name === 'Enter') {
        if (f instanceof HTMLTextAreaElement) edit(f, '\n', 'insertLineBreak');
        else if (f.form) submit(f.form);
      } else if (start === null || stop === null) {
        // No caret to move (email, number): only deleting from the end works.
        if (name === 'Backspace' && length) edit(f, '', 'deleteContentBackward', length - 1, length);
      } else if (name === 'Backspace' || name === 'Delete') {
        const back = name === 'Backspace';
        const from = start === stop && back ? Math.max(0, start - 1) : start;
        const to = start === stop && !back ? Math.min(length, stop + 1) : stop;
        if (from !== to) edit(f, '', back ? 'deleteContentBackward' : 'deleteContentForward', from, to);
      } else if (name === 'ArrowLeft') moveCaret(f, start === stop ? Math.max(0, start - 1) : start);
      else if (name === 'ArrowRight') moveCaret(f, start === stop ? Math.min(length, stop + 1) : stop);
      else if (name === 'Home') moveCaret(f, 0);
      else if (name === 'End') moveCaret(f, length);
      return;
    }
    if (target) {
      // An editable region: the browser's own editing commands fire `input`.
      const command: Record<string, string> = { Backspace: 'delete', Delete: 'forwardDelete', Enter: 'insertParagraph' };
      const move: Record<string, [string, string]> = {
        ArrowLeft: ['backward', 'character'],
        ArrowRight: ['forward', 'character'],
        ArrowUp: ['backward', 'line'],
        ArrowDown: ['forward', 'line'],
        Home: ['backward', 'lineboundary'],
        End: ['forward', 'lineboundary'],
      };
      const selection = getSelection();
      if (command[name]) document.execCommand(command[name], false);
      else if (move[name] && selection) selection.modify('move', move[name][0], move[name][1]);
      return;
    }
    if (name === 'Enter' && el.matches(ENTER_CLICKS)) return el.click();
    const page = innerHeight * 0.875;
    const height = document.documentElement.scrollHeight;
    const scroll: Record<string, [number, number]> = {
      ArrowUp: [0, -40],
      ArrowDown: [0, 40],
      ArrowLeft: [-40, 0],
      ArrowRight: [40, 0],
      PageUp: [0, -page],
      PageDown: [0, page],
      Home: [0, -height],
      End: [0, height],
    };
    if (scroll[name] && !field(el) && !el.isContentEditable) scrollBy(scroll[name][0], scroll[name][1]);
  };
  /** Enter in a field submits its form as a browser does: through the form's
   * default button when it has one (its click handlers run), else directly. */
  const submit = (form: HTMLFormElement) => {
    const button = Array.from(form.elements).find((e) => (e as HTMLButtonElement).type === 'submit');
    if (button instanceof HTMLElement) button.click();
    else if (typeof form.requestSubmit === 'function') form.requestSubmit();
  };
  /** Moves focus on to the next element Tab would reach (document order). */
  const tab = (from: Element) => {
    const list = Array.from(document.querySelectorAll<HTMLElement>(FOCUSABLE)).filter(
      // An editing host is tabbable though its tabIndex says -1 in Chromium.
      (e) =>
        (e.tabIndex >= 0 || (e.isContentEditable && !e.hasAttribute('tabindex'))) &&
        !e.matches(':disabled') &&
        e.getClientRects().length > 0 &&
        !o.blocked(e),
    );
    if (list.length) list[(list.indexOf(from as HTMLElement) + 1) % list.length].focus();
  };

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
    if (m.type === 'click' && finite(m.x) && finite(m.y)) click(m.x, m.y);
    else if (m.type === 'type' && typeof m.text === 'string') type(m.text);
    else if (m.type === 'key' && typeof m.key === 'string') key(m.key);
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
