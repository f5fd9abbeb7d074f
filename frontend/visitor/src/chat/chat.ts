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
import { BUBBLE, CAMERA, CLIP, createBubbles, icon } from './bubbles';
import { createPresence, type ReadState } from './presence';

/** Pages told to resync spread their history reads over this many ms. */
const RESYNC_SPREAD_MS = 5_000;

const createChat: ChunkFactory = (core: Core): Chat => {
  const lang = pickLanguage([...(navigator.languages || []), navigator.language]);
  const t = strings(lang);
  const draftKey = `rapport:${core.key}:draft`;
  const { meta, bubble, render, timeOf } = createBubbles(t, lang);

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
  // Typing and read state, both ways.
  const presence = createPresence(core, t, input, log, () => !panel.hidden);
  const { typingNote, typed, typingSent, agentTyping, readState, showSeen, markRead } = presence;
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
    if (m.direction === 'OUTBOUND') presence.agentMessage(m);
    showSeen();
    scrollDown();
    return true;
  };

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
          meta(el, timeOf(m.createdAt));
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
    presence.reset();
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
