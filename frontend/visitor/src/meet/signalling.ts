// The call's signalling socket (see meet.ts for the exchange): JSON over one
// WebSocket at a time, every message and the close handled strictly in order
// (one promise chain), so an answer is applied before the next offer is looked
// at. A dropped socket's later events are ignored.

import type { ServerMsg } from './protocol';

/** What the signalling needs of the call page. */
export interface SignallingHost {
  /** Handles a server message, once the ones before it are done. */
  handle(msg: ServerMsg): Promise<void>;
  /** The socket closed (after the messages sent before the close). */
  closed(): void;
}

export class Signalling {
  private ws: WebSocket | null = null;
  private chain: Promise<void> = Promise.resolve();

  /** `url` is the signalling WebSocket's absolute URL. */
  constructor(
    private readonly url: string,
    private readonly host: SignallingHost,
  ) {}

  /** Opens a socket that sends `hello` once open; false when it cannot be made. */
  open(hello: Record<string, unknown>): boolean {
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url);
    } catch {
      return false;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws === ws) this.send(hello);
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws || typeof event.data !== 'string') return;
      let msg: ServerMsg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return;
      }
      this.queue(() => this.host.handle(msg));
    };
    // Through the chain too: a refusal sent just before the close is seen first.
    ws.onclose = () => this.queue(() => (this.ws === ws ? this.host.closed() : undefined));
    return true;
  }

  private queue(step: () => Promise<void> | void): void {
    this.chain = this.chain.then(step).catch((e) => console.error('Rapport call:', e));
  }

  /** Whether the socket is open (messages can be sent). */
  isOpen(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  send(msg: Record<string, unknown>): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  /** Forgets the socket (its later events are ignored) and closes it. */
  drop(): void {
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState <= WebSocket.OPEN) ws.close();
  }
}
