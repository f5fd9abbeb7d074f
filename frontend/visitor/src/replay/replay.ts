// replay.js (with replay.css): the dashboard's session replay and live view,
// built next to the visitor script but loaded only by Rapport's own pages. On
// load it mounts on every `[data-rapport-replay]` (a recorded session, see
// player.ts) and `[data-rapport-live]` (live view, see live.ts) element, and
// `window.RapportReplay.mountAll()` does it again after a client-side
// navigation; an element is mounted once.

import './replay.css';
import { mountLive } from './live';
import { mountReplay } from './player';

declare global {
  interface Window {
    RapportReplay?: { mountAll(): void };
  }
}

const MOUNTED = 'data-rapport-mounted';

function mountAll(): void {
  document.querySelectorAll<HTMLElement>(`[data-rapport-replay]:not([${MOUNTED}])`).forEach((root) => {
    root.setAttribute(MOUNTED, '');
    void mountReplay(root);
  });
  document.querySelectorAll<HTMLElement>(`[data-rapport-live]:not([${MOUNTED}])`).forEach((root) => {
    root.setAttribute(MOUNTED, '');
    try {
      mountLive(root);
    } catch (e) {
      console.error('Rapport live view: could not start', e);
    }
  });
}

window.RapportReplay = { mountAll };
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mountAll);
else mountAll();
