// The chat's live messages over Rapport's widget WebSocket (`/widget/socket`),
// which costs the server a fraction of an open event stream's memory. A browser
// cannot put headers on a WebSocket, so the widget key and visitor token go as
// the socket's first frame. Where the socket cannot be opened at all (a proxy
// that does not upgrade, an old browser), the same updates are read from the
// server-sent events of `/widget/stream` instead, for the rest of the page.

import type { StreamHandlers } from './sse';

/** The socket's hello: who the page is. */
export interface Hello {
  widgetKey: string;
  visitorToken: string;
}

interface Frame {
  event: 'ready' | 'message' | 'resync' | 'conversation' | 'typing' | 'read' | 'error';
  data?: unknown;
  retryAfter?: number;
}

/** Closes that mean Rapport answered and refused for now (4000 + 429). */
const REFUSED = 4429;
/** Sockets that end before they ever listen, in a row, before falling back. */
const FALLBACK_AFTER = 2;

/**
 * Listens on `url` (a `ws:`/`wss:` URL of `/widget/socket`), reconnecting as
 * the event-stream reader does; `fallback` starts the event-stream reader instead
 * when sockets do not work here. Returns a stop function.
 */
export function readSocket(
  url: string,
  hello: () => Hello | null,
  fallback: () => () => void,
  on: StreamHandlers,
): () => void {
  if (typeof WebSocket === 'undefined') return fallback();
  let stopped = false;
  let socket: WebSocket | null = null;
  let stopFallback: (() => void) | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let failures = 0;
  // Whether any socket of this page has listened: then sockets work here, and
  // a later failure is an outage, not a reason to fall back.
  let everListened = false;
  let unopened = 0;

  // Soon after a normal end, longer after each failure (up to a minute), as
  // the event stream does, and never sooner than Rapport asked.
  const retryIn = (retryAfter: number) =>
    Math.max(Math.min(60_000, 1000 * 2 ** Math.min(failures++, 6)) * (0.5 + Math.random() / 2), retryAfter * 1000);

  const run = () => {
    const who = hello();
    // No visitor token right now (it is being replaced): try again later.
    if (!who) {
      timer = setTimeout(run, retryIn(0));
      return;
    }
    let listening = false;
    let retryAfter = 0;
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => ws.send(JSON.stringify(who));
    ws.onmessage = (event: MessageEvent) => {
      let frame: Frame;
      try {
        frame = JSON.parse(String(event.data)) as Frame;
      } catch {
        return;
      }
      if (frame.event === 'ready') {
        listening = everListened = true;
        failures = unopened = 0;
        on.open();
      } else if (frame.event === 'message') {
        on.event('message', JSON.stringify(frame.data));
      } else if (frame.event === 'resync' || frame.event === 'conversation') {
        on.event(frame.event, '{}');
      } else if (frame.event === 'typing' || frame.event === 'read') {
        // The frame itself is the event's data: `{name, typing}`, `{upTo}`.
        on.event(frame.event, JSON.stringify(frame));
      } else if (frame.event === 'error') {
        retryAfter = Number(frame.retryAfter) || 0;
      }
    };
    ws.onclose = (event: CloseEvent) => {
      if (stopped || socket !== ws) return;
      socket = null;
      // Never upgraded, never refused: something between here and Rapport
      // does not carry sockets.
      if (!listening && !everListened && event.code < 4000 && ++unopened >= FALLBACK_AFTER) {
        stopFallback = fallback();
        return;
      }
      const wait = retryIn(retryAfter);
      on.down(wait, event.code === REFUSED);
      timer = setTimeout(run, wait);
    };
  };
  run();
  return () => {
    stopped = true;
    clearTimeout(timer);
    if (socket) socket.close(1000);
    if (stopFallback) stopFallback();
  };
}
