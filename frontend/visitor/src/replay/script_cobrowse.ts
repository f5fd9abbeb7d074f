// Script co-browsing, the agent's side (issue 25, protocol B): the live view of
// a signed-in agent (its element has `data-cobrowse-url`) gets a "Co-browse"
// button that asks the visitor, a status line, and, once the visitor accepted,
// sends what the agent does over the replay to Rapport, which passes it on to
// the visitor's page: the pointer, a click (a highlight there, or, with control,
// a real click), typing, special keys and the wheel. The state comes back as
// `event: cobrowse` on the live stream that live.ts reads.
//
// Every action is a `POST {data-cobrowse-url}` with a JSON body (same origin,
// cookie auth). Pointer positions are latest-wins: at most one request in
// flight and one every 50 ms, the ones in between dropped. Everything else is
// sent in order, one at a time (a Backspace must not overtake the letter
// before it), and typing or wheel turns that pile up meanwhile go as one.
//
// Coordinates are the visitor's viewport CSS px: the replay frame has the
// visitor's viewport size and is scaled to the stage (live.ts), so a point is
// mapped through the frame's on-screen rectangle, which includes that scale.

import { h as el } from '../dom';
import type { Strings } from './i18n';

/** The replay frame and the visitor's viewport size it shows. */
export interface Frame {
  iframe: HTMLIFrameElement;
  width: number;
  height: number;
}

export interface CobrowseControls {
  /** The buttons and the status line, to go above the stage. */
  bar: HTMLElement;
  /** The keyboard hint shown with control, to go below the stage (above, it
   * would move the stage under the agent's mouse as it comes and goes). */
  hint: HTMLElement;
  /** One `event: cobrowse` of the live stream, as its JSON text. */
  state(data: string): void;
  /** The recorded session ended: nothing to co-browse any more. */
  sessionEnded(): void;
  close(): void;
}

type State = 'idle' | 'requested' | 'active' | 'declined' | 'ended';
type Command =
  | { type: 'request' | 'end' }
  | { type: 'pointer'; x: number | null; y: number | null }
  | { type: 'highlight' | 'click'; x: number; y: number }
  | { type: 'type'; text: string }
  | { type: 'key'; key: string }
  | { type: 'scroll'; deltaX: number; deltaY: number };

const POINTER_MS = 50;
/** Keys sent as `key` (the visitor's page knows what to do with these);
 * printable characters go as `type`, anything else stays with the agent. */
const KEYS = new Set([
  'Backspace',
  'Delete',
  'Enter',
  'Tab',
  'Escape',
  'ArrowLeft',
  'ArrowRight',
  'ArrowUp',
  'ArrowDown',
  'Home',
  'End',
  'PageUp',
  'PageDown',
]);
/** A wheel's line step in px (WheelEvent.deltaMode 1); a page step (mode 2)
 * is the visitor's viewport height. */
const LINE_PX = 16;

let hints = 0;

export function mountCobrowse(url: string, stage: HTMLElement, frame: () => Frame | null, t: Strings): CobrowseControls {
  let state: State = 'idle';
  let control = false;
  /** The recorded session ended. */
  let over = false;
  /** A request is on its way (a second click asks nothing new). */
  let asking = false;
  /** The pointer position waiting to go, latest wins (undefined: none). */
  let pending: { x: number; y: number } | null | undefined;
  let pointerBusy = false;
  let pointerAt = 0;
  let pointerTimer: ReturnType<typeof setTimeout> | undefined;
  /** Everything else waiting to go, in order. */
  const queue: Command[] = [];
  let sending = false;

  const ask = el('button', { type: 'button', class: 'button primary small', onclick: () => void request() }, t.cobrowse);
  const end = el('button', { type: 'button', class: 'button danger small', hidden: true, onclick: () => stop() }, t.cobrowseEnd);
  // Hidden while it has nothing to say: the live view's own status line is the
  // one a reader finds while no co-browse runs.
  const line = el('p', { class: 'rapport-live__cobrowse-status', role: 'status', hidden: true });
  const hint = el('p', { class: 'rapport-live__cobrowse-hint', id: `rapport-cobrowse-hint-${++hints}`, hidden: true }, t.cobrowseKeys);
  const bar = el('div', { class: 'rapport-live__cobrowse' }, ask, end, line);
  // The stage takes the keyboard while the agent has control.
  stage.tabIndex = 0;
  stage.setAttribute('aria-describedby', hint.id);

  const say = (text: string) => {
    // The same words again are not news for a screen reader.
    if (line.textContent !== text) line.textContent = text;
    line.hidden = !text;
  };
  const render = () => {
    const running = state === 'requested' || state === 'active';
    // The button that hides may hold focus: it goes to the one that shows.
    const moveFocus = document.activeElement === (running ? ask : end);
    ask.hidden = running;
    (ask as HTMLButtonElement).disabled = over;
    end.hidden = !running;
    if (moveFocus) (running ? end : ask).focus();
    const words: Record<State, string> = {
      idle: '',
      requested: t.cobrowseWaiting,
      active: control ? `${t.cobrowseActive} ${t.cobrowseControl}` : t.cobrowseActive,
      declined: t.cobrowseDeclined,
      ended: t.cobrowseEnded,
    };
    say(words[state]);
    hint.hidden = !(state === 'active' && control);
    stage.setAttribute('data-cobrowse', state === 'active' ? (control ? 'control' : 'active') : '');
  };
  const set = (next: State, hasControl: boolean) => {
    if (next !== 'active') {
      // Whatever was still to go belongs to a co-browse that is over.
      queue.length = 0;
      pending = undefined;
    }
    state = next;
    control = next === 'active' && hasControl;
    render();
  };

  /** Sends one command; resolves to the response, or null when unreachable. */
  const post = async (command: Command): Promise<Response | null> => {
    try {
      return await fetch(url, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(command),
      });
    } catch {
      return null;
    }
  };
  /** Learns from a refusal what the live stream will say too: the co-browse is
   * over (409 `not_active`) or control was taken back (403 `no_control`). */
  const refused = async (response: Response | null) => {
    if (!response || response.ok || (response.status !== 403 && response.status !== 409)) return;
    const problem = (await response.json().catch(() => null)) as { code?: string } | null;
    if (!problem || state !== 'active') return;
    if (problem.code === 'not_active') set('ended', false);
    else if (problem.code === 'no_control') set('active', false);
  };

  const request = async () => {
    if (over || asking) return;
    asking = true;
    const response = await post({ type: 'request' });
    asking = false;
    if (response && response.ok) {
      // The stream says so too; saying it now needs no round trip.
      if (state !== 'active') set('requested', false);
    } else {
      const problem = response ? ((await response.json().catch(() => null)) as { code?: string } | null) : null;
      say(problem && problem.code === 'cobrowse_busy' ? t.cobrowseBusy : t.cobrowseFailed);
    }
  };
  const stop = () => {
    set('ended', false);
    void post({ type: 'end' });
  };

  const pump = () => {
    if (pointerBusy || pending === undefined || state !== 'active') return;
    const wait = pointerAt + POINTER_MS - Date.now();
    if (wait > 0) {
      if (!pointerTimer) pointerTimer = setTimeout(() => ((pointerTimer = undefined), pump()), wait);
      return;
    }
    const at = pending;
    pending = undefined;
    pointerBusy = true;
    pointerAt = Date.now();
    void post({ type: 'pointer', x: at ? at.x : null, y: at ? at.y : null })
      .then(refused)
      .finally(() => {
        pointerBusy = false;
        pump();
      });
  };

  const send = (command: Command) => {
    const last = queue[queue.length - 1];
    if (last && last.type === 'type' && command.type === 'type') last.text += command.text;
    else if (last && last.type === 'scroll' && command.type === 'scroll') {
      last.deltaX += command.deltaX;
      last.deltaY += command.deltaY;
    } else queue.push(command);
    void drain();
  };
  const drain = async () => {
    if (sending) return;
    sending = true;
    let command: Command | undefined;
    while ((command = queue.shift())) await refused(await post(command));
    sending = false;
  };

  /** The visitor's viewport point under the mouse, or null off the page. */
  const point = (e: MouseEvent): { x: number; y: number } | null => {
    const f = frame();
    if (!f) return null;
    const rect = f.iframe.getBoundingClientRect();
    if (!rect.width || !rect.height) return null;
    const x = ((e.clientX - rect.left) * f.width) / rect.width;
    const y = ((e.clientY - rect.top) * f.height) / rect.height;
    if (x < 0 || y < 0 || x > f.width || y > f.height) return null;
    return { x: Math.round(x), y: Math.round(y) };
  };

  const listeners: [string, (e: Event) => void, AddEventListenerOptions?][] = [
    [
      'pointermove',
      (e) => {
        if (state !== 'active') return;
        pending = point(e as MouseEvent);
        pump();
      },
    ],
    [
      'pointerleave',
      () => {
        if (state !== 'active') return;
        pending = null;
        pump();
      },
    ],
    [
      'click',
      (e) => {
        const at = state === 'active' && point(e as MouseEvent);
        if (at) send({ type: control ? 'click' : 'highlight', ...at });
      },
    ],
    [
      'keydown',
      (e) => {
        const k = e as KeyboardEvent;
        if (state !== 'active' || !control || k.isComposing || k.metaKey) return;
        // Shift+Tab stays here: it takes the keyboard back out of the stage.
        if (k.key === 'Tab' && k.shiftKey) return;
        // One character, and no shortcut (Ctrl alone); Ctrl+Alt is AltGr.
        const printable = Array.from(k.key).length === 1 && (!k.ctrlKey || k.altKey);
        if (printable) send({ type: 'type', text: k.key });
        else if (KEYS.has(k.key) && !k.ctrlKey && !k.altKey) send({ type: 'key', key: k.key });
        else return;
        // Space and the arrows would scroll the dashboard, Tab leave the stage.
        k.preventDefault();
      },
    ],
    [
      'paste',
      (e) => {
        const text = (e as ClipboardEvent).clipboardData?.getData('text/plain');
        if (state !== 'active' || !control || !text) return;
        e.preventDefault();
        send({ type: 'type', text });
      },
    ],
    [
      'wheel',
      (e) => {
        const w = e as WheelEvent;
        if (state !== 'active' || !control) return;
        // Over the stage the wheel scrolls the visitor's page, not ours.
        w.preventDefault();
        const f = frame();
        const unit = w.deltaMode === 1 ? LINE_PX : w.deltaMode === 2 ? (f ? f.height : 800) : 1;
        send({ type: 'scroll', deltaX: Math.round(w.deltaX * unit), deltaY: Math.round(w.deltaY * unit) });
      },
      { passive: false },
    ],
  ];
  for (const [type, fn, options] of listeners) stage.addEventListener(type, fn, options);

  return {
    bar,
    hint,
    state(data) {
      let message: { state?: unknown; control?: unknown };
      try {
        message = JSON.parse(data);
      } catch {
        return;
      }
      const next = message && message.state;
      if (next === 'requested' || next === 'active' || next === 'declined' || next === 'ended') {
        set(next, message.control === true);
      }
    },
    sessionEnded() {
      over = true;
      set(state === 'requested' || state === 'active' ? 'ended' : state, false);
    },
    close() {
      clearTimeout(pointerTimer);
      queue.length = 0;
      for (const [type, fn, options] of listeners) stage.removeEventListener(type, fn, options);
    },
  };
}
