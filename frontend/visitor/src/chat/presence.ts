// Typing and read state, both ways, between the visitor and the agents.
// - Typing: the visitor's draft goes to the agents as it is typed (they see it
//   only where the workspace shows drafts), at most every 1.5 s, and "stopped"
//   once the box is emptied; sending ends it on their side. An agent's typing
//   shows as "Ada is typing…" until their message comes or they go quiet.
// - Read state: "Seen" goes under the visitor's newest message an agent has
//   read (Rapport's `agentReadAt`); the newest agent message counts as read by
//   the visitor once the panel shows it on a visible page.

import type { Core, Message } from '../types';
import { h } from '../dom';
import type { Strings } from './i18n';

/** The visitor's typing goes to the agents at most this often, in ms. */
const TYPING_EVERY_MS = 1_500;
/** An agent's typing note goes away this long after their last signal. */
const TYPING_SHOWN_MS = 6_000;
/** The end of a draft the agents may see, in characters (the server's bound). */
const MAX_DRAFT = 500;

/** What `GET`/`POST /widget/read` answer, and a `read` event carries. */
export type ReadState = { visitorReadAt?: string | null; agentReadAt?: string | null };

/** The typing note for the panel, and what the chat calls as the visitor
 * types, sends and reads, and as the agents' messages and signals arrive. */
export function createPresence(
  core: Core,
  t: Strings,
  input: HTMLTextAreaElement,
  log: HTMLElement,
  panelShown: () => boolean,
) {
  // "Ada is typing…", while an agent types a reply.
  const typingNote = h('p', { class: 'typing', role: 'status', hidden: true });

  let typingTimer: ReturnType<typeof setTimeout> | undefined;
  let typingSentAt = 0;
  let typingLive = false;
  const sendTyping = () => {
    typingTimer = undefined;
    if (!core.customerId()) return;
    const typing = input.value.trim() !== '';
    if (!typing && !typingLive) return;
    typingLive = typing;
    typingSentAt = Date.now();
    // Whole characters, as the server counts them: never half an emoji.
    const draft = typing ? Array.from(input.value).slice(-MAX_DRAFT).join('') : undefined;
    core
      .request<null>('/widget/typing', { body: { typing, draft }, visitor: true })
      // A lost signal only delays the note the next one brings.
      .catch(() => undefined);
  };
  /** The visitor typed: their draft goes out within 1.5 s. */
  const typed = () => {
    if (typingTimer) return;
    typingTimer = setTimeout(sendTyping, Math.max(0, TYPING_EVERY_MS - (Date.now() - typingSentAt)));
  };
  /** The visitor sent their message, which ends their typing. */
  const typingSent = () => {
    clearTimeout(typingTimer);
    typingTimer = undefined;
    typingLive = false;
  };
  let agentTypingTimer: ReturnType<typeof setTimeout> | undefined;
  /** An agent's typing signal. */
  const agentTyping = (typing: boolean, name?: string | null) => {
    clearTimeout(agentTypingTimer);
    typingNote.hidden = !typing;
    if (!typing) return;
    typingNote.textContent = name ? t.typing.replace('{name}', name) : t.someoneTyping;
    agentTypingTimer = setTimeout(() => (typingNote.hidden = true), TYPING_SHOWN_MS);
  };

  let agentReadAt = 0;
  let visitorReadAt = 0;
  let newestOut: { id: string; at: string } | null = null;
  let readTimer: ReturnType<typeof setTimeout> | undefined;
  /** Puts "Seen" under the visitor's newest message an agent has read. */
  const showSeen = () => {
    log.querySelectorAll('.seen').forEach((n) => n.remove());
    const read = Array.from(log.querySelectorAll<HTMLElement>('.msg.in')).filter(
      (n) => Date.parse(n.getAttribute('data-at') || '') <= agentReadAt,
    );
    const last = read[read.length - 1];
    if (last) last.append(h('span', { class: 'seen' }, t.seen));
  };
  /** What Rapport says each side has read up to. */
  const readState = (state: ReadState | null) => {
    visitorReadAt = Math.max(visitorReadAt, Date.parse(state?.visitorReadAt || '') || 0);
    agentReadAt = Math.max(agentReadAt, Date.parse(state?.agentReadAt || '') || 0);
    showSeen();
  };
  /** Marks the newest agent message read, if the visitor can see it. */
  const markRead = () => {
    if (readTimer || !panelShown() || document.visibilityState !== 'visible') return;
    readTimer = setTimeout(() => {
      readTimer = undefined;
      const newest = newestOut;
      if (!newest || Date.parse(newest.at) <= visitorReadAt || !panelShown()) return;
      core
        .request<ReadState>('/widget/read', { body: { messageId: newest.id }, visitor: true })
        .then(readState)
        .catch((e) => core.emit('error', e));
    }, 300);
  };
  document.addEventListener('visibilitychange', markRead);

  /** An agent's message arrived: it ends their typing note, and is read if
   * the panel shows it. */
  const agentMessage = (m: Message) => {
    agentTyping(false);
    if (!newestOut || m.createdAt > newestOut.at) newestOut = { id: m.id, at: m.createdAt };
    markRead();
  };
  /** Another conversation is shown (a signed identity): nothing read yet. */
  const reset = () => {
    newestOut = null;
    agentReadAt = visitorReadAt = 0;
  };

  return { typingNote, typed, typingSent, agentTyping, readState, showSeen, markRead, agentMessage, reset };
}
