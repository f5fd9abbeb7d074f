// Tracking for the visit, resource and script-error reports, through
// `POST /widget/track` (core/src/reports/ingest.rs). It needs only the widget key:
// a visitor who never chats is still counted.
//
// Model (what VisitIn can hold; each event id is recorded once, so an event is
// sent only when it is final):
// - a visit is one page load, with the page views of a single-page app counted
//   as it changes its path or query (pushState, replaceState, popstate); it
//   ends when the page is hidden or left, and is sent then. If the visitor comes
//   back to the tab, a new visit starts.
// - each loaded resource (PerformanceObserver `resource` entries and the page
//   itself as `document`), Rapport's own requests left out;
// - script errors (`error`, `unhandledrejection`), each distinct one once per
//   page, at most MAX_ERRORS;
// - the action rules' matches (rules.js), through the function startTracking
//   returns.
// Events are batched (at most 100) and sent every FLUSH_MS, and at once with
// `keepalive` when the page is hidden or left. Failures back off and retry; a
// retried batch is harmless because the server skips ids it has.

import { call, Endpoint } from './net';
import type { HttpError, TrackEvent } from './types';
import { backoff, cut, httpPage, newId } from './util';

const FLUSH_MS = 5000;
const MAX_BATCH = 100;
/** keepalive requests may carry at most 64 KiB in flight; stay below. */
const MAX_BATCH_BYTES = 48_000;
/** Most events kept while Rapport cannot be reached; older ones are dropped. */
const MAX_QUEUE = 500;
const MAX_RESOURCES = 300;
const MAX_ERRORS = 20;

export interface TrackContext {
  visitorId: string;
  externalId(): string | undefined;
  tags(): string[];
  /** Told of each new page of a single-page app, and each reported script
   * error (the recorder marks them in the recording). */
  page(): void;
  error(message: string, file?: string, line?: number): void;
}

type Event = TrackEvent;

/** Starts tracking; returns what queues another event, or nothing where the page is not tracked. */
export function startTracking(end: Endpoint, ctx: TrackContext): ((event: Event) => void) | undefined {
  // The reports only take http(s) page URLs; a file:// page has nothing to report.
  if (!httpPage) return;
  const queue: Event[] = [];
  let failures = 0;
  let pausedUntil = 0;
  let sending = false;

  const common = () => ({
    visitId: visit.id,
    visitorId: ctx.visitorId,
    externalId: ctx.externalId(),
    url: cut(location.href, 2000),
    tags: ctx.tags(),
  });
  const push = (event: Event) => {
    queue.push(event);
    if (queue.length > MAX_QUEUE) queue.splice(0, queue.length - MAX_QUEUE);
    if (queue.length >= MAX_BATCH) void flush(false);
  };

  async function flush(leaving: boolean): Promise<void> {
    if (!queue.length || (!leaving && (sending || Date.now() < pausedUntil))) return;
    // Take what fits in one request.
    let bytes = 0;
    let count = 0;
    while (count < queue.length && count < MAX_BATCH) {
      bytes += JSON.stringify(queue[count]).length;
      if (bytes > MAX_BATCH_BYTES && count) break;
      count++;
    }
    const events = queue.splice(0, count);
    sending = true;
    try {
      // sendBeacon cannot set the widget-key header, so leaving uses fetch's
      // keepalive, which outlives the page just the same.
      await call(end, '/widget/track', { body: { events }, keepalive: leaving });
      failures = 0;
    } catch (e) {
      const status = (e as HttpError).status;
      // 4xx other than 408/429 means the batch itself is wrong: retrying cannot help.
      if (!status || status >= 500 || status === 408 || status === 429) {
        queue.unshift(...events);
        pausedUntil = Date.now() + ((e as HttpError).retryAfter || backoff(failures++, 2000));
      }
    } finally {
      sending = false;
    }
    if (leaving && queue.length) void flush(true);
  }

  // Visits.
  let visit = { id: newId(), url: location.href, startedAt: Date.now(), pageViews: 1, path: location.pathname + location.search };
  let visitOpen = true;
  const endVisit = () => {
    if (!visitOpen) return;
    visitOpen = false;
    push({
      type: 'VISIT',
      id: visit.id,
      visitorId: ctx.visitorId,
      externalId: ctx.externalId(),
      url: cut(visit.url, 2000),
      startedAt: visit.startedAt,
      durationMs: Math.min(86_400_000, Math.max(0, Date.now() - visit.startedAt)),
      pageViews: Math.min(10_000, visit.pageViews),
      tags: ctx.tags(),
    });
  };
  const pageView = () => {
    // A new path or query is a new page; a hash change (or replaceState to the
    // same URL) is not.
    const path = location.pathname + location.search;
    if (path === visit.path) return;
    visit.path = path;
    if (visitOpen) visit.pageViews++;
    seenErrors = {};
    errorCount = 0;
    ctx.page();
  };
  for (const name of ['pushState', 'replaceState'] as const) {
    const original = history[name];
    history[name] = function (this: History, ...args: Parameters<History['pushState']>) {
      const result = original.apply(this, args);
      try {
        pageView();
      } catch {
        // Tracking must never break the page's navigation.
      }
      return result;
    };
  }
  addEventListener('popstate', pageView);

  const leave = () => {
    endVisit();
    void flush(true);
  };
  addEventListener('pagehide', leave);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') leave();
    else if (!visitOpen) {
      visit = { id: newId(), url: location.href, startedAt: Date.now(), pageViews: 1, path: location.pathname + location.search };
      visitOpen = true;
    }
  });
  setInterval(() => void flush(false), FLUSH_MS);

  // Resources.
  let resources = 0;
  const resource = (entry: PerformanceResourceTiming) => {
    if (resources >= MAX_RESOURCES || !/^https?:/.test(entry.name) || entry.name.indexOf(end.origin + '/') === 0) {
      return;
    }
    resources++;
    const url = new URL(entry.name);
    const file = url.pathname.split('/').pop() || url.host;
    const status = (entry as { responseStatus?: number }).responseStatus;
    push({
      type: 'RESOURCE',
      id: newId(),
      at: Math.round(performance.timeOrigin + entry.startTime),
      ...common(),
      name: cut(file, 100),
      resourceType: resourceType(entry.initiatorType, url.pathname),
      statusCode: status && status < 1000 ? status : undefined,
      durationMs: Math.min(3_600_000, Math.max(0, Math.round(entry.duration))),
      transferBytes: entry.transferSize > 0 ? Math.min(2 ** 31 - 1, entry.transferSize) : undefined,
    });
  };
  try {
    new PerformanceObserver((list) => list.getEntries().forEach((e) => resource(e as PerformanceResourceTiming))).observe({
      type: 'resource',
      buffered: true,
    });
    const navigation = performance.getEntriesByType('navigation')[0] as PerformanceResourceTiming | undefined;
    if (navigation) resource(navigation);
  } catch {
    // No resource timing in this browser: the other reports still work.
  }

  // Script errors.
  let seenErrors: Record<string, 1> = {};
  let errorCount = 0;
  const scriptError = (message: string, file?: string, line?: number, column?: number, stack?: string) => {
    message = cut(String(message || '').trim() || 'Unknown error', 1000);
    const signature = [message, file, line, column].join('|');
    if (seenErrors[signature] || errorCount >= MAX_ERRORS) return;
    seenErrors[signature] = 1;
    errorCount++;
    ctx.error(message, file, line);
    push({
      type: 'SCRIPT_ERROR',
      id: newId(),
      at: Date.now(),
      ...common(),
      message,
      fileName: file ? cut(file, 200) : undefined,
      line: line || undefined,
      column: column || undefined,
      // Not in ScriptErrorIn yet: the server ignores it until it stores stacks.
      stack: stack ? cut(stack, 4000) : undefined,
    });
  };
  addEventListener('error', (e: ErrorEvent) => {
    // Failed resource loads reach window only in the capture phase, so a bubbling
    // listener sees script errors alone.
    // Browsers word the message differently ("Uncaught Error: x" in Chrome); the
    // error's own name and message group the same error from every browser.
    const error = e.error;
    const message = error instanceof Error ? `${error.name}: ${error.message}` : e.message.replace(/^Uncaught /, '');
    scriptError(message, e.filename, e.lineno, e.colno, error && error.stack);
  });
  addEventListener('unhandledrejection', (e: PromiseRejectionEvent) => {
    const reason = e.reason;
    const message = `Unhandled rejection: ${reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason)}`;
    scriptError(message, undefined, undefined, undefined, reason && reason.stack);
  });
  return push;
}

function resourceType(initiator: string, path: string): string {
  const ext = (path.match(/\.([a-z0-9]+)$/i) || [])[1] || '';
  if (/^(woff2?|ttf|otf|eot)$/i.test(ext)) return 'font';
  if (/^(png|jpe?g|gif|webp|avif|svg|ico)$/i.test(ext)) return 'img';
  if (/^css$/i.test(ext)) return 'css';
  if (/^m?js$/i.test(ext)) return 'script';
  const known: Record<string, string> = {
    xmlhttprequest: 'xhr',
    navigation: 'document',
    image: 'img',
    link: 'other',
    beacon: 'beacon',
  };
  return known[initiator] || initiator || 'other';
}
