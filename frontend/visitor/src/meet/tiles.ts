// The call's grid of participants: a tile per person in the roster, oneself
// included, gone with them; each other participant's media as one stream shown
// in their tile; others' shared screens (screens.ts) in tiles of their own; the
// camera-off and active-speaker marks; and the grid's layout as tiles come and go.
// Server data (names) is only ever set as text, never as HTML.

import { h } from '../dom';
import { strings as t } from './i18n';
import { play, videoElement } from './media';
import type { Id, Person } from './protocol';
import { SharedScreens } from './screens';

interface Tile {
  figure: HTMLElement;
  video: HTMLVideoElement;
  caption: HTMLElement;
  remove: HTMLButtonElement | null;
}
interface Remote {
  stream: MediaStream;
  audio?: MediaStreamTrack;
  video?: MediaStreamTrack;
  /** The server says no video arrives from them (camera off, no camera). */
  videoPaused?: boolean;
}

/** What the tiles need of the call page. */
export interface TilesHost {
  /** Oneself, with one's participant id once in the call. */
  me(): Person;
  /** Whether one is a host, who may remove others. */
  isHost(): boolean;
  /** Asks the server to remove a participant (hosts). */
  remove(id: Id): void;
  /** Says something in the status line. */
  say(text: string): void;
}

export class Tiles {
  private readonly tiles = new Map<string, Tile>(); // by participant id, oneself included
  private readonly remotes = new Map<string, Remote>(); // by participant id
  private readonly people = new Map<string, Person>(); // by participant id, without oneself
  /** Others' shared screens, each a tile of its own. */
  private readonly screens: SharedScreens;
  private grid: HTMLElement | null = null;
  private speaker: string | null = null;

  constructor(private readonly host: TilesHost) {
    this.screens = new SharedScreens({
      grid: () => this.grid,
      nameOf: (key) => this.people.get(key)?.name || t.someone,
      changed: () => this.layout(),
      say: (text) => host.say(text),
    });
  }

  /** A new, empty grid for the call, to place in its layout. */
  open(): HTMLElement {
    this.grid = h('section', { class: 'rapport-meet__grid', 'aria-label': t.participants });
    return this.grid;
  }

  /** One's own tile, showing `stream` (one's camera) where it has video. */
  addSelf(stream: MediaStream | null): void {
    const me = this.host.me();
    const self = this.addTile(String(me.id), me, true);
    play(self.video, stream?.getVideoTracks().length ? stream : null);
  }

  private addTile(key: string, person: Person, self: boolean): Tile {
    const video = videoElement(self);
    const caption = h('figcaption', {}, self ? t.you(person.name) : person.name);
    const figure = h(
      'figure',
      { class: self ? 'rapport-meet__tile rapport-meet__tile--self' : 'rapport-meet__tile', 'data-participant': key },
      video,
      caption,
    );
    let remove: HTMLButtonElement | null = null;
    if (!self && this.host.isHost() && !person.host) {
      remove = h(
        'button',
        {
          type: 'button',
          class: 'button small danger rapport-meet__remove',
          onclick: () => {
            remove!.disabled = true;
            this.host.remove(person.id);
          },
        },
        t.remove(person.name),
      ) as HTMLButtonElement;
      figure.append(remove);
    }
    const tile = { figure, video, caption, remove };
    this.tiles.set(key, tile);
    this.grid?.append(figure);
    this.layout();
    return tile;
  }

  /** The roster: a tile per participant, gone with them. */
  roster(list: Person[], initial: boolean): void {
    const mine = String(this.host.me().id);
    const present = new Set<string>();
    for (const person of list) {
      const key = String(person.id);
      if (key === mine) continue;
      present.add(key);
      const known = this.people.get(key);
      this.people.set(key, person);
      const tile = this.tiles.get(key);
      if (!tile) {
        this.addTile(key, person, false);
        this.attach(key);
        if (!initial) this.host.say(t.hasJoined(person.name));
      } else if (known && known.name !== person.name) {
        tile.caption.textContent = person.name;
        if (tile.remove) tile.remove.textContent = t.remove(person.name);
      }
      if (known?.name !== person.name) this.screens.caption(key);
    }
    this.screens.keepOnly(present);
    for (const [key, tile] of [...this.tiles]) {
      if (key === mine || present.has(key)) continue;
      const person = this.people.get(key);
      tile.video.srcObject = null;
      tile.figure.remove();
      this.tiles.delete(key);
      this.people.delete(key);
      this.remotes.delete(key);
      if (person) this.host.say(t.hasLeft(person.name));
    }
    this.layout();
  }

  /** Whether `participant` (an id) is in the roster. */
  knows(participant: string): boolean {
    return this.people.has(participant);
  }

  private layout(): void {
    this.grid?.setAttribute('data-count', String(this.tiles.size));
    // A shared screen is the content: the people's tiles shrink beside it.
    this.grid?.toggleAttribute('data-screen', this.screens.anyLive());
  }

  // ---- others' media --------------------------------------------------------------------

  /** A participant's new audio or video track, kept until it ends or is replaced. */
  addTrack(key: string, track: MediaStreamTrack): void {
    this.setRemoteTrack(key, track.kind, track);
    track.addEventListener('ended', () => {
      const remote = this.remotes.get(key);
      if (remote && (remote.audio === track || remote.video === track)) this.setRemoteTrack(key, track.kind, undefined);
    });
  }

  /** A participant's shared screen (see screens.ts). */
  addScreen(key: string, track: MediaStreamTrack, paused: boolean | undefined): void {
    this.screens.set(key, track, paused);
  }

  /** Drops `track`, whoever it was from (its m-line stopped). */
  dropTrack(track: MediaStreamTrack): void {
    this.remotes.forEach((remote, key) => {
      if (remote.audio === track || remote.video === track) this.setRemoteTrack(key, track.kind, undefined);
    });
    this.screens.dropTrack(track);
  }

  /** One MediaStream per participant, with its latest audio and video track. */
  private setRemoteTrack(key: string, kind: string, track: MediaStreamTrack | undefined): void {
    let remote = this.remotes.get(key);
    if (!remote) {
      if (!track) return;
      remote = { stream: new MediaStream() };
      this.remotes.set(key, remote);
    }
    const slot = kind === 'audio' ? 'audio' : 'video';
    const old = remote[slot];
    if (old === track) return;
    if (old) remote.stream.removeTrack(old);
    remote[slot] = track;
    if (track) remote.stream.addTrack(track);
    this.attach(key);
  }

  /** A participant's forwarded camera stopped or started carrying frames. */
  videoPaused(key: string, paused: boolean): void {
    let remote = this.remotes.get(key);
    if (!remote) {
      remote = { stream: new MediaStream() };
      this.remotes.set(key, remote);
    }
    remote.videoPaused = paused;
    this.cameraOff(key, paused);
  }

  /** A participant's forwarded screen stopped or started carrying frames. */
  screenLive(key: string, live: boolean): void {
    this.screens.live(key, live, true);
  }

  /** Marks a tile as showing no camera. */
  cameraOff(key: string, off: boolean): void {
    this.tiles.get(key)?.figure.classList.toggle('rapport-meet__tile--camera-off', off);
  }

  /** Shows a participant's media in its tile, once both exist. */
  private attach(key: string): void {
    const tile = this.tiles.get(key);
    const remote = this.remotes.get(key);
    if (!tile || !remote) return;
    tile.figure.classList.toggle('rapport-meet__tile--camera-off', !!remote.videoPaused);
    // Reassigned so that the element picks up a track added to the stream.
    tile.video.srcObject = null;
    play(tile.video, remote.stream.getTracks().length ? remote.stream : null);
  }

  /** From the call's stats: marks the active speaker, the loudest audio above a
   * floor, kept until someone else speaks (`mic` is one's own microphone); and
   * shows screens whose first frames are decoded. */
  heard(stats: RTCStatsReport, mic: MediaStreamTrack | undefined): void {
    const byTrack = new Map<string, string>();
    this.remotes.forEach((remote, key) => remote.audio && byTrack.set(remote.audio.id, key));
    let best: string | null = null;
    let loudest = 0.05;
    stats.forEach((report) => {
      let key: string | undefined;
      if (report.type === 'inbound-rtp' && report.kind === 'audio') key = byTrack.get(report.trackIdentifier);
      else if (report.type === 'media-source' && report.kind === 'audio' && mic?.enabled) key = String(this.host.me().id);
      if (key !== undefined && typeof report.audioLevel === 'number' && report.audioLevel > loudest) {
        loudest = report.audioLevel;
        best = key;
      }
    });
    this.screens.decoded(stats);
    if (best === null || best === this.speaker) return;
    this.speaker = best;
    this.tiles.forEach((tile, key) => tile.figure.classList.toggle('rapport-meet__tile--speaking', key === best));
  }

  /** Forgets every tile, stream and screen (the call ended). */
  clear(): void {
    this.remotes.clear();
    this.people.clear();
    this.tiles.forEach((tile) => (tile.video.srcObject = null));
    this.tiles.clear();
    this.screens.clear();
    this.grid = null;
    this.speaker = null;
  }
}
