// Others' shared screens on the call page. A participant's screen track gets a
// tile of its own, first in the grid, shown only while it carries media: the
// server says when a forwarded screen stops or resumes (← track {mid, paused});
// a screen shared before one joined shows once its first frames are decoded.

import { h } from '../dom';
import { strings as t } from './i18n';
import { play, videoElement } from './media';

interface Screen {
  figure: HTMLElement;
  video: HTMLVideoElement;
  caption: HTMLElement;
  track: MediaStreamTrack;
  live: boolean;
  /** The server said whether it carries media (else frames decoded tell). */
  known: boolean;
}

/** What the screens need of the call page. */
export interface ScreensHost {
  /** The call's grid of tiles, while the call is shown. */
  grid(): HTMLElement | null;
  /** A participant's name, by participant id. */
  nameOf(key: string): string;
  /** A screen appeared or went: the grid's layout changes. */
  changed(): void;
  /** Says something in the status line. */
  say(text: string): void;
}

export class SharedScreens {
  private readonly screens = new Map<string, Screen>(); // by participant id, without oneself

  constructor(private readonly host: ScreensHost) {}

  /** A participant's screen track: a tile of its own, first in the grid, hidden until it carries media. */
  set(key: string, track: MediaStreamTrack, paused: boolean | undefined): void {
    const old = this.screens.get(key);
    if (old?.track === track) return;
    if (old) this.drop(key);
    const video = videoElement(true);
    const caption = h('figcaption', {});
    const figure = h(
      'figure',
      { class: 'rapport-meet__tile rapport-meet__tile--screen', 'data-participant': key, hidden: true },
      video,
      caption,
    );
    const screen: Screen = { figure, video, caption, track, live: false, known: typeof paused === 'boolean' };
    this.screens.set(key, screen);
    this.caption(key);
    this.host.grid()?.prepend(figure);
    play(video, new MediaStream([track]));
    track.addEventListener('ended', () => this.screens.get(key) === screen && this.drop(key));
    if (paused === false) this.live(key, true);
  }

  /** Names the screen's owner again (they renamed themselves). */
  caption(key: string): void {
    const screen = this.screens.get(key);
    if (screen) screen.caption.textContent = t.screenOf(this.host.nameOf(key));
  }

  /** Shows a screen tile while it carries media, and says so. */
  live(key: string, live: boolean, byServer = false): void {
    const screen = this.screens.get(key);
    if (!screen) return;
    if (byServer) screen.known = true;
    if (screen.live === live) return;
    screen.live = live;
    screen.figure.hidden = !live;
    if (live) play(screen.video, screen.video.srcObject as MediaStream | null);
    this.host.changed();
    const name = this.host.nameOf(key);
    this.host.say(live ? t.isSharing(name) : t.stoppedSharing(name));
  }

  drop(key: string): void {
    const screen = this.screens.get(key);
    if (!screen) return;
    this.screens.delete(key);
    screen.video.srcObject = null;
    screen.figure.remove();
    this.host.changed();
  }

  /** Drops the screen that `track` carried (its transceiver stopped). */
  dropTrack(track: MediaStreamTrack): void {
    this.screens.forEach((screen, key) => screen.track === track && this.drop(key));
  }

  /** Drops the screens of everyone not `present`. */
  keepOnly(present: Set<string>): void {
    for (const key of [...this.screens.keys()]) if (!present.has(key)) this.drop(key);
  }

  /** Whether any screen shows now. */
  anyLive(): boolean {
    return [...this.screens.values()].some((screen) => screen.live);
  }

  /** Screens the server has said nothing about (shared before one joined, as
   * the server reports changes only) show once frames are decoded: a mere
   * packet (padding) is no sign, so `unmute` is not used. */
  decoded(stats: RTCStatsReport): void {
    const waiting = new Map<string, string>();
    this.screens.forEach((screen, key) => !screen.known && !screen.live && waiting.set(screen.track.id, key));
    if (!waiting.size) return;
    stats.forEach((report) => {
      const key = report.type === 'inbound-rtp' ? waiting.get(report.trackIdentifier) : undefined;
      if (key !== undefined && report.framesDecoded > 0) this.live(key, true);
    });
  }

  /** Forgets every screen (the call ended). */
  clear(): void {
    this.screens.forEach((screen) => (screen.video.srcObject = null));
    this.screens.clear();
  }
}
