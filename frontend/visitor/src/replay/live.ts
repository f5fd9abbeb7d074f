// The live view: an agent watches a visitor's page as it changes. Mounts on a
// `<div data-rapport-live data-stream-url="…" data-lang="…">`; the stream is
// Server-Sent Events from the dashboard's origin (cookie auth, so EventSource
// will do): `event: events` with a JSON array of rrweb events, in order, and
// `event: ended` when the recorded session ended (it takes no more events, so
// the stream is not reopened). rrweb's Replayer in live mode shows them from the
// first full snapshot on, scaled to the container's width.
//
// Presence: the recorder marks the visitor leaving with a `rapport.left` custom
// event (`reason`: `hidden` for another tab or window, `closed` for leaving the
// page) and coming back with `rapport.back`. Only `rapport.back`, or a Meta or
// full snapshot (the next page, a return from the back/forward cache), says the
// visitor is back: a page in a background tab keeps changing by itself (timers,
// carousels), so its DOM changes say nothing about the visitor. The recorder
// repeats `rapport.left` after a full snapshot taken while the visitor is away.
//
// Timing: the replayer plays an event once its timestamp, less the baseline, has
// elapsed since `startLive`. The baseline is "now" when the first snapshot
// arrives, so what was recorded before it (catching up) applies at once, and
// each later event plays as it arrives (the next animation frame) rather than
// after a buffer. A visitor clock ahead of ours would delay everything by the
// difference, so timestamps ahead of our clock are shifted back.
//
// Co-browsing: a signed-in agent's element also has `data-cobrowse-url`; then
// script_cobrowse.ts adds its controls above the stage, and the stream's `event:
// cobrowse` tells it the co-browse's state. A live-view link only watches.

import { Replayer } from '@rrweb/replay';
import type { eventWithTime } from '@rrweb/types';
import { mountCobrowse } from './script_cobrowse';
import type { Frame } from './script_cobrowse';
import { h as el } from '../dom';
import { langTag, strings } from './i18n';

const META = 4;
const FULL_SNAPSHOT = 2;
const CUSTOM = 5;

export function mountLive(root: HTMLElement): void {
  const lang = root.getAttribute('data-lang');
  const t = strings(lang);
  const url = root.getAttribute('data-stream-url') || '';
  root.classList.add('rapport-live');
  root.setAttribute('lang', langTag(lang));
  const status = el('p', { class: 'rapport-live__status', role: 'status' }, t.waiting);
  const stage = el('div', { class: 'rapport-live__stage', role: 'region', 'aria-label': t.liveView });
  const cobrowseUrl = root.getAttribute('data-cobrowse-url');
  const cobrowse = cobrowseUrl ? mountCobrowse(cobrowseUrl, stage, () => frame(), t) : null;
  root.replaceChildren(status, ...(cobrowse ? [cobrowse.bar, stage, cobrowse.hint] : [stage]));

  let replayer: Replayer | null = null;
  let meta: eventWithTime | null = null;
  let shift = 0;
  let last = 0;
  let ended = false;
  /** Why the visitor is away, from its last `rapport.left`; '' while here. */
  let away = '';
  let source: EventSource | null = null;
  let failures = 0;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const say = (text: string, state: string) => {
    // The same words again are not news for a screen reader.
    if (status.textContent === text && status.getAttribute('data-state') === state) return;
    status.textContent = text;
    status.setAttribute('data-state', state);
  };
  /** Says what is known now: ended, away, live or still waiting. */
  const show = () => {
    if (ended) say(t.ended, 'ended');
    else if (away) say(away === 'hidden' ? t.hidden : t.left, 'left');
    else if (replayer) say(t.live, 'live');
    else say(t.waiting, 'waiting');
  };
  /** Follows the visitor's presence (see the top of this file). */
  const presence = (event: eventWithTime) => {
    if (event.type === CUSTOM) {
      const { tag, payload } = event.data as { tag?: string; payload?: { reason?: string } };
      if (tag === 'rapport.left') away = payload && payload.reason === 'hidden' ? 'hidden' : 'closed';
      else if (tag === 'rapport.back') away = '';
      else return;
    } else if (event.type === META || event.type === FULL_SNAPSHOT) {
      away = '';
    } else return;
    show();
  };
  show();

  /** The replay frame and the visitor's viewport size it has (co-browsing maps
   * the agent's pointer through it). */
  const frame = (): Frame | null => {
    if (!replayer) return null;
    const width = Number(replayer.iframe.width) || replayer.iframe.offsetWidth;
    const height = Number(replayer.iframe.height) || replayer.iframe.offsetHeight;
    return width && height ? { iframe: replayer.iframe, width, height } : null;
  };
  // The replay frame has the visitor's viewport size; scale it to our width.
  const fit = () => {
    const f = frame();
    if (!replayer || !f) return;
    const { width, height } = f;
    const scale = stage.clientWidth / width;
    replayer.wrapper.style.transform = `scale(${scale})`;
    stage.style.height = `${Math.round(height * scale)}px`;
  };
  const observer = typeof ResizeObserver === 'function' ? new ResizeObserver(fit) : null;
  if (observer) observer.observe(stage);
  else addEventListener('resize', fit);

  const add = (raw: eventWithTime) => {
    if (!raw || typeof raw.timestamp !== 'number') return;
    shift = Math.max(shift, raw.timestamp - Date.now());
    // Never out of order, even while the shift grows.
    const event = { ...raw, timestamp: (last = Math.max(last, raw.timestamp - shift)) } as eventWithTime;
    if (!replayer) {
      // Changes before the first full snapshot have nothing to apply to; a
      // visitor who is away says so even before its page is shown.
      if (event.type === META) meta = event;
      if (event.type !== FULL_SNAPSHOT) return presence(event);
      replayer = new Replayer([], {
        root: stage,
        liveMode: true,
        showWarning: false,
        // The agent watches; the replay frame takes no focus and runs no scripts.
        triggerFocus: false,
        UNSAFE_replayCanvas: false,
        mouseTail: { duration: 500, lineCap: 'round', lineWidth: 3, strokeStyle: '#e0457b' },
      });
      replayer.iframe.title = t.liveView;
      replayer.on('resize', () => requestAnimationFrame(fit));
      replayer.startLive(Date.now());
      if (meta) replayer.addEvent(meta);
    }
    replayer.addEvent(event);
    presence(event);
    if (event.type === FULL_SNAPSHOT) requestAnimationFrame(fit);
  };

  const close = () => {
    clearTimeout(retry);
    if (source) source.close();
    source = null;
    if (observer) observer.disconnect();
    else removeEventListener('resize', fit);
    if (replayer) replayer.destroy();
    replayer = null;
    if (cobrowse) cobrowse.close();
    clearInterval(watch);
  };
  const connect = () => {
    const current = (source = new EventSource(url));
    current.addEventListener('events', (m) => {
      let list: eventWithTime[];
      try {
        list = JSON.parse((m as MessageEvent).data);
      } catch {
        return;
      }
      if (Array.isArray(list)) list.forEach(add);
    });
    current.addEventListener('cobrowse', (m) => {
      if (cobrowse) cobrowse.state((m as MessageEvent).data);
    });
    current.addEventListener('ended', () => {
      ended = true;
      show();
      if (cobrowse) cobrowse.sessionEnded();
      // Nothing more will come: reconnecting would only hear `ended` again.
      clearTimeout(retry);
      current.close();
    });
    current.onopen = () => {
      failures = 0;
      show();
    };
    current.onerror = () => {
      if (!root.isConnected) return close();
      // Dropped: say so until it is back (after `ended` the stream was closed
      // on purpose, and the status stays).
      if (!ended) say(t.lost, 'lost');
      // The browser retries a dropped stream by itself, but gives up on an HTTP
      // error (e.g. the server restarting behind a proxy): retry with backoff.
      if (current.readyState === EventSource.CLOSED) {
        current.close();
        const wait = Math.min(30_000, 1000 * 2 ** Math.min(failures++, 5));
        retry = setTimeout(connect, wait);
      }
    };
  };
  // A client-side navigation may remove the element: then stop streaming.
  const watch = setInterval(() => root.isConnected || close(), 2000);
  connect();
}
