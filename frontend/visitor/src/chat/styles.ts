// The chat UI's stylesheet, adopted by its shadow root as a constructed
// CSSStyleSheet: no <style> element and no style attribute, so a host page's
// Content-Security-Policy without 'unsafe-inline' still lets it render.
//
// `:host` resets everything with !important: in the cascade, important rules of
// the shadow tree beat important rules of the page, so hostile global CSS (e.g.
// `* { all: unset !important }`) cannot move, hide or restyle the widget, and
// `all: initial` stops the page's inherited fonts and sizes at the boundary.
// Colours meet WCAG AA contrast (accent #1d4ed8 on white is 6.7:1).

export const css = `
:host {
  all: initial !important;
  display: block !important;
  position: fixed !important;
  inset: auto 0 0 auto !important;
  width: 0 !important;
  height: 0 !important;
  z-index: 2147483000 !important;
  transform: none !important;
  filter: none !important;
  contain: none !important;
  visibility: visible !important;
  opacity: 1 !important;
}
* { box-sizing: border-box; }
.root {
  --accent: #1d4ed8;
  --accent-dark: #1e3a8a;
  --text: #111827;
  --muted: #4b5563;
  --line: #d1d5db;
  --bg: #ffffff;
  --soft: #f3f4f6;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Hiragino Sans", sans-serif;
  color: var(--text);
  text-align: left;
  direction: ltr;
}
[hidden] { display: none !important; }
button, textarea, input {
  font: inherit;
  color: inherit;
  margin: 0;
}
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.launcher {
  position: fixed;
  right: calc(20px + env(safe-area-inset-right));
  bottom: calc(20px + env(safe-area-inset-bottom));
  width: 56px;
  height: 56px;
  border: 0;
  border-radius: 50%;
  background: var(--accent);
  color: #fff;
  cursor: pointer;
  display: grid;
  place-items: center;
  box-shadow: 0 6px 20px rgba(0, 0, 0, .25);
  animation: appear .2s ease-out;
}
.launcher:hover { background: var(--accent-dark); }
.launcher svg { width: 28px; height: 28px; fill: currentColor; }
.badge {
  position: absolute;
  top: -4px;
  right: -4px;
  min-width: 22px;
  height: 22px;
  padding: 0 6px;
  border-radius: 11px;
  background: #b91c1c;
  color: #fff;
  font-size: 12px;
  font-weight: 700;
  line-height: 22px;
  text-align: center;
}
.panel {
  position: fixed;
  right: calc(20px + env(safe-area-inset-right));
  bottom: calc(88px + env(safe-area-inset-bottom));
  width: 370px;
  height: min(600px, calc(100vh - 120px));
  display: flex;
  flex-direction: column;
  background: var(--bg);
  border: 1px solid var(--line);
  border-radius: 14px;
  box-shadow: 0 12px 40px rgba(0, 0, 0, .25);
  overflow: hidden;
  animation: appear .15s ease-out;
}
header {
  display: flex;
  align-items: center;
  gap: 8px;
  padding: 14px 12px 14px 18px;
  background: var(--accent);
  color: #fff;
}
h2 { flex: 1; margin: 0; font-size: 17px; font-weight: 650; }
.close, .call {
  flex: none;
  width: 36px;
  height: 36px;
  border: 0;
  border-radius: 8px;
  background: transparent;
  color: #fff;
  cursor: pointer;
}
.close { font-size: 24px; line-height: 1; }
/* The camera, stroked like the paper clip. */
.call { padding: 0; display: grid; place-items: center; }
.close:hover, .call:hover { background: rgba(255, 255, 255, .15); }
.close:focus-visible, .call:focus-visible { outline-color: #fff; }
.status { margin: 0; padding: 8px 18px; background: #fef3c7; color: #78350f; font-size: 13px; }
.log {
  flex: 1;
  overflow-y: auto;
  padding: 16px;
  display: flex;
  flex-direction: column;
  gap: 8px;
  overscroll-behavior: contain;
}
.note { margin: 0; color: var(--muted); font-size: 14px; }
.msg {
  max-width: 85%;
  padding: 8px 12px;
  border-radius: 14px;
  white-space: pre-wrap;
  overflow-wrap: anywhere;
  background: var(--soft);
  align-self: flex-start;
}
.msg.in { align-self: flex-end; background: var(--accent); color: #fff; }
.msg.in a { color: #fff; }
.msg a { color: var(--accent); font-weight: 600; }
.msg .meta { display: block; font-size: 12px; opacity: .85; margin-top: 2px; }
.msg .seen { display: block; font-size: 12px; opacity: .85; text-align: right; }
.transcript { padding: 4px 18px 10px; font-size: 13px; }
.transcript .link { padding: 0; border: 0; background: none; color: var(--accent); text-decoration: underline; cursor: pointer; font: inherit; }
.transcript .fields { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin-top: 6px; }
.transcript .fields label { width: 100%; }
.transcript .fields input { flex: 1; min-width: 0; font-size: 16px; padding: 6px 8px; border: 1px solid var(--line, #d1d5db); border-radius: 8px; }
.transcript p { margin: 4px 0 0; }
.typing { margin: 0; padding: 2px 18px 6px; color: var(--muted); font-size: 13px; font-style: italic; }
.msg.failed { background: #fee2e2; color: #7f1d1d; }
.msg.failed a, .msg.failed button { color: #7f1d1d; }
.retry {
  margin-left: 6px;
  padding: 0;
  border: 0;
  background: none;
  text-decoration: underline;
  cursor: pointer;
  font-size: 12px;
  font-weight: 700;
}
.card { display: flex; flex-direction: column; gap: 8px; }
.card .button {
  display: inline-block;
  align-self: flex-start;
  padding: 6px 12px;
  border-radius: 8px;
  background: var(--accent);
  color: #fff;
  text-decoration: none;
}
/* The call offer's button looks like a card's link. */
.card button.button { border: 0; font: inherit; font-weight: 600; cursor: pointer; }
form { margin: 0; }
.composer {
  display: flex;
  gap: 8px;
  align-items: flex-end;
  padding: 10px;
  border-top: 1px solid var(--line);
}
textarea, input {
  width: 100%;
  padding: 9px 11px;
  border: 1px solid #6b7280;
  border-radius: 10px;
  background: #fff;
  font-size: 16px;
}
textarea { flex: 1; resize: none; min-height: 42px; max-height: 140px; field-sizing: content; }
.offline textarea { min-height: 90px; }
.send {
  padding: 10px 16px;
  border: 0;
  border-radius: 10px;
  background: var(--accent);
  color: #fff;
  font-weight: 650;
  cursor: pointer;
}
.send:hover { background: var(--accent-dark); }
/* The paper clip: a 42 px square like the text box's height, an easy target on a
   phone; grey #4b5563 on white is 7.6:1. */
.attach {
  flex: none;
  width: 42px;
  height: 42px;
  padding: 0;
  border: 1px solid var(--line);
  border-radius: 10px;
  background: var(--bg);
  color: var(--muted);
  cursor: pointer;
  display: grid;
  place-items: center;
}
.attach:hover { background: var(--soft); color: var(--text); }
.attach svg, .call svg {
  width: 22px;
  height: 22px;
  fill: none;
  stroke: currentColor;
  stroke-width: 2;
  stroke-linecap: round;
  stroke-linejoin: round;
}
.send:disabled, .call:disabled { opacity: .6; cursor: default; }
.offline { padding: 16px; display: flex; flex-direction: column; gap: 10px; overflow-y: auto; }
.offline h3 { margin: 0; font-size: 16px; }
.offline p { margin: 0; color: var(--muted); }
label { display: flex; flex-direction: column; gap: 4px; font-size: 14px; font-weight: 600; }
/* The rating question: five stars (radio buttons, so arrow keys move between
   them), filled up to the one chosen; amber #b45309 on white is 5:1. */
.csat { padding: 12px 16px; display: flex; flex-direction: column; gap: 8px; border-top: 1px solid var(--line); }
.csat h3 { margin: 0; font-size: 15px; }
.csat p { margin: 0; color: var(--muted); }
.stars { display: flex; gap: 4px; }
.star { flex-direction: row; font-size: 28px; line-height: 1; color: #9ca3af; cursor: pointer; padding: 2px; border-radius: 6px; }
.star.on { color: #b45309; }
.star:focus-within { outline: 2px solid var(--accent); outline-offset: 1px; }
.csat textarea { min-height: 60px; }
.sr {
  position: absolute;
  width: 1px;
  height: 1px;
  overflow: hidden;
  clip: rect(0 0 0 0);
  white-space: nowrap;
}
@keyframes appear { from { opacity: 0; transform: translateY(8px); } }
@media (prefers-reduced-motion: reduce) { .launcher, .panel { animation: none; } }
@media (max-width: 480px) {
  .panel {
    inset: 0;
    width: 100%;
    height: 100%;
    border: 0;
    border-radius: 0;
    padding: env(safe-area-inset-top) env(safe-area-inset-right) env(safe-area-inset-bottom) env(safe-area-inset-left);
  }
  .open .launcher { display: none; }
}
`;
