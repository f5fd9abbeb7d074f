// Types shared by the loader and the chunks it loads (chat.js, recorder.js, rules.js).
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
  /** Whether agents are online and have room now, for the action rules. */
  agents?: { online: boolean; available: boolean };
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
 * query), `_error` (a script error, as `{message, file, line}`), `_identity`
 * (a signed identity made the visitor another customer), `_input` (the page
 * added a tag or fired an event, which action rules test) and `_config` (the
 * chat read `/widget/config` again, with the config). `ruleMatched` carries
 * `{ruleId}`. */
export type EventName =
  | 'ready'
  | 'open'
  | 'close'
  | 'message'
  | 'messageSent'
  | 'ruleMatched'
  | 'error'
  | '_page'
  | '_error'
  | '_identity'
  | '_input'
  | '_config';

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

/** What the chat chunk gives back to the loader (and, through it, to the rules). */
export interface Chat {
  open(): void;
  close(): void;
  isOpen(): boolean;
  /** Shows or hides the launcher; an open panel stays open. */
  setLauncher(visible: boolean): void;
  /** Opens the panel with an action rule's proactive message, shown here only;
   * the visitor's answer names the rule, and Rapport stores the message then. */
  proactive(ruleId: string, action: OpenChatAction): void;
  /** Opens the panel on the offline form. */
  offlineForm(): void;
  /** Opens the panel offering a video call, with the rule's text or the widget's. */
  offerCall(message: string | null): void;
}

export type ChunkFactory = (core: Core) => Chat;

/** What the recorder chunk gives back: `stop` ends the recording on this page
 * (consent withdrawn), dropping what was not sent yet. */
export interface Recorder {
  stop(): void;
}

export type RecorderFactory = (core: Core, config: RecordingConfig) => Recorder;

/** One message of a flow (core/src/config/flows.rs). */
export interface FlowMessage {
  type: Message['type'];
  message?: string | null;
  url?: string | null;
  buttonText?: string | null;
  buttonLink?: string | null;
}

/** An action rule as `GET /widget/rules` gives it (core/src/config/rules/action.rs,
 * `CompiledRule`): all its conditions must hold, each possibly negated. */
export interface ActionRule {
  id: string;
  trigger: 'PAGE' | 'CHAT';
  conditions: RuleCondition[];
  action: RuleAction;
}

export type RuleCondition = { negate?: boolean } & (
  | { type: 'AGENT_ONLINE' | 'AGENTS_OFFLINE' | 'AGENTS_BUSY' | 'REVISIT' | 'SENDS_MESSAGE' }
  | { type: 'TIME_ON_PAGE'; seconds: number }
  /** `[start, end)` pairs, unix ms. */
  | { type: 'TIME'; intervals: [number, number][] }
  /** `*` matches any run of characters; a pattern matches the whole address. */
  | { type: 'URL'; urls: string[] }
  | { type: 'HAS_TAG'; tags: string[]; match: 'ANY' | 'ALL' }
  | { type: 'JS_EVENT'; name: string }
);

export type OpenChatAction = { type: 'OPEN_CHAT'; message: string | null; messages: FlowMessage[] | null };

export type RuleAction =
  | { type: 'SHOW_BUTTON' | 'HIDE_BUTTON' | 'SHOW_OFFLINE_FORM' }
  | OpenChatAction
  | { type: 'OFFER_CALL'; message: string | null };

/** An event of the tracking batch (`POST /widget/track`). */
export type TrackEvent = Record<string, unknown> & { type: string; id: string };

/** What the loader hands to the rules chunk beside the rules. */
export interface RulesHost {
  /** The names the page fired (`Rapport('event', …)`) so far; the loader adds
   * to it, and emits `_input`. */
  events: string[];
  /** The page's one `GET /widget/config`; null when it failed. */
  config(): Promise<WidgetConfig | null>;
  /** Queues an event of the tracking batch; dropped where the page is not tracked. */
  track(event: TrackEvent): void;
  /** Shows or hides the launcher, now or once the chat loads. */
  launcher(visible: boolean): void;
  /** The chat, if it has loaded. */
  chat(): Chat | null;
  /** Runs `fn` with the chat, loading it first if need be. */
  withChat(fn: (chat: Chat) => void): void;
}

export type RulesFactory = (core: Core, rules: ActionRule[], host: RulesHost) => void;

export interface HttpError extends Error {
  status: number;
  retryAfter?: number;
  /** The problem's `code`, where the caller read it. */
  code?: string;
}

declare global {
  interface Window {
    /** Where chunks register: `push([name, factory])`. */
    __rapportChunks?: {
      push(chunk: ['chat', ChunkFactory] | ['recorder', RecorderFactory] | ['rules', RulesFactory]): void;
    };
  }
}
