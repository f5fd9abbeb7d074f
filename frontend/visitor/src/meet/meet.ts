// meet.js (with meet.css): the browser side of an appointment's video call
// (issue 24), loaded only by Rapport's own join page (/join/{token}). On load it
// mounts on every `[data-rapport-meet]` element, and
// `window.RapportMeet.mountAll()` does it again after a client-side navigation;
// an element is mounted once. The element carries:
//   data-ws-url    the signalling WebSocket, e.g. /join/TOKEN/ws (made absolute here)
//   data-password  "true" when the appointment asks for a password
//   data-title     the appointment's title
//
// One RTCPeerConnection to Rapport's SFU per participant. Signalling is JSON
// over the WebSocket, handled strictly in order (one promise chain), so an
// answer is applied before the next offer is looked at:
//   → hello {name, password?}            first, once the socket is open
//   ← refused {reason} | waiting | declined
//   ← joined {you, host, permissions: {screenShare, chat}, participants}
//   → offer {sdp, sources: {mid: mic | camera | screen}}
//                                        once, on joined: mic, camera, screen, sendonly
//   ← answer {sdp}
//   ← offer {sdp, tracks: {mid: {participant, kind, source}}}   other participants' media
//   → answer {sdp}
//   ← track {mid, paused}                a forwarded track stopped or resumed
//   ← participants {participants} | lobby {waiting} | removed | error {message}
//   → chat {text}                        ← chat {from, name, text, at}  (to everyone)
//   → admit {id} | decline {id} | remove {id}   (hosts) | leave
// The screen's m-line carries no track until the user shares: sharing is
// replaceTrack on its sender, never a renegotiation. A forwarded screen is
// shown only while it carries media.
// The client offers only once, while no server offer can be in progress; a
// server offer that nevertheless arrives while that offer is unanswered is
// ignored (the server yields on glare and offers again after answering).
//
// Server data (names, messages) is only ever set as text, never as HTML.

import './meet.css';
import { h } from '../dom';
import { CallChat } from './chat';
import { Lobby } from './lobby';
import { SharedScreens } from './screens';
import { strings as t } from './i18n';
import { LocalMedia } from './devices';
import { play, socketUrl, videoElement } from './media';
import type { Permissions, Person, ServerMsg, Source, TrackInfo } from './protocol';

declare global {
  interface Window {
    RapportMeet?: {
      mountAll(): void;
      /** The current call's peer connection, or null: a hook for tests (getStats). */
      pc(): RTCPeerConnection | null;
    };
  }
}

let mounts = 0;
let currentPc: RTCPeerConnection | null = null;

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
type Phase = 'prejoin' | 'connecting' | 'waiting' | 'call' | 'over';

class Meeting {
  private readonly id: (name: string) => string;
  private readonly wsUrl: string;
  private readonly status = h('p', { class: 'rapport-meet__status', role: 'status' });
  private readonly alert = h('p', { class: 'rapport-meet__alert', role: 'alert' });
  private readonly view = h('div', { class: 'rapport-meet__view' });
  private phase: Phase = 'prejoin';
  private disposed = false;

  // Pre-join.
  private readonly nameInput: HTMLInputElement;
  private readonly nameError: HTMLElement;
  /** One's camera and microphone, their preview and pickers. */
  private readonly media: LocalMedia;
  private readonly passwordInput: HTMLInputElement | null = null;
  private readonly joinButton: HTMLButtonElement;
  private readonly form: HTMLElement;
  private readonly waitingBox: HTMLElement;
  private readonly prejoin: HTMLElement;

  // The call.
  private ws: WebSocket | null = null;
  private pc: RTCPeerConnection | null = null;
  private chain: Promise<void> = Promise.resolve();
  private me: Person = { id: '', name: '' };
  private isHost = false;
  private offerPending = false;
  private readonly tracks = new Map<string, TrackInfo>(); // by mid
  private readonly remotes = new Map<string, Remote>(); // by participant id
  private readonly people = new Map<string, Person>(); // by participant id, without oneself
  private readonly tiles = new Map<string, Tile>(); // by participant id, oneself included
  /** Others' shared screens, each a tile of its own. */
  private readonly screens = new SharedScreens({
    grid: () => this.grid,
    nameOf: (key) => this.people.get(key)?.name || t.someone,
    changed: () => this.layout(),
    say: (text) => this.say(text),
  });
  private permissions: Permissions = {};
  /** The screen's m-line, which carries a track only while one shares. */
  private screenSender: RTCRtpSender | null = null;
  private screenTrack: MediaStreamTrack | null = null;
  private shareButton: HTMLButtonElement | null = null;
  /** The call's chat, when the call has one. */
  private chat: CallChat | null = null;
  private grid: HTMLElement | null = null;
  /** Hosts' list of people waiting to be let in. */
  private lobby: Lobby | null = null;
  /** Who waits to be let in, as the server last said (hosts only hear it). */
  private waiting: Person[] = [];
  private recordingNote: HTMLElement | null = null;
  private recording = false;
  private speaker: string | null = null;
  private statsTimer = 0;
  private readonly watchTimer: number;

  constructor(private readonly root: HTMLElement) {
    const n = ++mounts;
    this.id = (name) => `rapport-meet-${n}-${name}`;
    this.wsUrl = socketUrl(root.dataset.wsUrl || '');
    const needsPassword = root.dataset.password === 'true';

    this.nameInput = h('input', {
      id: this.id('name'),
      type: 'text',
      name: 'name',
      autocomplete: 'name',
      required: true,
      maxlength: '80',
      'aria-describedby': this.id('name-error'),
      oninput: () => this.nameProblem(false),
    }) as HTMLInputElement;
    this.nameError = h('p', { id: this.id('name-error'), class: 'field-error', hidden: true }, t.nameMissing);
    this.media = new LocalMedia(this.id, () => this.gone());
    if (needsPassword) {
      this.passwordInput = h('input', {
        id: this.id('password'),
        type: 'password',
        name: 'password',
        autocomplete: 'off',
        required: true,
        maxlength: '128',
      }) as HTMLInputElement;
    }
    this.joinButton = h('button', { type: 'submit', class: 'button primary' }, t.join) as HTMLButtonElement;
    this.form = h(
      'form',
      {
        class: 'rapport-meet__form',
        novalidate: true,
        onsubmit: (e: Event) => {
          e.preventDefault();
          void this.join();
        },
      },
      h('div', { class: 'field' }, h('label', { for: this.id('name') }, t.yourName), this.nameInput, this.nameError),
      h('div', { class: 'field-row' }, this.media.cameraField, this.media.micField),
      this.passwordInput &&
        h('div', { class: 'field' }, h('label', { for: this.id('password') }, t.password), this.passwordInput),
      h('p', { class: 'rapport-meet__actions' }, this.joinButton),
    );
    this.waitingBox = h(
      'p',
      { class: 'rapport-meet__actions', hidden: true },
      h('button', { type: 'button', class: 'button secondary', onclick: () => this.cancelWaiting() }, t.cancel),
    );
    this.prejoin = h(
      'section',
      { class: 'rapport-meet__prejoin', 'aria-labelledby': this.id('heading') },
      h('h2', { id: this.id('heading') }, t.joinHeading),
      h('div', { class: 'rapport-meet__preview' }, this.media.preview),
      this.media.note,
      this.form,
      this.waitingBox,
    );

    root.classList.add('rapport-meet');
    root.replaceChildren(this.status, this.alert, this.view);
    this.view.append(this.prejoin);
    this.media.start();
    navigator.mediaDevices?.addEventListener?.('devicechange', this.onDeviceChange);
    // Leave quietly with the page; let go of everything once the element is gone
    // (the page re-rendered or navigated away without unloading).
    addEventListener('pagehide', this.onPageHide);
    this.watchTimer = window.setInterval(() => {
      if (!this.root.isConnected) this.dispose();
    }, 1000);
  }

  // ---- messages -------------------------------------------------------------------------

  private say(text: string): void {
    this.status.textContent = text;
  }

  private fail(text: string): void {
    this.alert.textContent = text;
  }

  private nameProblem(show: boolean): void {
    this.nameError.hidden = !show;
    if (show) this.nameInput.setAttribute('aria-invalid', 'true');
    else this.nameInput.removeAttribute('aria-invalid');
  }

  // ---- pre-join: preview and devices ----------------------------------------------------

  private readonly onDeviceChange = () => {
    if (this.phase === 'prejoin') void this.media.listDevices();
  };

  private readonly onPageHide = () => {
    if (this.phase === 'call' || this.phase === 'waiting') this.send({ type: 'leave' });
  };

  /** Whether this call is over or its element gone (checked after awaits). */
  private gone(): boolean {
    return this.disposed || this.phase === 'over';
  }

  // ---- joining -------------------------------------------------------------------------

  private setPhase(phase: Phase): void {
    this.phase = phase;
    this.joinButton.disabled = phase !== 'prejoin';
    this.form.hidden = phase === 'waiting';
    this.waitingBox.hidden = phase !== 'waiting';
  }

  private async join(): Promise<void> {
    if (this.phase !== 'prejoin') return;
    const name = this.nameInput.value.trim();
    if (!name) {
      this.nameProblem(true);
      this.nameInput.focus();
      return;
    }
    this.nameProblem(false);
    this.fail('');
    if (typeof RTCPeerConnection === 'undefined') {
      this.fail(t.noWebRtc);
      return;
    }
    this.setPhase('connecting');
    this.say(t.connecting);
    await this.media.ready; // a device switch still starting
    if (this.disposed) return;
    this.me = { id: '', name };
    const password = this.passwordInput?.value;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.wsUrl);
    } catch {
      this.backToPrejoin(t.connectFailed);
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws === ws) this.send(password ? { type: 'hello', name, password } : { type: 'hello', name });
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws || typeof event.data !== 'string') return;
      let msg: ServerMsg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return;
      }
      this.queue(() => this.handle(msg));
    };
    // Through the chain too: a refusal sent just before the close is seen first.
    ws.onclose = () => this.queue(() => (this.ws === ws ? this.socketClosed() : undefined));
  }

  private queue(step: () => Promise<void> | void): void {
    this.chain = this.chain.then(step).catch((e) => console.error('Rapport call:', e));
  }

  private send(msg: Record<string, unknown>): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  /** Forgets the socket (its later events are ignored) and closes it. */
  private dropSocket(): void {
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState <= WebSocket.OPEN) ws.close();
  }

  private backToPrejoin(error: string): void {
    this.dropSocket();
    this.setPhase('prejoin');
    this.say('');
    if (error) this.fail(error);
  }

  private cancelWaiting(): void {
    this.send({ type: 'leave' });
    this.backToPrejoin('');
    this.joinButton.focus();
  }

  private socketClosed(): void {
    if (this.phase === 'call') this.end(t.lost, true);
    else if (this.phase === 'connecting' || this.phase === 'waiting')
      this.backToPrejoin(this.alert.textContent ? '' : t.connectFailed);
  }

  private async handle(msg: ServerMsg): Promise<void> {
    if (this.disposed) return;
    switch (msg.type) {
      case 'refused': {
        this.backToPrejoin(t.refused[msg.reason] || t.refusedOther);
        if (msg.reason === 'password' && this.passwordInput) {
          this.passwordInput.setAttribute('aria-invalid', 'true');
          this.passwordInput.focus();
          this.passwordInput.select();
        } else if (msg.reason === 'name') {
          this.nameProblem(true);
          this.nameInput.focus();
        }
        return;
      }
      case 'waiting':
        this.setPhase('waiting');
        this.say(t.waiting);
        return;
      case 'declined':
        this.end(t.declined, false);
        return;
      case 'joined':
        return this.enterCall(msg);
      case 'answer':
        if (this.pc && this.pc.signalingState === 'have-local-offer') {
          await this.pc.setRemoteDescription({ type: 'answer', sdp: msg.sdp });
          this.offerPending = false;
        }
        return;
      case 'offer':
        return this.acceptOffer(msg);
      case 'participants':
        this.roster(msg.participants || []);
        return;
      case 'lobby':
        this.waiting = msg.waiting || [];
        this.showLobby(true);
        return;
      case 'removed':
        // From the host without a reason; the media server's own removals
        // (connection lost, stuck negotiation) carry one and may be rejoined.
        if (!msg.reason || /host/i.test(msg.reason)) this.end(t.removed, false);
        else this.end(t.lost, true);
        return;
      case 'track':
        this.videoPaused(msg.mid, !!msg.paused);
        return;
      case 'recording':
        this.setRecording(!!msg.recording);
        return;
      case 'chat':
        this.chat?.received(msg, this.me.id);
        return;
      case 'error':
        if (typeof msg.message !== 'string') return;
        // A refused chat message: said in the status line, the call goes on.
        if (this.chat?.refused()) this.say(msg.message);
        else this.fail(msg.message);
        return;
      default:
        return; // newer servers may say more
    }
  }

  // ---- the call -------------------------------------------------------------------------

  private async enterCall(msg: Extract<ServerMsg, { type: 'joined' }>): Promise<void> {
    if (this.phase === 'call') return;
    this.setPhase('call');
    this.isHost = !!msg.host;
    this.permissions = msg.permissions || {};
    this.me = { id: msg.you, name: this.me.name, host: this.isHost };
    this.passwordInput?.removeAttribute('aria-invalid');
    this.fail('');
    this.say(t.joined);
    this.renderCall();
    this.recording = !!msg.recording;
    this.setRecording(this.recording);
    this.roster(msg.participants || [], true);

    const pc = new RTCPeerConnection({ bundlePolicy: 'max-bundle' });
    this.pc = pc;
    currentPc = pc;
    pc.ontrack = (event) => this.onTrack(event);
    pc.onconnectionstatechange = () => {
      if (this.pc === pc && pc.connectionState === 'failed') this.fail(t.mediaFailed);
    };
    // Always three sendonly m-lines, audio, camera and screen, also without a
    // device or a share (then they carry nothing): the server sees the same
    // shape from everyone, and sharing a screen needs no renegotiation.
    const local = this.media.stream;
    const streams = local ? [local] : [];
    const mic = pc.addTransceiver(local?.getAudioTracks()[0] || 'audio', { direction: 'sendonly', streams });
    const camera = pc.addTransceiver(local?.getVideoTracks()[0] || 'video', { direction: 'sendonly', streams });
    const screen = pc.addTransceiver('video', { direction: 'sendonly' });
    this.screenSender = screen.sender;
    this.offerPending = true;
    await pc.setLocalDescription(await pc.createOffer());
    const sources: Record<string, Source> = {};
    for (const [transceiver, source] of [[mic, 'mic'], [camera, 'camera'], [screen, 'screen']] as const) {
      if (transceiver.mid != null) sources[transceiver.mid] = source;
    }
    this.send({ type: 'offer', sdp: pc.localDescription!.sdp, sources });
    this.statsTimer = window.setInterval(() => void this.findSpeaker(), 1000);
  }

  private async acceptOffer(msg: Extract<ServerMsg, { type: 'offer' }>): Promise<void> {
    const pc = this.pc;
    if (!pc) return;
    if (pc.signalingState !== 'stable' || this.offerPending) {
      // Glare: our offer is unanswered. The server yields and offers again.
      console.warn('Rapport call: ignored a server offer while our own is unanswered');
      return;
    }
    // The table must be known before ontrack fires inside setRemoteDescription.
    for (const [mid, info] of Object.entries(msg.tracks || {})) this.tracks.set(mid, info);
    const before = pc.getTransceivers();
    try {
      await pc.setRemoteDescription({ type: 'offer', sdp: msg.sdp });
      await pc.setLocalDescription(await pc.createAnswer());
    } catch (e) {
      this.fail(t.mediaFailed);
      throw e;
    }
    this.send({ type: 'answer', sdp: pc.localDescription!.sdp });
    // m-lines the server stopped (a participant left): drop their tracks.
    // Chrome drops stopped transceivers from getTransceivers() once negotiated.
    const after = pc.getTransceivers();
    for (const transceiver of before) {
      if (after.includes(transceiver) && transceiver.currentDirection !== 'stopped') continue;
      const track = transceiver.receiver.track;
      this.remotes.forEach((remote, key) => {
        if (remote.audio === track || remote.video === track) this.setRemoteTrack(key, track.kind, undefined);
      });
      this.screens.dropTrack(track);
    }
  }

  private onTrack(event: RTCTrackEvent): void {
    const mid = event.transceiver?.mid;
    let info = mid != null ? this.tracks.get(mid) : undefined;
    // Fallback: the server's msid stream id is the participant's id, with
    // ".screen" for a shared screen.
    const streamId = event.streams[0]?.id;
    if (!info && streamId) {
      const screen = /\.screen$/.test(streamId);
      const participant = screen ? streamId.slice(0, -'.screen'.length) : streamId;
      if (this.people.has(participant)) info = { participant, source: screen ? 'screen' : undefined };
    }
    if (!info) {
      console.warn('Rapport call: a track nobody sends', mid);
      return;
    }
    const key = String(info.participant);
    const track = event.track;
    if (info.source === 'screen' && track.kind === 'video') {
      this.screens.set(key, track, info.paused);
      return;
    }
    this.setRemoteTrack(key, track.kind, track);
    track.addEventListener('ended', () => {
      const remote = this.remotes.get(key);
      if (remote && (remote.audio === track || remote.video === track)) this.setRemoteTrack(key, track.kind, undefined);
    });
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

  /** A forwarded video stopped or started carrying frames. */
  private videoPaused(mid: string, paused: boolean): void {
    const info = this.tracks.get(mid);
    if (!info || info.kind === 'audio') return;
    const key = String(info.participant);
    if (info.source === 'screen') {
      this.screens.live(key, !paused, true);
      return;
    }
    let remote = this.remotes.get(key);
    if (!remote) {
      remote = { stream: new MediaStream() };
      this.remotes.set(key, remote);
    }
    remote.videoPaused = paused;
    this.tiles.get(key)?.figure.classList.toggle('rapport-meet__tile--camera-off', paused);
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

  // ---- shared screens -------------------------------------------------------------------

  /** Starts or stops sharing one's screen on the screen's m-line (no renegotiation). */
  private async toggleShare(): Promise<void> {
    const sender = this.screenSender;
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
      if (this.screenSender !== sender || this.phase !== 'call') {
        track.stop();
        return;
      }
      if ('contentHint' in track) track.contentHint = 'detail';
      await sender.replaceTrack(track);
    } catch (e) {
      track?.stop();
      if (this.screenSender !== sender) return;
      button.disabled = false;
      // The user closing the browser's picker is no failure.
      if (!(e instanceof DOMException && e.name === 'NotAllowedError')) this.say(t.shareFailed);
      return;
    }
    if (this.screenSender !== sender) {
      track.stop();
      return;
    }
    this.screenTrack = track;
    // The browser's own "Stop sharing" ends the track.
    track.addEventListener('ended', () => this.screenTrack === track && void this.stopSharing());
    button.disabled = false;
    button.textContent = t.stopSharing;
    button.setAttribute('aria-pressed', 'true');
    this.say(t.youShare);
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
    const sender = this.screenSender;
    if (sender && this.pc?.signalingState !== 'closed') {
      try {
        await sender.replaceTrack(null);
      } catch {
        // the call is over
      }
    }
    if (this.phase === 'call') this.say(t.youStopped);
  }

  /** The call's chat panel, sending over this call's socket. */
  private newChat(): HTMLElement {
    this.chat = new CallChat(this.id, (text) => {
      if (this.ws?.readyState !== WebSocket.OPEN) return false;
      this.send({ type: 'chat', text });
      return true;
    });
    return this.chat.element;
  }

  private renderCall(): void {
    const audio = this.media.stream?.getAudioTracks()[0];
    const video = this.media.stream?.getVideoTracks()[0];
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
    const camera = toggle(t.noCamera, video, t.cameraOff, t.cameraOn, (off) =>
      this.tiles.get(String(this.me.id))?.figure.classList.toggle('rapport-meet__tile--camera-off', off),
    );
    // Screen sharing where allowed; disabled where the browser cannot (phones).
    const canShare = !!navigator.mediaDevices?.getDisplayMedia;
    this.shareButton = this.permissions.screenShare
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
    const leave = h(
      'button',
      {
        type: 'button',
        class: 'button danger',
        onclick: () => {
          this.send({ type: 'leave' });
          this.end(t.left, true);
        },
      },
      t.leave,
    );
    this.recordingNote = h('p', { class: 'note rapport-meet__recording', hidden: true }, t.recording);
    this.lobby = new Lobby(this.id, (type, id) => this.send({ type, id }));
    this.grid = h('section', { class: 'rapport-meet__grid', 'aria-label': t.participants });
    this.view.replaceChildren(
      h(
        'div',
        { class: 'rapport-meet__call' },
        this.recordingNote,
        this.lobby.element,
        this.grid,
        h(
          'div',
          { class: 'rapport-meet__controls', role: 'toolbar', 'aria-label': t.controls },
          mute,
          camera,
          this.shareButton,
          leave,
        ),
        this.permissions.chat && this.newChat(),
      ),
    );
    play(this.media.preview, null);
    const self = this.addTile(String(this.me.id), this.me, true);
    play(self.video, this.media.stream?.getVideoTracks().length ? this.media.stream : null);
    this.showLobby(false);
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
    if (!self && this.isHost && !person.host) {
      remove = h(
        'button',
        {
          type: 'button',
          class: 'button small danger rapport-meet__remove',
          onclick: () => {
            remove!.disabled = true;
            this.send({ type: 'remove', id: person.id });
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
  private roster(list: Person[], initial = false): void {
    if (this.phase !== 'call') return;
    const mine = String(this.me.id);
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
        if (!initial) this.say(t.hasJoined(person.name));
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
      if (person) this.say(t.hasLeft(person.name));
    }
    this.layout();
  }

  private layout(): void {
    this.grid?.setAttribute('data-count', String(this.tiles.size));
    // A shared screen is the content: the people's tiles shrink beside it.
    this.grid?.toggleAttribute('data-screen', this.screens.anyLive());
  }

  /** Shows who waits (to hosts only); `announce` says who came. */
  private showLobby(announce: boolean): void {
    const came = this.lobby?.show(this.isHost ? this.waiting : [], announce);
    if (came) this.say(t.isWaiting(came.name));
  }

  private setRecording(on: boolean): void {
    this.recording = on;
    if (this.recordingNote) this.recordingNote.hidden = !on;
  }

  /** Once a second, from the call's stats: the active speaker, the loudest
   * audio above a floor, kept until someone else speaks (and screens' first frames). */
  private async findSpeaker(): Promise<void> {
    const pc = this.pc;
    if (!pc || this.phase !== 'call') return;
    let stats: RTCStatsReport;
    try {
      stats = await pc.getStats();
    } catch {
      return;
    }
    const byTrack = new Map<string, string>();
    this.remotes.forEach((remote, key) => remote.audio && byTrack.set(remote.audio.id, key));
    let best: string | null = null;
    let loudest = 0.05;
    const mic = this.media.stream?.getAudioTracks()[0];
    stats.forEach((report) => {
      let key: string | undefined;
      if (report.type === 'inbound-rtp' && report.kind === 'audio') key = byTrack.get(report.trackIdentifier);
      else if (report.type === 'media-source' && report.kind === 'audio' && mic?.enabled) key = String(this.me.id);
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

  // ---- the end --------------------------------------------------------------------------

  private teardown(): void {
    window.clearInterval(this.statsTimer);
    this.dropSocket();
    this.screenTrack?.stop();
    this.screenTrack = this.screenSender = this.shareButton = null;
    this.pc?.close();
    this.pc = null;
    this.media.stop();
    this.tracks.clear();
    this.remotes.clear();
    this.people.clear();
    this.tiles.forEach((tile) => (tile.video.srcObject = null));
    this.tiles.clear();
    this.screens.clear();
    this.grid = this.recordingNote = null;
    this.lobby = null;
    this.chat = null;
    this.permissions = {};
    this.waiting = [];
    this.speaker = null;
    this.offerPending = false;
  }

  /** Ends the call (or the wait) with a message; `again` offers to join again. */
  private end(message: string, again: boolean): void {
    this.teardown();
    this.phase = 'over';
    this.say(message);
    const button = again
      ? h('button', { type: 'button', class: 'button primary', onclick: () => this.restart() }, t.joinAgain)
      : null;
    this.view.replaceChildren(h('p', { class: 'rapport-meet__actions' }, button));
    play(this.media.preview, null);
  }

  private restart(): void {
    this.fail('');
    this.say('');
    this.view.replaceChildren(this.prejoin);
    this.setPhase('prejoin');
    this.media.start();
    this.nameInput.focus();
  }

  private dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.phase === 'call' || this.phase === 'waiting') this.send({ type: 'leave' });
    this.teardown();
    window.clearInterval(this.watchTimer);
    navigator.mediaDevices?.removeEventListener?.('devicechange', this.onDeviceChange);
    removeEventListener('pagehide', this.onPageHide);
  }
}

const MOUNTED = 'data-rapport-mounted';

function mountAll(): void {
  document.querySelectorAll<HTMLElement>(`[data-rapport-meet]:not([${MOUNTED}])`).forEach((root) => {
    root.setAttribute(MOUNTED, '');
    try {
      new Meeting(root);
    } catch (e) {
      console.error('Rapport call: could not start', e);
    }
  });
}

window.RapportMeet = { mountAll, pc: () => currentPc };
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mountAll);
else mountAll();
