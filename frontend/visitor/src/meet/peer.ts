// The call's one RTCPeerConnection to Rapport's SFU: the three sendonly m-lines
// (mic, camera, screen) offered once on joining and the server's answer; the
// server's offers of others' media, answered (or ignored on glare); and the
// server's track table (by mid), which says whose each forwarded track is, so
// that incoming tracks go to the right tiles (tiles.ts).

import { strings as t } from './i18n';
import type { ServerMsg, Source, TrackInfo } from './protocol';
import type { Tiles } from './tiles';

/** The latest call's peer connection on the page, for tests (`RapportMeet.pc()`). */
let latest: RTCPeerConnection | null = null;
export const latestPc = (): RTCPeerConnection | null => latest;

/** What the peer connection needs of the call page. */
export interface PeerHost {
  /** Sends a signalling message. */
  send(msg: Record<string, unknown>): void;
  /** Says what went wrong in the alert line. */
  fail(text: string): void;
}

export class CallPeer {
  /** The connection, while in a call. */
  pc: RTCPeerConnection | null = null;
  /** The screen's m-line, which carries a track only while one shares. */
  screenSender: RTCRtpSender | null = null;
  private offerPending = false;
  private readonly tracks = new Map<string, TrackInfo>(); // by mid

  constructor(
    private readonly tiles: Tiles,
    private readonly host: PeerHost,
  ) {}

  /** Connects and offers one's `local` media: once, on joining. */
  async start(local: MediaStream | null): Promise<void> {
    const pc = new RTCPeerConnection({ bundlePolicy: 'max-bundle' });
    this.pc = pc;
    latest = pc;
    pc.ontrack = (event) => this.onTrack(event);
    pc.onconnectionstatechange = () => {
      if (this.pc === pc && pc.connectionState === 'failed') this.host.fail(t.mediaFailed);
    };
    // Always three sendonly m-lines, audio, camera and screen, also without a
    // device or a share (then they carry nothing): the server sees the same
    // shape from everyone, and sharing a screen needs no renegotiation.
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
    this.host.send({ type: 'offer', sdp: pc.localDescription!.sdp, sources });
  }

  /** The server's answer to one's offer. */
  async answered(sdp: string): Promise<void> {
    if (this.pc && this.pc.signalingState === 'have-local-offer') {
      await this.pc.setRemoteDescription({ type: 'answer', sdp });
      this.offerPending = false;
    }
  }

  /** A server offer of others' media: answered, unless one's own offer is. */
  async accept(msg: Extract<ServerMsg, { type: 'offer' }>): Promise<void> {
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
      this.host.fail(t.mediaFailed);
      throw e;
    }
    this.host.send({ type: 'answer', sdp: pc.localDescription!.sdp });
    // m-lines the server stopped (a participant left): drop their tracks.
    // Chrome drops stopped transceivers from getTransceivers() once negotiated.
    const after = pc.getTransceivers();
    for (const transceiver of before) {
      if (after.includes(transceiver) && transceiver.currentDirection !== 'stopped') continue;
      this.tiles.dropTrack(transceiver.receiver.track);
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
      if (this.tiles.knows(participant)) info = { participant, source: screen ? 'screen' : undefined };
    }
    if (!info) {
      console.warn('Rapport call: a track nobody sends', mid);
      return;
    }
    const key = String(info.participant);
    const track = event.track;
    if (info.source === 'screen' && track.kind === 'video') {
      this.tiles.addScreen(key, track, info.paused);
      return;
    }
    this.tiles.addTrack(key, track);
  }

  /** A forwarded video (`← track {mid, paused}`) stopped or started carrying frames. */
  paused(mid: string, paused: boolean): void {
    const info = this.tracks.get(mid);
    if (!info || info.kind === 'audio') return;
    const key = String(info.participant);
    if (info.source === 'screen') this.tiles.screenLive(key, !paused);
    else this.tiles.videoPaused(key, paused);
  }

  /** Closes the connection and forgets its tracks (the call ended). */
  close(): void {
    this.screenSender = null;
    this.pc?.close();
    this.pc = null;
    this.tracks.clear();
    this.offerPending = false;
  }
}
