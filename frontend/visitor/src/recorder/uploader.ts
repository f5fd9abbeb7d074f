// The recorder's uploader: buffers rrweb events, groups them into numbered
// batches and appends them to the session on Rapport (issue 23's protocol):
//
//   POST /rest/v1/widget/recording                 → 201 {sessionId, writeToken, watched}
//   POST /rest/v1/widget/recording/{id}/events     {seq, events} → 200 {watched}
//
// - Events are serialised once, when rrweb emits them; a batch is then only a
//   join of strings. A batch holds at most MAX_EVENTS events or about MAX_BYTES
//   of JSON, and a Meta event always travels with the snapshot after it.
// - Each batch gets the next `seq` when it is formed and keeps it through every
//   retry, so the server can store a batch once however often it arrives.
// - The session ({sessionId, writeToken, seq}) lives in sessionStorage per widget
//   key, so the next page of the same tab continues it. A page holds it while it
//   runs (`held`): a duplicated tab, which copies sessionStorage, finds it held
//   and starts its own session instead of reusing the same seqs.
// - Failures back off (a spent daily allowance, 429, until its Retry-After). A
//   session that is full (413 `recording_session_full`) ends the recording of
//   this page. Memory is bounded: beyond MAX_BUFFER the buffered DOM
//   events are dropped, and a new full snapshot is taken when sending resumes
//   (incremental events without their base would replay wrong).
// - Leaving the page (hidden or pagehide) sends everything with keepalive, which
//   outlives the page but must stay under the browser's 64 KiB in flight; those
//   bodies go uncompressed because compression is asynchronous.

import type { HttpError } from '../types';
import { backoff, load, save } from '../util';

const MAX_EVENTS = 500;
const MAX_BYTES = 512 * 1024;
const MAX_BUFFER = 5 * 1024 * 1024;
/** Keepalive bodies in flight are capped at 64 KiB by browsers; stay below. */
const KEEPALIVE_BYTES = 60 * 1024;
/** rrweb's event types the uploader cares about. */
const META = 4;
const CUSTOM = 5;

interface Session {
  sessionId: string;
  writeToken: string;
  /** The seq of the next batch. */
  seq: number;
  /** Whether a page is recording into it now. */
  held?: boolean;
}

interface Batch {
  session: Session;
  seq: number;
  events: string[];
  bytes: number;
}

export interface UploaderOptions {
  origin: string;
  key: string;
  /** The body of the start call: visitorId, url, tags, externalId. */
  start(): Record<string, unknown>;
  visitorToken(): string | null;
  /** The visitor's tags now (`Rapport.tag`): a batch carries them when they changed. */
  tags(): string[];
  /** Takes a new full snapshot (its events come back through `add`). */
  snapshot(): void;
  /** A new session was started. */
  started(): void;
  /** A reply said whether an agent watches this session. */
  watched(watched: boolean): void;
  /** Rapport refuses to record this page: the recorder stops. */
  refused(): void;
}

export interface Uploader {
  add(type: number, event: unknown): void;
  /** Sends at once (leaving the page: with keepalive). */
  flush(leaving?: boolean): void;
  /** How often batches go out: 5 s, or 100 ms while an agent watches. */
  setInterval(ms: number): void;
  /** The current session, if started (the control stream needs it). */
  session(): Session | null;
  /** The session is gone on the server (401/404): start a new one. */
  restart(): void;
  /** The page is back from the back/forward cache: take the session again. */
  resume(): void;
  stop(): void;
}

export function createUploader(o: UploaderOptions): Uploader {
  const storageKey = `rapport:${o.key}:recording`;
  const base = `${o.origin}/rest/v1/widget/recording`;
  let queue: [number, string][] = [];
  let queueBytes = 0;
  let batches: Batch[] = [];
  let session: Session | null = null;
  let starting = false;
  let sending = false;
  let failures = 0;
  let pausedUntil = 0;
  let needSnapshot = false;
  let stopped = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  let soon: ReturnType<typeof setTimeout> | undefined;

  const persist = () => {
    if (session) save(storageKey, JSON.stringify(session), true);
  };
  /** The tab's session, if no other page holds it. */
  const claim = (): Session | null => {
    try {
      const stored = JSON.parse(load(storageKey, true) || 'null') as Session | null;
      if (stored && stored.sessionId && stored.writeToken && !stored.held && stored.seq >= 0) {
        stored.held = true;
        return stored;
      }
    } catch {
      // A damaged entry: start a new session.
    }
    return null;
  };
  session = claim();
  persist();

  const fail = (e: unknown) => {
    pausedUntil = Date.now() + ((e as HttpError).retryAfter || backoff(failures++, 2000, 60_000));
  };
  const error = (response: Response): HttpError => {
    const e = new Error(`Rapport answered ${response.status}`) as HttpError;
    e.status = response.status;
    const wait = Number(response.headers.get('retry-after'));
    if (wait > 0) e.retryAfter = wait * 1000;
    return e;
  };
  /** 4xx other than 408/429 cannot be fixed by retrying. */
  const final = (status?: number) => !!status && status < 500 && status !== 408 && status !== 429;

  const startSession = async () => {
    starting = true;
    try {
      const post = (token: string | null) => {
        const headers: Record<string, string> = { 'rapport-widget-key': o.key, 'content-type': 'application/json' };
        if (token) headers.authorization = `Bearer ${token}`;
        return fetch(base, { method: 'POST', headers, body: JSON.stringify(o.start()), credentials: 'omit', mode: 'cors' });
      };
      const token = o.visitorToken();
      let response = await post(token);
      // A visitor token Rapport no longer knows (customer deleted) must not stop
      // the recording: record the visitor anonymously instead.
      if (response.status === 401 && token) response = await post(null);
      if (!response.ok) throw error(response);
      const reply = await response.json();
      if (stopped) return;
      session = { sessionId: reply.sessionId, writeToken: reply.writeToken, seq: 0, held: true };
      persist();
      failures = 0;
      o.started();
      o.watched(!!reply.watched);
      flush();
    } catch (e) {
      // Recording off, or an unknown key: stop for this page instead of retrying.
      if (final((e as HttpError).status)) o.refused();
      else fail(e);
    } finally {
      starting = false;
    }
  };

  /** Moves the queue into batches of the current session. */
  const form = () => {
    if (!session) return;
    while (queue.length) {
      let n = 0;
      let bytes = 0;
      while (
        n < queue.length &&
        n < MAX_EVENTS &&
        (!n || queue[n - 1][0] === META || bytes + queue[n][1].length <= MAX_BYTES)
      ) {
        bytes += queue[n][1].length + 1;
        n++;
      }
      batches.push({ session, seq: session.seq++, events: queue.splice(0, n).map((e) => e[1]), bytes });
    }
    queueBytes = 0;
    persist();
  };

  /** The tags Rapport has for the session, as JSON (unknown after a reload). */
  let sentTags = '';
  /** The visitor token Rapport has for the session (none after a reload). */
  let sentVisitor = '';

  const gzip = (json: string): Promise<ArrayBuffer> =>
    new Response(new Blob([json]).stream().pipeThrough(new CompressionStream('gzip'))).arrayBuffer();

  /** Sends one batch; resolves once Rapport has it. */
  const post = async (batch: Batch, keepalive: boolean): Promise<void> => {
    // Tags set since the session started reach it with the next batch.
    const tags = JSON.stringify(o.tags());
    const withTags = tags !== sentTags ? `,"tags":${tags}` : '';
    // Once the visitor chats, its token ties the session to its conversation.
    const token = o.visitorToken();
    const withVisitor = token && token !== sentVisitor ? `,"visitorToken":${JSON.stringify(token)}` : '';
    const json = `{"seq":${batch.seq},"events":[${batch.events.join(',')}]${withTags}${withVisitor}}`;
    const headers: Record<string, string> = {
      'rapport-widget-key': o.key,
      authorization: `Bearer ${batch.session.writeToken}`,
      'content-type': 'application/json',
    };
    let body: BodyInit = json;
    if (!keepalive && typeof CompressionStream === 'function') {
      body = await gzip(json);
      headers['content-encoding'] = 'gzip';
    }
    const response = await fetch(`${base}/${encodeURIComponent(batch.session.sessionId)}/events`, {
      method: 'POST',
      headers,
      body,
      credentials: 'omit',
      mode: 'cors',
      keepalive,
    });
    if (!response.ok) {
      const e = error(response);
      // A 413 says whether this batch or the whole session is too large.
      if (response.status === 413) e.code = ((await response.json().catch(() => null)) as { code?: string } | null)?.code;
      throw e;
    }
    sentTags = tags;
    if (token) sentVisitor = token;
    const reply = await response.json().catch(() => null);
    if (!keepalive && reply) o.watched(!!reply.watched);
  };
  const done = (batch: Batch) => {
    batches = batches.filter((b) => b !== batch);
  };

  /** Sends the batches one at a time, oldest first. */
  const drain = async () => {
    if (sending) return;
    sending = true;
    try {
      while (batches.length && !stopped && Date.now() >= pausedUntil) {
        const batch = batches[0];
        try {
          await post(batch, false);
          failures = 0;
          done(batch);
        } catch (e) {
          const { status, code } = e as HttpError;
          if (code === 'recording_session_full') {
            // The session holds all Rapport keeps of one: record no more of it.
            o.refused();
            return;
          } else if (status === 401 || status === 404) {
            // The session expired or was deleted: a new one, starting from a snapshot.
            if (batch.session === session) restart();
            else done(batch);
          } else if (final(status)) {
            // This batch is refused (too large, malformed): retrying cannot help.
            done(batch);
          } else {
            fail(e);
          }
        }
      }
    } finally {
      sending = false;
    }
  };

  function flush(leaving?: boolean) {
    if (stopped) return;
    clearTimeout(soon);
    soon = undefined;
    if (needSnapshot && !batches.length && Date.now() >= pausedUntil) {
      // Sending may work again: the dropped events' page state comes back whole.
      needSnapshot = false;
      o.snapshot();
    }
    if (!session) {
      if (!starting && Date.now() >= pausedUntil && queue.length) void startSession();
      return;
    }
    form();
    if (leaving) {
      // The page may be gone before any promise settles: send everything now,
      // small bodies with keepalive. A batch already in flight is sent again; the
      // server keeps one copy of a seq.
      let budget = KEEPALIVE_BYTES;
      for (const batch of batches) {
        const keepalive = batch.bytes + 40 <= budget;
        if (keepalive) budget -= batch.bytes + 40;
        post(batch, keepalive).then(() => done(batch), () => undefined);
      }
      session.held = false;
      persist();
      session.held = true;
    } else void drain();
  }

  function restart() {
    session = null;
    save(storageKey, null, true);
    batches = [];
    queue = [];
    queueBytes = 0;
    needSnapshot = false;
    o.snapshot();
    flush();
  }

  const setTimer = (ms: number) => {
    clearInterval(timer);
    timer = setInterval(() => flush(), ms);
  };
  setTimer(5000);

  return {
    add(type, event) {
      if (stopped) return;
      // While events are dropped, only custom events (pages, errors, messages) are
      // worth keeping: DOM changes without their snapshot cannot be replayed.
      if (needSnapshot && type !== CUSTOM) return;
      const json = JSON.stringify(event);
      queue.push([type, json]);
      queueBytes += json.length;
      let held = queueBytes;
      for (const b of batches) held += b.bytes;
      if (held > MAX_BUFFER) {
        queue = queue.filter((e) => e[0] === CUSTOM);
        queueBytes = queue.reduce((sum, e) => sum + e[1].length, 0);
        needSnapshot = true;
      } else if ((queue.length >= MAX_EVENTS || queueBytes >= MAX_BYTES) && !soon) {
        soon = setTimeout(() => flush(), 0);
      }
    },
    flush,
    setInterval: setTimer,
    session: () => session,
    restart,
    resume() {
      const stored = claim();
      if (stored) session = stored;
      if (session) session.held = true;
      persist();
      o.snapshot();
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(soon);
      queue = [];
      batches = [];
      if (session) {
        session.held = false;
        persist();
      }
    },
  };
}
