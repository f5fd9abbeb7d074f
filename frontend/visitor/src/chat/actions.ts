// What action rules do in the chat (the rules chunk, src/rules/rules.ts,
// decides when): a proactive greeting (OPEN_CHAT), a video call offer
// (OFFER_CALL) and the offline form (SHOW_OFFLINE_FORM). Each opens the panel
// as a rule does, without taking the page's focus or starting the visitor.

import type { FlowMessage, Message, OpenChatAction } from '../types';
import { h } from '../dom';
import type { Strings } from './i18n';

/** A proactive message on show, by the rule that sent it. */
export type Greeting = { ruleId: string; els: HTMLElement[] };

/** What the actions need of the chat. */
export interface ActionParts {
  log: HTMLElement;
  render: (m: Message) => HTMLElement;
  /** Opens the panel as a rule does. */
  open: () => void;
  scrollDown: () => void;
  requestCall: () => void;
  /** Switches the panel to the offline form for this page. */
  showOffline: () => void;
}

/** The chat's rule actions, and `answer`, which the visitor's next message
 * calls to take the unanswered greeting (if any) it answers. */
export function createRuleActions(t: Strings, parts: ActionParts) {
  const { log, render, open, scrollDown, requestCall, showOffline } = parts;

  // Action rules' proactive messages (OPEN_CHAT, see proactive below): shown
  // here only, never sent, until the visitor answers. One at a time: a later
  // rule does not talk over an unanswered one.
  let greeting: Greeting | null = null;
  // Only one message answers the proactive one, so it is stored once.
  const answer = () => {
    const answered = greeting;
    greeting = null;
    return answered;
  };

  // Each action draws first, then opens: opening runs the CHAT rules, whose
  // actions come after it.
  const proactive = (ruleId: string, action: OpenChatAction) => {
    const flow: FlowMessage[] =
      action.messages && action.messages.length ? action.messages : action.message ? [{ type: 'MESSAGE', message: action.message }] : [];
    if (!greeting && flow.length) {
      const at = new Date().toISOString();
      const els = flow.map((m) => {
        const el = render({ ...m, direction: 'OUTBOUND', createdAt: at } as Message);
        el.classList.add('proactive');
        log.append(el);
        return el;
      });
      greeting = { ruleId, els };
    }
    open();
    scrollDown();
  };
  // A rule's call offer: its text, and a button that starts the call as the
  // header's camera does.
  const offerCall = (text: string | null) => {
    log.append(
      h(
        'div',
        { class: 'msg card offer', 'data-at': new Date().toISOString() },
        h('span', {}, text || t.offerCall),
        h('button', { type: 'button', class: 'button', onclick: () => requestCall() }, t.call),
      ),
    );
    open();
    scrollDown();
  };
  const offlineForm = () => {
    showOffline();
    open();
  };

  return { proactive, offerCall, offlineForm, answer };
}
