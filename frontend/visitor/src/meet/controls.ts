// The call's toolbar: mute, camera off, sharing one's screen (where the call
// allows it) and leave. Sharing puts the screen on the screen's m-line with
// replaceTrack on its sender, never a renegotiation; the browser's own "Stop
// sharing" stops it too.

import { h } from '../dom';
import { strings as t } from './i18n';
import type { CallPeer } from './peer';

/** What the toolbar needs of the call page. */
export interface ControlsHost {
  /** Whether one is in the call (not connecting, not over). */
  inCall(): boolean;
  /** One turned one's camera off or on. */
  cameraOff(off: boolean): void;
  /** One leaves the call. */
  leave(): void;
  /** Says something in the status line. */
  say(text: string): void;
}

export class Controls {
  /** One's shared screen, while one shares. */
  private screenTrack: MediaStreamTrack | null = null;
  private shareButton: HTMLButtonElement | null = null;

  constructor(
    private readonly peer: CallPeer,
    private readonly host: ControlsHost,
  ) {}

  /** The toolbar of a new call: `stream` is one's camera and microphone;
   * `screenShare` whether one may share a screen. */
  render(stream: MediaStream | null, screenShare: boolean): HTMLElement {
    const audio = stream?.getAudioTracks()[0];
    const video = stream?.getVideoTracks()[0];
    const toggle = (label: string, track: MediaStreamTrack | undefined, on: string, off: string, changed: (off: boolean) => void) => {
      const button = h(
        'button',
        { type: 'button', class: 'button secondary', 'aria-pressed': 'false', disabled: !track, title: track ? null : label },
        on,
      ) as HTMLButtonElement;
      button.addEventListener('click', () => {
        if (!track) return;
        track.enabled = !track.enabled;
        button.textContent = track.enabled ? on : off;
        button.setAttribute('aria-pressed', String(!track.enabled));
        changed(!track.enabled);
      });
      return button;
    };
    const mute = toggle(t.noMicrophone, audio, t.mute, t.unmute, () => undefined);
    const camera = toggle(t.noCamera, video, t.cameraOff, t.cameraOn, (off) => this.host.cameraOff(off));
    // Screen sharing where allowed; disabled where the browser cannot (phones).
    const canShare = !!navigator.mediaDevices?.getDisplayMedia;
    this.shareButton = screenShare
      ? (h(
          'button',
          {
            type: 'button',
            class: 'button secondary',
            'aria-pressed': 'false',
            disabled: !canShare,
            title: canShare ? null : t.noScreenShare,
            onclick: () => void this.toggleShare(),
          },
          t.shareScreen,
        ) as HTMLButtonElement)
      : null;
    const leave = h('button', { type: 'button', class: 'button danger', onclick: () => this.host.leave() }, t.leave);
    return h(
      'div',
      { class: 'rapport-meet__controls', role: 'toolbar', 'aria-label': t.controls },
      mute,
      camera,
      this.shareButton,
      leave,
    );
  }

  /** Starts or stops sharing one's screen on the screen's m-line (no renegotiation). */
  private async toggleShare(): Promise<void> {
    const sender = this.peer.screenSender;
    const button = this.shareButton;
    if (!sender || !button || button.disabled) return;
    if (this.screenTrack) {
      await this.stopSharing();
      return;
    }
    button.disabled = true;
    let track: MediaStreamTrack | undefined;
    try {
      const stream = await navigator.mediaDevices.getDisplayMedia({ video: true });
      track = stream.getVideoTracks()[0];
      stream.getAudioTracks().forEach((extra) => extra.stop());
      if (!track) throw new DOMException('no video', 'NotFoundError');
      if (this.peer.screenSender !== sender || !this.host.inCall()) {
        track.stop();
        return;
      }
      if ('contentHint' in track) track.contentHint = 'detail';
      await sender.replaceTrack(track);
    } catch (e) {
      track?.stop();
      if (this.peer.screenSender !== sender) return;
      button.disabled = false;
      // The user closing the browser's picker is no failure.
      if (!(e instanceof DOMException && e.name === 'NotAllowedError')) this.host.say(t.shareFailed);
      return;
    }
    if (this.peer.screenSender !== sender) {
      track.stop();
      return;
    }
    this.screenTrack = track;
    // The browser's own "Stop sharing" ends the track.
    track.addEventListener('ended', () => this.screenTrack === track && void this.stopSharing());
    button.disabled = false;
    button.textContent = t.stopSharing;
    button.setAttribute('aria-pressed', 'true');
    this.host.say(t.youShare);
  }

  private async stopSharing(): Promise<void> {
    const track = this.screenTrack;
    if (!track) return;
    this.screenTrack = null;
    track.stop();
    if (this.shareButton) {
      this.shareButton.textContent = t.shareScreen;
      this.shareButton.setAttribute('aria-pressed', 'false');
    }
    const sender = this.peer.screenSender;
    if (sender && this.peer.pc?.signalingState !== 'closed') {
      try {
        await sender.replaceTrack(null);
      } catch {
        // the call is over
      }
    }
    if (this.host.inCall()) this.host.say(t.youStopped);
  }

  /** Stops sharing and forgets the toolbar (the call ended). */
  clear(): void {
    this.screenTrack?.stop();
    this.screenTrack = this.shareButton = null;
  }
}
