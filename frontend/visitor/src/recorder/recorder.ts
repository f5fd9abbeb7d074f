// recorder.js: session recording with rrweb, loaded by the loader only when the
// workspace records and the visitor's consent allows it (issue 23). It records
// the page privately by default (every input masked, `rapport-mask` and
// `rapport-block` classes, the workspace's selectors, no canvas, never the chat
// widget), marks pages, script errors and chat messages as custom events the
// replay can jump to, and streams while an agent watches: a reply or the control
// stream says `watched`, and batches then go out every 100 ms, starting with a
// fresh full snapshot. It also tells the live view when the visitor leaves
// (`rapport.left`) and comes back (`rapport.back`). The control stream also
// carries script co-browsing (`event: cobrowse`, see script_cobrowse.ts), which this
// file connects to the session: the visitor's answers go out with the session's
// write token, and what the agent may type into follows the rules below that
// the recording masks and blocks by. Nothing here may throw into the host page.

import { record } from '@rrweb/record';
import type { eventWithTime } from '@rrweb/types';
import { readStream } from '../sse';
import type { Core, Message, Recorder, RecorderFactory, RecordingConfig } from '../types';
import { cut } from '../util';
import { createCobrowse, HOST as COBROWSE } from './script_cobrowse';
import type { Answer } from './script_cobrowse';
import { createUploader } from './uploader';

const MASK_CLASS = 'rapport-mask';
const BLOCK_CLASS = 'rapport-block';
/** Rapport's own elements, the chat widget and the co-browsing UI: never part
 * of a recording. */
const OWN = `rapport-widget, ${COBROWSE}`;
/** The inputs whose values rrweb masks, by tag or type: every kind one types
 * into (rrweb's own table for `maskAllInputs: true`). */
const MASK_INPUTS: Record<string, boolean> = {
  color: true,
  date: true,
  'datetime-local': true,
  email: true,
  month: true,
  number: true,
  range: true,
  search: true,
  tel: true,
  text: true,
  time: true,
  url: true,
  week: true,
  textarea: true,
  select: true,
  password: true,
};
const FULL_SNAPSHOT_EVERY_MS = 5 * 60 * 1000;
const BATCH_MS = 5000;
const LIVE_BATCH_MS = 100;
const TEXT_MAX = 200;
/** rrweb's full and incremental snapshot event types. */
const FULL_SNAPSHOT = 2;
const INCREMENTAL = 3;
/** A single-page app sets its title after changing its URL: wait for it. */
const TITLE_DELAY_MS = 250;

/** Whether an incremental event is about Rapport's own UI. Blocking its
 * elements keeps their DOM out, but rrweb still observes their open shadow
 * roots: their adopted stylesheets would be recorded, and the chat's text box's
 * value setter reports inputs for a node outside the recording (id -1). */
function ownEvent(event: eventWithTime): boolean {
  if (event.type !== INCREMENTAL) return false;
  const id = (event.data as { id?: number }).id;
  if (id === undefined) return false;
  if (id === -1) return true;
  const node = record.mirror.getNode(id);
  return !!node && node.nodeType === 1 && !!(node as Element).closest(OWN);
}

/** The selector if the browser accepts it: an invalid one would make rrweb throw
 * on every node it checks. */
function selector(value?: string | null): string | null {
  if (!value || !value.trim()) return null;
  try {
    document.createDocumentFragment().querySelector(value);
    return value;
  } catch {
    console.warn(`Rapport: ignoring the invalid recording selector ${value}`);
    return null;
  }
}

const createRecorder: RecorderFactory = (core: Core, config: RecordingConfig): Recorder => {
  let stopRecord: (() => void) | undefined;
  let stopControl: (() => void) | null = null;
  let watched = false;
  /** Why the visitor is away (`hidden`, `closed`), as last told; '' while here. */
  let away = '';
  const cleanups: (() => void)[] = [];
  const listen = (target: EventTarget, event: string, fn: (e: Event) => void) => {
    target.addEventListener(event, fn);
    cleanups.push(() => target.removeEventListener(event, fn));
  };

  const snapshot = () => {
    if (stopRecord) record.takeFullSnapshot(true);
  };
  const setWatched = (now: boolean) => {
    if (now === watched) return;
    watched = now;
    // A viewer who joins needs the whole page: a full snapshot now, then every
    // change within about 100 ms.
    if (now) snapshot();
    uploader.setInterval(now ? LIVE_BATCH_MS : BATCH_MS);
    if (now) uploader.flush();
  };

  const uploader = createUploader({
    origin: core.origin,
    key: core.key,
    start: () => ({
      visitorId: core.visitorId,
      url: location.href,
      tags: core.tags(),
      externalId: core.externalId(),
    }),
    visitorToken: core.visitorToken,
    tags: core.tags,
    snapshot,
    // A new session (also after the old one expired): its own control stream,
    // and no co-browsing (it belonged to the old session).
    started: () => {
      stopStream();
      cobrowse.stop(false);
      control();
    },
    watched: setWatched,
    refused: () => stop(),
  });

  /** The session's URL under /rest/v1/widget/recording, and the headers that
   * prove the page may write to it. */
  const sessionUrl = (id: string, path: string) =>
    `${core.origin}/rest/v1/widget/recording/${encodeURIComponent(id)}/${path}`;
  const auth = (writeToken: string): Record<string, string> => ({
    'rapport-widget-key': core.key,
    authorization: `Bearer ${writeToken}`,
  });

  // What the recording masks and leaves out, the rules of the record() call
  // below; co-browsing types and clicks by them too.
  const maskSelector = selector(config.maskSelector);
  const blockSelector = [OWN, selector(config.blockSelector)].filter(Boolean).join(', ');
  const cobrowse = createCobrowse({
    session: () => {
      const session = uploader.session();
      return session && session.sessionId;
    },
    async send(type: Answer) {
      const session = uploader.session();
      if (!session) return false;
      try {
        const response = await fetch(sessionUrl(session.sessionId, 'cobrowse'), {
          method: 'POST',
          headers: { ...auth(session.writeToken), 'content-type': 'application/json' },
          body: JSON.stringify({ type }),
          credentials: 'omit',
          mode: 'cors',
          // `end` may be the last thing a page does.
          keepalive: true,
        });
        return response.ok;
      } catch {
        return false;
      }
    },
    blocked: (el) => !!el.closest(`.${BLOCK_CLASS}, ${blockSelector}`),
    // What the agent may never type into: password fields (rrweb marks one
    // whose type a "show password" toggle changed), card fields, and whatever
    // the workspace marked private (the mask class and selector). Ordinary
    // fields are masked in the recording only because every input is by
    // default; once the visitor lets them, the agent may fill those in, and
    // still sees stars for what anyone types there.
    masked(el) {
      const type = el.hasAttribute('data-rr-is-password')
        ? 'password'
        : String((el as HTMLInputElement).type || '').toLowerCase();
      const card = /^cc-/.test(String(el.getAttribute('autocomplete') || '').trim().toLowerCase());
      return type === 'password' || card || !!el.closest(`.${MASK_CLASS}`) || (!!maskSelector && !!el.closest(maskSelector));
    },
    storageKey: `rapport:${core.key}:cobrowse`,
  });

  // The control stream says when an agent starts or stops watching. It stays
  // open only while the page is visible: a hidden page changes nothing worth
  // watching, and an idle connection per background tab costs the server.
  const control = () => {
    if (stopControl || document.visibilityState !== 'visible' || !uploader.session()) return;
    stopControl = readStream(
      async (signal) => {
        const session = uploader.session();
        if (!session) throw new Error('no session');
        const response = await fetch(sessionUrl(session.sessionId, 'control'), {
          headers: auth(session.writeToken),
          credentials: 'omit',
          mode: 'cors',
          signal,
        });
        if (!response.ok) throw new Error(`Rapport answered ${response.status}`);
        return response;
      },
      {
        event(name, data) {
          if (name === 'cobrowse') return cobrowse.message(data);
          if (name !== 'watch') return;
          try {
            const message = JSON.parse(data);
            // Another viewer joined while one watches already: it needs a full
            // snapshot of its own.
            if (message.snapshot && watched) {
              snapshot();
              uploader.flush();
            }
            setWatched(!!message.watched);
          } catch {
            // A malformed event changes nothing.
          }
        },
        open() {},
        down() {},
      },
    );
  };
  const stopStream = () => {
    if (stopControl) stopControl();
    stopControl = null;
  };

  const custom = (tag: string, payload: Record<string, unknown>) => {
    try {
      if (stopRecord) record.addCustomEvent(tag, payload);
    } catch {
      // A mark the recording misses is not worth an error on the page.
    }
  };
  const message = (data: unknown) => {
    const m = data as Message | undefined;
    if (!m || typeof m !== 'object') return;
    // As in Rapport: `in` is the visitor's message, `out` an agent's.
    custom('rapport.message', {
      direction: m.direction === 'OUTBOUND' ? 'out' : 'in',
      text: cut(m.message || m.url || m.type || '', TEXT_MAX),
    });
  };

  // Leaving and coming back, for the live view. A page hidden (another tab or
  // window, a phone's home screen) says `hidden`; leaving it (pagehide) says
  // `closed`. Each is told once: `closed` after `hidden` is worth its few bytes,
  // as the visitor is no longer merely looking elsewhere, but `hidden` after
  // `closed` says nothing new (a page that unloads turns hidden after its
  // pagehide). A full snapshot while away (rrweb's periodic one, or one for a
  // viewer who joins) repeats why, so a viewer starting from it does not take
  // the visitor for present. Coming back says `back`, once.
  const leave = (reason: 'hidden' | 'closed') => {
    if (away === reason || away === 'closed') return;
    away = reason;
    custom('rapport.left', { reason });
  };
  const back = () => {
    if (!away) return;
    away = '';
    custom('rapport.back', {});
  };

  function stop() {
    // Without a recording the agent sees nothing: co-browsing ends with it.
    cobrowse.stop(true);
    if (stopRecord) stopRecord();
    stopRecord = undefined;
    stopStream();
    uploader.stop();
    cleanups.splice(0).forEach((fn) => fn());
  }

  try {
    stopRecord = record<eventWithTime>({
      emit(event) {
        if (ownEvent(event)) return;
        uploader.add(event.type, event);
        if (event.type === FULL_SNAPSHOT && away) custom('rapport.left', { reason: away });
      },
      maskInputOptions: MASK_INPUTS,
      maskTextClass: MASK_CLASS,
      maskTextSelector: maskSelector || undefined,
      blockClass: BLOCK_CLASS,
      blockSelector,
      recordCanvas: false,
      collectFonts: false,
      inlineStylesheet: true,
      inlineImages: false,
      recordCrossOriginIframes: false,
      slimDOMOptions: 'all',
      // Mouse moves and scrolls are throttled. Inputs are not: rrweb's `input:
      // 'last'` records only `change` events, so a live viewer would see typing
      // only when the field loses focus (and each keystroke is one small event).
      sampling: { mousemove: 50, scroll: 150, media: 800 },
      checkoutEveryNms: FULL_SNAPSHOT_EVERY_MS,
      // An observer that fails is skipped, never rethrown into the page.
      errorHandler: () => true,
    });
  } catch (e) {
    stop();
    core.emit('error', e);
    return { stop };
  }
  if (!stopRecord) {
    // rrweb refused (e.g. not the top document and no parent recorder).
    stop();
    return { stop };
  }

  core.on('_page', () => {
    const url = cut(location.href, 2000);
    setTimeout(() => custom('rapport.page', { url, title: cut(document.title, TEXT_MAX) }), TITLE_DELAY_MS);
  });
  core.on('_error', (data) => {
    const e = (data || {}) as { message?: string; file?: string; line?: number };
    custom('rapport.error', { message: cut(String(e.message || ''), TEXT_MAX), file: cut(e.file || '', 2000), line: e.line });
  });
  core.on('message', message);
  core.on('messageSent', message);

  // Leaving sends what is pending with keepalive, the reason why included.
  listen(document, 'visibilitychange', () => {
    if (document.visibilityState === 'hidden') {
      leave('hidden');
      uploader.flush(true);
      stopStream();
    } else {
      back();
      control();
    }
  });
  listen(window, 'pagehide', () => {
    leave('closed');
    uploader.flush(true);
    stopStream();
  });
  listen(window, 'pageshow', (e) => {
    // Back from the back/forward cache: another page of this tab may have used
    // the session since, so take it again and start from a full snapshot.
    if ((e as PageTransitionEvent).persisted) {
      back();
      uploader.resume();
      control();
    }
  });
  // A page opened in a background tab is not being looked at yet.
  if (document.visibilityState === 'hidden') leave('hidden');
  // The first batch (the page's Meta and full snapshot) goes out at once,
  // starting the session unless this tab continues one; the control stream
  // opens once the session exists.
  uploader.flush();
  control();

  return { stop };
};

// The loader injects this script only after setting up the registry.
if (window.__rapportChunks) window.__rapportChunks.push(['recorder', createRecorder]);
