// A Server-Sent Events reader over fetch, shared by the chunks (chat.js reads
// `/widget/stream`, recorder.js the recording's control stream; each bundles its
// own copy). EventSource cannot send headers, and these streams authenticate with
// the widget key and a bearer token, so the stream is read from a ReadableStream
// and parsed here (the subset of the SSE format the server sends: `event`, `data`,
// comments), with reconnects that back off while Rapport is unreachable.

export interface StreamHandlers {
  /** One dispatched event. */
  event(name: string, data: string): void;
  /** The stream is (again) open: a chance to fetch what was missed meanwhile. */
  open(): void;
  /**
   * The stream broke; it will reconnect after `retryMs`. `refused` when Rapport
   * answered but would not open it now (the workspace's pages hold as many
   * streams as they may): Rapport is reachable, only not live.
   */
  down(retryMs: number, refused: boolean): void;
}

/** Calls `connect` again whenever the stream ends; returns a stop function. */
export function readStream(connect: (signal: AbortSignal) => Promise<Response>, on: StreamHandlers): () => void {
  let stopped = false;
  let controller: AbortController | null = null;
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const run = async () => {
    controller = new AbortController();
    // Seconds Rapport asked to wait before the next try (429 `Retry-After`).
    let retryAfter = 0;
    try {
      const response = await connect(controller.signal);
      if (!response.ok) {
        retryAfter = Number(response.headers.get('retry-after')) || 0;
        throw new Error(`stream refused: ${response.status}`);
      }
      if (!response.body) throw new Error('no stream');
      failures = 0;
      on.open();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      let name = '';
      let data: string[] = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const lines = buffer.split(/\r\n|\r|\n/);
        buffer = lines.pop() || '';
        for (const line of lines) {
          if (line === '') {
            if (data.length) on.event(name || 'message', data.join('\n'));
            name = '';
            data = [];
          } else if (line[0] !== ':') {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') name = text;
            else if (field === 'data') data.push(text);
          }
        }
      }
    } catch {
      // Closed or unreachable: reconnect below.
    }
    if (stopped) return;
    // A stream the server closed normally reconnects soon; repeated failures wait
    // longer each time, up to a minute.
    const backoff = Math.min(60_000, 1000 * 2 ** Math.min(failures++, 6)) * (0.5 + Math.random() / 2);
    const wait = Math.max(backoff, retryAfter * 1000);
    on.down(wait, retryAfter > 0);
    timer = setTimeout(run, wait);
  };
  void run();
  return () => {
    stopped = true;
    clearTimeout(timer);
    if (controller) controller.abort();
  };
}
