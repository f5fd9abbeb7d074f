// The shared browser's screen: a canvas that shows the newest JPEG frame, and
// the other participants' pointers drawn over it.
//
// The canvas's bitmap is the viewport's size in CSS pixels, whatever the frames'
// pixel size (device scale): a frame is drawn stretched to the whole canvas, and
// the canvas keeps the viewport's aspect ratio as CSS scales it to the width.
// Frames can arrive faster than they decode: at most one decodes at a time, and
// of those arriving meanwhile only the newest waits, the others are dropped.
// Pointers are placed in percent of the stage, so they stay put as it resizes.

import { h } from '../dom';
import type { Viewport } from './protocol';

/** Label colours for pointers, each dark enough for white text. */
const COLOURS = ['#1d4ed8', '#b91c1c', '#047857', '#7c3aed', '#c2410c', '#0e7490', '#be185d'];

/** The same colour for a participant on every screen and after reconnecting. */
function colour(id: string): string {
  let hash = 0;
  for (let i = 0; i < id.length; i++) hash = (hash * 31 + id.charCodeAt(i)) | 0;
  return COLOURS[Math.abs(hash) % COLOURS.length];
}

export class Screen {
  /** The positioning box: exactly the canvas, with the pointers over it. */
  readonly stage: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  private readonly context: CanvasRenderingContext2D | null;
  private decoding = false;
  private waiting: ArrayBuffer | null = null;
  private closed = false;
  private readonly pointers = new Map<string, HTMLElement>();

  constructor(describedBy: string) {
    this.canvas = h('canvas', {
      class: 'cobrowse-screen',
      role: 'application',
      'aria-label': 'Shared browser',
      'aria-describedby': describedBy,
      tabindex: '0',
    });
    this.context = this.canvas.getContext('2d', { alpha: false });
    this.stage = h('div', { class: 'cobrowse-stage' }, this.canvas);
  }

  /** The viewport's size in CSS pixels (the canvas bitmap's size). */
  get viewport(): Viewport {
    return { width: this.canvas.width, height: this.canvas.height };
  }

  set viewport(size: Viewport) {
    // Resizing clears the canvas: only when the size really changes (a reconnect
    // usually welcomes with the same viewport, and the last frame stays).
    if (size.width > 0 && size.width !== this.canvas.width) this.canvas.width = size.width;
    if (size.height > 0 && size.height !== this.canvas.height) this.canvas.height = size.height;
  }

  set loading(on: boolean) {
    this.stage.setAttribute('aria-busy', String(on));
  }

  /** Shows a frame, once the ones before it are decoded (see the top). */
  frame(jpeg: ArrayBuffer): void {
    if (this.closed) return;
    if (this.decoding) this.waiting = jpeg;
    else void this.decode(jpeg);
  }

  private async decode(first: ArrayBuffer): Promise<void> {
    this.decoding = true;
    let jpeg: ArrayBuffer | null = first;
    while (jpeg && !this.closed) {
      this.waiting = null;
      try {
        const bitmap = await createImageBitmap(new Blob([jpeg], { type: 'image/jpeg' }));
        if (!this.closed) this.context?.drawImage(bitmap, 0, 0, this.canvas.width, this.canvas.height);
        bitmap.close();
      } catch {
        // A frame that does not decode: the next one replaces it anyway.
      }
      jpeg = this.waiting;
    }
    this.decoding = false;
  }

  /** Moves a participant's pointer, or removes it (x or y null). */
  pointer(id: string, name: string, x: number | null, y: number | null): void {
    let el = this.pointers.get(id);
    if (x === null || y === null) {
      el?.remove();
      this.pointers.delete(id);
      return;
    }
    if (!el) {
      el = h('div', { class: 'cobrowse-pointer' }, h('span', { class: 'cobrowse-pointer-name' }, name));
      el.style.setProperty('--cobrowse-pointer-colour', colour(id));
      this.pointers.set(id, el);
      this.stage.append(el);
    }
    const percent = (value: number, of: number) => `${Math.min(100, Math.max(0, (value / of) * 100))}%`;
    el.style.left = percent(x, this.canvas.width);
    el.style.top = percent(y, this.canvas.height);
  }

  /** Renames the pointers after a roster change and drops those of people who left. */
  names(byId: ReadonlyMap<string, string>): void {
    for (const [id, el] of this.pointers) {
      const name = byId.get(id);
      if (name === undefined) this.pointer(id, '', null, null);
      else el.firstElementChild!.textContent = name;
    }
  }

  clearPointers(): void {
    for (const id of [...this.pointers.keys()]) this.pointer(id, '', null, null);
  }

  /** Stops drawing: the session is over or the element gone. */
  close(): void {
    this.closed = true;
    this.waiting = null;
    this.clearPointers();
  }
}
