// The rating question (CSAT): once an agent closes the conversation, the
// chat asks how it went, 1 to 5 stars and an optional comment. Rapport says
// when to ask (GET /widget/csat: closed, asked for by the workspace, not rated
// yet); the socket's `conversation` event says when to look again (`check`).
// One answer per closing: writing again reopens the conversation, which is
// asked anew when it closes.

import type { Core, HttpError } from '../types';
import { h } from '../dom';
import type { Strings } from './i18n';

/** The rating form, for the panel, with what the chat calls: `check` when the
 * conversation may have changed, `endThanks` when the visitor writes again. */
export function createCsat(core: Core, t: Strings, scrollDown: () => void) {
  const csat = h('form', { class: 'csat', hidden: true, 'aria-labelledby': 'csat-title' }) as HTMLFormElement;
  let csatState: 'hidden' | 'asking' | 'thanked' = 'hidden';
  // The closing being asked about, or answered: a page asks once per closing,
  // however its answers and the socket's events interleave.
  let csatClosing = '';
  const buildCsat = () => {
    const choices = [1, 2, 3, 4, 5].map((n) =>
      h(
        'label',
        { class: 'star' },
        h('input', { type: 'radio', name: 'rating', value: String(n), class: 'sr' }),
        h('span', { 'aria-hidden': 'true' }, '★'),
        h('span', { class: 'sr' }, t.csatStar.replace('{n}', String(n))),
      ),
    );
    const radios = choices.map((c) => c.querySelector('input') as HTMLInputElement);
    const stars = h('div', { class: 'stars', role: 'radiogroup', 'aria-labelledby': 'csat-title' }, ...choices);
    stars.addEventListener('change', () => {
      const chosen = Number(radios.find((r) => r.checked)?.value || 0);
      choices.forEach((c, i) => c.classList.toggle('on', i < chosen));
    });
    const comment = h('textarea', { id: 'csat-comment', maxlength: '1000', rows: '2' }) as HTMLTextAreaElement;
    const button = h('button', { type: 'submit', class: 'send' }, t.csatSend) as HTMLButtonElement;
    const result = h('p', { role: 'status' });
    csat.replaceChildren(
      h('h3', { id: 'csat-title' }, t.csatTitle),
      stars,
      h('label', { for: 'csat-comment' }, t.csatComment),
      comment,
      button,
      result,
    );
    csat.onsubmit = (e: Event) => {
      e.preventDefault();
      const rating = Number(radios.find((r) => r.checked)?.value || 0);
      if (!rating) {
        result.textContent = t.csatPick;
        radios[0].focus();
        return;
      }
      button.disabled = true;
      result.textContent = '';
      core
        .request<unknown>('/widget/csat', { body: { rating, comment: comment.value.trim() || undefined }, visitor: true })
        .then(() => thank())
        .catch((err) => {
          // Rated already (on another tab or device): nothing left to ask.
          if ((err as HttpError).status === 409) return void checkCsat();
          result.textContent = t.csatFailed;
          button.disabled = false;
          core.emit('error', err);
        });
    };
  };
  // The thanks stays until the visitor writes again (which reopens the
  // conversation).
  const thank = () => {
    csatState = 'thanked';
    csat.replaceChildren(h('p', { role: 'status', class: 'thanks' }, t.csatThanks));
    csat.hidden = false;
  };
  const endThanks = () => {
    if (csatState !== 'thanked') return;
    csatState = 'hidden';
    csat.hidden = true;
  };
  const checkCsat = () => {
    if (!core.customerId()) return;
    core
      .request<{ ask: boolean; closedAt?: string | null }>('/widget/csat', { visitor: true })
      .then(({ ask, closedAt }) => {
        const closing = closedAt || '';
        if (ask) {
          // Asking already, or answered here: nothing new.
          if (csatState !== 'hidden' && closing === csatClosing) return;
          csatClosing = closing;
          csatState = 'asking';
          buildCsat();
          csat.hidden = false;
          scrollDown();
        } else if (csatState === 'asking') {
          // Rated elsewhere, or reopened: the question has no object any more.
          csatState = 'hidden';
          csat.hidden = true;
        }
      })
      .catch((e) => core.emit('error', e));
  };
  return { form: csat, check: checkCsat, endThanks };
}
