// Script co-browsing's stylesheet on the visitor's page (see script_cobrowse.ts).

// As the chat's stylesheet (chat/styles.ts): `:host` resets with !important so
// page CSS cannot move or hide it. The pointer and the ring take no pointer
// events, so the visitor's own clicks go through them. Magenta #be185d under
// white text is 6.0:1; blue #1d4ed8 on white 6.7:1.
export const CSS = `
:host {
  all: initial !important;
  display: block !important;
  position: fixed !important;
  inset: 0 auto auto 0 !important;
  width: 0 !important;
  height: 0 !important;
  z-index: 2147483001 !important;
  transform: none !important;
  filter: none !important;
  contain: none !important;
  visibility: visible !important;
  opacity: 1 !important;
}
* { box-sizing: border-box; }
.ui { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Hiragino Sans", sans-serif; color: #111827; text-align: left; direction: ltr; }
[hidden] { display: none !important; }
.box {
  position: fixed;
  top: 12px;
  left: 50%;
  transform: translateX(-50%);
  max-width: calc(100vw - 24px);
  background: #fff;
  border: 1px solid #d1d5db;
  border-radius: 12px;
  box-shadow: 0 8px 30px rgba(0, 0, 0, .25);
}
.dialog { width: 420px; padding: 16px 18px; }
.dialog p { margin: 0 0 12px; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; justify-content: flex-end; }
.bar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 10px; width: max-content; padding: 8px 10px 8px 14px; font-size: 14px; }
.bar p { margin: 0; font-weight: 600; }
button {
  font: inherit;
  font-weight: 650;
  margin: 0;
  padding: 6px 14px;
  border: 1px solid #1d4ed8;
  border-radius: 8px;
  background: #fff;
  color: #1d4ed8;
  cursor: pointer;
}
button:hover { background: #eff6ff; }
.primary { background: #1d4ed8; color: #fff; }
.primary:hover { background: #1e3a8a; }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.dialog:focus { outline: none; }
.rapport-cobrowse-pointer { position: fixed; left: -2px; top: -2px; pointer-events: none; transition: transform 60ms linear; }
.rapport-cobrowse-pointer svg { display: block; width: 22px; height: 22px; fill: #be185d; stroke: #fff; stroke-width: 1.5; }
.rapport-cobrowse-pointer span {
  display: block;
  margin: -2px 0 0 16px;
  padding: 1px 8px;
  border-radius: 10px;
  background: #be185d;
  color: #fff;
  font-size: 12px;
  font-weight: 600;
  white-space: nowrap;
}
.rapport-cobrowse-highlight {
  position: fixed;
  width: 48px;
  height: 48px;
  margin: -24px 0 0 -24px;
  border: 4px solid #be185d;
  border-radius: 50%;
  pointer-events: none;
  animation: ring 1.2s ease-out forwards;
}
@keyframes ring { from { transform: scale(.3); } 60% { opacity: 1; } to { transform: scale(1.5); opacity: 0; } }
@media (prefers-reduced-motion: reduce) {
  .rapport-cobrowse-pointer { transition: none; }
  .rapport-cobrowse-highlight { animation: none; }
}
`;
