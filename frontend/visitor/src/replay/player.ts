// The recorded session's replay: mounts rrweb-player on a
// `<div data-rapport-replay data-events-url="…">`, with the list of pages,
// script errors, chat messages and the visitor leaving next to it ("Jump to"),
// each seeking the player to its moment. Events come from the dashboard's own
// origin with its session cookie.

import Player from 'rrweb-player';
import type { eventWithTime } from '@rrweb/types';
import { strings, type Strings } from './i18n';
import { h as el } from '../dom';

const META = 4;
const FULL_SNAPSHOT = 2;
const CUSTOM = 5;

interface Mark {
  offset: number;
  kind: 'page' | 'error' | 'in' | 'out' | 'left';
  text: string;
}

/** `m:ss` or `h:mm:ss` of a time offset. */
export function clock(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const two = (n: number) => String(n).padStart(2, '0');
  const h = Math.floor(s / 3600);
  const m = Math.floor(s / 60) % 60;
  return h ? `${h}:${two(m)}:${two(s % 60)}` : `${two(m)}:${two(s % 60)}`;
}

/** The moments to jump to: each page (a Meta event, i.e. a page load, or a
 * single-page app's `rapport.page`), script error, chat message, and the
 * visitor leaving a page (`rapport.left` closed). A Meta event of a periodic
 * full snapshot repeats its page, and is left out; so is leaving for the
 * session's next page, which has a mark of its own. */
export function marks(events: eventWithTime[]): Mark[] {
  const start = events[0].timestamp;
  const out: Mark[] = [];
  let page = '';
  const pageMark = (offset: number, text: string) => {
    if (out.length && out[out.length - 1].kind === 'left') out.pop();
    out.push({ offset, kind: 'page', text });
  };
  for (const e of events) {
    const offset = e.timestamp - start;
    if (e.type === META) {
      const href = String((e.data as { href?: string }).href || '');
      if (href && href !== page) pageMark(offset, href);
      page = href;
    } else if (e.type === CUSTOM) {
      const { tag, payload } = e.data as { tag: string; payload: Record<string, unknown> };
      const p = payload || {};
      if (tag === 'rapport.page') {
        page = String(p.url || '');
        pageMark(offset, p.title ? `${p.title} — ${page}` : page);
      } else if (tag === 'rapport.error') {
        const file = String(p.file || '');
        const name = file.replace(/[?#].*$/, '').split('/').pop() || file;
        const where = file ? ` (${name}${p.line ? `:${p.line}` : ''})` : '';
        out.push({ offset, kind: 'error', text: `${String(p.message || '')}${where}` });
      } else if (tag === 'rapport.message') {
        out.push({ offset, kind: p.direction === 'out' ? 'out' : 'in', text: String(p.text || '') });
      } else if (tag === 'rapport.left' && p.reason === 'closed') {
        out.push({ offset, kind: 'left', text: '' });
      }
    }
  }
  return out;
}

const label = (t: Strings, kind: Mark['kind']) =>
  kind === 'page' ? t.page : kind === 'error' ? t.error : kind === 'in' ? t.visitor : kind === 'out' ? t.agent : t.leftPage;

export async function mountReplay(root: HTMLElement): Promise<void> {
  const t = strings(root.getAttribute('data-lang'));
  const url = root.getAttribute('data-events-url') || '';
  root.classList.add('rapport-replay');
  const status = el('p', { class: 'rapport-replay__status', role: 'status' }, t.loading);
  root.replaceChildren(status);

  let events: eventWithTime[];
  try {
    const response = await fetch(url, { credentials: 'include', headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    events = await response.json();
    if (!Array.isArray(events)) throw new Error('not a list of events');
  } catch (e) {
    console.error('Rapport replay: could not load the events', e);
    status.textContent = t.failed;
    status.classList.add('rapport-replay__status--error');
    return;
  }
  // Batches arrive in order; a stable sort by time still guards against a
  // batch stored out of order. Without a full snapshot there is nothing to show.
  events = events
    .filter((e) => e && typeof e.timestamp === 'number')
    .map((e, i) => [e, i] as const)
    .sort((a, b) => a[0].timestamp - b[0].timestamp || a[1] - b[1])
    .map((p) => p[0]);
  if (events.length < 2 || !events.some((e) => e.type === FULL_SNAPSHOT)) {
    status.textContent = t.nothing;
    return;
  }

  const stage = el('div', { class: 'rapport-replay__player', role: 'region', 'aria-label': t.replay });
  const list = el('ol', { class: 'rapport-replay__marks' });
  const nav = el('nav', { class: 'rapport-replay__jump', 'aria-label': t.jumpTo }, el('h3', {}, t.jumpTo), list);
  root.replaceChildren(el('div', { class: 'rapport-replay__layout' }, stage, nav));

  // The player's frame fits the container's width, at the recorded page's
  // aspect ratio, no taller than most of the window.
  const meta = events.find((e) => e.type === META);
  const { width: pageWidth = 1280, height: pageHeight = 800 } = (meta ? meta.data : {}) as { width?: number; height?: number };
  const size = () => {
    const width = Math.max(280, stage.clientWidth || 800);
    const height = Math.max(180, Math.min(Math.round((width * pageHeight) / pageWidth), Math.round(innerHeight * 0.7)));
    return { width, height };
  };
  const player = new Player({
    target: stage,
    props: {
      events,
      ...size(),
      autoPlay: false,
      skipInactive: true,
      speedOption: [1, 2, 4, 8],
      showController: true,
      mouseTail: { duration: 500, lineCap: 'round', lineWidth: 3, strokeStyle: '#e0457b' },
      // Timeline markers for the custom events, in the jump list's colours.
      tags: {
        'rapport.page': '#2563eb',
        'rapport.error': '#dc2626',
        'rapport.message': '#16a34a',
        'rapport.left': '#6b7280',
        'rapport.back': '#6b7280',
      },
      // Nothing in a recording may run: no scripts in the replay frame.
      UNSAFE_replayCanvas: false,
      showWarning: false,
    },
  });
  // rrweb-player leaves its icon buttons, its switch and its frame unnamed:
  // name them, so that screen readers can use the controls.
  const name = (selector: string, attribute: string, value: string) => {
    const found = stage.querySelector(selector);
    if (found && !found.getAttribute(attribute)) found.setAttribute(attribute, value);
  };
  name('.rr-controller__btns > button:first-child', 'aria-label', t.playPause);
  name('.rr-controller__btns > button:last-child', 'aria-label', t.fullscreen);
  name('.rr-controller input[type="checkbox"]', 'aria-label', t.skipIdle);
  name('iframe', 'title', t.replay);
  let resizing: ReturnType<typeof setTimeout> | undefined;
  const onResize = () => {
    if (!root.isConnected) return removeEventListener('resize', onResize);
    clearTimeout(resizing);
    resizing = setTimeout(() => {
      // A Svelte component: $set updates its props (rrweb-player's typings omit it).
      (player as unknown as { $set(props: object): void }).$set(size());
      player.triggerResize();
    }, 150);
  };
  addEventListener('resize', onResize);

  const found = marks(events);
  for (const mark of found) {
    list.append(
      el(
        'li',
        { class: `rapport-replay__mark rapport-replay__mark--${mark.kind}` },
        el(
          'button',
          { type: 'button', onclick: () => player.goto(mark.offset) },
          el('time', { datetime: `PT${Math.floor(mark.offset / 1000)}S` }, clock(mark.offset)),
          ' ',
          // A mark without text (leaving) is its label alone.
          el('span', { class: 'rapport-replay__kind' }, mark.text ? `${label(t, mark.kind)}:` : label(t, mark.kind)),
          mark.text && ' ',
          mark.text && el('span', { class: 'rapport-replay__text' }, mark.text),
        ),
      ),
    );
  }
  if (!found.length) nav.hidden = true;
}
