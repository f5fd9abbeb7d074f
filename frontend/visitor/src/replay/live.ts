// The live view: an agent watches a visitor's page as it changes. Mounts on a
// `<div data-rapport-live data-stream-url="…" data-lang="…">`; the stream is
// Server-Sent Events from the dashboard's origin (cookie auth, so EventSource
// will do): `event: events` with a JSON array of rrweb events, in order, and
// `event: ended` when the visitor left. rrweb's Replayer in live mode shows them
// from the first full snapshot on, scaled to the container's width.
//
// Timing: the replayer plays an event once its timestamp, less the baseline, has
// elapsed since `startLive`. The baseline is "now" when the first snapshot
// arrives, so what was recorded before it (catching up) applies at once, and
// each later event plays as it arrives (the next animation frame) rather than
// after a buffer. A visitor clock ahead of ours would delay everything by the
// difference, so timestamps ahead of our clock are shifted back.

import { Replayer } from '@rrweb/replay';
import type { eventWithTime } from '@rrweb/types';
import { el } from './dom';
import { langTag, strings } from './i18n';

const META = 4;
const FULL_SNAPSHOT = 2;

export function mountLive(root: HTMLElement): void {
  const lang = root.getAttribute('data-lang');
  const t = strings(lang);
  const url = root.getAttribute('data-stream-url') || '';
  root.classList.add('rapport-live');
  root.setAttribute('lang', langTag(lang));
  const status = el('p', { class: 'rapport-live__status', role: 'status' }, t.waiting);
  const stage = el('div', { class: 'rapport-live__stage', role: 'region', 'aria-label': t.liveView });
  root.replaceChildren(status, stage);

  let replayer: Replayer | null = null;
  let meta: eventWithTime | null = null;
  let shift = 0;
  let last = 0;
  let ended = false;
  let source: EventSource | null = null;
  let failures = 0;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const say = (text: string, state: string) => {
    status.textContent = text;
    status.setAttribute('data-state', state);
  };
  say(t.waiting, 'waiting');

  // The replay frame has the visitor's viewport size; scale it to our width.
  const fit = () => {
    if (!replayer) return;
    const width = Number(replayer.iframe.width) || replayer.iframe.offsetWidth;
    const height = Number(replayer.iframe.height) || replayer.iframe.offsetHeight;
    if (!width || !height) return;
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
      // Changes before the first full snapshot have nothing to apply to.
      if (event.type === META) meta = event;
      if (event.type !== FULL_SNAPSHOT) return;
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
    if (event.type === FULL_SNAPSHOT) {
      ended = false;
      say(t.live, 'live');
      requestAnimationFrame(fit);
    }
  };

  const close = () => {
    clearTimeout(retry);
    if (source) source.close();
    source = null;
    if (observer) observer.disconnect();
    else removeEventListener('resize', fit);
    if (replayer) replayer.destroy();
    replayer = null;
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
    current.addEventListener('ended', () => {
      ended = true;
      say(t.ended, 'ended');
    });
    current.onopen = () => {
      failures = 0;
      if (!ended) say(replayer ? t.live : t.waiting, replayer ? 'live' : 'waiting');
    };
    current.onerror = () => {
      if (!root.isConnected) return close();
      // The visitor left and the server closed the stream: nothing is lost.
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
