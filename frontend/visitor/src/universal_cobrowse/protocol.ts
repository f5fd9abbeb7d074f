// The co-browsing WebSocket's messages (notes/cobrowse-protocol.md, section A),
// as page.ts reads and writes them. Binary messages (the screen's JPEG
// frames) have no type here. Every coordinate is in CSS pixels of the shared
// browser's viewport, whatever the size of the frames or of the canvas.

export interface Viewport {
  width: number;
  height: number;
}

export type Role = 'host' | 'guest';

export interface Participant {
  id: string;
  name: string;
  role: Role;
}

/** The shared browser and the session, sent whole whenever any of it changes. */
export interface State {
  url: string;
  title: string;
  loading: boolean;
  canGoBack: boolean;
  canGoForward: boolean;
  /** Whose input the browser takes, or null for nobody's. */
  control: string | null;
  participants: Participant[];
  endsAt: string;
}

export type ServerMsg =
  | { type: 'welcome'; you: string; role: Role; name: string; viewport: Viewport }
  | ({ type: 'state' } & State)
  | { type: 'pointer'; id: string; x: number | null; y: number | null }
  | { type: 'notice'; code: string; message: string }
  | { type: 'ended'; reason: string; message: string }
  | { type: 'error'; code: string; message: string };

export type MouseButton = 'left' | 'middle' | 'right' | 'none';

/** Input to the shared browser: only its controller may send these. */
export type InputMsg =
  | {
      type: 'mouse';
      event: 'mousePressed' | 'mouseReleased' | 'mouseMoved';
      x: number;
      y: number;
      button: MouseButton;
      clickCount: number;
      modifiers: number;
    }
  | { type: 'wheel'; x: number; y: number; deltaX: number; deltaY: number }
  | { type: 'key'; event: 'keyDown' | 'keyUp'; key: string; code: string; keyCode: number; text?: string; modifiers: number }
  | { type: 'text'; text: string }
  | { type: 'navigate'; url: string }
  | { type: 'back' }
  | { type: 'forward' }
  | { type: 'reload' };

/** One's pointer over the screen, shown to the others; null when it left. */
export type PointerMsg = { type: 'pointer'; x: number | null; y: number | null };

/** What anyone may send, whoever is in control (control and end: the host only). */
export type OpenMsg = PointerMsg | { type: 'control'; to: string } | { type: 'end' };
