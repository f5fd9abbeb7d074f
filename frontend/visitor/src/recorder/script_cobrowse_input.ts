// Script co-browsing: the agent's input, played on the visitor's page while
// the agent has control (script_cobrowse.ts checks control first). Clicks
// come as a mouse makes them; typing and special keys reach only the page's
// own focused field, never one the recording leaves out or masks, and the
// page's own handlers see each as from a real keyboard first.

/** Where the agent's input may not go, as the recorder decides. */
export interface InputBounds {
  /** The element co-browsing draws in (the agent's clicks look through it). */
  host: string;
  /** Whether the recording leaves this element out (blocked, or Rapport's UI). */
  blocked(el: Element): boolean;
  /** Whether the element is private: the agent never types into it. */
  masked(el: Element): boolean;
}

/** Kinds of input one types text into (the others are clicked). */
const TEXT_INPUTS = ['text', 'search', 'email', 'url', 'tel', 'password', 'number'];
/** What Tab may move focus to (then filtered to what is focusable and shown). */
const FOCUSABLE = 'a[href],area[href],button,input,select,textarea,iframe,summary,[tabindex],[contenteditable]';
/** What a click focuses: the nearest focusable ancestor of the element hit. */
const CLICK_FOCUS = `${FOCUSABLE},label`;
/** Legacy key codes of the special keys, for pages that still read `keyCode`
 * (their `code` is their name). */
const KEY_CODES: Record<string, number> = {
  Backspace: 8,
  Tab: 9,
  Enter: 13,
  Escape: 27,
  PageUp: 33,
  PageDown: 34,
  End: 35,
  Home: 36,
  ArrowLeft: 37,
  ArrowUp: 38,
  ArrowRight: 39,
  ArrowDown: 40,
  Delete: 46,
};
/** What Enter activates when it is focused (other elements handle keydown). */
const ENTER_CLICKS = 'a[href],button,summary,input[type=submit],input[type=button],input[type=reset]';

type Field = HTMLInputElement | HTMLTextAreaElement;

/** The agent's clicks, typing and special keys, within `o`'s bounds. */
export function createAgentInput(o: InputBounds) {

  /** The page's element at a viewport point, looking through Rapport's own
   * overlay (the agent does not see it); null if the recording leaves it out. */
  const at = (x: number, y: number): Element | null => {
    const hit = document.elementsFromPoint(x, y).find((e) => !e.closest(o.host));
    return hit && !o.blocked(hit) ? hit : null;
  };
  const fire = (target: Element, type: string, x: number, y: number): boolean => {
    const init = { bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y, view: window, button: 0 };
    const pointerEvent = type.startsWith('pointer') && typeof PointerEvent === 'function';
    return target.dispatchEvent(pointerEvent ? new PointerEvent(type, { ...init, isPrimary: true, pointerType: 'mouse' }) : new MouseEvent(type, init));
  };
  /** A click as a mouse makes it: press (which focuses, unless the page prevents
   * it), release, click (whose default follows links, toggles boxes, submits). */
  const click = (x: number, y: number) => {
    const target = at(x, y);
    if (!target) return;
    fire(target, 'pointerdown', x, y);
    if (fire(target, 'mousedown', x, y)) {
      const closest = target.closest(CLICK_FOCUS);
      // A label focuses its control.
      const focusable = closest instanceof HTMLLabelElement ? closest.control : closest;
      if (focusable instanceof HTMLElement) {
        focusable.focus({ preventScroll: true });
        if (focusable.isContentEditable) caret(x, y);
      } else if (document.activeElement instanceof HTMLElement && !document.activeElement.closest(o.host)) {
        // A click on nothing focusable takes focus away, as a real one does.
        document.activeElement.blur();
      }
    }
    fire(target, 'pointerup', x, y);
    fire(target, 'mouseup', x, y);
    fire(target, 'click', x, y);
  };
  /** Puts the caret of an editable region where the agent clicked. */
  const caret = (x: number, y: number) => {
    const selection = getSelection();
    if (!selection) return;
    if (document.caretPositionFromPoint) {
      const position = document.caretPositionFromPoint(x, y);
      if (position) selection.collapse(position.offsetNode, position.offset);
    } else if (document.caretRangeFromPoint) {
      const range = document.caretRangeFromPoint(x, y);
      if (range) selection.collapse(range.startContainer, range.startOffset);
    }
  };

  /** The page's focused element (the body if none), if the agent may act on
   * it at all: not when the visitor is in Rapport's UI (the chat) or in
   * anything else the recording leaves out. */
  const focused = (): HTMLElement | null => {
    const el = document.activeElement || document.body;
    return el instanceof HTMLElement && !el.closest(o.host) && !o.blocked(el) ? el : null;
  };
  /** A text field one can type into now (not read-only, not disabled). */
  const field = (el: Element | null): Field | null => {
    if (el instanceof HTMLTextAreaElement || (el instanceof HTMLInputElement && TEXT_INPUTS.includes(el.type))) {
      return el.readOnly || el.disabled ? null : el;
    }
    return null;
  };
  /** Where typing goes: a text field or an editable region, unless the
   * recording masks it (for a region: also where its caret is). */
  const editable = (): HTMLElement | null => {
    const el = focused();
    if (!el || o.masked(el)) return null;
    if (field(el)) return el;
    if (!el.isContentEditable) return null;
    const selection = getSelection();
    const node = selection && selection.anchorNode;
    const caretAt = node && (node instanceof Element ? node : node.parentElement);
    return caretAt && el.contains(caretAt) && !o.masked(caretAt) ? el : null;
  };
  /** Replaces a field's selection (or `from`…`to`) with `text`, as typing does:
   * the native setter, so frameworks that wrap `value` see a change, then `input`. */
  const edit = (f: Field, text: string, inputType: string, from?: number, to?: number) => {
    const value = f.value;
    // Some kinds (email, number) have no selection: they are typed at the end.
    const start = from !== undefined ? from : f.selectionStart !== null ? f.selectionStart : value.length;
    const stop = to !== undefined ? to : f.selectionEnd !== null ? f.selectionEnd : value.length;
    if (f.maxLength >= 0) text = text.slice(0, Math.max(0, f.maxLength - value.length + (stop - start)));
    const proto = f instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, 'value');
    if (setter && setter.set) setter.set.call(f, value.slice(0, start) + text + value.slice(stop));
    else f.value = value.slice(0, start) + text + value.slice(stop);
    moveCaret(f, start + text.length);
    f.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, inputType, data: text || null }));
  };
  const moveCaret = (f: Field, at: number) => {
    try {
      f.setSelectionRange(at, at);
    } catch {
      // Kinds without a selection (email, number).
    }
  };
  const type = (text: string) => {
    const el = editable();
    if (!el) return;
    const f = field(el);
    if (f) edit(f, f instanceof HTMLInputElement ? text.replace(/[\r\n]+/g, '') : text, 'insertText');
    else document.execCommand('insertText', false, text);
  };

  /** A special key: the page's keydown handlers first (they may take it), then
   * what the browser would do. A masked field takes no key but Tab. */
  const key = (name: string) => {
    const el = focused();
    if (!el || (o.masked(el) && name !== 'Tab')) return;
    const keyCode = KEY_CODES[name] || 0;
    const init = { key: name, code: name, keyCode, which: keyCode, bubbles: true, cancelable: true, composed: true };
    if (el.dispatchEvent(new KeyboardEvent('keydown', init))) perform(name, el);
    el.dispatchEvent(new KeyboardEvent('keyup', init));
  };
  const perform = (name: string, el: HTMLElement) => {
    if (name === 'Tab') return tab(el);
    const target = editable();
    const f = field(target);
    if (f) {
      const start = f.selectionStart;
      const stop = f.selectionEnd;
      const length = f.value.length;
      if (name === 'Enter') {
        if (f instanceof HTMLTextAreaElement) edit(f, '\n', 'insertLineBreak');
        else if (f.form) submit(f.form);
      } else if (start === null || stop === null) {
        // No caret to move (email, number): only deleting from the end works.
        if (name === 'Backspace' && length) edit(f, '', 'deleteContentBackward', length - 1, length);
      } else if (name === 'Backspace' || name === 'Delete') {
        const back = name === 'Backspace';
        const from = start === stop && back ? Math.max(0, start - 1) : start;
        const to = start === stop && !back ? Math.min(length, stop + 1) : stop;
        if (from !== to) edit(f, '', back ? 'deleteContentBackward' : 'deleteContentForward', from, to);
      } else if (name === 'ArrowLeft') moveCaret(f, start === stop ? Math.max(0, start - 1) : start);
      else if (name === 'ArrowRight') moveCaret(f, start === stop ? Math.min(length, stop + 1) : stop);
      else if (name === 'Home') moveCaret(f, 0);
      else if (name === 'End') moveCaret(f, length);
      return;
    }
    if (target) {
      // An editable region: the browser's own editing commands fire `input`.
      const command: Record<string, string> = { Backspace: 'delete', Delete: 'forwardDelete', Enter: 'insertParagraph' };
      const move: Record<string, [string, string]> = {
        ArrowLeft: ['backward', 'character'],
        ArrowRight: ['forward', 'character'],
        ArrowUp: ['backward', 'line'],
        ArrowDown: ['forward', 'line'],
        Home: ['backward', 'lineboundary'],
        End: ['forward', 'lineboundary'],
      };
      const selection = getSelection();
      if (command[name]) document.execCommand(command[name], false);
      else if (move[name] && selection) selection.modify('move', move[name][0], move[name][1]);
      return;
    }
    if (name === 'Enter' && el.matches(ENTER_CLICKS)) return el.click();
    const page = innerHeight * 0.875;
    const height = document.documentElement.scrollHeight;
    const scroll: Record<string, [number, number]> = {
      ArrowUp: [0, -40],
      ArrowDown: [0, 40],
      ArrowLeft: [-40, 0],
      ArrowRight: [40, 0],
      PageUp: [0, -page],
      PageDown: [0, page],
      Home: [0, -height],
      End: [0, height],
    };
    if (scroll[name] && !field(el) && !el.isContentEditable) scrollBy(scroll[name][0], scroll[name][1]);
  };
  /** Enter in a field submits its form as a browser does: through the form's
   * default button when it has one (its click handlers run), else directly. */
  const submit = (form: HTMLFormElement) => {
    const button = Array.from(form.elements).find((e) => (e as HTMLButtonElement).type === 'submit');
    if (button instanceof HTMLElement) button.click();
    else if (typeof form.requestSubmit === 'function') form.requestSubmit();
  };
  /** Moves focus on to the next element Tab would reach (document order). */
  const tab = (from: Element) => {
    const list = Array.from(document.querySelectorAll<HTMLElement>(FOCUSABLE)).filter(
      // An editing host is tabbable though its tabIndex says -1 in Chromium.
      (e) =>
        (e.tabIndex >= 0 || (e.isContentEditable && !e.hasAttribute('tabindex'))) &&
        !e.matches(':disabled') &&
        e.getClientRects().length > 0 &&
        !o.blocked(e),
    );
    if (list.length) list[(list.indexOf(from as HTMLElement) + 1) % list.length].focus();
  };

  return { click, type, key };
}
