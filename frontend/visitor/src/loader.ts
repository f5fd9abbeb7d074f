// loader.js: the one script customers embed. It must stay small (≤ 5 KB gzip) and
// harmless: it reads the widget key from its own tag, exposes the `Rapport` API
// (replaying calls queued by the inline stub), tracks visits, resources and
// errors, and fetches the chat UI (chat.js) when the page is idle or the visitor
// asks for it, the session recorder (recorder.js) when the workspace records
// and the visitor's consent allows it, and the action rules' evaluator
// (rules.js) when the workspace has rules: the loader only fetches and caches
// them. Nothing here may throw into the host page or block it: every
// network call is caught, and failures back off.

import { call, callJson, Endpoint } from './net';
import { startTracking } from './track';
import type {
  ActionRule,
  Chat,
  Core,
  EventName,
  Recorder,
  RecorderFactory,
  RecordingConfig,
  RequestOptions,
  RulesHost,
  TrackEvent,
  WidgetConfig,
} from './types';
import { backoff, load, newId, save } from './util';

type Listener = (data?: unknown) => void;
type Profile = Record<string, unknown>;
interface Api {
  (command: string, ...args: unknown[]): unknown;
  q?: ArrayLike<unknown>[];
  [method: string]: unknown;
}
declare global {
  interface Window {
    Rapport?: Api;
  }
}

(() => {
  const existing = window.Rapport;
  // Embedded twice: the first copy owns the page.
  if (existing && existing.loaded) return;

  const script =
    (document.currentScript as HTMLScriptElement | null) ||
    document.querySelector<HTMLScriptElement>('script[data-rapport-key]');
  const key = script && script.getAttribute('data-rapport-key');
  if (!script || !key) {
    console.warn('Rapport: the loader script needs data-rapport-key');
    return;
  }
  const src = new URL(script.src, location.href);
  const base = src.href.replace(/[^/]*$/, '');
  const prefix = `rapport:${key}:`;

  // Identity: the visitor token (chat) and an anonymous id (tracking).
  interface Identity {
    customerId: string;
    visitorToken: string;
  }
  let identity: Identity | null = null;
  try {
    identity = JSON.parse(load(prefix + 'visitor') || 'null');
  } catch {
    // A damaged entry starts a new visitor.
  }
  // The page of a continue link (Rapport's own `/chat/{token}`, after its
  // button) hands over the conversation's visitor: this browser takes it, and
  // the chat opens. Only on Rapport's origin: a customer's page cannot use it.
  const handover = (script.getAttribute('data-rapport-continue') || '').split(':');
  const continued = src.origin === location.origin && handover.length === 2 && !!handover[1];
  if (continued) {
    identity = { customerId: handover[0], visitorToken: handover[1] };
    save(prefix + 'visitor', JSON.stringify(identity));
  }
  let visitorId = load(prefix + 'vid');
  if (!visitorId) save(prefix + 'vid', (visitorId = newId()));
  let profile: Profile = {};
  let tags: string[] = [];
  try {
    tags = JSON.parse(load(prefix + 'tags') || '[]');
  } catch {
    // Start without tags.
  }

  const end: Endpoint = { origin: src.origin, key, token: () => identity && identity.visitorToken };

  // Events for the host page's callbacks; a callback that throws is reported on
  // the console, never allowed to stop the widget.
  const listeners: Partial<Record<EventName, Listener[]>> = {};
  let ready = false;
  const emit = (event: EventName, data?: unknown) => {
    for (const cb of listeners[event] || []) {
      try {
        cb(data);
      } catch (e) {
        console.error('Rapport: an event callback threw', e);
      }
    }
  };

  // Starting the visitor creates a customer, so it happens only when needed: on
  // open, first message, tag or identify. One start at a time; a lost network
  // retries with backoff.
  let starting: Promise<string> | null = null;
  const startVisitor = (): Promise<string> => {
    if (identity) return Promise.resolve(identity.customerId);
    if (!starting) {
      starting = (async () => {
        for (let attempt = 0; ; attempt++) {
          try {
            const body = { language: navigator.language, ...profile, pageUrl: location.href };
            identity = await callJson<Identity>(end, '/widget/visitor', { body });
            save(prefix + 'visitor', JSON.stringify(identity));
            save(prefix + 'profile', JSON.stringify(profile));
            return identity.customerId;
          } catch (e) {
            const status = (e as { status?: number }).status;
            // A profile the server refuses must not keep the visitor from chatting.
            if (status === 422 && Object.keys(profile).length) {
              emit('error', e);
              profile = {};
            } else if ((status && status < 500 && status !== 429) || attempt >= 4) {
              throw e;
            } else await new Promise((r) => setTimeout(r, backoff(attempt)));
          }
        }
      })();
      starting.catch(() => undefined).then(() => (starting = null));
    }
    return starting;
  };

  // A REST call as the visitor. A token the server no longer knows (key rotated,
  // customer deleted) is dropped, and the call retried once with a new visitor.
  const request = async <T>(path: string, options: RequestOptions = {}, retried?: boolean): Promise<T> => {
    if (options.visitor) await startVisitor();
    try {
      return await callJson<T>(end, path, options);
    } catch (e) {
      if (options.visitor && (e as { status?: number }).status === 401 && !retried) {
        identity = null;
        save(prefix + 'visitor', null);
        return request(path, options, true);
      }
      throw e;
    }
  };

  // Swallows a failed background call, telling `error` listeners.
  const quietly = (promise: Promise<unknown>) => promise.catch((e) => emit('error', e));

  const core: Core = {
    origin: end.origin,
    key,
    request,
    fetchRaw: (path, signal) => call(end, path, { visitor: true, signal }),
    startVisitor,
    customerId: () => identity && identity.customerId,
    emit,
    on: (event, cb) => (listeners[event] = listeners[event] || []).push(cb),
    visitorToken: () => identity && identity.visitorToken,
    visitorId,
    tags: () => tags,
    externalId: () => (profile.externalId ? String(profile.externalId) : undefined),
  };

  // The workspace's config, asked once per page: for the recorder, and for
  // the action rules that test the agents. Null when it cannot be read.
  let configAnswer: Promise<WidgetConfig | null> | undefined;
  const config = () => configAnswer || (configAnswer = request<WidgetConfig>('/widget/config').catch(() => null));

  // The chat chunk: a classic async script (a cross-origin module would need
  // CORS), which registers itself on window.__rapportChunks.
  let chat: Chat | null = null;
  let chatRequested = false;
  let wantOpen: boolean | null = null;
  // What the action rules left for the chat: the launcher's state, and actions
  // waiting for it to load.
  let launcher = true;
  const waiting: ((chat: Chat) => void)[] = [];
  // The action rules (rules.js), and the page's events they may test.
  let rules: ActionRule[] | null = null;
  const events: string[] = [];
  let track: ((event: TrackEvent) => void) | undefined;
  const host: RulesHost = {
    events,
    config,
    track: (event) => track && track(event),
    launcher(visible) {
      launcher = visible;
      if (chat) chat.setLauncher(visible);
    },
    chat: () => chat,
    withChat(fn) {
      if (chat) return fn(chat);
      waiting.push(fn);
      loadChat();
    },
  };
  const chunkAttempts: Record<string, number> = {};
  // The recorder: loaded once the workspace's config says it records and the
  // visitor's consent allows it; `consent(false)` stops it.
  let recording: RecordingConfig | null = null;
  let recorder: Recorder | null = null;
  let startRecorder: RecorderFactory | null = null;
  let recorderRequested = false;
  const maybeRecord = () => {
    const given = load(prefix + 'consent');
    if (!recording || !recording.enabled || given === '0' || (recording.requireConsent && given !== '1') || recorder) return;
    if (startRecorder) recorder = startRecorder(core, recording);
    else if (!recorderRequested) {
      recorderRequested = true;
      loadChunk('recorder');
    }
  };
  window.__rapportChunks = {
    push(chunk) {
      try {
        if (chunk[0] === 'recorder') {
          startRecorder = startRecorder || chunk[1];
          return maybeRecord();
        }
        if (chunk[0] === 'rules') return void (rules && chunk[1](core, rules, host));
        if (chat) return;
        chat = chunk[1](core);
        // In the same task as the chat draws itself: a launcher the rules hide never shows.
        if (!launcher) chat.setLauncher(false);
        ready = true;
        emit('ready');
        if (wantOpen) chat.open();
        for (const fn of waiting.splice(0)) fn(chat);
      } catch (e) {
        emit('error', e);
      }
    },
  };
  const loadChunk = (name: string) => {
    const el = document.createElement('script');
    el.async = true;
    el.src = `${base}${name}.js`;
    el.onerror = () => {
      el.remove();
      // Rapport unreachable: try again later, less and less often.
      const attempt = (chunkAttempts[name] = (chunkAttempts[name] || 0) + 1);
      if (attempt < 6) setTimeout(() => loadChunk(name), backoff(attempt, 5000));
      // Rules that cannot load must not keep the chat button hidden: shown
      // until they arrive and decide.
      if (name === 'rules') host.launcher(true);
    };
    (document.head || document.documentElement).appendChild(el);
  };
  const loadChat = () => {
    if (chatRequested) return;
    chatRequested = true;
    loadChunk('chat');
  };
  const whenIdle = (fn: () => void) => {
    const idle = () =>
      'requestIdleCallback' in window ? requestIdleCallback(fn, { timeout: 4000 }) : setTimeout(fn, 1500);
    if (document.readyState === 'complete') idle();
    else addEventListener('load', idle, { once: true });
  };

  // The script API.
  const sameProfile = (a: Profile, b: Profile) => JSON.stringify(a) === JSON.stringify(b);
  // Each method checks its own arguments: they come from the page, unchecked.
  const methods: Record<string, (...args: never[]) => unknown> = {
    identify(given: Profile) {
      if (!given || typeof given !== 'object') return;
      profile = { ...profile, ...given };
      if (!identity) return quietly(startVisitor());
      // Already started: update the customer, once per change. The endpoint is
      // new; a server without it (404) is not an error worth reporting.
      if (sameProfile(JSON.parse(load(prefix + 'profile') || '{}'), profile)) return;
      return request<{ customerId?: string }>('/widget/profile', { body: profile, visitor: true }).then(
        (answer) => {
          save(prefix + 'profile', JSON.stringify(profile));
          // A signed identity of a customer the workspace knows: this visitor
          // is that customer now, and the chat shows its conversation.
          if (identity && answer && answer.customerId && answer.customerId !== identity.customerId) {
            identity = { ...identity, customerId: answer.customerId };
            save(prefix + 'visitor', JSON.stringify(identity));
            emit('_identity', answer.customerId);
          }
        },
        (e) => e.status !== 404 && emit('error', e),
      );
    },
    tag(...given: unknown[]) {
      const list = ([] as unknown[])
        .concat(...given)
        .map((t) => String(t).trim())
        .filter((t) => t && t.length <= 64);
      if (!list.length) return;
      tags = Array.from(new Set(tags.concat(list))).slice(0, 50);
      save(prefix + 'tags', JSON.stringify(tags));
      emit('_input');
      return quietly(request('/widget/tags', { body: { tags: list }, visitor: true }));
    },
    // A page event, which action rules may test (JS_EVENT). Kept for the page
    // view, so one fired before the rules have loaded still counts.
    event(name: string) {
      name = typeof name === 'string' ? name.trim() : '';
      if (!name || name.length > 100) return;
      if (events.indexOf(name) < 0) events.push(name);
      emit('_input');
    },
    open() {
      wantOpen = true;
      if (chat) chat.open();
      else loadChat();
    },
    close() {
      wantOpen = false;
      if (chat) chat.close();
    },
    on(event: EventName, cb: Listener) {
      // Events with a leading `_` are the chunks' own.
      if (typeof cb !== 'function' || event[0] === '_') return;
      (listeners[event] = listeners[event] || []).push(cb);
      if (event === 'ready' && ready) cb();
    },
    off(event: EventName, cb: Listener) {
      listeners[event] = (listeners[event] || []).filter((l) => l !== cb);
    },
    // Recording consent, kept in the browser: true may start the recorder, false
    // stops it (and keeps it off even where the workspace does not ask for consent).
    consent(given: boolean) {
      save(prefix + 'consent', given ? '1' : '0');
      if (given) maybeRecord();
      else if (recorder) {
        recorder.stop();
        recorder = null;
      }
    },
    visitorId: () => visitorId,
  };
  const api = function (command: string, ...args: unknown[]) {
    const method = methods[command];
    if (!method) return console.warn(`Rapport: unknown command ${command}`);
    try {
      return method(...(args as never[]));
    } catch (e) {
      emit('error', e);
    }
  } as Api;
  for (const name in methods) api[name] = (...args: unknown[]) => api(name, ...args);
  api.loaded = true;
  const queued = (existing && existing.q) || [];
  window.Rapport = api;

  // A continue link's page is Rapport's, not the website's: nothing to track.
  try {
    if (!continued) {
      track = startTracking(end, {
        visitorId,
        externalId: core.externalId,
        tags: core.tags,
        page: () => emit('_page'),
        error: (message, file, line) => emit('_error', { message, file, line }),
      });
    }
  } catch (e) {
    emit('error', e);
  }
  for (const args of Array.from(queued)) api(...(Array.from(args) as [string, ...unknown[]]));
  if (continued) api('open');

  // Action rules: cached with the time they were fetched, and asked again once
  // older than the server says (30 s to an hour). A failed fetch keeps the old
  // copy. The first list with rules loads rules.js; an empty one costs nothing
  // more. A continue link's page is Rapport's own: no rules there.
  interface CachedRules {
    at: number;
    maxAge: number;
    rules: ActionRule[];
  }
  const useRules = (list: ActionRule[]) => {
    if (rules || !Array.isArray(list) || !list.length) return;
    rules = list;
    // A rule may hide the launcher as the page opens: hidden until the rules
    // have decided, rather than shown and snatched away.
    if (!chat && list.some((r) => r && r.trigger === 'PAGE' && r.action && r.action.type === 'HIDE_BUTTON')) {
      launcher = false;
    }
    loadChunk('rules');
  };
  if (!continued) {
    let cached: CachedRules | null = null;
    try {
      cached = JSON.parse(load(prefix + 'rules') || 'null');
    } catch {
      // A damaged copy is fetched again.
    }
    if (cached) useRules(cached.rules);
    // Written so that a damaged time counts as stale.
    if (!cached || !(Math.abs(Date.now() - cached.at) <= cached.maxAge * 1000)) {
      request<{ maxAgeSeconds: number; rules: ActionRule[] }>('/widget/rules').then((answer) => {
        if (!answer || !Array.isArray(answer.rules)) return;
        const maxAge = Math.min(3600, Math.max(30, +answer.maxAgeSeconds || 0));
        save(prefix + 'rules', JSON.stringify({ at: Date.now(), maxAge, rules: answer.rules }));
        // Rules already running keep their copy until the next page.
        useRules(answer.rules);
      }, () => undefined);
    }
  }

  // A returning visitor has a conversation to listen to: load the chat soon. The
  // workspace's config says whether to record this page.
  whenIdle(() => {
    loadChat();
    config().then((answer) => {
      recording = (!continued && answer && answer.recording) || null;
      maybeRecord();
    });
  });
})();
