// A copy of the conversation by mail: the visitor names an address, and
// Rapport mails the conversation there (POST /widget/transcript; at most once
// every 10 minutes, 429 sooner).

import type { Core, HttpError } from '../types';
import { h } from '../dom';
import type { Strings } from './i18n';

/** The transcript form: a button that opens an address field. */
export function createTranscript(core: Core, t: Strings): HTMLFormElement {
  const transcript = h('form', { class: 'transcript', 'aria-label': t.transcriptOpen }) as HTMLFormElement;
  const buildTranscript = () => {
    const email = h('input', {
      id: 'transcript-email',
      type: 'email',
      autocomplete: 'email',
      required: true,
      maxlength: '254',
    }) as HTMLInputElement;
    const button = h('button', { type: 'submit', class: 'send' }, t.transcriptSend) as HTMLButtonElement;
    const result = h('p', { role: 'status' });
    const fields = h('div', { class: 'fields', hidden: true }, h('label', { for: 'transcript-email' }, t.transcriptEmail), email, button);
    const toggle = h('button', { type: 'button', class: 'link', 'aria-expanded': 'false' }, t.transcriptOpen);
    toggle.addEventListener('click', () => {
      fields.hidden = !fields.hidden;
      toggle.setAttribute('aria-expanded', String(!fields.hidden));
      if (!fields.hidden) email.focus();
    });
    transcript.replaceChildren(toggle, fields, result);
    transcript.onsubmit = (e: Event) => {
      e.preventDefault();
      if (!email.value.trim()) return email.focus();
      button.disabled = true;
      result.textContent = '';
      core
        .request<{ to: string }>('/widget/transcript', { body: { email: email.value.trim() }, visitor: true })
        .then(({ to }) => {
          result.textContent = t.transcriptSent.replace('{email}', to);
          fields.hidden = true;
          toggle.setAttribute('aria-expanded', 'false');
        })
        .catch((err) => {
          result.textContent = (err as HttpError).status === 429 ? t.transcriptSoon : t.transcriptFailed;
          core.emit('error', err);
        })
        .finally(() => (button.disabled = false));
    };
  };
  buildTranscript();
  return transcript;
}
