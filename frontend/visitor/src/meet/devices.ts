// One's own camera and microphone on the call page: the preview before joining,
// the device pickers, and the stream the call sends. Changing a picker restarts
// the stream with that device; a missing or busy device falls back to what
// there is.

import { h } from '../dom';
import { strings as t } from './i18n';
import { deviceProblem, play, stopAll, videoElement } from './media';

export class LocalMedia {
  /** The muted preview of one's camera. */
  readonly preview = videoElement(true, t.preview);
  /** Says whether the camera and microphone work. */
  readonly note = h('p', { class: 'rapport-meet__media-note', role: 'status' });
  /** The pickers, each in its labelled field (hidden while there is no choice). */
  readonly cameraField: HTMLElement;
  readonly micField: HTMLElement;
  private readonly cameraSelect: HTMLSelectElement;
  private readonly micSelect: HTMLSelectElement;
  /** The stream the call sends; null without devices or permission. */
  stream: MediaStream | null = null;
  /** Settles once the latest (re)start has: joining waits for it. */
  ready: Promise<void> = Promise.resolve();

  /** `id` makes the page's element ids; `gone` says whether the call page is
   * over (checked after every await). */
  constructor(
    id: (name: string) => string,
    private readonly gone: () => boolean,
  ) {
    this.cameraSelect = h('select', { id: id('camera'), onchange: () => this.start() });
    this.micSelect = h('select', { id: id('microphone'), onchange: () => this.start() });
    this.cameraField = h('div', { class: 'field', hidden: true }, h('label', { for: id('camera') }, t.camera), this.cameraSelect);
    this.micField = h('div', { class: 'field', hidden: true }, h('label', { for: id('microphone') }, t.microphone), this.micSelect);
  }

  /** (Re)starts the camera and microphone with the chosen devices. */
  start(): void {
    this.ready = this.ready.then(async () => {
      this.stop();
      if (this.gone()) return;
      this.note.textContent = t.startingMedia;
      const stream = await this.acquire();
      // (Join waits for this: the phase is at most 'connecting' here.)
      if (this.gone()) {
        stopAll(stream);
        return;
      }
      this.stream = stream;
      play(this.preview, stream);
      this.preview.hidden = !stream?.getVideoTracks().length;
      this.note.textContent = stream
        ? ''
        : 'getUserMedia' in (navigator.mediaDevices || {})
          ? t.noMedia
          : t.noMediaSupport;
      await this.listDevices();
    });
  }

  /** Stops the stream's tracks (the camera's light goes off). */
  stop(): void {
    stopAll(this.stream);
    this.stream = null;
  }

  private async acquire(): Promise<MediaStream | null> {
    const devices = navigator.mediaDevices;
    if (!devices?.getUserMedia) return null;
    const video: MediaTrackConstraints = { width: { ideal: 640 }, height: { ideal: 360 } };
    if (this.cameraSelect.value) video.deviceId = { exact: this.cameraSelect.value };
    const audio: MediaTrackConstraints = {};
    if (this.micSelect.value) audio.deviceId = { exact: this.micSelect.value };
    try {
      return await devices.getUserMedia({ audio, video });
    } catch (e) {
      if (!deviceProblem(e)) return null;
    }
    // One of the two is missing or busy: take what there is.
    for (const constraints of [{ audio }, { video }]) {
      try {
        return await devices.getUserMedia(constraints);
      } catch {
        // next
      }
    }
    return null;
  }

  /** Fills the pickers; labels exist once the user allowed media. */
  async listDevices(): Promise<void> {
    let devices: MediaDeviceInfo[] = [];
    try {
      devices = (await navigator.mediaDevices?.enumerateDevices?.()) || [];
    } catch {
      // none
    }
    const fill = (select: HTMLSelectElement, field: HTMLElement, kind: MediaDeviceKind, track?: MediaStreamTrack) => {
      const found = devices.filter((d) => d.kind === kind && d.deviceId);
      const current = track?.getSettings().deviceId || select.value;
      const name = kind === 'videoinput' ? t.camera : t.microphone;
      select.replaceChildren(
        ...found.map((d, i) => {
          const option = h('option', { value: d.deviceId }, d.label || t.device(name, i + 1));
          option.selected = d.deviceId === current;
          return option;
        }),
      );
      field.hidden = found.length === 0;
    };
    fill(this.cameraSelect, this.cameraField, 'videoinput', this.stream?.getVideoTracks()[0]);
    fill(this.micSelect, this.micField, 'audioinput', this.stream?.getAudioTracks()[0]);
  }
}
