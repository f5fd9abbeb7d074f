// The hosts' lobby on the call page: the people waiting to be let in, each with
// an admit and a decline button (→ admit {id} | decline {id}). Guests never see
// it: the server tells only hosts who waits.

import { h } from '../dom';
import { strings as t } from './i18n';
import type { Id, Person } from './protocol';

export class Lobby {
  /** The lobby's section, hidden while nobody waits. */
  readonly element: HTMLElement;
  private readonly list: HTMLElement;

  /** `id` makes the page's element ids; `decide` sends a host's decision. */
  constructor(
    id: (name: string) => string,
    private readonly decide: (type: 'admit' | 'decline', id: Id) => void,
  ) {
    this.list = h('ul', { class: 'rapport-meet__lobby-list' });
    this.element = h(
      'section',
      { class: 'rapport-meet__lobby', 'aria-labelledby': id('lobby'), hidden: true },
      h('h2', { id: id('lobby') }, t.lobby),
      this.list,
    );
  }

  /** Lists `waiting`; returns, when `announce` is set, someone who was not
   * listed before (to say so). */
  show(waiting: Person[], announce: boolean): Person | undefined {
    const before = new Set([...this.list.querySelectorAll('li')].map((li) => li.dataset.participant));
    this.list.replaceChildren(
      ...waiting.map((person) => {
        const button = (type: 'admit' | 'decline', label: string, style: string) =>
          h(
            'button',
            {
              type: 'button',
              class: `button small ${style}`,
              onclick: (e: Event) => {
                (e.currentTarget as HTMLElement)
                  .closest('li')
                  ?.querySelectorAll('button')
                  .forEach((b) => (b.disabled = true));
                this.decide(type, person.id);
              },
            },
            label,
          );
        return h(
          'li',
          { 'data-participant': String(person.id) },
          h('span', { class: 'rapport-meet__lobby-name' }, person.name),
          button('admit', t.admit(person.name), 'primary'),
          button('decline', t.decline(person.name), 'secondary'),
        );
      }),
    );
    this.element.hidden = waiting.length === 0;
    return announce ? waiting.find((p) => !before.has(String(p.id))) : undefined;
  }
}
