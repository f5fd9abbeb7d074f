// A tiny element builder for the co-browsing client. Server data (names, titles,
// URLs, messages) only ever goes in as text, never as HTML.

export type Child = Node | string | null | undefined | false;

/** Builds an element; `on…` attributes become listeners, `true` an empty
 * attribute, and `false`, null or undefined leave the attribute out. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, unknown> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value == null) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value as EventListener);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child) el.append(child);
  return el;
}
