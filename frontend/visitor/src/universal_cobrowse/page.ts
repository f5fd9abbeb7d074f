// cobrowse.js (with cobrowse.css): the browser side of universal co-browsing,
// loaded only by Rapport's own page /cobrowse/{sessionId}. Rapport runs a
// headless Chromium on the server; this client shows its screen to every
// participant and sends it the input of whoever holds control. On load it
// mounts on every `[data-rapport-cobrowse]` element, and
// `window.RapportCobrowse.mountAll()` does it again after hydration or a
// client-side navigation; an element is mounted once. The element carries:
//   data-ws-url  the session's WebSocket, e.g. /cobrowse/ID/ws?token=… (made absolute here)
//   data-role    host | guest, until the server's welcome says which
//
// The protocol (notes/cobrowse-protocol.md, section A; types in protocol.ts):
//   ← binary: a JPEG frame of the viewport          (drawn by screen.ts)
//   ← welcome, then state whenever it changes, pointer, notice
//   ← ended | error: over, the server closes; shown and never reconnected
//   → pointer (anyone), mouse/wheel/key/text/navigate/back/forward/reload
//     (only the participant in control: input.ts and sendInput below),
//     control/end (the host)
// Any other close (the network) reconnects after 1, 2, 4 … at most 15 seconds.

import './cobrowse.css';
import { h } from '../dom';
import { InputForwarder } from './input';
import { Panel } from './panel';
import type { InputMsg, OpenMsg, Role, ServerMsg, State } from './protocol';
import { Screen } from './screen';

declare global {
  interface Window {
    RapportCobrowse?: { mountAll(): void };
  }
}

const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 15_000;

/** The socket's path made absolute, with the page's ws(s) scheme. */
function socketUrl(path: string): string {
  const url = new URL(path, location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.href;
}

/** What was typed in the address bar, as a URL: https:// unless it names a
 * scheme ("localhost:8080" names a host and port, not a scheme). */
function addressUrl(typed: string): string {
  const url = typed.trim();
  if (!url) return '';
  const scheme = /^[a-z][a-z\d+.-]*:/i.test(url) && !/^[^/:]+:\d/.test(url);
  return scheme ? url : `https://${url}`;
}

let mounts = 0;

class Session {
  private readonly wsUrl: string;
  private ws: WebSocket | null = null;
  /** Connections lost in a row since the last welcome: the backoff's exponent. */
  private attempts = 0;
  private retryTimer = 0;
  /** Ended, or refused: nothing more happens. */
  private over = false;
  /** One's participant id, from the welcome; null while not connected. */
  private you: string | null = null;
  private role: Role;
  private state: State | null = null;
  /** The user typed in the address bar: it shows their text, not the page's URL. */
  private editingAddress = false;

  private readonly status = h('p', { class: 'cobrowse-status', role: 'status' });
  private readonly back: HTMLButtonElement;
  private readonly forward: HTMLButtonElement;
  private readonly reload: HTMLButtonElement;
  private readonly address: HTMLInputElement;
  private readonly go: HTMLButtonElement;
  private readonly title = h('p', { class: 'cobrowse-title' });
  private readonly screen: Screen;
  private readonly input: InputForwarder;
  private readonly panel: Panel;
  private readonly watchTimer: number;

  constructor(private readonly root: HTMLElement) {
    const n = ++mounts;
    const hintId = `rapport-cobrowse-${n}-hint`;
    this.wsUrl = socketUrl(root.dataset.wsUrl || '');
    this.role = root.dataset.role === 'host' ? 'host' : 'guest';

    const navButton = (label: string, glyph: string, onclick: () => void) =>
      h('button', { type: 'button', class: 'button secondary cobrowse-nav', 'aria-label': label, title: label, disabled: true, onclick }, glyph);
    this.back = navButton('Back', '←', () => this.sendInput({ type: 'back' }));
    this.forward = navButton('Forward', '→', () => this.sendInput({ type: 'forward' }));
    this.reload = navButton('Reload', '↻', () => this.sendInput({ type: 'reload' }));
    this.address = h('input', {
      type: 'text',
      inputmode: 'url',
      class: 'cobrowse-address-input',
      'aria-label': 'Address',
      autocomplete: 'off',
      autocapitalize: 'off',
      spellcheck: 'false',
      disabled: true,
      oninput: () => (this.editingAddress = true),
      onkeydown: (e: KeyboardEvent) => {
        if (e.key === 'Escape') this.stopEditing();
      },
    });
    this.go = h(
      'button',
      {
        type: 'submit',
        class: 'button primary',
        disabled: true,
        // Clicking Go keeps focus in the address bar, so the typed text is not
        // given up (see the focusout below) before the click submits it.
        onmousedown: (e: MouseEvent) => e.preventDefault(),
      },
      'Go',
    );
    const addressGroup = h('div', { class: 'cobrowse-address' }, this.address, this.go);
    // Leaving the address bar gives up what was typed: the page's URL shows again.
    addressGroup.addEventListener('focusout', (e) => {
      if (!addressGroup.contains(e.relatedTarget as Node | null)) this.stopEditing();
    });
    const toolbar = h(
      'form',
      {
        class: 'cobrowse-toolbar',
        'aria-label': 'Browser controls',
        novalidate: true,
        onsubmit: (e: Event) => {
          e.preventDefault();
          this.navigate();
        },
      },
      this.back,
      this.forward,
      this.reload,
      addressGroup,
    );

    this.screen = new Screen(hintId);
    this.input = new InputForwarder(this.screen.canvas, {
      viewport: () => this.screen.viewport,
      pointer: (msg) => this.send(msg),
      input: (msg) => this.sendInput(msg),
    });
    this.panel = new Panel({
      giveControl: (id) => this.send({ type: 'control', to: id }),
      endSession: () => this.send({ type: 'end' }),
    });
    const hint = h(
      'p',
      { id: hintId, class: 'cobrowse-hint' },
      'While you have control, your clicks, scrolling and typing on the screen go to the shared browser (press Escape, then Tab, to move on). Everyone sees where you point.',
    );

    root.replaceChildren(
      toolbar,
      this.status,
      h('div', { class: 'cobrowse-layout' }, h('div', { class: 'cobrowse-main' }, this.title, this.screen.stage, hint), this.panel.element),
    );
    this.say('Connecting…');
    this.render();
    this.connect();
    // Let go of everything once the element is gone (the page re-rendered or
    // navigated away without unloading).
    this.watchTimer = window.setInterval(() => {
      if (!this.root.isConnected) this.dispose();
    }, 1000);
  }

  private say(text: string): void {
    this.status.textContent = text;
  }

  // ---- the socket -----------------------------------------------------------------------

  private connect(): void {
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.wsUrl);
    } catch {
      // Only a malformed URL throws: trying again cannot help.
      this.finish('This co-browsing link does not work.');
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      if (typeof event.data === 'string') this.handle(event.data);
      else this.screen.frame(event.data as ArrayBuffer);
    };
    ws.onclose = () => {
      if (this.ws === ws) this.lost();
    };
  }

  /** Forgets the socket (its later events are ignored) and closes it. */
  private dropSocket(): void {
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState <= WebSocket.OPEN) ws.close();
  }

  /** The connection closed without the session being over: try again, later each time. */
  private lost(): void {
    this.ws = null;
    this.you = null;
    this.screen.clearPointers();
    this.say('Reconnecting…');
    this.render();
    const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** this.attempts);
    this.attempts++;
    this.retryTimer = window.setTimeout(() => this.connect(), delay);
  }

  /** The session is over for this participant (ended, refused): no reconnecting. */
  private finish(message: string): void {
    this.over = true;
    this.dropSocket();
    this.screen.close();
    this.input.detach();
    this.root.classList.add('cobrowse--over');
    this.say(message);
    this.render();
  }

  private dispose(): void {
    window.clearInterval(this.watchTimer);
    window.clearTimeout(this.retryTimer);
    this.dropSocket();
    this.screen.close();
    this.input.detach();
  }

  private write(msg: OpenMsg | InputMsg): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  /** Messages anyone may send (the server checks the host's). */
  private send(msg: OpenMsg): void {
    this.write(msg);
  }

  /** Input for the shared browser: the one place that checks control, so
   * nothing is sent without it (a move queued before control was lost included). */
  private sendInput(msg: InputMsg): void {
    if (this.inControl()) this.write(msg);
  }

  private inControl(): boolean {
    return this.you !== null && !this.over && this.state?.control === this.you;
  }

  private handle(text: string): void {
    let msg: ServerMsg;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    switch (msg.type) {
      case 'welcome':
        this.you = String(msg.you);
        this.role = msg.role === 'host' ? 'host' : 'guest';
        this.screen.viewport = msg.viewport;
        this.attempts = 0;
        this.say('');
        this.render();
        return;
      case 'state':
        this.state = msg;
        this.screen.names(new Map(msg.participants.map((p) => [p.id, p.name])));
        this.render();
        return;
      case 'pointer': {
        // A pointer of someone the roster does not list yet shows with their next move.
        const name = this.state?.participants.find((p) => p.id === msg.id)?.name;
        if (msg.id !== this.you && name !== undefined) this.screen.pointer(msg.id, name, msg.x, msg.y);
        return;
      }
      case 'notice':
        this.say(msg.message);
        return;
      case 'ended':
      case 'error':
        this.finish(msg.message);
        return;
      default:
        return; // newer servers may say more
    }
  }

  // ---- the view -------------------------------------------------------------------------

  /** Shows the state: the address, what works (only in control), the panel. */
  private render(): void {
    const state = this.state;
    const live = this.you !== null && !this.over;
    const control = this.inControl();
    this.input.setControl(control);
    if (!control) this.editingAddress = false;
    if (!this.editingAddress) this.address.value = state?.url ?? '';
    this.back.disabled = !control || !state?.canGoBack;
    this.forward.disabled = !control || !state?.canGoForward;
    this.reload.disabled = this.address.disabled = this.go.disabled = !control;
    this.title.textContent = state ? state.title || state.url : '';
    this.screen.loading = live && !!state?.loading;
    this.panel.update({
      participants: state?.participants ?? [],
      // Stale while reconnecting or once over: nobody is shown in control.
      control: live ? (state?.control ?? null) : null,
      you: this.you,
      host: this.role === 'host',
      live,
      endsAt: state?.endsAt ?? '',
    });
  }

  /** Gives up what was typed in the address bar: it shows the page's URL again. */
  private stopEditing(): void {
    this.editingAddress = false;
    this.address.value = this.state?.url ?? '';
  }

  private navigate(): void {
    const url = addressUrl(this.address.value);
    if (!url) return;
    this.sendInput({ type: 'navigate', url });
    this.editingAddress = false;
    this.address.value = url;
  }
}

const MOUNTED = 'data-rapport-mounted';

function mountAll(): void {
  document.querySelectorAll<HTMLElement>(`[data-rapport-cobrowse]:not([${MOUNTED}])`).forEach((root) => {
    root.setAttribute(MOUNTED, '');
    try {
      new Session(root);
    } catch (e) {
      console.error('Rapport co-browsing: could not start', e);
    }
  });
}

window.RapportCobrowse = { mountAll };
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mountAll);
else mountAll();
