// The workspace's config (GET /widget/config) and the mode it puts the panel
// in. Open, the panel shows the composer, the call button and the transcript
// form; closed (outside opening hours, or by an action rule), the offline
// form instead, which leaves a message by POST /widget/form. The config also
// says whether the server takes files, and how large.

import type { Core, Message, WidgetConfig } from '../types';
import { h } from '../dom';
import type { Strings } from './i18n';

const CONFIG_MAX_AGE = 60_000;

/** The parts of the panel the mode shows or hides. */
export interface ModeParts {
  clip: HTMLElement;
  composer: HTMLElement;
  camera: HTMLElement;
  transcript: HTMLElement;
}

/** The offline form, for the panel, with what the chat calls: `config` for the
 * config read last, `refreshIfStale` when the panel opens, `byRule` when an
 * action rule shows the offline form. */
export function createOffline(core: Core, t: Strings, parts: ModeParts) {
  const { clip, composer, camera, transcript } = parts;
  const offline = h('form', { class: 'offline', hidden: true });

  // Opening hours: closed shows the offline form. A server without the endpoint,
  // or one that cannot be reached, counts as open.
  let config: WidgetConfig = { open: true };
  let configAt = 0;
  let configTimer: ReturnType<typeof setTimeout> | undefined;
  const refreshConfig = async () => {
    configAt = Date.now();
    try {
      config = (await core.request<WidgetConfig>('/widget/config')) || { open: true };
      // The action rules test the agents it tells of.
      core.emit('_config', config);
    } catch {
      config = { open: true };
    }
    clearTimeout(configTimer);
    const next = config.nextChangeAt ? Date.parse(config.nextChangeAt) - Date.now() : NaN;
    if (next > 0) configTimer = setTimeout(refreshConfig, Math.min(next + 1000, 86_400_000));
    showMode();
  };
  // An action rule may show the offline form while the workspace is open
  // (its agents are all away, say): it stays for this page.
  let offlineByRule = false;
  const showMode = () => {
    const closed = config.open === false || offlineByRule;
    clip.hidden = !((config.maxFileBytes || 0) > 0);
    composer.hidden = closed;
    camera.hidden = closed;
    offline.hidden = !closed;
    // Closed, the offline form asks for an address of its own.
    transcript.hidden = closed;
    if (closed && !offline.firstChild) buildOffline();
  };
  const buildOffline = () => {
    const field = (label: string, el: HTMLElement) => h('label', {}, label, el);
    const name = h('input', { name: 'name', autocomplete: 'name', maxlength: '200' }) as HTMLInputElement;
    const email = h('input', { name: 'email', type: 'email', autocomplete: 'email', maxlength: '254' }) as HTMLInputElement;
    const message = h('textarea', { name: 'message', required: true, maxlength: '10000' }) as HTMLTextAreaElement;
    const button = h('button', { type: 'submit', class: 'send' }, t.sendForm) as HTMLButtonElement;
    const result = h('p', { role: 'status' });
    offline.append(
      h('h3', {}, t.offlineTitle),
      h('p', {}, t.offlineText),
      field(t.name, name),
      field(t.email, email),
      field(t.message, message),
      button,
      result,
    );
    offline.addEventListener('submit', (e) => {
      e.preventDefault();
      if (!message.value.trim()) return message.focus();
      button.disabled = true;
      const body = {
        name: name.value.trim() || undefined,
        email: email.value.trim() || undefined,
        message: message.value.trim(),
        url: location.href,
      };
      core
        .request<Message>('/widget/form', { body, visitor: true })
        .then((m) => {
          offline.replaceChildren(h('p', { role: 'status', class: 'thanks' }, t.thanks));
          core.emit('messageSent', m);
        })
        .catch((err) => {
          result.textContent = t.formFailed;
          button.disabled = false;
          core.emit('error', err);
        });
    });
  };

  return {
    form: offline,
    config: () => config,
    refreshIfStale() {
      if (Date.now() - configAt > CONFIG_MAX_AGE) void refreshConfig();
    },
    byRule() {
      offlineByRule = true;
      showMode();
    },
  };
}
