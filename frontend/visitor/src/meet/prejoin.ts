// The pre-join form of the call page: one's name, the camera and microphone
// pickers under the preview (from devices.ts), the password where the
// appointment asks for one, the join button, and the cancel button shown
// instead of the form while one waits to be let in.

import { h } from '../dom';
import type { LocalMedia } from './devices';
import { strings as t } from './i18n';

/** What the form does for the call page. */
export interface PreJoinActions {
  /** The form was submitted. */
  join(): void;
  /** The user stopped waiting to be let in. */
  cancel(): void;
}

export class PreJoin {
  /** The pre-join section, shown until one is in the call. */
  readonly element: HTMLElement;
  private readonly nameInput: HTMLInputElement;
  private readonly nameError: HTMLElement;
  private readonly passwordInput: HTMLInputElement | null = null;
  private readonly joinButton: HTMLButtonElement;
  private readonly form: HTMLElement;
  private readonly waitingBox: HTMLElement;

  /** `id` makes the page's element ids; `media` gives the preview and pickers. */
  constructor(id: (name: string) => string, media: LocalMedia, needsPassword: boolean, actions: PreJoinActions) {
    this.nameInput = h('input', {
      id: id('name'),
      type: 'text',
      name: 'name',
      autocomplete: 'name',
      required: true,
      maxlength: '80',
      'aria-describedby': id('name-error'),
      oninput: () => this.nameProblem(false),
    }) as HTMLInputElement;
    this.nameError = h('p', { id: id('name-error'), class: 'field-error', hidden: true }, t.nameMissing);
    if (needsPassword) {
      this.passwordInput = h('input', {
        id: id('password'),
        type: 'password',
        name: 'password',
        autocomplete: 'off',
        required: true,
        maxlength: '128',
      }) as HTMLInputElement;
    }
    this.joinButton = h('button', { type: 'submit', class: 'button primary' }, t.join) as HTMLButtonElement;
    this.form = h(
      'form',
      {
        class: 'rapport-meet__form',
        novalidate: true,
        onsubmit: (e: Event) => {
          e.preventDefault();
          actions.join();
        },
      },
      h('div', { class: 'field' }, h('label', { for: id('name') }, t.yourName), this.nameInput, this.nameError),
      h('div', { class: 'field-row' }, media.cameraField, media.micField),
      this.passwordInput &&
        h('div', { class: 'field' }, h('label', { for: id('password') }, t.password), this.passwordInput),
      h('p', { class: 'rapport-meet__actions' }, this.joinButton),
    );
    this.waitingBox = h(
      'p',
      { class: 'rapport-meet__actions', hidden: true },
      h('button', { type: 'button', class: 'button secondary', onclick: () => actions.cancel() }, t.cancel),
    );
    this.element = h(
      'section',
      { class: 'rapport-meet__prejoin', 'aria-labelledby': id('heading') },
      h('h2', { id: id('heading') }, t.joinHeading),
      h('div', { class: 'rapport-meet__preview' }, media.preview),
      media.note,
      this.form,
      this.waitingBox,
    );
  }

  /** Joining is possible only while `ready`; while `waiting`, the cancel
   * button replaces the form. */
  setState(ready: boolean, waiting: boolean): void {
    this.joinButton.disabled = !ready;
    this.form.hidden = waiting;
    this.waitingBox.hidden = !waiting;
  }

  private nameProblem(show: boolean): void {
    this.nameError.hidden = !show;
    if (show) this.nameInput.setAttribute('aria-invalid', 'true');
    else this.nameInput.removeAttribute('aria-invalid');
  }

  /** The name given; without one, says it is missing and returns ''. */
  name(): string {
    const name = this.nameInput.value.trim();
    if (!name) {
      this.nameProblem(true);
      this.nameInput.focus();
      return '';
    }
    this.nameProblem(false);
    return name;
  }

  /** The password given, where the appointment asks for one. */
  password(): string | undefined {
    return this.passwordInput?.value;
  }

  /** Points at the field the server refused (`reason` of `← refused`). */
  refused(reason: string): void {
    if (reason === 'password' && this.passwordInput) {
      this.passwordInput.setAttribute('aria-invalid', 'true');
      this.passwordInput.focus();
      this.passwordInput.select();
    } else if (reason === 'name') {
      this.nameProblem(true);
      this.nameInput.focus();
    }
  }

  /** The server let one in: the password was right. */
  accepted(): void {
    this.passwordInput?.removeAttribute('aria-invalid');
  }

  focusName(): void {
    this.nameInput.focus();
  }

  focusJoin(): void {
    this.joinButton.focus();
  }
}
