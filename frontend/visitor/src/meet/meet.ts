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
import { strings as t } from './i18n';

type Id = string | number;
interface Person {
  id: Id;
  name: string;
  host?: boolean;
}
type Source = 'mic' | 'camera' | 'screen';
interface TrackInfo {
  participant: Id;
  kind?: 'audio' | 'video';
  /** What the sender called it; older servers say nothing (mic or camera). */
  source?: Source;
  /** Whether it carries no media yet, where the server says so. */
  paused?: boolean;
}
interface Permissions {
  screenShare?: boolean;
  chat?: boolean;
}
interface ChatMsg {
  type: 'chat';
  from: Id;
  name: string;
  text: string;
  at: string;
}
type ServerMsg =
  | { type: 'refused'; reason: string }
  | { type: 'waiting' }
  | { type: 'declined' }
  | { type: 'joined'; you: Id; host: boolean; permissions?: Permissions; participants?: Person[]; recording?: boolean }
  | { type: 'answer'; sdp: string }
  | { type: 'offer'; sdp: string; tracks?: Record<string, TrackInfo> }
  | { type: 'participants'; participants: Person[] }
  | { type: 'lobby'; waiting: Person[] }
  | { type: 'removed'; reason?: string }
  | { type: 'track'; mid: string; paused: boolean }
  | { type: 'recording'; recording: boolean }
  | ChatMsg
  | { type: 'error'; message: string };

declare global {
  interface Window {
    RapportMeet?: {
      mountAll(): void;
      /** The current call's peer connection, or null: a hook for tests (getStats). */
      pc(): RTCPeerConnection | null;
    };
  }
}

type Child = Node | string | null | undefined | false;

/** Builds an element; `on…` attributes become listeners, the rest attributes. */
function h(tag: string, attrs: Record<string, unknown> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value == null) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value as EventListener);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child) el.append(child);
  return el;
}

/** A `<video>` that plays inline; muted ones (previews, one's own tile) never echo. */
function videoElement(muted: boolean, label?: string): HTMLVideoElement {
  const video = h('video', { autoplay: true, playsinline: true, muted, 'aria-label': label }) as HTMLVideoElement;
  // The attribute only sets defaultMuted on created elements: set the state too.
  video.muted = muted;
  return video;
}

function play(video: HTMLVideoElement, stream: MediaStream | null): void {
  if (video.srcObject !== stream) video.srcObject = stream;
  if (stream) video.play().catch(() => undefined); // autoplay blocked: the controls still work
}

/** The signalling URL made absolute, with the page's ws(s) scheme. */
function socketUrl(path: string): string {
  const url = new URL(path, location.href);
  if (url.protocol === 'http:') url.protocol = 'ws:';
  else if (url.protocol === 'https:') url.protocol = 'wss:';
  return url.href;
}

const stopAll = (stream: MediaStream | null) => stream?.getTracks().forEach((track) => track.stop());

/** Device failures worth a second try with fewer devices (not a refusal by the user). */
const deviceProblem = (e: unknown) =>
  e instanceof DOMException && ['NotFoundError', 'NotReadableError', 'OverconstrainedError', 'AbortError'].includes(e.name);

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
/** A participant's shared screen: its own tile, first in the grid, shown while it carries media. */
interface Screen {
  figure: HTMLElement;
  video: HTMLVideoElement;
  caption: HTMLElement;
  track: MediaStreamTrack;
  live: boolean;
  /** The server said whether it carries media (else frames decoded tell). */
  known: boolean;
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
  private readonly preview = videoElement(true, t.preview);
  private readonly mediaNote = h('p', { class: 'rapport-meet__media-note', role: 'status' });
  private readonly nameInput: HTMLInputElement;
  private readonly nameError: HTMLElement;
  private readonly cameraSelect: HTMLSelectElement;
  private readonly micSelect: HTMLSelectElement;
  private readonly cameraField: HTMLElement;
  private readonly micField: HTMLElement;
  private readonly passwordInput: HTMLInputElement | null = null;
  private readonly joinButton: HTMLButtonElement;
  private readonly form: HTMLElement;
  private readonly waitingBox: HTMLElement;
  private readonly prejoin: HTMLElement;
  private local: MediaStream | null = null;
  private mediaReady: Promise<void> = Promise.resolve();

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
  private readonly screens = new Map<string, Screen>(); // by participant id, without oneself
  private permissions: Permissions = {};
  /** The screen's m-line, which carries a track only while one shares. */
  private screenSender: RTCRtpSender | null = null;
  private screenTrack: MediaStreamTrack | null = null;
  private shareButton: HTMLButtonElement | null = null;
  /** The chat's scrolling log region and the list of messages in it. */
  private chatLog: HTMLElement | null = null;
  private chatList: HTMLElement | null = null;
  private chatInput: HTMLInputElement | null = null;
  /** Own chat messages sent and neither echoed nor refused yet. */
  private chatPending = 0;
  private grid: HTMLElement | null = null;
  private lobbyBox: HTMLElement | null = null;
  private lobbyList: HTMLElement | null = null;
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
    this.cameraSelect = h('select', { id: this.id('camera'), onchange: () => this.startPreview() }) as HTMLSelectElement;
    this.micSelect = h('select', { id: this.id('microphone'), onchange: () => this.startPreview() }) as HTMLSelectElement;
    this.cameraField = h('div', { class: 'field', hidden: true }, h('label', { for: this.id('camera') }, t.camera), this.cameraSelect);
    this.micField = h('div', { class: 'field', hidden: true }, h('label', { for: this.id('microphone') }, t.microphone), this.micSelect);
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
      h('div', { class: 'field-row' }, this.cameraField, this.micField),
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
      h('div', { class: 'rapport-meet__preview' }, this.preview),
      this.mediaNote,
      this.form,
      this.waitingBox,
    );

    root.classList.add('rapport-meet');
    root.replaceChildren(this.status, this.alert, this.view);
    this.view.append(this.prejoin);
    this.startPreview();
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
    if (this.phase === 'prejoin') void this.listDevices();
  };

  private readonly onPageHide = () => {
    if (this.phase === 'call' || this.phase === 'waiting') this.send({ type: 'leave' });
  };

  /** Whether this call is over or its element gone (checked after awaits). */
  private gone(): boolean {
    return this.disposed || this.phase === 'over';
  }

  /** (Re)starts the camera and microphone with the chosen devices. */
  private startPreview(): void {
    this.mediaReady = this.mediaReady.then(async () => {
      stopAll(this.local);
      this.local = null;
      if (this.gone()) return;
      this.mediaNote.textContent = t.startingMedia;
      const stream = await this.acquire();
      // (Join waits for this: the phase is at most 'connecting' here.)
      if (this.gone()) {
        stopAll(stream);
        return;
      }
      this.local = stream;
      play(this.preview, stream);
      this.preview.hidden = !stream?.getVideoTracks().length;
      this.mediaNote.textContent = stream
        ? ''
        : 'getUserMedia' in (navigator.mediaDevices || {})
          ? t.noMedia
          : t.noMediaSupport;
      await this.listDevices();
    });
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
  private async listDevices(): Promise<void> {
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
          const option = h('option', { value: d.deviceId }, d.label || t.device(name, i + 1)) as HTMLOptionElement;
          option.selected = d.deviceId === current;
          return option;
        }),
      );
      field.hidden = found.length === 0;
    };
    fill(this.cameraSelect, this.cameraField, 'videoinput', this.local?.getVideoTracks()[0]);
    fill(this.micSelect, this.micField, 'audioinput', this.local?.getAudioTracks()[0]);
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
    await this.mediaReady; // a device switch still starting
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
        this.renderLobby(true);
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
        this.chatReceived(msg);
        return;
      case 'error':
        if (typeof msg.message !== 'string') return;
        // A refused chat message: said in the status line, the call goes on.
        if (this.chatPending > 0) {
          this.chatPending--;
          this.say(msg.message);
        } else this.fail(msg.message);
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
    const local = this.local;
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
      this.screens.forEach((screen, key) => screen.track === track && this.dropScreen(key));
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
      this.setScreen(key, track, info.paused);
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
      this.screenLive(key, !paused, true);
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

  /** A participant's screen track: a tile of its own, first in the grid, hidden until it carries media. */
  private setScreen(key: string, track: MediaStreamTrack, paused: boolean | undefined): void {
    const old = this.screens.get(key);
    if (old?.track === track) return;
    if (old) this.dropScreen(key);
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
    this.captionScreen(key);
    this.grid?.prepend(figure);
    play(video, new MediaStream([track]));
    track.addEventListener('ended', () => this.screens.get(key) === screen && this.dropScreen(key));
    if (paused === false) this.screenLive(key, true);
  }

  private captionScreen(key: string): void {
    const screen = this.screens.get(key);
    if (screen) screen.caption.textContent = t.screenOf(this.people.get(key)?.name || t.someone);
  }

  /** Shows a screen tile while it carries media, and says so. */
  private screenLive(key: string, live: boolean, byServer = false): void {
    const screen = this.screens.get(key);
    if (!screen) return;
    if (byServer) screen.known = true;
    if (screen.live === live) return;
    screen.live = live;
    screen.figure.hidden = !live;
    if (live) play(screen.video, screen.video.srcObject as MediaStream | null);
    this.layout();
    const name = this.people.get(key)?.name || t.someone;
    this.say(live ? t.isSharing(name) : t.stoppedSharing(name));
  }

  private dropScreen(key: string): void {
    const screen = this.screens.get(key);
    if (!screen) return;
    this.screens.delete(key);
    screen.video.srcObject = null;
    screen.figure.remove();
    this.layout();
  }

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

  // ---- chat -----------------------------------------------------------------------------

  private renderChat(): HTMLElement {
    this.chatList = h('ol', { class: 'rapport-meet__chat-list' });
    // Scrolls, so it takes keyboard focus; a log is announced as it grows.
    this.chatLog = h(
      'div',
      { class: 'rapport-meet__chat-log', role: 'log', 'aria-labelledby': this.id('chat'), tabindex: '0' },
      this.chatList,
    );
    this.chatInput = h('input', {
      id: this.id('message'),
      type: 'text',
      name: 'message',
      autocomplete: 'off',
      maxlength: '2000',
    }) as HTMLInputElement;
    return h(
      'section',
      { class: 'rapport-meet__chat', 'aria-labelledby': this.id('chat') },
      h('h2', { id: this.id('chat') }, t.chat),
      this.chatLog,
      h(
        'form',
        {
          class: 'rapport-meet__chat-form',
          novalidate: true,
          onsubmit: (e: Event) => {
            e.preventDefault();
            this.sendChat();
          },
        },
        h('label', { for: this.id('message') }, t.message),
        this.chatInput,
        h('button', { type: 'submit', class: 'button primary' }, t.send),
      ),
    );
  }

  private sendChat(): void {
    const input = this.chatInput;
    if (!input) return;
    const text = input.value.trim();
    if (!text || text.length > 2000 || this.ws?.readyState !== WebSocket.OPEN) return;
    this.send({ type: 'chat', text });
    this.chatPending++;
    input.value = '';
    input.focus();
  }

  private chatReceived(msg: ChatMsg): void {
    const log = this.chatLog;
    const list = this.chatList;
    if (String(msg.from) === String(this.me.id) && this.chatPending > 0) this.chatPending--;
    if (!log || !list || typeof msg.text !== 'string') return;
    const at = new Date(msg.at);
    const time = isNaN(at.getTime())
      ? null
      : h('time', { datetime: msg.at }, at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }));
    // Kept at the bottom while one reads the newest messages.
    const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 8;
    list.append(
      h(
        'li',
        { class: String(msg.from) === String(this.me.id) ? 'rapport-meet__chat-own' : null },
        h('p', { class: 'rapport-meet__chat-meta' }, h('span', { class: 'rapport-meet__chat-name' }, msg.name || t.someone), ' ', time),
        h('p', { class: 'rapport-meet__chat-text' }, msg.text),
      ),
    );
    if (atEnd) log.scrollTop = log.scrollHeight;
  }

  private renderCall(): void {
    const audio = this.local?.getAudioTracks()[0];
    const video = this.local?.getVideoTracks()[0];
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
    this.lobbyList = h('ul', { class: 'rapport-meet__lobby-list' });
    this.lobbyBox = h(
      'section',
      { class: 'rapport-meet__lobby', 'aria-labelledby': this.id('lobby'), hidden: true },
      h('h2', { id: this.id('lobby') }, t.lobby),
      this.lobbyList,
    );
    this.grid = h('section', { class: 'rapport-meet__grid', 'aria-label': t.participants });
    this.view.replaceChildren(
      h(
        'div',
        { class: 'rapport-meet__call' },
        this.recordingNote,
        this.lobbyBox,
        this.grid,
        h(
          'div',
          { class: 'rapport-meet__controls', role: 'toolbar', 'aria-label': t.controls },
          mute,
          camera,
          this.shareButton,
          leave,
        ),
        this.permissions.chat && this.renderChat(),
      ),
    );
    play(this.preview, null);
    const self = this.addTile(String(this.me.id), this.me, true);
    play(self.video, this.local?.getVideoTracks().length ? this.local : null);
    this.renderLobby(false);
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
      if (known?.name !== person.name) this.captionScreen(key);
    }
    for (const key of [...this.screens.keys()]) if (!present.has(key)) this.dropScreen(key);
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
    this.grid?.toggleAttribute('data-screen', [...this.screens.values()].some((screen) => screen.live));
  }

  private renderLobby(announce: boolean): void {
    const list = this.lobbyList;
    if (!list || !this.lobbyBox) return;
    const before = new Set([...list.querySelectorAll('li')].map((li) => li.dataset.participant));
    const waiting = this.isHost ? this.waiting : [];
    list.replaceChildren(
      ...waiting.map((person) => {
        const decide = (type: 'admit' | 'decline', label: string, style: string) =>
          h(
            'button',
            {
              type: 'button',
              class: `button small ${style}`,
              onclick: (e: Event) => {
                (e.currentTarget as HTMLElement)
                  .closest('li')
                  ?.querySelectorAll('button')
                  .forEach((b) => (b.disabled = true));
                this.send({ type, id: person.id });
              },
            },
            label,
          );
        return h(
          'li',
          { 'data-participant': String(person.id) },
          h('span', { class: 'rapport-meet__lobby-name' }, person.name),
          decide('admit', t.admit(person.name), 'primary'),
          decide('decline', t.decline(person.name), 'secondary'),
        );
      }),
    );
    this.lobbyBox.hidden = waiting.length === 0;
    if (announce) {
      const fresh = waiting.find((p) => !before.has(String(p.id)));
      if (fresh) this.say(t.isWaiting(fresh.name));
    }
  }

  private setRecording(on: boolean): void {
    this.recording = on;
    if (this.recordingNote) this.recordingNote.hidden = !on;
  }

  /** Screens the server has said nothing about (shared before one joined, as
   * the server reports changes only) show once frames are decoded: a mere
   * packet (padding) is no sign, so `unmute` is not used. */
  private screensDecoded(stats: RTCStatsReport): void {
    const waiting = new Map<string, string>();
    this.screens.forEach((screen, key) => !screen.known && !screen.live && waiting.set(screen.track.id, key));
    if (!waiting.size) return;
    stats.forEach((report) => {
      const key = report.type === 'inbound-rtp' ? waiting.get(report.trackIdentifier) : undefined;
      if (key !== undefined && report.framesDecoded > 0) this.screenLive(key, true);
    });
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
    const mic = this.local?.getAudioTracks()[0];
    stats.forEach((report) => {
      let key: string | undefined;
      if (report.type === 'inbound-rtp' && report.kind === 'audio') key = byTrack.get(report.trackIdentifier);
      else if (report.type === 'media-source' && report.kind === 'audio' && mic?.enabled) key = String(this.me.id);
      if (key !== undefined && typeof report.audioLevel === 'number' && report.audioLevel > loudest) {
        loudest = report.audioLevel;
        best = key;
      }
    });
    this.screensDecoded(stats);
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
    stopAll(this.local);
    this.local = null;
    this.tracks.clear();
    this.remotes.clear();
    this.people.clear();
    this.tiles.forEach((tile) => (tile.video.srcObject = null));
    this.tiles.clear();
    this.screens.forEach((screen) => (screen.video.srcObject = null));
    this.screens.clear();
    this.grid = this.lobbyBox = this.lobbyList = this.recordingNote = this.chatLog = null;
    this.chatInput = this.chatList = null;
    this.chatPending = 0;
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
    play(this.preview, null);
  }

  private restart(): void {
    this.fail('');
    this.say('');
    this.view.replaceChildren(this.prejoin);
    this.setPhase('prejoin');
    this.startPreview();
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
