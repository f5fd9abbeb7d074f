// A tiny element builder for the replay bundle: text children are text nodes,
// never HTML (recorded text, URLs and error messages come from visitors' pages).

type Child = Node | string | null | undefined | false;

/** Builds an element; `on…` attributes become listeners, the rest attributes. */
export function el(tag: string, attrs: Record<string, unknown> = {}, ...children: Child[]): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value == null) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value as EventListener);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}
