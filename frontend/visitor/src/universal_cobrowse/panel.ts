// The co-browsing session's side panel: who holds control, the participants
// (with "(you)" and "has control"), when the session ends, and the host's
// buttons: give control to a guest, take it back, end the session.
//
// The panel is rebuilt only when what it shows changes, and a rebuild keeps
// keyboard focus on the same button, or on the one that took its place (the
// host who gave control finds "Take back control" focused).

import { h } from '../dom';
import type { Participant } from './protocol';

export interface PanelView {
  participants: Participant[];
  control: string | null;
  /** One's participant id, null while not connected. */
  you: string | null;
  host: boolean;
  /** Connected and not over: the buttons work. */
  live: boolean;
  endsAt: string;
}

export interface PanelActions {
  /** Hands control to a participant (oneself: takes it back). */
  giveControl(id: string): void;
  endSession(): void;
}

function endsAtText(endsAt: string): string {
  const at = new Date(endsAt);
  if (!endsAt || isNaN(at.getTime())) return '';
  return `The session ends at ${at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}.`;
}

export class Panel {
  readonly element: HTMLElement;
  private readonly controlLine = h('p', { class: 'cobrowse-control', 'aria-live': 'polite' });
  private readonly list = h('ul', { class: 'cobrowse-participants', 'aria-label': 'Participants' });
  private readonly hostActions = h('p', { class: 'cobrowse-host-actions' });
  private readonly endsLine = h('p', { class: 'cobrowse-ends' });
  /** What the panel shows now, to skip rebuilds that would change nothing. */
  private shown = '';

  constructor(private readonly actions: PanelActions) {
    this.element = h('div', { class: 'cobrowse-panel' }, this.controlLine, this.list, this.hostActions, this.endsLine);
  }

  update(view: PanelView): void {
    const key = JSON.stringify(view);
    if (key === this.shown) return;
    this.shown = key;
    const focused = this.element.contains(document.activeElement) ? (document.activeElement as HTMLElement).dataset.focus : undefined;

    const { participants, control, you, host, live } = view;
    const name = (id: string) => participants.find((p) => p.id === id)?.name;
    this.controlLine.textContent = !live
      ? ''
      : control === null
        ? 'Nobody has control.'
        : control === you
          ? 'You have control.'
          : `${name(control) || 'Someone'} has control.`;

    const button = (label: string, focus: string, style: string, onclick: () => void) =>
      h('button', { type: 'button', class: `button small ${style}`, 'data-focus': focus, disabled: !live, onclick }, label);
    this.list.replaceChildren(
      ...participants.map((p) =>
        h(
          'li',
          { 'data-participant': p.id },
          h('span', { class: 'cobrowse-name' }, p.name),
          p.id === you && ' (you)',
          p.id === control && ' ',
          p.id === control && h('span', { class: 'cobrowse-has-control' }, 'has control'),
          host &&
            p.role === 'guest' &&
            p.id !== control &&
            button(`Give control to ${p.name}`, `give:${p.id}`, 'secondary', () => this.actions.giveControl(p.id)),
        ),
      ),
    );

    const hostButtons: HTMLButtonElement[] = [];
    if (host && you !== null && control !== you) {
      const label = control === null ? 'Take control' : 'Take back control';
      hostButtons.push(button(label, 'take', 'secondary', () => this.actions.giveControl(you)));
    }
    if (host) hostButtons.push(button('End session', 'end', 'danger', () => this.actions.endSession()));
    this.hostActions.replaceChildren(...hostButtons);
    this.hostActions.hidden = !host;
    this.endsLine.textContent = live ? endsAtText(view.endsAt) : '';

    if (focused) {
      const buttons = [...this.element.querySelectorAll<HTMLButtonElement>('button:not(:disabled)')];
      (buttons.find((b) => b.dataset.focus === focused) || buttons[0])?.focus();
    }
  }
}
