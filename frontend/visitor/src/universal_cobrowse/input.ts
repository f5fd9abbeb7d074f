// Turns what the user does on the screen canvas into co-browsing messages.
//
// Everyone's pointer position is sent (≤ 30/s), and null when it leaves the
// canvas, so the others see where one points. Only while one holds control do
// mouse buttons, moves (≤ 30/s), the wheel, keys and pastes go to the shared
// browser, and only then are the page's own reactions to them prevented: without
// control the canvas behaves like an image (the page scrolls, Tab moves on).
// Coordinates are mapped from the canvas's client rect to viewport CSS pixels.

import type { InputMsg, MouseButton, PointerMsg, Viewport } from './protocol';

/** Tab within this long after Escape moves focus off the shared screen. */
const ESCAPE_WINDOW_MS = 1000;
const PER_SECOND = 30;
/** Pixels per line for wheels that scroll by lines (Firefox with a mouse). */
const LINE_HEIGHT = 16;
/** Presses this close in time and place make a double (triple…) click, as on most platforms. */
const MULTI_CLICK_MS = 500;
const MULTI_CLICK_PX = 4;

/** PointerEvent.button → the protocol's name; back and forward have none and are not sent. */
const BUTTONS: Record<number, MouseButton> = { 0: 'left', 1: 'middle', 2: 'right' };

/** The CDP modifier bits: Alt 1, Ctrl 2, Meta 4, Shift 8. */
function modifiers(e: MouseEvent | KeyboardEvent): number {
  return (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
}

/** The button held during a move (a drag), from MouseEvent.buttons' bits. */
function heldButton(buttons: number): MouseButton {
  if (buttons & 1) return 'left';
  if (buttons & 2) return 'right';
  if (buttons & 4) return 'middle';
  return 'none';
}

/** The browser's own paste shortcuts: left to the browser, whose paste event sends the text. */
function pasteShortcut(e: KeyboardEvent): boolean {
  const v = e.key.toLowerCase() === 'v' || e.code === 'KeyV';
  return (v && (e.ctrlKey || e.metaKey) && !e.altKey) || (e.key === 'Insert' && e.shiftKey);
}

/** At most one value per interval, always the newest; the last one is delayed,
 * never dropped, so the final position (or the pointer's leaving) arrives. */
class Throttle<T> {
  private last = -Infinity;
  private timer = 0;
  private pending: { value: T } | null = null;

  constructor(
    private readonly interval: number,
    private readonly emit: (value: T) => void,
  ) {}

  push(value: T): void {
    this.pending = { value };
    if (this.timer) return;
    const wait = this.last + this.interval - performance.now();
    if (wait <= 0) this.flush();
    else this.timer = window.setTimeout(() => this.flush(), wait);
  }

  /** Sends the pending value now: before a press, so the move comes first. */
  flush(): void {
    window.clearTimeout(this.timer);
    this.timer = 0;
    const pending = this.pending;
    if (!pending) return;
    this.pending = null;
    this.last = performance.now();
    this.emit(pending.value);
  }

  cancel(): void {
    window.clearTimeout(this.timer);
    this.timer = 0;
    this.pending = null;
  }
}

export interface InputSink {
  /** The viewport, whose CSS pixels the coordinates are in. */
  viewport(): Viewport;
  /** Sends one's pointer position (open to everyone). */
  pointer(msg: PointerMsg): void;
  /** Sends input to the shared browser (dropped when one does not hold control). */
  input(msg: InputMsg): void;
}

interface Press {
  pointerId: number;
  button: MouseButton;
  clickCount: number;
  x: number;
  y: number;
}

export class InputForwarder {
  private control = false;
  private readonly pointerMoves: Throttle<PointerMsg>;
  private readonly mouseMoves: Throttle<InputMsg>;
  private press: Press | null = null;
  /** The last press, for counting multi-clicks. */
  private lastPress = { at: -Infinity, x: 0, y: 0, button: 'none' as MouseButton, count: 0 };
  /** Keys sent down and not yet up, by code: released if the canvas loses focus. */
  private readonly held = new Map<string, Extract<InputMsg, { type: 'key' }>>();

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private readonly sink: InputSink,
  ) {
    this.pointerMoves = new Throttle(1000 / PER_SECOND, (msg) => sink.pointer(msg));
    this.mouseMoves = new Throttle(1000 / PER_SECOND, (msg) => sink.input(msg));
    canvas.addEventListener('pointermove', this.onPointerMove);
    canvas.addEventListener('pointerdown', this.onPointerDown);
    canvas.addEventListener('pointerup', this.onPointerUp);
    canvas.addEventListener('pointercancel', this.onPointerUp);
    canvas.addEventListener('pointerleave', this.onPointerLeave);
    // Not passive: in control, the wheel scrolls the shared page, not this one.
    canvas.addEventListener('wheel', this.onWheel, { passive: false });
    canvas.addEventListener('keydown', this.onKey);
    canvas.addEventListener('keyup', this.onKey);
    canvas.addEventListener('blur', this.releaseKeys);
    canvas.addEventListener('contextmenu', this.onContextMenu);
    // A paste on a canvas (not editable) is dispatched to the document.
    document.addEventListener('paste', this.onPaste);
  }

  /** Whether one holds control; losing it forgets what was pending or held. */
  setControl(on: boolean): void {
    if (on === this.control) return;
    this.control = on;
    this.canvas.classList.toggle('cobrowse-screen--control', on);
    if (!on) {
      this.mouseMoves.cancel();
      this.press = null;
      this.held.clear();
    }
  }

  /** Stops everything: the session is over or the element gone. */
  detach(): void {
    this.setControl(false);
    this.pointerMoves.cancel();
    const canvas = this.canvas;
    canvas.removeEventListener('pointermove', this.onPointerMove);
    canvas.removeEventListener('pointerdown', this.onPointerDown);
    canvas.removeEventListener('pointerup', this.onPointerUp);
    canvas.removeEventListener('pointercancel', this.onPointerUp);
    canvas.removeEventListener('pointerleave', this.onPointerLeave);
    canvas.removeEventListener('wheel', this.onWheel);
    canvas.removeEventListener('keydown', this.onKey);
    canvas.removeEventListener('keyup', this.onKey);
    canvas.removeEventListener('blur', this.releaseKeys);
    canvas.removeEventListener('contextmenu', this.onContextMenu);
    document.removeEventListener('paste', this.onPaste);
  }

  /** A point of the canvas in viewport CSS pixels, kept inside the viewport
   * (a drag captured outside the canvas still reports its edge). */
  private at(e: MouseEvent): { x: number; y: number } | null {
    const rect = this.canvas.getBoundingClientRect();
    if (!rect.width || !rect.height) return null;
    const { width, height } = this.sink.viewport();
    const scale = (offset: number, size: number, to: number) => Math.round(Math.min(1, Math.max(0, offset / size)) * to);
    return { x: scale(e.clientX - rect.left, rect.width, width), y: scale(e.clientY - rect.top, rect.height, height) };
  }

  private readonly onPointerMove = (e: PointerEvent) => {
    const at = this.at(e);
    if (!at) return;
    this.pointerMoves.push({ type: 'pointer', ...at });
    if (!this.control) return;
    if (this.press?.pointerId === e.pointerId) Object.assign(this.press, at);
    this.mouseMoves.push({ type: 'mouse', event: 'mouseMoved', ...at, button: heldButton(e.buttons), clickCount: 0, modifiers: modifiers(e) });
  };

  private readonly onPointerLeave = () => this.pointerMoves.push({ type: 'pointer', x: null, y: null });

  private readonly onPointerDown = (e: PointerEvent) => {
    const button = BUTTONS[e.button];
    // One press at a time: a second finger is not a second mouse.
    if (!this.control || !button || !e.isPrimary || this.press) return;
    const at = this.at(e);
    if (!at) return;
    // No text selection or dragging of the canvas; focus, so keys follow the click.
    e.preventDefault();
    this.canvas.focus({ preventScroll: true });
    // The release arrives even when it happens outside the canvas.
    this.canvas.setPointerCapture(e.pointerId);
    this.mouseMoves.flush();
    const clickCount = this.clickCount(e, button);
    this.press = { pointerId: e.pointerId, button, clickCount, ...at };
    this.sink.input({ type: 'mouse', event: 'mousePressed', ...at, button, clickCount, modifiers: modifiers(e) });
  };

  /** pointerup, and pointercancel (the browser took over a touch): both release the button. */
  private readonly onPointerUp = (e: PointerEvent) => {
    const press = this.press;
    if (!press || press.pointerId !== e.pointerId) return;
    this.press = null;
    this.mouseMoves.flush();
    // A cancelled pointer has no reliable position: release where it last was.
    const at = e.type === 'pointerup' ? this.at(e) || press : press;
    const { button, clickCount } = press;
    this.sink.input({ type: 'mouse', event: 'mouseReleased', x: at.x, y: at.y, button, clickCount, modifiers: modifiers(e) });
  };

  /** The click count. Pointer events carry none (pointerdown's UIEvent.detail
   * is 0, as the Pointer Events spec says, in Chromium too), and the mouse
   * events that do are suppressed by the pointerdown's preventDefault: so
   * presses of the same button close in time and place are counted here. */
  private clickCount(e: PointerEvent, button: MouseButton): number {
    const last = this.lastPress;
    const again =
      button === last.button &&
      e.timeStamp - last.at < MULTI_CLICK_MS &&
      Math.abs(e.clientX - last.x) <= MULTI_CLICK_PX &&
      Math.abs(e.clientY - last.y) <= MULTI_CLICK_PX;
    const count = again ? last.count + 1 : 1;
    this.lastPress = { at: e.timeStamp, x: e.clientX, y: e.clientY, button, count };
    return count;
  }

  private readonly onWheel = (e: WheelEvent) => {
    if (!this.control) return;
    const at = this.at(e);
    if (!at) return;
    e.preventDefault();
    this.mouseMoves.flush();
    const unit = e.deltaMode === WheelEvent.DOM_DELTA_LINE ? LINE_HEIGHT : e.deltaMode === WheelEvent.DOM_DELTA_PAGE ? this.sink.viewport().height : 1;
    this.sink.input({ type: 'wheel', ...at, deltaX: e.deltaX * unit, deltaY: e.deltaY * unit });
  };

  /** When Escape was last pressed, for the keyboard's way out (Escape, then Tab). */
  private escapedAt = 0;

  private readonly onKey = (e: KeyboardEvent) => {
    // Without control the browser keeps every key, Tab included.
    if (!this.control) return;
    // A dead key or an IME at work: what it produces comes as a later key.
    if (e.isComposing || e.key === 'Dead' || e.key === 'Process') return;
    if (pasteShortcut(e)) return;
    // With control every key goes to the shared page, Tab included, so the
    // keyboard needs a way out: Tab right after Escape leaves the screen (the
    // Escape itself still reaches the page, which may close a dialog with it).
    if (e.key === 'Tab' && e.type === 'keydown' && Date.now() - this.escapedAt < ESCAPE_WINDOW_MS) return;
    if (e.key === 'Escape' && e.type === 'keydown') this.escapedAt = Date.now();
    e.preventDefault();
    // AltGr (Ctrl+Alt on Windows) types characters: not a shortcut.
    const altGraph = e.getModifierState('AltGraph');
    const bits = altGraph ? modifiers(e) & ~3 : modifiers(e);
    const base = { type: 'key' as const, key: e.key, code: e.code, keyCode: e.keyCode, modifiers: bits };
    if (e.type === 'keyup') {
      this.held.delete(e.code);
      this.sink.input({ ...base, event: 'keyUp' });
      return;
    }
    const msg: Extract<InputMsg, { type: 'key' }> = { ...base, event: 'keyDown' };
    // Text for printable keys (one character, not a Ctrl or Meta shortcut) and Enter.
    if (e.key === 'Enter') msg.text = '\r';
    else if ([...e.key].length === 1 && (altGraph || !(e.ctrlKey || e.metaKey))) msg.text = e.key;
    this.held.set(e.code, msg);
    this.sink.input(msg);
  };

  /** Focus left the canvas with keys down: their keyup never comes here, so it is sent now. */
  private readonly releaseKeys = () => {
    for (const down of this.held.values()) {
      this.sink.input({ type: 'key', event: 'keyUp', key: down.key, code: down.code, keyCode: down.keyCode, modifiers: 0 });
    }
    this.held.clear();
  };

  private readonly onContextMenu = (e: Event) => {
    // In control, a right click is the shared page's: no menu of this one over it.
    if (this.control) e.preventDefault();
  };

  private readonly onPaste = (e: ClipboardEvent) => {
    if (!this.control || document.activeElement !== this.canvas) return;
    e.preventDefault();
    const text = e.clipboardData?.getData('text/plain');
    if (text) this.sink.input({ type: 'text', text });
  };
}
