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
//
// This file mounts the call and runs its phases (pre-join, connecting, waiting,
// the call, over), dispatching the server's messages to the parts in this
// folder: signalling.ts (the socket), prejoin.ts (the form), devices.ts (one's
// camera and microphone), peer.ts (the peer connection), tiles.ts and
// screens.ts (the grid), controls.ts (the toolbar and screen sharing), lobby.ts
// and chat.ts.

import './meet.css';
import { h } from '../dom';
import { CallChat } from './chat';
import { Controls } from './controls';
import { LocalMedia } from './devices';
import { strings as t } from './i18n';
import { Lobby } from './lobby';
import { play, socketUrl } from './media';
import { CallPeer, latestPc } from './peer';
import { PreJoin } from './prejoin';
import type { Permissions, Person, ServerMsg } from './protocol';
import { Signalling } from './signalling';
import { Tiles } from './tiles';

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

type Phase = 'prejoin' | 'connecting' | 'waiting' | 'call' | 'over';

class Meeting {
  private readonly id: (name: string) => string;
  private readonly status = h('p', { class: 'rapport-meet__status', role: 'status' });
  private readonly alert = h('p', { class: 'rapport-meet__alert', role: 'alert' });
  private readonly view = h('div', { class: 'rapport-meet__view' });
  private phase: Phase = 'prejoin';
  private disposed = false;

  // Pre-join.
  /** One's camera and microphone, their preview and pickers. */
  private readonly media: LocalMedia;
  private readonly prejoin: PreJoin;

  // The call.
  private readonly signalling: Signalling;
  private me: Person = { id: '', name: '' };
  private isHost = false;
  /** The participants' tiles, with others' media and shared screens. */
  private readonly tiles = new Tiles({
    me: () => this.me,
    isHost: () => this.isHost,
    remove: (id) => this.signalling.send({ type: 'remove', id }),
    say: (text) => this.say(text),
  });
  private readonly peer = new CallPeer(this.tiles, {
    send: (msg) => this.signalling.send(msg),
    fail: (text) => this.fail(text),
  });
  /** Mute, camera, screen sharing and leave. */
  private readonly controls = new Controls(this.peer, {
    inCall: () => this.phase === 'call',
    cameraOff: (off) => this.tiles.cameraOff(String(this.me.id), off),
    leave: () => {
      this.signalling.send({ type: 'leave' });
      this.end(t.left, true);
    },
    say: (text) => this.say(text),
  });
  private permissions: Permissions = {};
  /** The call's chat, when the call has one. */
  private chat: CallChat | null = null;
  /** Hosts' list of people waiting to be let in. */
  private lobby: Lobby | null = null;
  /** Who waits to be let in, as the server last said (hosts only hear it). */
  private waiting: Person[] = [];
  private recordingNote: HTMLElement | null = null;
  private recording = false;
  private statsTimer = 0;
  private readonly watchTimer: number;

  constructor(private readonly root: HTMLElement) {
    const n = ++mounts;
    this.id = (name) => `rapport-meet-${n}-${name}`;
    this.signalling = new Signalling(socketUrl(root.dataset.wsUrl || ''), {
      handle: (msg) => this.handle(msg),
      closed: () => this.socketClosed(),
    });
    this.media = new LocalMedia(this.id, () => this.gone());
    this.prejoin = new PreJoin(this.id, this.media, root.dataset.password === 'true', {
      join: () => void this.join(),
      cancel: () => this.cancelWaiting(),
    });

    root.classList.add('rapport-meet');
    root.replaceChildren(this.status, this.alert, this.view);
    this.view.append(this.prejoin.element);
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

  // ---- pre-join: preview and devices ----------------------------------------------------

  private readonly onDeviceChange = () => {
    if (this.phase === 'prejoin') void this.media.listDevices();
  };

  private readonly onPageHide = () => {
    if (this.phase === 'call' || this.phase === 'waiting') this.signalling.send({ type: 'leave' });
  };

  /** Whether this call is over or its element gone (checked after awaits). */
  private gone(): boolean {
    return this.disposed || this.phase === 'over';
  }

  // ---- joining -------------------------------------------------------------------------

  private setPhase(phase: Phase): void {
    this.phase = phase;
    this.prejoin.setState(phase === 'prejoin', phase === 'waiting');
  }

  private async join(): Promise<void> {
    if (this.phase !== 'prejoin') return;
    const name = this.prejoin.name();
    if (!name) return;
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
    const password = this.prejoin.password();
    if (!this.signalling.open(password ? { type: 'hello', name, password } : { type: 'hello', name }))
      this.backToPrejoin(t.connectFailed);
  }

  private backToPrejoin(error: string): void {
    this.signalling.drop();
    this.setPhase('prejoin');
    this.say('');
    if (error) this.fail(error);
  }

  private cancelWaiting(): void {
    this.signalling.send({ type: 'leave' });
    this.backToPrejoin('');
    this.prejoin.focusJoin();
  }

  private socketClosed(): void {
    if (this.phase === 'call') this.end(t.lost, true);
    else if (this.phase === 'connecting' || this.phase === 'waiting')
      this.backToPrejoin(this.alert.textContent ? '' : t.connectFailed);
  }

  private async handle(msg: ServerMsg): Promise<void> {
    if (this.disposed) return;
    switch (msg.type) {
      case 'refused':
        this.backToPrejoin(t.refused[msg.reason] || t.refusedOther);
        this.prejoin.refused(msg.reason);
        return;
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
        return this.peer.answered(msg.sdp);
      case 'offer':
        return this.peer.accept(msg);
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
        this.peer.paused(msg.mid, !!msg.paused);
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
    this.prejoin.accepted();
    this.fail('');
    this.say(t.joined);
    this.renderCall();
    this.recording = !!msg.recording;
    this.setRecording(this.recording);
    this.roster(msg.participants || [], true);
    await this.peer.start(this.media.stream);
    this.statsTimer = window.setInterval(() => void this.findSpeaker(), 1000);
  }

  /** The call's chat panel, sending over this call's socket. */
  private newChat(): HTMLElement {
    this.chat = new CallChat(this.id, (text) => {
      if (!this.signalling.isOpen()) return false;
      this.signalling.send({ type: 'chat', text });
      return true;
    });
    return this.chat.element;
  }

  private renderCall(): void {
    const controls = this.controls.render(this.media.stream, !!this.permissions.screenShare);
    this.recordingNote = h('p', { class: 'note rapport-meet__recording', hidden: true }, t.recording);
    this.lobby = new Lobby(this.id, (type, id) => this.signalling.send({ type, id }));
    this.view.replaceChildren(
      h(
        'div',
        { class: 'rapport-meet__call' },
        this.recordingNote,
        this.lobby.element,
        this.tiles.open(),
        controls,
        this.permissions.chat && this.newChat(),
      ),
    );
    play(this.media.preview, null);
    this.tiles.addSelf(this.media.stream);
    this.showLobby(false);
  }

  /** The roster: a tile per participant, gone with them. */
  private roster(list: Person[], initial = false): void {
    if (this.phase === 'call') this.tiles.roster(list, initial);
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

  /** Once a second, from the call's stats: the active speaker (and screens' first frames). */
  private async findSpeaker(): Promise<void> {
    const pc = this.peer.pc;
    if (!pc || this.phase !== 'call') return;
    let stats: RTCStatsReport;
    try {
      stats = await pc.getStats();
    } catch {
      return;
    }
    this.tiles.heard(stats, this.media.stream?.getAudioTracks()[0]);
  }

  // ---- the end --------------------------------------------------------------------------

  private teardown(): void {
    window.clearInterval(this.statsTimer);
    this.signalling.drop();
    this.controls.clear();
    this.peer.close();
    this.media.stop();
    this.tiles.clear();
    this.recordingNote = null;
    this.lobby = null;
    this.chat = null;
    this.permissions = {};
    this.waiting = [];
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
    this.view.replaceChildren(this.prejoin.element);
    this.setPhase('prejoin');
    this.media.start();
    this.prejoin.focusName();
  }

  private dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.phase === 'call' || this.phase === 'waiting') this.signalling.send({ type: 'leave' });
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

window.RapportMeet = { mountAll, pc: latestPc };
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mountAll);
else mountAll();
