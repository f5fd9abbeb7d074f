// chat.js: the chat widget, loaded by the loader when the page is idle or the
// visitor opens the chat. It renders in an open shadow root on its own host
// element, styled only by an adopted stylesheet (see styles.ts), so neither the
// host page's CSS nor a strict CSP can break it. Server data is only ever set as
// text or as checked http(s) links, never as HTML.

import type { Chat, ChunkFactory, Core, HttpError, Message } from '../types';
import { h } from '../dom';
import { load, save } from '../util';
import { pickLanguage, strings } from './i18n';
import { readStream, type StreamHandlers } from '../sse';
import { readSocket } from '../socket';
import { css } from './styles';
import { createCsat } from './csat';
import { createTranscript } from './transcript';
import { createOffline } from './offline';
import { createRuleActions, type Greeting } from './actions';

/** The launcher's speech bubble (filled), the attach button's paper clip and
 * the call button's camera (stroked: styles.ts draws them as lines). */
const BUBBLE =
  'M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2zm3 6.5a1.5 1.5 0 1 0 0 .01zm5 0a1.5 1.5 0 1 0 0 .01zm5 0a1.5 1.5 0 1 0 0 .01z';
const CLIP = 'M21 11.5l-8.6 8.6a5 5 0 0 1-7.1-7.1l8.6-8.6a3.3 3.3 0 0 1 4.7 4.7l-8.6 8.6a1.7 1.7 0 0 1-2.4-2.4l7.9-7.9';
const CAMERA = 'M3 5h11a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H3a2 2 0 0 1-2-2V7a2 2 0 0 1 2-2zm13 7l7-5v10z';

/** An icon of one path, built as SVG nodes (no markup strings). */
function icon(d: string): SVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', d);
  svg.append(path);
  return svg;
}

/** The URL if it is an absolute http(s) URL: no javascript: links from server data. */
function safeUrl(url?: string | null): string | null {
  try {
    const parsed = new URL(url || '');
    return /^https?:$/.test(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

/** The visitor's typing goes to the agents at most this often, in ms. */
const TYPING_EVERY_MS = 1_500;
/** An agent's typing note goes away this long after their last signal. */
const TYPING_SHOWN_MS = 6_000;
/** The end of a draft the agents may see, in characters (the server's bound). */
const MAX_DRAFT = 500;
/** Pages told to resync spread their history reads over this many ms. */
const RESYNC_SPREAD_MS = 5_000;

const createChat: ChunkFactory = (core: Core): Chat => {
  const lang = pickLanguage([...(navigator.languages || []), navigator.language]);
  const t = strings(lang);
  const draftKey = `rapport:${core.key}:draft`;
  const time = new Intl.DateTimeFormat(lang, { hour: 'numeric', minute: '2-digit' });

  const host = document.createElement('rapport-widget');
  const shadow = host.attachShadow({ mode: 'open' });
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  shadow.adoptedStyleSheets = [sheet];

  // Launcher.
  const badge = h('span', { class: 'badge', 'aria-hidden': 'true', hidden: true });
  const launcher = h(
    'button',
    { type: 'button', class: 'launcher', 'aria-label': t.launcher, 'aria-expanded': 'false', 'aria-controls': 'panel' },
    icon(BUBBLE),
    badge,
  );
  launcher.addEventListener('click', () => (panel.hidden ? open() : close()));

  // Panel: header, status line, message log, composer or offline form.
  const status = h('p', { class: 'status', role: 'status', hidden: true });
  const log = h(
    'div',
    { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': t.messages, tabindex: '0' },
    h('p', { class: 'note' }, t.greeting),
  );
  const input = h('textarea', {
    id: 'input',
    rows: '1',
    autocomplete: 'off',
    maxlength: '10000',
    onkeydown: (e: KeyboardEvent) => {
      // Enter sends; Shift+Enter is a new line; Enter that ends an IME
      // composition (Japanese input) only confirms the text.
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        submit();
      }
    },
    oninput: () => {
      save(draftKey, input.value || null, true);
      typed();
    },
  }) as HTMLTextAreaElement;
  input.value = load(draftKey, true) || '';
  // Files: the button opens the browser's file picker (on a phone, its camera,
  // photo and file choices) through a visually hidden file input. The input
  // stays out of the tab order and the accessibility tree, so the button is the
  // one control, for the keyboard and screen readers alike. Hidden until the
  // config says this server takes files.
  const picker = h('input', {
    type: 'file',
    multiple: true,
    class: 'sr',
    tabindex: '-1',
    'aria-hidden': 'true',
    onchange: () => {
      Array.from(picker.files || []).forEach(attach);
      // Choosing the same file again is a new choice.
      picker.value = '';
    },
  }) as HTMLInputElement;
  const clip = h(
    'button',
    { type: 'button', class: 'attach', 'aria-label': t.attach, title: t.attach, hidden: true, onclick: () => picker.click() },
    icon(CLIP),
  );
  const composer = h(
    'form',
    { class: 'composer', onsubmit: (e: Event) => (e.preventDefault(), submit()) },
    clip,
    picker,
    h('label', { for: 'input', class: 'sr' }, t.yourMessage),
    input,
    h('button', { type: 'submit', class: 'send' }, t.send),
  );
  // The rating question (CSAT), shown once the conversation is closed.
  const rating = createCsat(core, t, () => scrollDown());
  // A copy of the conversation by mail: a button, then a small form.
  const transcript = createTranscript(core, t);
  // "Ada is typing…", while an agent types a reply.
  const typingNote = h('p', { class: 'typing', role: 'status', hidden: true });
  // The video call button sits in the header, where it stays in reach however
  // long the log grows; like the composer, it hides while the workspace is closed.
  const camera = h(
    'button',
    { type: 'button', class: 'call', 'aria-label': t.call, title: t.call, onclick: () => requestCall() },
    icon(CAMERA),
  ) as HTMLButtonElement;
  // The workspace's config: open, or closed with the offline form instead.
  const mode = createOffline(core, t, { clip, composer, camera, transcript });
  const panel = h(
    'div',
    {
      id: 'panel',
      class: 'panel',
      role: 'dialog',
      'aria-label': t.launcher,
      'aria-labelledby': 'title',
      hidden: true,
      onkeydown: (e: KeyboardEvent) => e.key === 'Escape' && close(),
    },
    h(
      'header',
      {},
      h('h2', { id: 'title' }, t.launcher),
      camera,
      h('button', { type: 'button', class: 'close', 'aria-label': t.close, onclick: () => close() }, '×'),
    ),
    status,
    log,
    typingNote,
    rating.form,
    composer,
    mode.form,
    transcript,
  );
  const root = h('div', { class: 'root', lang }, panel, launcher);
  shadow.append(root);
  (document.body || document.documentElement).append(host);

  // Messages, by id, so history reloads and stream events never show one twice.
  const shown = new Map<string, HTMLElement>();
  let unread = 0;

  const scrollDown = () => (log.scrollTop = log.scrollHeight);
  const setUnread = (count: number) => {
    unread = count;
    badge.textContent = String(count);
    badge.hidden = !count;
    launcher.setAttribute('aria-label', count ? `${t.launcher} (${count} ${t.unread})` : t.launcher);
  };
  const meta = (el: HTMLElement, text: string) => {
    el.querySelectorAll('.meta, .retry').forEach((n) => n.remove());
    el.append(h('span', { class: 'meta' }, text));
  };
  const bubble = (inbound: boolean, at: string) =>
    h('div', { class: `msg ${inbound ? 'in' : 'out'}`, 'data-at': at }, inbound && h('span', { class: 'sr' }, `${t.you}: `));

  const render = (m: Message): HTMLElement => {
    const el = bubble(m.direction === 'INBOUND', m.createdAt);
    const text = m.message || '';
    if (m.type === 'CARD') {
      el.classList.add('card');
      if (text) el.append(h('span', {}, text));
      const link = safeUrl(m.buttonLink);
      if (link) {
        el.append(
          h('a', { class: 'button', href: link, target: '_blank', rel: 'noopener noreferrer' }, m.buttonText || link),
        );
      }
    } else if (m.type === 'FILE' || m.type === 'AUDIO' || m.type === 'VIDEO') {
      const link = safeUrl(m.url);
      const kind = m.type === 'FILE' ? t.file : m.type === 'AUDIO' ? t.audio : t.video;
      const label = `${kind}: ${text || (link ? decodeURIComponent(link.split('/').pop() || link) : '')}`;
      el.append(link ? h('a', { href: link, target: '_blank', rel: 'noopener noreferrer' }, label) : label);
    } else {
      el.append(text);
    }
    meta(el, time.format(new Date(m.createdAt)));
    return el;
  };

  // Bubbles of this device's messages on their way. The stream also brings the
  // visitor's own messages (for its other devices), and may bring one before
  // its POST answers: that message then takes over its bubble, never a second.
  const awaiting: { el: HTMLElement; matches: (m: Message) => boolean }[] = [];
  const awaitEcho = (el: HTMLElement, matches: (m: Message) => boolean) => {
    const entry = { el, matches };
    awaiting.push(entry);
    return () => {
      const i = awaiting.indexOf(entry);
      if (i >= 0) awaiting.splice(i, 1);
    };
  };
  const adopt = (m: Message): boolean => {
    const i = m.direction === 'INBOUND' ? awaiting.findIndex((a) => a.matches(m)) : -1;
    if (i < 0) return false;
    const [{ el }] = awaiting.splice(i, 1);
    const sent = render(m);
    shown.set(m.id, sent);
    el.replaceWith(sent);
    return true;
  };

  /** Shows a message from the server; returns false if it was shown already. */
  const add = (m: Message): boolean => {
    if (shown.has(m.id) || adopt(m)) return false;
    const el = render(m);
    shown.set(m.id, el);
    // Keep the log in time order: history may arrive after live messages.
    const after = Array.from(log.querySelectorAll<HTMLElement>('.msg')).find(
      (n) => (n.getAttribute('data-at') || '') > m.createdAt,
    );
    log.insertBefore(el, after || null);
    if (m.direction === 'OUTBOUND') {
      // The agent's message ends their typing note, and is read if the panel is shown.
      agentTyping(false);
      if (!newestOut || m.createdAt > newestOut.at) newestOut = { id: m.id, at: m.createdAt };
      markRead();
    }
    showSeen();
    scrollDown();
    return true;
  };

  // Typing, both ways. The visitor's draft goes to the agents as it is typed
  // (they see it only where the workspace shows drafts), at most every 1.5 s,
  // and "stopped" once the box is emptied; sending ends it on their side.
  let typingTimer: ReturnType<typeof setTimeout> | undefined;
  let typingSentAt = 0;
  let typingLive = false;
  const sendTyping = () => {
    typingTimer = undefined;
    if (!core.customerId()) return;
    const typing = input.value.trim() !== '';
    if (!typing && !typingLive) return;
    typingLive = typing;
    typingSentAt = Date.now();
    // Whole characters, as the server counts them: never half an emoji.
    const draft = typing ? Array.from(input.value).slice(-MAX_DRAFT).join('') : undefined;
    core
      .request<null>('/widget/typing', { body: { typing, draft }, visitor: true })
      // A lost signal only delays the note the next one brings.
      .catch(() => undefined);
  };
  function typed() {
    if (typingTimer) return;
    typingTimer = setTimeout(sendTyping, Math.max(0, TYPING_EVERY_MS - (Date.now() - typingSentAt)));
  }
  const typingSent = () => {
    clearTimeout(typingTimer);
    typingTimer = undefined;
    typingLive = false;
  };
  let agentTypingTimer: ReturnType<typeof setTimeout> | undefined;
  function agentTyping(typing: boolean, name?: string | null) {
    clearTimeout(agentTypingTimer);
    typingNote.hidden = !typing;
    if (!typing) return;
    typingNote.textContent = name ? t.typing.replace('{name}', name) : t.someoneTyping;
    agentTypingTimer = setTimeout(() => (typingNote.hidden = true), TYPING_SHOWN_MS);
  }

  // Read state, both ways. "Seen" goes under the visitor's newest message an
  // agent has read (Rapport's `agentReadAt`); the newest agent message counts
  // as read by the visitor once the panel shows it on a visible page.
  let agentReadAt = 0;
  let visitorReadAt = 0;
  let newestOut: { id: string; at: string } | null = null;
  let readTimer: ReturnType<typeof setTimeout> | undefined;
  type ReadState = { visitorReadAt?: string | null; agentReadAt?: string | null };
  const readState = (state: ReadState | null) => {
    visitorReadAt = Math.max(visitorReadAt, Date.parse(state?.visitorReadAt || '') || 0);
    agentReadAt = Math.max(agentReadAt, Date.parse(state?.agentReadAt || '') || 0);
    showSeen();
  };
  function showSeen() {
    log.querySelectorAll('.seen').forEach((n) => n.remove());
    const read = Array.from(log.querySelectorAll<HTMLElement>('.msg.in')).filter(
      (n) => Date.parse(n.getAttribute('data-at') || '') <= agentReadAt,
    );
    const last = read[read.length - 1];
    if (last) last.append(h('span', { class: 'seen' }, t.seen));
  }
  function markRead() {
    if (readTimer || panel.hidden || document.visibilityState !== 'visible') return;
    readTimer = setTimeout(() => {
      readTimer = undefined;
      const newest = newestOut;
      if (!newest || Date.parse(newest.at) <= visitorReadAt || panel.hidden) return;
      core
        .request<ReadState>('/widget/read', { body: { messageId: newest.id }, visitor: true })
        .then(readState)
        .catch((e) => core.emit('error', e));
    }, 300);
  }
  document.addEventListener('visibilitychange', markRead);

  /** Marks a bubble as not sent, saying why, with a retry where one can help. */
  const failed = (el: HTMLElement, why: string, retry?: () => void) => {
    el.classList.add('failed');
    meta(el, why);
    if (retry) el.append(h('button', { type: 'button', class: 'retry', onclick: retry }, t.retry));
  };

  // Sending: the bubble shows "Sending…", then the time, or "Not sent." with a
  // retry. The text stays in the bubble until it is sent. A message answering
  // a proactive one names its rule: Rapport then stores the proactive message
  // before it, and sends it back like any other, so the local copy goes.
  const send = (text: string, el: HTMLElement, answered: Greeting | null) => {
    el.classList.remove('failed');
    meta(el, t.sending);
    const settled = awaitEcho(el, (m) => m.type === 'MESSAGE' && m.message === text);
    core
      .request<Message>('/widget/message', {
        body: {
          message: text,
          pageUrl: location.href,
          language: navigator.language,
          actionRuleId: answered ? answered.ruleId : undefined,
        },
        visitor: true,
      })
      .finally(settled)
      .then((m) => {
        if (answered) answered.els.forEach((n) => n.remove());
        if (shown.has(m.id)) el.remove();
        else {
          shown.set(m.id, el);
          el.setAttribute('data-at', m.createdAt);
          meta(el, time.format(new Date(m.createdAt)));
        }
        showSeen();
        listen();
        core.emit('messageSent', m);
      })
      .catch((e) => {
        failed(el, t.failed, () => send(text, el, answered));
        core.emit('error', e);
      });
  };
  function submit() {
    const text = input.value.trim();
    if (!text) return;
    rating.endThanks();
    input.value = '';
    save(draftKey, null, true);
    typingSent();
    const el = bubble(true, '\uffff');
    el.append(text);
    log.append(el);
    scrollDown();
    send(text, el, rules.answer());
  }

  // Files go one request each, the file itself as the body. The bubble names
  // the file while it uploads, then becomes the stored message (a link to it),
  // like history shows it. A file over the workspace's limit never leaves the
  // browser; one Rapport refuses as too large, or by its name, gets no retry:
  // sending it again cannot help.
  const tooLarge = () =>
    t.tooLarge.replace(
      '{n}',
      new Intl.NumberFormat(lang, { maximumFractionDigits: 1 }).format((mode.config().maxFileBytes || 0) / 1048576),
    );
  const upload = (file: File, el: HTMLElement) => {
    el.classList.remove('failed');
    meta(el, t.sending);
    const settled = awaitEcho(el, (m) => m.type === 'FILE' || m.type === 'AUDIO' || m.type === 'VIDEO');
    core
      .request<Message>(`/widget/file?name=${encodeURIComponent(file.name)}`, { body: file, visitor: true })
      .finally(settled)
      .then((m) => {
        if (shown.has(m.id)) el.remove();
        else {
          const sent = render(m);
          shown.set(m.id, sent);
          el.replaceWith(sent);
        }
        listen();
        core.emit('messageSent', m);
      })
      .catch((e) => {
        const status = (e as HttpError).status;
        if (status === 413) failed(el, tooLarge());
        else if (status === 422) failed(el, t.badName);
        else failed(el, t.failed, () => upload(file, el));
        core.emit('error', e);
      });
  };
  function attach(file: File) {
    const el = bubble(true, '\uffff');
    el.append(`${t.file}: ${file.name}`);
    log.append(el);
    scrollDown();
    if (file.size > (mode.config().maxFileBytes || 0)) failed(el, tooLarge());
    else upload(file, el);
  }

  // Video calls: the server starts one and answers with its invitation, a CARD
  // that the stream brings too; add() shows it once, whichever comes first. A
  // failed request leaves a bubble with a retry, like a failed send.
  const requestCall = (el?: HTMLElement) => {
    if (camera.disabled) return;
    // Disabling the focused button blurs it: a keyboard user gets it back after.
    const refocus = shadow.activeElement === camera;
    camera.disabled = true;
    camera.setAttribute('aria-busy', 'true');
    if (el) {
      el.classList.remove('failed');
      meta(el, t.sending);
    }
    core
      .request<Message>('/widget/call', { method: 'POST', visitor: true })
      .then((m) => {
        if (el) el.remove();
        if (add(m)) core.emit('message', m);
        // Names the join button as the log shows it: its text is the server's.
        const card = shown.get(m.id);
        const join = card && card.querySelector('.button');
        if (card && join) {
          card.after(h('p', { class: 'note' }, t.callReady.replace('{button}', join.textContent || '')));
          scrollDown();
        }
        listen();
      })
      .catch((e) => {
        if (!el) {
          el = bubble(true, '\uffff');
          el.append(t.call);
          log.append(el);
          scrollDown();
        }
        failed(el, t.callFailed, () => requestCall(el));
        core.emit('error', e);
      })
      .finally(() => {
        camera.disabled = false;
        camera.removeAttribute('aria-busy');
        if (refocus && document.activeElement === document.body) camera.focus();
      });
  };

  // History: newest first from the server. Outbound messages the widget had not
  // received yet count as unread while the panel is closed.
  const loadHistory = async () => {
    const page = await core.request<{ results: Message[] }>('/widget/message?pageSize=100', { visitor: true });
    let fresh = 0;
    for (const m of page.results.slice().reverse()) {
      if (add(m) && m.direction === 'OUTBOUND' && !(m as { deliveredAt?: string }).deliveredAt) fresh++;
    }
    if (panel.hidden && fresh) setUnread(unread + fresh);
  };

  // What the live messages do, whichever way they come.
  const handlers: StreamHandlers = {
    event(name, data) {
      // Rapport lost some of this stream's messages (it fell behind): read them.
      // A burst makes every open page of the workspace fall behind at once, so
      // each waits a random moment first rather than all reading together.
      if (name === 'resync') {
        const spread = Math.random() * RESYNC_SPREAD_MS;
        setTimeout(() => loadHistory().catch((e) => core.emit('error', e)), spread);
        return;
      }
      if (name === 'conversation') return rating.check();
      if (name === 'typing' || name === 'read') {
        try {
          const frame = JSON.parse(data) as { name?: string | null; typing?: boolean; upTo?: string };
          if (name === 'typing') agentTyping(!!frame.typing, frame.name);
          else readState({ agentReadAt: frame.upTo });
        } catch (e) {
          core.emit('error', e);
        }
        return;
      }
      if (name !== 'message') return;
      try {
        const m = JSON.parse(data) as Message;
        // The visitor's own messages come too, written on another device:
        // shown, but neither unread nor announced to the page.
        if (add(m) && m.direction === 'OUTBOUND') {
          if (panel.hidden) setUnread(unread + 1);
          core.emit('message', m);
        }
      } catch (e) {
        core.emit('error', e);
      }
    },
    open() {
      status.hidden = true;
      // (Re)connected: fetch what arrived while the stream was down.
      loadHistory().catch((e) => core.emit('error', e));
      rating.check();
      core
        .request<ReadState>('/widget/read', { visitor: true })
        .then(readState)
        .catch((e) => core.emit('error', e));
    },
    down(_retryMs, refused) {
      // Refused for now (the workspace's streams are all taken): messages
      // still come, by reading the history until the stream opens.
      if (refused) {
        loadHistory().catch((e) => core.emit('error', e));
        return;
      }
      status.textContent = t.unreachable;
      status.hidden = false;
    },
  };

  // Live messages, once the visitor exists.
  let stopStream: (() => void) | null = null;
  function listen() {
    if (stopStream || !core.customerId()) return;
    const socketUrl = `${core.origin.replace(/^http/, 'ws')}/rest/v1/widget/socket`;
    const hello = () => {
      const visitorToken = core.visitorToken();
      return visitorToken ? { widgetKey: core.key, visitorToken } : null;
    };
    const fallback = () => readStream((signal) => core.fetchRaw('/widget/stream', signal), handlers);
    stopStream = readSocket(socketUrl, hello, fallback, handlers);
  }

  // A rule opens the panel without taking the page's focus or starting the
  // visitor: a visitor who only sees a proactive message is no customer yet.
  function open(byRule?: boolean) {
    if (panel.hidden) {
      panel.hidden = false;
      root.classList.add('open');
      launcher.setAttribute('aria-expanded', 'true');
      setUnread(0);
      scrollDown();
      markRead();
      core.emit('open');
    }
    mode.refreshIfStale();
    if (byRule) return listen();
    // Opening starts the visitor, so the stream and history follow.
    core
      .startVisitor()
      .then(listen)
      .catch((e) => {
        status.textContent = t.unreachable;
        status.hidden = false;
        core.emit('error', e);
      });
    const first = mode.form.hidden ? input : mode.form.querySelector<HTMLElement>('input, textarea');
    (first || input).focus();
  }
  function close() {
    if (panel.hidden) return;
    panel.hidden = true;
    root.classList.remove('open');
    launcher.setAttribute('aria-expanded', 'false');
    launcher.focus();
    core.emit('close');
  }

  // A signed identity made the visitor a customer the workspace knew: show
  // that customer's conversation, and listen as it.
  core.on('_identity', () => {
    if (stopStream) stopStream();
    stopStream = null;
    for (const el of shown.values()) el.remove();
    shown.clear();
    newestOut = null;
    agentReadAt = visitorReadAt = 0;
    setUnread(0);
    listen();
  });

  // Action rules' proactive greetings, call offers and offline form.
  const rules = createRuleActions(t, {
    log,
    render,
    open: () => open(true),
    scrollDown,
    requestCall: () => requestCall(),
    showOffline: mode.byRule,
  });

  // A returning visitor listens at once, so answers reach it with the panel closed.
  listen();
  return {
    open: () => open(),
    close,
    isOpen: () => !panel.hidden,
    setLauncher: (visible) => (launcher.hidden = !visible),
    proactive: rules.proactive,
    offlineForm: rules.offlineForm,
    offerCall: rules.offerCall,
  };
};

// The loader injects this script only after setting up the registry.
if (window.__rapportChunks) window.__rapportChunks.push(['chat', createChat]);
