// Small helpers of the call page: video elements, streams and the signalling URL.

import { h } from '../dom';

/** A `<video>` that plays inline; muted ones (previews, one's own tile) never echo. */
export function videoElement(muted: boolean, label?: string): HTMLVideoElement {
  const video = h('video', { autoplay: true, playsinline: true, muted, 'aria-label': label }) as HTMLVideoElement;
  // The attribute only sets defaultMuted on created elements: set the state too.
  video.muted = muted;
  return video;
}

export function play(video: HTMLVideoElement, stream: MediaStream | null): void {
  if (video.srcObject !== stream) video.srcObject = stream;
  if (stream) video.play().catch(() => undefined); // autoplay blocked: the controls still work
}

/** The signalling URL made absolute, with the page's ws(s) scheme. */
export function socketUrl(path: string): string {
  const url = new URL(path, location.href);
  if (url.protocol === 'http:') url.protocol = 'ws:';
  else if (url.protocol === 'https:') url.protocol = 'wss:';
  return url.href;
}

export const stopAll = (stream: MediaStream | null) => stream?.getTracks().forEach((track) => track.stop());

/** Device failures worth a second try with fewer devices (not a refusal by the user). */
export const deviceProblem = (e: unknown) =>
  e instanceof DOMException && ['NotFoundError', 'NotReadableError', 'OverconstrainedError', 'AbortError'].includes(e.name);
