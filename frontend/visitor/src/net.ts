// The loader's one door to Rapport's REST API: every call carries the widget key
// (and the visitor token when it needs one) and fails with a plain Error, never
// anything the host page would see as uncaught.

import type { HttpError, RequestOptions } from './types';

export interface Endpoint {
  origin: string;
  key: string;
  token(): string | null;
}

function httpError(response: Response): HttpError {
  const error = new Error(`Rapport answered ${response.status}`) as HttpError;
  error.status = response.status;
  const wait = Number(response.headers.get('retry-after'));
  if (wait > 0) error.retryAfter = wait * 1000;
  return error;
}

export async function call(end: Endpoint, path: string, options: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { 'rapport-widget-key': end.key };
  const token = options.visitor ? end.token() : null;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: BodyInit | undefined;
  if (options.body instanceof Blob) {
    // A file goes as it is, with its own type: no multipart, no base64.
    headers['content-type'] = options.body.type || 'application/octet-stream';
    body = options.body;
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await fetch(`${end.origin}/rest/v1${path}`, {
    method: options.method || (body ? 'POST' : 'GET'),
    headers,
    body,
    // The widget never uses cookies; a host page's Rapport session stays out of it.
    credentials: 'omit',
    keepalive: options.keepalive,
    signal: options.signal,
    mode: 'cors',
  });
  if (!response.ok) throw httpError(response);
  return response;
}

export async function callJson<T>(end: Endpoint, path: string, options?: RequestOptions): Promise<T> {
  const response = await call(end, path, options);
  const text = await response.text();
  return (text ? JSON.parse(text) : null) as T;
}
