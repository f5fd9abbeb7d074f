// Small helpers shared by the loader's modules (bundled into loader.js only).

/** Storage that never throws: blocked storage (privacy modes, sandboxed frames)
 * degrades to this page's memory. */
const memory: Record<string, string> = {};
export function load(key: string, session?: boolean): string | null {
  try {
    return (session ? sessionStorage : localStorage).getItem(key);
  } catch {
    return key in memory ? memory[key] : null;
  }
}
export function save(key: string, value: string | null, session?: boolean): void {
  try {
    const store = session ? sessionStorage : localStorage;
    if (value === null) store.removeItem(key);
    else store.setItem(key, value);
  } catch {
    if (value === null) delete memory[key];
    else memory[key] = value;
  }
}

/** A random id for events, visits and the anonymous visitor. */
export function newId(): string {
  try {
    return crypto.randomUUID();
  } catch {
    // randomUUID needs a secure context; plain-http test sites still get unique ids.
    return Date.now().toString(36) + Math.random().toString(36).slice(2, 12);
  }
}

/** Exponential backoff with jitter: 1, 2, 4, … seconds (× base), at most `max` ms. */
export function backoff(attempt: number, base = 1000, max = 300_000): number {
  return Math.min(max, base * 2 ** Math.min(attempt, 16)) * (0.5 + Math.random() / 2);
}

export function cut(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}

/** Whether the page is an http(s) page: the reports only take such URLs. */
export const httpPage = /^https?:/.test(location.protocol);
