// Types shared by the loader and the chunks it loads (chat.js, recorder.js).
// Only types live here: each chunk is its own IIFE bundle, so anything with a
// runtime value would be duplicated into every file.

/** A message as the REST API returns it (core/src/conversations/messages.rs). */
export interface Message {
  id: string;
  customerId: string;
  direction: 'INBOUND' | 'OUTBOUND';
  type: 'MESSAGE' | 'AUDIO' | 'VIDEO' | 'FILE' | 'CARD';
  message?: string | null;
  url?: string | null;
  buttonText?: string | null;
  buttonLink?: string | null;
  channel: string;
  senderType: string;
  createdAt: string;
}

/** `GET /widget/config`: whether agents are there now, the largest file a visitor
 * may send, and session recording. */
export interface WidgetConfig {
  open: boolean;
  nextChangeAt?: string | null;
  language?: string;
  /** In bytes; 0 (or a server without it) means visitors cannot send files. */
  maxFileBytes?: number;
  recording?: RecordingConfig | null;
}

/** The workspace's session recording settings (issue 23). */
export interface RecordingConfig {
  enabled: boolean;
  /** Record only after the page called `Rapport('consent', true)`. */
  requireConsent: boolean;
  /** CSS selectors whose text is masked, and whose elements are left out. */
  maskSelector?: string | null;
  blockSelector?: string | null;
}

/** The host page's events, plus the loader's internal ones (leading `_`), which
 * only chunks can listen to: `_page` (a single-page app changed its path or
 * query), `_error` (a script error, as `{message, file, line}`) and
 * `_identity` (a signed identity made the visitor another customer). */
export type EventName =
  | 'ready'
  | 'open'
  | 'close'
  | 'message'
  | 'messageSent'
  | 'error'
  | '_page'
  | '_error'
  | '_identity';

/** A REST call; `visitor` adds the visitor token, starting the visitor first. A
 * body is sent as JSON, except a Blob (a File), which is sent as it is. */
export interface RequestOptions {
  method?: string;
  body?: unknown;
  visitor?: boolean;
  keepalive?: boolean;
  signal?: AbortSignal;
}

/** What the loader hands to a chunk: the one place that talks to Rapport. */
export interface Core {
  /** The Rapport origin, e.g. `https://rapport.example.com`. */
  origin: string;
  key: string;
  /** JSON of a REST call under /rest/v1; throws {@link HttpError} or a network error. */
  request<T>(path: string, options?: RequestOptions): Promise<T>;
  /** A raw response (the SSE stream), with the widget key and visitor token set. */
  fetchRaw(path: string, signal: AbortSignal): Promise<Response>;
  /** Starts the visitor if needed; resolves to its customer id. */
  startVisitor(): Promise<string>;
  /** The visitor's customer id, if it has started (this page or an earlier one). */
  customerId(): string | null;
  emit(event: EventName, data?: unknown): void;
  /** Listens to the loader's events (the host page's and the internal ones). */
  on(event: EventName, cb: (data?: unknown) => void): void;
  /** The visitor token, if the visitor has started; never starts it. */
  visitorToken(): string | null;
  /** The tracking reports' anonymous visitor id, the visitor's tags and external id. */
  visitorId: string;
  tags(): string[];
  externalId(): string | undefined;
}

/** What the chat chunk gives back to the loader. */
export interface Chat {
  open(): void;
  close(): void;
}

export type ChunkFactory = (core: Core) => Chat;

/** What the recorder chunk gives back: `stop` ends the recording on this page
 * (consent withdrawn), dropping what was not sent yet. */
export interface Recorder {
  stop(): void;
}

export type RecorderFactory = (core: Core, config: RecordingConfig) => Recorder;

export interface HttpError extends Error {
  status: number;
  retryAfter?: number;
  /** The problem's `code`, where the caller read it. */
  code?: string;
}

declare global {
  interface Window {
    /** Where chunks register: `push([name, factory])`. */
    __rapportChunks?: { push(chunk: ['chat', ChunkFactory] | ['recorder', RecorderFactory]): void };
  }
}
