// The one element builder of every bundle. Server data and recorded pages'
// content (names, titles, URLs, messages) only ever go in as text nodes or
// attribute values, never as HTML.

/** What an element may be given as a child; `false`, null and undefined are skipped. */
export type Child = Node | string | null | undefined | false;

/** Builds an element; `on…` attributes become listeners, `true` an empty
 * attribute, and `false`, null or undefined leave the attribute out. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Record<string, unknown>,
  ...children: Child[]
): HTMLElementTagNameMap[K];
export function h(tag: string, attrs?: Record<string, unknown>, ...children: Child[]): HTMLElement;
export function h(tag: string, attrs: Record<string, unknown> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value == null) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value as EventListener);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child) el.append(child);
  return el;
}
