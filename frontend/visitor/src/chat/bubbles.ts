// The chat's bubbles: how a message shows in the log (text, a card with its
// button, a file, audio or video as a link), its time or state line, and the
// icons the chat's buttons draw. Server data is only ever set as text or as
// checked http(s) links, never as HTML.

import type { Message } from '../types';
import { h } from '../dom';
import type { Strings } from './i18n';

/** The launcher's speech bubble (filled), the attach button's paper clip and
 * the call button's camera (stroked: styles.ts draws them as lines). */
export const BUBBLE =
  'M4 3h16a2 2 0 0 1 2 2v11a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2zm3 6.5a1.5 1.5 0 1 0 0 .01zm5 0a1.5 1.5 0 1 0 0 .01zm5 0a1.5 1.5 0 1 0 0 .01z';
export const CLIP = 'M21 11.5l-8.6 8.6a5 5 0 0 1-7.1-7.1l8.6-8.6a3.3 3.3 0 0 1 4.7 4.7l-8.6 8.6a1.7 1.7 0 0 1-2.4-2.4l7.9-7.9';
export const CAMERA = 'M3 5h11a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H3a2 2 0 0 1-2-2V7a2 2 0 0 1 2-2zm13 7l7-5v10z';

/** An icon of one path, built as SVG nodes (no markup strings). */
export function icon(d: string): SVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', d);
  svg.append(path);
  return svg;
}

/** The URL if it is an absolute http(s) URL: no javascript: links from server data. */
function safeUrl(url?: string | null): string | null {
  try {
    const parsed = new URL(url || '');
    return /^https?:$/.test(parsed.protocol) ? parsed.href : null;
  } catch {
    return null;
  }
}

/** Builds bubbles in the visitor's language, with times in its format. */
export function createBubbles(t: Strings, lang: string) {
  const time = new Intl.DateTimeFormat(lang, { hour: 'numeric', minute: '2-digit' });
  /** A time as the bubbles show it. */
  const timeOf = (at: string) => time.format(new Date(at));
  /** Replaces a bubble's time or state line (and its retry button). */
  const meta = (el: HTMLElement, text: string) => {
    el.querySelectorAll('.meta, .retry').forEach((n) => n.remove());
    el.append(h('span', { class: 'meta' }, text));
  };
  /** An empty bubble, placed in the log by `at` (ISO time). */
  const bubble = (inbound: boolean, at: string) =>
    h('div', { class: `msg ${inbound ? 'in' : 'out'}`, 'data-at': at }, inbound && h('span', { class: 'sr' }, `${t.you}: `));

  /** A stored message as a bubble. */
  const render = (m: Message): HTMLElement => {
    const el = bubble(m.direction === 'INBOUND', m.createdAt);
    const text = m.message || '';
    if (m.type === 'CARD') {
      el.classList.add('card');
      if (text) el.append(h('span', {}, text));
      const link = safeUrl(m.buttonLink);
      if (link) {
        el.append(
          h('a', { class: 'button', href: link, target: '_blank', rel: 'noopener noreferrer' }, m.buttonText || link),
        );
      }
    } else if (m.type === 'FILE' || m.type === 'AUDIO' || m.type === 'VIDEO') {
      const link = safeUrl(m.url);
      const kind = m.type === 'FILE' ? t.file : m.type === 'AUDIO' ? t.audio : t.video;
      const label = `${kind}: ${text || (link ? decodeURIComponent(link.split('/').pop() || link) : '')}`;
      el.append(link ? h('a', { href: link, target: '_blank', rel: 'noopener noreferrer' }, label) : label);
    } else {
      el.append(text);
    }
    meta(el, timeOf(m.createdAt));
    return el;
  };

  return { meta, bubble, render, timeOf };
}
