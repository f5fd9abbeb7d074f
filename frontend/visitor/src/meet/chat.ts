// The call's chat panel: a log of everyone's messages and a form to send one.
// Messages go over the call's signalling socket (`→ chat {text}`) and come back
// to everyone (`← chat {from, name, text, at}`), one's own included; a message
// the server refuses comes back as an `error`, said in the status line.
// Server data (names, messages) is only ever set as text, never as HTML.

import { h } from '../dom';
import { strings as t } from './i18n';
import type { ChatMsg, Id } from './protocol';

/** The longest message the server takes. */
const MAX_LENGTH = 2000;

export class CallChat {
  /** The panel, to place in the call's layout. */
  readonly element: HTMLElement;
  private readonly log: HTMLElement;
  private readonly list: HTMLElement;
  private readonly input: HTMLInputElement;
  /** One's own messages sent and not yet heard back. */
  private pending = 0;

  /** `id` makes the page's element ids; `send` sends a message and says
   * whether it could (the socket is open). */
  constructor(
    id: (name: string) => string,
    private readonly send: (text: string) => boolean,
  ) {
    this.list = h('ol', { class: 'rapport-meet__chat-list' });
    // Scrolls, so it takes keyboard focus; a log is announced as it grows.
    this.log = h(
      'div',
      { class: 'rapport-meet__chat-log', role: 'log', 'aria-labelledby': id('chat'), tabindex: '0' },
      this.list,
    );
    this.input = h('input', {
      id: id('message'),
      type: 'text',
      name: 'message',
      autocomplete: 'off',
      maxlength: String(MAX_LENGTH),
    });
    this.element = h(
      'section',
      { class: 'rapport-meet__chat', 'aria-labelledby': id('chat') },
      h('h2', { id: id('chat') }, t.chat),
      this.log,
      h(
        'form',
        {
          class: 'rapport-meet__chat-form',
          novalidate: true,
          onsubmit: (e: Event) => {
            e.preventDefault();
            this.submit();
          },
        },
        h('label', { for: id('message') }, t.message),
        this.input,
        h('button', { type: 'submit', class: 'button primary' }, t.send),
      ),
    );
  }

  private submit(): void {
    const text = this.input.value.trim();
    if (!text || text.length > MAX_LENGTH || !this.send(text)) return;
    this.pending++;
    this.input.value = '';
    this.input.focus();
  }

  /** Whether an `error` the server sent is the refusal of one's own message. */
  refused(): boolean {
    if (this.pending === 0) return false;
    this.pending--;
    return true;
  }

  /** Shows a message of the call; `me` is one's own participant id. */
  received(msg: ChatMsg, me: Id): void {
    const own = String(msg.from) === String(me);
    if (own && this.pending > 0) this.pending--;
    if (typeof msg.text !== 'string') return;
    const at = new Date(msg.at);
    const time = isNaN(at.getTime())
      ? null
      : h('time', { datetime: msg.at }, at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }));
    // Kept at the bottom while one reads the newest messages.
    const log = this.log;
    const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 8;
    this.list.append(
      h(
        'li',
        { class: own ? 'rapport-meet__chat-own' : null },
        h('p', { class: 'rapport-meet__chat-meta' }, h('span', { class: 'rapport-meet__chat-name' }, msg.name || t.someone), ' ', time),
        h('p', { class: 'rapport-meet__chat-text' }, msg.text),
      ),
    );
    if (atEnd) log.scrollTop = log.scrollHeight;
  }
}
