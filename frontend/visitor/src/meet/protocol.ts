// The call's signalling messages (see meet.ts for the exchange), as the server
// sends them and the client reads them.

export type Id = string | number;
export interface Person {
  id: Id;
  name: string;
  host?: boolean;
}
export type Source = 'mic' | 'camera' | 'screen';
export interface TrackInfo {
  participant: Id;
  kind?: 'audio' | 'video';
  /** What the sender called it; older servers say nothing (mic or camera). */
  source?: Source;
  /** Whether it carries no media yet, where the server says so. */
  paused?: boolean;
}
export interface Permissions {
  screenShare?: boolean;
  chat?: boolean;
}
export interface ChatMsg {
  type: 'chat';
  from: Id;
  name: string;
  text: string;
  at: string;
}
export type ServerMsg =
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
