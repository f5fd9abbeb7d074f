// Universal co-browsing figures of issue 25, measured against a running
// release server (`cargo xtask bench cobrowse` builds and starts it, creates an
// API key and runs this). Every participant is a raw WebSocket on
// /cobrowse/{id}/ws, as an integrator's client would be: binary messages are
// the shared browser's JPEG screencast frames, text messages JSON. The pages
// browsed are served by this script on 127.0.0.1, which the bench server's
// RAPPORT_WEBHOOK_ALLOW_PRIVATE_NETWORKS lets its browsers reach. Each figure
// is a ratio against a baseline measured in the same run, since the machine is
// shared and noisy. The baselines use a Chromium of this script's own
// (CHROMIUM_PATH, the flags of playwright.config.ts, launched by Playwright
// with a DevTools port), driven over the script's own DevTools WebSocket as
// Rapport drives its browsers: a 1280×720 page, Page.startScreencast (JPEG,
// quality 70, at most 1280×720, every frame; each frame acknowledged on
// arrival and its base64 decoded), Input.dispatchMouseEvent; what is left is
// what Rapport adds (its session task, its socket, its proxy in front of the
// page, the fan-out to participants).
//
// 1. Input to updated frame: a page whose background swaps between two
//    colours on every click. The host's socket (which holds control) sends a
//    click (mousePressed and mouseReleased at the page's centre); the time runs
//    from sending it until the arrival of the first frame whose colour is the
//    new one (frames are time-stamped on arrival, then decoded with jpeg-js in
//    a worker thread, so decoding never delays the next frame's time stamp).
//    p50 and p95 over BENCH_SAMPLES rounds. Baseline in rounds interleaved with
//    those: the same click through Input.dispatchMouseEvent to the same page
//    in the script's own Chromium, until its own screencast shows the new
//    colour. One unmeasured warm-up round of each comes first.
// 2. Frames and bytes per participant: a page with continuous CSS animations;
//    one host and BENCH_GUESTS guests on one session for BENCH_FPS_SECONDS;
//    each participant's frames per second and bytes per second. Baseline: the
//    same page's direct screencast in the script's Chromium over the same time
//    (measured before and after, averaged).
// 3. CPU and memory per session: with 1 and then BENCH_CPU_SESSIONS sessions
//    on the animated page (one participant each), over BENCH_CPU_SECONDS: the
//    server process's CPU time (utime + stime of /proc/RAPPORT_PID/stat, all
//    its threads) plus that of every descendant process (the sessions'
//    Chromium trees; found by walking the parent ids of /proc/*/stat), and
//    their memory (PSS from /proc/*/smaps_rollup, sampled every second and
//    averaged; RSS where PSS cannot be read). Chromium's crash handlers
//    detach themselves (their parent becomes init) and are not counted: a few
//    MiB each, and idle. Baseline: the server idle, with no session, over the
//    same length of time (before and after, averaged). Reports the totals,
//    their ratio to idle, and (total − idle) / N per session.
// 4. Sessions held at ≥ 10 fps: sessions on the animated page (one participant
//    each) are added one at a time, up to BENCH_MAX_SESSIONS (the bench
//    server's RAPPORT_COBROWSE_MAX_SESSIONS is 16); about 3 s after each, every
//    participant's frames per second over 5 s (one more try 3 s later before
//    giving up). The largest N where every participant got ≥ 10 fps, and its
//    lowest fps against the fps of one session alone. The browsers and this
//    script share the machine's cores with the server: this bounds the whole
//    machine, not the server alone.
//
// Each session is ended by its host (`{"type":"end"}`), and the next figure
// waits until its browsers are gone. Each host's socket points now and then
// (pointer null, which changes no frame), so that no session ends idle (the
// bench server's RAPPORT_COBROWSE_IDLE_TIMEOUT is 15 s).
//
// Environment: BASE_URL, API_TOKEN_FILE, ADMIN_EMAIL (the host of the links),
// CHROMIUM_PATH, RAPPORT_PID (the server's process id; without it the CPU and
// memory figures are skipped); BENCH_SAMPLES (default 30), BENCH_GUESTS
// (default 3), BENCH_FPS_SECONDS (default 10), BENCH_CPU_SECONDS (default 10),
// BENCH_CPU_SESSIONS (default 4), BENCH_MAX_SESSIONS (default 16),
// BENCH_FIGURES (which to run, default "1,2,3,4").
import { execSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

// ---- the frame decoder (a worker thread of this same file) -------------------------

if (!isMainThread && workerData === 'decoder') {
  const { default: jpeg } = await import('jpeg-js');
  // The mean colour of a few points of the frame, away from its centre (where
  // the click lands) and its edges.
  parentPort.on('message', ({ id, frame }) => {
    try {
      const image = jpeg.decode(Buffer.from(frame), { useTArray: true, formatAsRGBA: false });
      const { width, height, data } = image;
      const sum = [0, 0, 0];
      const points = [
        [0.25, 0.25],
        [0.75, 0.25],
        [0.25, 0.75],
        [0.75, 0.75],
      ];
      for (const [fx, fy] of points) {
        const i = 3 * (Math.floor(fy * height) * width + Math.floor(fx * width));
        for (let c = 0; c < 3; c++) sum[c] += data[i + c];
      }
      parentPort.postMessage({ id, rgb: sum.map((s) => s / points.length) });
    } catch (e) {
      parentPort.postMessage({ id, error: String(e?.message ?? e) });
    }
  });
} else if (isMainThread) {
  await main();
}

async function main() {
  const { chromium } = await import('@playwright/test');
  const { default: WebSocket } = await import('ws');

  const base = (process.env.BASE_URL ?? 'http://127.0.0.1:3000').replace(/\/$/, '');
  // A tenant API key, read from a file so that it is never on a command line.
  if (!process.env.API_TOKEN_FILE) throw new Error('API_TOKEN_FILE is not set (run this through `cargo xtask bench cobrowse`)');
  const token = readFileSync(process.env.API_TOKEN_FILE, 'utf8').trim();
  const adminEmail = process.env.ADMIN_EMAIL ?? 'admin@rapport.test';
  const pid = process.env.RAPPORT_PID ? Number(process.env.RAPPORT_PID) : null;
  const samples = Number(process.env.BENCH_SAMPLES ?? 30);
  const guests = Number(process.env.BENCH_GUESTS ?? 3);
  const fpsSeconds = Number(process.env.BENCH_FPS_SECONDS ?? 10);
  const cpuSeconds = Number(process.env.BENCH_CPU_SECONDS ?? 10);
  const cpuSessions = Number(process.env.BENCH_CPU_SESSIONS ?? 4);
  const maxSessions = Number(process.env.BENCH_MAX_SESSIONS ?? 16);
  const figures = (process.env.BENCH_FIGURES ?? '1,2,3,4').split(',').map((f) => f.trim());
  const SERVER_CAP = 16; // RAPPORT_COBROWSE_MAX_SESSIONS of the bench server (xtask start_server)
  // The shared browser's settings (server/src/serve.rs), which the baseline copies.
  const VIEWPORT = { width: 1280, height: 720 };
  const SCREENCAST = { format: 'jpeg', quality: 70, maxWidth: 1280, maxHeight: 720, everyNthFrame: 1 };
  const MIN_FPS = 10;
  const SETTLE_MS = 3_000;
  const CAPACITY_WINDOW_MS = 5_000;
  const KEEPALIVE_MS = 3_000;
  // Starting a session starts a Chromium, which the server gives 20 s; the
  // socket's upgrade waits for it.
  const JOIN_TIMEOUT_MS = 45_000;
  const FRAME_TIMEOUT_MS = 20_000;
  const CLICK_TIMEOUT_MS = 5_000;

  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  function percentile(sorted, p) {
    return sorted[Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)))];
  }

  /** Polls `check` every 25 ms until it returns something truthy (which is
   * returned); `check` may throw to give up early. */
  async function until(check, ms, what) {
    const deadline = performance.now() + ms;
    for (;;) {
      const value = check();
      if (value) return value;
      if (performance.now() > deadline) throw new Error(`timed out after ${(ms / 1000).toFixed(0)} s waiting for ${what}`);
      await sleep(25);
    }
  }

  // ---- the site browsed: served on loopback ------------------------------------------

  const COLOURS = { red: [200, 30, 30], blue: [30, 30, 200] };
  const TOGGLE_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>red</title><style>
  html, body { margin: 0; height: 100%; overflow: hidden; cursor: default; user-select: none; }
  body { background: rgb(${COLOURS.red}); }
</style></head><body><script>
  let red = true;
  const swap = () => {
    red = !red;
    document.body.style.background = red ? 'rgb(${COLOURS.red})' : 'rgb(${COLOURS.blue})';
    document.title = red ? 'red' : 'blue';
  };
  document.addEventListener('click', swap);
  document.addEventListener('keydown', swap);
</script></body></html>`;
  // Two continuous animations: a bar whose colour the main thread repaints every
  // frame, and a box the compositor moves and turns.
  const ANIMATED_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Animated</title><style>
  html, body { margin: 0; height: 100%; overflow: hidden; }
  body { background: linear-gradient(90deg, #123, #357); font: 32px sans-serif; color: #fff; }
  .bar { position: absolute; left: 0; right: 0; top: 0; height: 120px; animation: hue 2s linear infinite; }
  .box { position: absolute; left: 0; top: 200px; width: 360px; height: 360px;
         background: linear-gradient(45deg, #e33, #fd3, #33e); animation: move 3s linear infinite alternate; }
  p { position: absolute; left: 40px; top: 130px; margin: 0; }
  @keyframes hue { from { background: hsl(0 80% 50%); } to { background: hsl(360 80% 50%); } }
  @keyframes move { from { transform: translateX(0) rotate(0deg); } to { transform: translateX(900px) rotate(360deg); } }
</style></head><body><div class="bar"></div><p>Co-browsing benchmark: a page that never stops moving.</p><div class="box"></div></body></html>`;

  const site = createServer((req, res) => {
    const body = req.url.startsWith('/toggle') ? TOGGLE_PAGE : req.url.startsWith('/animated') ? ANIMATED_PAGE : null;
    if (!body) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('cache-control', 'no-store');
    res.end(body);
  });
  await new Promise((resolve, reject) => {
    site.once('error', reject);
    site.listen(0, '127.0.0.1', resolve);
  });
  const siteUrl = `http://127.0.0.1:${site.address().port}`;

  // ---- frame colours, decoded in a worker ----------------------------------------------

  const decoder = new Worker(new URL(import.meta.url), { workerData: 'decoder' });
  decoder.unref();
  const decoding = new Map();
  let nextDecode = 0;
  decoder.on('message', ({ id, rgb, error }) => {
    const pending = decoding.get(id);
    decoding.delete(id);
    if (!pending) return;
    if (error) pending.reject(new Error(`a frame could not be decoded: ${error}`));
    else pending.resolve(rgb);
  });
  decoder.on('error', (e) => {
    for (const pending of decoding.values()) pending.reject(e);
    decoding.clear();
  });

  /** The frame's colour: the name of the test page's colour it is near, or null. */
  function colourOf(frame) {
    const id = nextDecode++;
    const copy = new Uint8Array(frame); // the worker gets its own copy
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        decoding.delete(id);
        reject(new Error('the frame decoder did not answer within 10 s'));
      }, 10_000);
      decoding.set(id, {
        resolve: (rgb) => (clearTimeout(timer), resolve(rgb)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      decoder.postMessage({ id, frame: copy }, [copy.buffer]);
    }).then((rgb) => {
      for (const [name, ref] of Object.entries(COLOURS)) {
        if (ref.every((v, i) => Math.abs(v - rgb[i]) < 50)) return name;
      }
      return null;
    });
  }

  // ---- CPU and memory of the server and its descendants -----------------------------------

  const clockTicks = (() => {
    try {
      return Number(execSync('getconf CLK_TCK', { encoding: 'utf8' }).trim()) || 100;
    } catch {
      return 100;
    }
  })();

  /** ppid, utime + stime (clock ticks) and start time of a process, or null if gone. */
  function procStat(p) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces: count fields
      // after it. What follows ") " is field 3 (state); ppid is field 4, utime
      // 14, stime 15, starttime 22.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), start: f[19] };
    } catch {
      return null;
    }
  }

  /** Every live descendant of `root`: Map of pid → its stat. */
  function descendants(root) {
    const all = new Map();
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const s = procStat(name);
      if (s) all.set(Number(name), s);
    }
    const children = new Map();
    for (const [p, s] of all) {
      if (!children.has(s.ppid)) children.set(s.ppid, []);
      children.get(s.ppid).push(p);
    }
    const found = new Map();
    const queue = [...(children.get(root) ?? [])];
    while (queue.length) {
      const p = queue.shift();
      if (found.has(p)) continue;
      found.set(p, all.get(p));
      queue.push(...(children.get(p) ?? []));
    }
    return found;
  }

  const pssReadable = (() => {
    try {
      return /^Pss:/m.test(readFileSync('/proc/self/smaps_rollup', 'utf8'));
    } catch {
      return false;
    }
  })();
  const MEMORY = pssReadable ? 'PSS' : 'RSS';

  /** A process's memory in KiB: PSS where readable, else RSS; 0 if gone. */
  function memoryOf(p) {
    try {
      if (pssReadable) {
        const m = readFileSync(`/proc/${p}/smaps_rollup`, 'utf8').match(/^Pss:\s+(\d+) kB/m);
        if (m) return Number(m[1]);
      }
      const m = readFileSync(`/proc/${p}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
      return m ? Number(m[1]) : 0;
    } catch {
      return 0;
    }
  }

  /** The server's and its descendants' CPU ticks now. */
  function cpuSnapshot() {
    const server = procStat(pid);
    if (!server) throw new Error(`the server (pid ${pid}) is gone`);
    const tree = new Map();
    for (const [p, s] of descendants(pid)) tree.set(`${p}/${s.start}`, s.ticks);
    return { at: performance.now(), server: server.ticks, tree };
  }

  /** CPU between two snapshots: % of one core for the server, its
   * descendants (a process born in between counts whole; one that died in
   * between loses its last moments) and both. */
  function cpuBetween(a, b) {
    const seconds = (b.at - a.at) / 1000;
    const server = b.server - a.server;
    let browsers = 0;
    for (const [key, ticks] of b.tree) browsers += ticks - (a.tree.get(key) ?? 0);
    const pct = (ticks) => (100 * ticks) / clockTicks / seconds;
    return {
      seconds,
      serverTicks: server,
      totalTicks: server + browsers,
      server: pct(server),
      browsers: pct(browsers),
      total: pct(server + browsers),
    };
  }

  /** The server's and its descendants' memory now, KiB. */
  function memorySnapshot() {
    const tree = descendants(pid);
    let browsers = 0;
    for (const p of tree.keys()) browsers += memoryOf(p);
    const server = memoryOf(pid);
    return { server, browsers, total: server + browsers, processes: tree.size };
  }

  /** CPU over `ms`, and memory sampled every second over it (averaged). */
  async function usageOver(ms) {
    const memory = [];
    const a = cpuSnapshot();
    const end = performance.now() + ms;
    while (performance.now() < end) {
      memory.push(memorySnapshot());
      await sleep(Math.min(1000, Math.max(0, end - performance.now())));
    }
    const cpu = cpuBetween(a, cpuSnapshot());
    const mean = (k) => memory.reduce((s, m) => s + m[k], 0) / memory.length;
    return {
      cpu,
      memory: { server: mean('server'), browsers: mean('browsers'), total: mean('total'), processes: mean('processes') },
    };
  }

  /** Waits until the server has no more descendants than it had at the start
   * (every session's browser closed). */
  async function browsersGone() {
    if (pid === null) return sleep(2000);
    try {
      await until(() => descendants(pid).size <= idleProcesses, 20_000, "the ended sessions' browsers to close");
    } catch (e) {
      console.log(`  warning: ${e.message}; ${descendants(pid).size} processes under the server`);
    }
    await sleep(1000);
  }

  const pct = (v) => (v === null || v === undefined ? 'n/a' : `${v.toFixed(1)} %`);
  const mib = (kib) => `${(kib / 1024).toFixed(0)} MiB`;
  const kbs = (bytes) => `${(bytes / 1024).toFixed(0)} KiB/s`;

  /** loaded / idle; an idle that rounds to no tick at all counts as one tick. */
  function cpuRatio(loaded, idle) {
    if (!loaded || !idle) return 'n/a';
    if (idle.totalTicks > 0) return (loaded.total / idle.total).toFixed(1);
    const floor = 100 / clockTicks / idle.seconds;
    return `> ${(loaded.total / floor).toFixed(0)}`;
  }

  // ---- Rapport: links, sessions and participants -----------------------------------------

  /** The WebSocket address of a co-browsing link `{public}/cobrowse/{id}?token=T`. */
  function socketUrl(link) {
    const url = new URL(link);
    const m = url.pathname.match(/\/cobrowse\/([^/]+)\/?$/);
    const linkToken = url.searchParams.get('token');
    if (!m || !linkToken) throw new Error(`unexpected co-browsing link ${url.origin}${url.pathname}`);
    const ws = new URL(`${base}/cobrowse/${m[1]}/ws`);
    ws.protocol = ws.protocol === 'https:' ? 'wss:' : 'ws:';
    ws.searchParams.set('token', linkToken);
    return ws.toString();
  }

  /** A new co-browsing link at `url`: its socket addresses for host and guests. */
  async function createLink(url) {
    const response = await fetch(`${base}/rest/v1/cobrowsing/link`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url, userEmail: adminEmail }),
      signal: AbortSignal.timeout(15_000),
    });
    if (!response.ok) throw new Error(`POST /cobrowsing/link: ${response.status} ${await response.text()}`);
    const links = await response.json();
    return { sessionId: links.sessionId, host: socketUrl(links.hostLink), join: socketUrl(links.joinLink) };
  }

  /** Every socket still open, for the clean-up. */
  const openSockets = new Set();

  /** One participant: a raw socket counting the frames and bytes it receives. */
  class Participant {
    constructor(url, label) {
      this.label = label;
      this.frames = 0;
      this.bytes = 0;
      this.lastFrame = null;
      this.welcome = null;
      this.state = null;
      this.ended = null;
      this.failure = null;
      this.closed = false;
      this.listeners = new Set();
      this.notices = [];
      this.ws = new WebSocket(url, { handshakeTimeout: JOIN_TIMEOUT_MS, perMessageDeflate: false });
      openSockets.add(this);
      this.ws.on('message', (data, isBinary) => {
        const at = performance.now();
        if (isBinary) {
          this.frames++;
          this.bytes += data.length;
          this.lastFrame = data;
          for (const listener of this.listeners) listener(data, at);
          return;
        }
        let message;
        try {
          message = JSON.parse(data.toString());
        } catch {
          return;
        }
        switch (message.type) {
          case 'welcome':
            this.welcome = message;
            break;
          case 'state':
            this.state = message;
            break;
          case 'ended':
            this.ended = message;
            break;
          case 'error':
            this.failure = `${message.code}: ${message.message}`;
            break;
          case 'notice':
            if (this.notices.length < 20) this.notices.push(`${message.code}: ${message.message}`);
            break;
          default:
        }
      });
      this.ws.on('error', (e) => {
        this.failure ??= `socket error: ${e.message}`;
      });
      this.ws.on('close', (code) => {
        this.closed = true;
        this.failure ??= this.ended ? null : `socket closed (${code})`;
        clearInterval(this.keepalive);
        openSockets.delete(this);
      });
    }

    /** Throws if this participant can no longer take part. */
    check() {
      if (this.ended) throw new Error(`${this.label}: the session ended (${this.ended.reason}: ${this.ended.message})`);
      if (this.failure) throw new Error(`${this.label}: ${this.failure}`);
    }

    /** Connects and waits for its welcome and first frame. */
    static async join(url, label) {
      const p = new Participant(url, label);
      try {
        await until(() => (p.check(), p.welcome), JOIN_TIMEOUT_MS, `${label}'s welcome`);
        await until(() => (p.check(), p.frames > 0), FRAME_TIMEOUT_MS, `${label}'s first frame`);
      } catch (e) {
        p.close();
        throw e;
      }
      return p;
    }

    get id() {
      return this.welcome?.you;
    }

    send(message) {
      this.check();
      this.ws.send(JSON.stringify(message));
    }

    /** Points now and then (at nothing), so the session never ends idle. */
    keepAlive() {
      this.keepalive = setInterval(() => {
        if (this.ws.readyState === WebSocket.OPEN) this.ws.send('{"type":"pointer","x":null,"y":null}');
      }, KEEPALIVE_MS);
      this.keepalive.unref();
    }

    /** Calls `fn(frame, arrivedAt)` for each frame; returns its removal. */
    onFrame(fn) {
      this.listeners.add(fn);
      return () => this.listeners.delete(fn);
    }

    counts() {
      return { frames: this.frames, bytes: this.bytes, at: performance.now() };
    }

    close() {
      clearInterval(this.keepalive);
      if (!this.closed) this.ws.terminate();
      openSockets.delete(this);
    }
  }

  /** Sessions still running, for the clean-up. */
  const liveSessions = new Set();

  /** A session at `url`: its host's socket (with control), and `guestCount`
   * guests' sockets, each with a first frame. */
  async function startSession(url, label, guestCount = 0) {
    const link = await createLink(url);
    const session = { label, link, host: null, guests: [] };
    liveSessions.add(session);
    try {
      session.host = await Participant.join(link.host, `${label} host`);
      session.host.keepAlive();
      for (let i = 1; i <= guestCount; i++) session.guests.push(await Participant.join(link.join, `${label} guest ${i}`));
    } catch (e) {
      await endSession(session);
      throw e;
    }
    return session;
  }

  const everyone = (session) => [session.host, ...session.guests].filter(Boolean);

  /** The host ends the session; every socket closes. */
  async function endSession(session) {
    liveSessions.delete(session);
    const host = session.host;
    if (host && !host.closed && !host.ended) {
      try {
        host.ws.send('{"type":"end"}');
        await until(() => host.ended || host.closed, 10_000, `${session.label} to end`);
      } catch (e) {
        console.log(`  warning: ${e.message}`);
      }
    }
    for (const p of everyone(session)) p.close();
  }

  // ---- the baseline: the script's own Chromium over DevTools -------------------------------

  /** A DevTools client over the browser's WebSocket, like Rapport's own
   * (server/src/cobrowse/cdp.rs): calls, fire-and-forget sends, and events,
   * each of a flattened target session. Playwright's own CDP sessions would
   * put its protocol layer between the script and the browser. */
  class DevTools {
    constructor(ws) {
      this.ws = ws;
      this.next = 0;
      this.pending = new Map();
      this.handlers = new Map();
      ws.on('message', (data) => {
        let m;
        try {
          m = JSON.parse(data.toString());
        } catch {
          return;
        }
        if (m.id !== undefined) {
          const call = this.pending.get(m.id);
          this.pending.delete(m.id);
          if (!call) return;
          clearTimeout(call.timer);
          if (m.error) call.reject(new Error(`${call.method}: ${m.error.message}`));
          else call.resolve(m.result);
          return;
        }
        this.handlers.get(`${m.sessionId ?? ''} ${m.method}`)?.(m.params);
      });
      ws.on('close', () => {
        for (const call of this.pending.values()) {
          clearTimeout(call.timer);
          call.reject(new Error(`${call.method}: the browser's DevTools socket closed`));
        }
        this.pending.clear();
      });
    }

    static async connect(url) {
      const ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: 15_000 });
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      return new DevTools(ws);
    }

    /** Sends a command; returns its id. */
    send(sessionId, method, params = {}) {
      const id = ++this.next;
      this.ws.send(JSON.stringify(sessionId ? { id, sessionId, method, params } : { id, method, params }));
      return id;
    }

    /** Sends a command and waits for its answer (30 s at most). */
    call(sessionId, method, params = {}) {
      return new Promise((resolve, reject) => {
        const id = this.send(sessionId, method, params);
        const timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new Error(`${method}: no answer within 30 s`));
        }, 30_000);
        this.pending.set(id, { method, resolve, reject, timer });
      });
    }

    on(sessionId, method, fn) {
      this.handlers.set(`${sessionId ?? ''} ${method}`, fn);
    }

    close() {
      this.ws.terminate();
    }
  }

  /** A page of the script's browser at `path` (a Playwright context sets its
   * 1280×720 viewport), screencast over the script's own DevTools connection
   * as Rapport does: the same parameters, each frame acknowledged on arrival
   * and its base64 decoded. */
  async function directPage(own, path) {
    const { browser, devtools } = own;
    const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 });
    context.setDefaultTimeout(30_000);
    const page = await context.newPage();
    await page.goto(`${siteUrl}${path}`);
    const probe = await context.newCDPSession(page);
    const { targetInfo } = await probe.send('Target.getTargetInfo');
    await probe.detach();
    const { sessionId } = await devtools.call(null, 'Target.attachToTarget', { targetId: targetInfo.targetId, flatten: true });
    await devtools.call(sessionId, 'Page.enable');
    const listeners = new Set();
    const target = {
      devtools,
      session: sessionId,
      frames: 0,
      bytes: 0,
      lastFrame: null,
      onFrame(fn) {
        listeners.add(fn);
        return () => listeners.delete(fn);
      },
      counts() {
        return { frames: target.frames, bytes: target.bytes, at: performance.now() };
      },
      start: () => devtools.call(sessionId, 'Page.startScreencast', SCREENCAST),
      stop: () => devtools.call(sessionId, 'Page.stopScreencast').catch(() => undefined),
      async close() {
        await devtools.call(null, 'Target.detachFromTarget', { sessionId }).catch(() => undefined);
        await context.close().catch(() => undefined);
      },
    };
    devtools.on(sessionId, 'Page.screencastFrame', (frame) => {
      const at = performance.now();
      devtools.send(sessionId, 'Page.screencastFrameAck', { sessionId: frame.sessionId });
      const jpeg = Buffer.from(frame.data, 'base64');
      target.frames++;
      target.bytes += jpeg.length;
      target.lastFrame = jpeg;
      for (const listener of listeners) listener(jpeg, at);
    });
    return target;
  }

  // ---- figure 1: input to updated frame -----------------------------------------------------

  /** Waits for the first frame of `target` (arriving from now on) whose colour
   * is `want`; resolves to its arrival time. */
  function frameOfColour(target, want, ms, what) {
    let off;
    let timer;
    let failed = false;
    const found = new Promise((resolve, reject) => {
      // Frames are decoded in arrival order; the first match wins.
      let chain = Promise.resolve(false);
      off = target.onFrame((frame, at) => {
        chain = chain.then(async (done) => {
          if (done || failed) return true;
          const colour = await colourOf(frame);
          if (colour !== want) return false;
          resolve(at);
          return true;
        });
        chain.catch(reject);
      });
      timer = setTimeout(() => {
        failed = true;
        reject(new Error(`no ${want} frame within ${(ms / 1000).toFixed(0)} s ${what}`));
      }, ms);
    });
    const settled = found.finally(() => {
      off();
      clearTimeout(timer);
    });
    // Whoever awaits it hears of a failure; nobody else is bothered by one.
    settled.catch(() => undefined);
    return settled;
  }

  const other = (colour) => (colour === 'red' ? 'blue' : 'red');
  const CENTRE = { x: VIEWPORT.width / 2, y: VIEWPORT.height / 2 };

  /** One click through Rapport: ms from sending it to the changed frame. */
  async function rapportClick(host, state) {
    const want = other(state.colour);
    const seen = frameOfColour(host, want, CLICK_TIMEOUT_MS, 'after a click through Rapport');
    const t0 = performance.now();
    const click = { x: CENTRE.x, y: CENTRE.y, button: 'left', clickCount: 1, modifiers: 0 };
    host.send({ type: 'mouse', event: 'mousePressed', ...click });
    host.send({ type: 'mouse', event: 'mouseReleased', ...click });
    const at = await seen;
    state.colour = want;
    return at - t0;
  }

  /** One click in the script's own browser: ms from sending it to the changed frame. */
  async function directClick(target, state) {
    const want = other(state.colour);
    const seen = frameOfColour(target, want, CLICK_TIMEOUT_MS, 'after a direct click');
    const t0 = performance.now();
    const click = { x: CENTRE.x, y: CENTRE.y, button: 'left', clickCount: 1, modifiers: 0 };
    // Sent back to back without waiting for answers, as Rapport's session task does.
    target.devtools.send(target.session, 'Input.dispatchMouseEvent', { type: 'mousePressed', buttons: 1, ...click });
    target.devtools.send(target.session, 'Input.dispatchMouseEvent', { type: 'mouseReleased', buttons: 0, ...click });
    const at = await seen;
    state.colour = want;
    return at - t0;
  }

  const results = {};

  async function inputLatency(own) {
    console.log(`1. Input to updated frame (a click until the first frame showing its effect; n = ${samples})`);
    const direct = await directPage(own, '/toggle');
    let session;
    try {
      const directState = { colour: 'red' };
      // Its first frame comes as the screencast starts.
      const firstDirect = frameOfColour(direct, 'red', FRAME_TIMEOUT_MS, "from the script's own screencast");
      await direct.start();
      await firstDirect;
      session = await startSession(`${siteUrl}/toggle`, 'latency');
      const host = session.host;
      await until(() => (host.check(), host.state?.control === host.id), FRAME_TIMEOUT_MS, 'the host to hold control');
      // The page has loaded when the newest frame shows its first colour
      // (frames come only when the page changes).
      const rapportState = { colour: 'red' };
      const deadline = performance.now() + FRAME_TIMEOUT_MS;
      while ((await colourOf(host.lastFrame)) !== 'red') {
        host.check();
        if (performance.now() > deadline) throw new Error('the shared browser never showed the test page');
        await sleep(200);
      }
      const viaRapport = [];
      const directly = [];
      for (let round = 0; round <= samples; round++) {
        const d = await directClick(direct, directState);
        await sleep(100 + Math.random() * 100);
        const r = await rapportClick(host, rapportState);
        const label = round === 0 ? 'warm-up' : `round ${round}/${samples}`;
        if (round === 0 || round % 5 === 0 || round === samples) {
          console.log(`  ${label.padEnd(12)} direct ${d.toFixed(1).padStart(6)} ms   Rapport ${r.toFixed(1).padStart(6)} ms`);
        }
        if (round > 0) {
          directly.push(d);
          viaRapport.push(r);
        }
        // Out of phase with the display's frames, so that rounds sample it.
        await sleep(100 + Math.random() * 100);
      }
      directly.sort((a, b) => a - b);
      viaRapport.sort((a, b) => a - b);
      const r = {
        own50: percentile(directly, 50),
        own95: percentile(directly, 95),
        rap50: percentile(viaRapport, 50),
        rap95: percentile(viaRapport, 95),
      };
      results.latency = r;
      console.log(`  baseline: DevTools input and screencast of a local Chromium   p50 ${r.own50.toFixed(1)} ms  p95 ${r.own95.toFixed(1)} ms`);
      console.log(`  through Rapport (socket, session task, its Chromium, socket)  p50 ${r.rap50.toFixed(1)} ms  p95 ${r.rap95.toFixed(1)} ms`);
      console.log(`  ratio p50: ${(r.rap50 / r.own50).toFixed(2)}; ratio p95: ${(r.rap95 / r.own95).toFixed(2)}`);
    } finally {
      await direct.close();
      if (session) await endSession(session);
      await browsersGone();
    }
  }

  // ---- figure 2: frames and bytes per participant -------------------------------------------

  /** Frames per second and bytes per second between two `counts()`. */
  function rate(a, b) {
    const seconds = (b.at - a.at) / 1000;
    return { fps: (b.frames - a.frames) / seconds, bps: (b.bytes - a.bytes) / seconds };
  }

  /** The direct screencast of the animated page over `ms`. */
  async function directRate(own, ms) {
    const direct = await directPage(own, '/animated');
    try {
      await direct.start();
      await until(() => direct.frames > 0, FRAME_TIMEOUT_MS, "the script's own screencast");
      await sleep(2000);
      const a = direct.counts();
      await sleep(ms);
      return rate(a, direct.counts());
    } finally {
      await direct.stop();
      await direct.close();
    }
  }

  async function framesPerParticipant(own) {
    console.log(`2. Frames and bytes per participant (animated page, 1 host + ${guests} guests, ${fpsSeconds} s)`);
    const before = await directRate(own, fpsSeconds * 1000);
    console.log(`  baseline before: ${before.fps.toFixed(1)} fps, ${kbs(before.bps)}`);
    const session = await startSession(`${siteUrl}/animated`, 'fps', guests);
    let rates;
    try {
      await sleep(2000);
      const people = everyone(session);
      const a = people.map((p) => p.counts());
      await sleep(fpsSeconds * 1000);
      people.forEach((p) => p.check());
      rates = people.map((p, i) => ({ label: p.label, ...rate(a[i], p.counts()) }));
    } finally {
      await endSession(session);
      await browsersGone();
    }
    const after = await directRate(own, fpsSeconds * 1000);
    console.log(`  baseline after:  ${after.fps.toFixed(1)} fps, ${kbs(after.bps)}`);
    const baseline = { fps: (before.fps + after.fps) / 2, bps: (before.bps + after.bps) / 2 };
    for (const r of rates) console.log(`  ${r.label.padEnd(14)} ${r.fps.toFixed(1).padStart(5)} fps  ${kbs(r.bps).padStart(10)}`);
    const mean = (k) => rates.reduce((s, r) => s + r[k], 0) / rates.length;
    const lowest = Math.min(...rates.map((r) => r.fps));
    results.fps = { baseline, rates, fps: mean('fps'), bps: mean('bps'), lowest };
    console.log(`  baseline: the direct screencast   ${baseline.fps.toFixed(1)} fps  ${kbs(baseline.bps)}`);
    console.log(`  through Rapport, per participant  ${mean('fps').toFixed(1)} fps (lowest ${lowest.toFixed(1)})  ${kbs(mean('bps'))}`);
    console.log(`  ratio fps: ${(mean('fps') / baseline.fps).toFixed(2)}; ratio bytes/s: ${(mean('bps') / baseline.bps).toFixed(2)}`);
  }

  // ---- figure 3: CPU and memory per session --------------------------------------------------

  async function perSession() {
    console.log(`3. CPU and memory per session (animated page, 1 participant each; ${cpuSeconds} s windows; memory as ${MEMORY})`);
    if (pid === null) {
      console.log('  skipped: RAPPORT_PID is not set');
      return;
    }
    await sleep(2000);
    const idleBefore = await usageOver(cpuSeconds * 1000);
    const loads = [];
    for (const n of [...new Set([1, cpuSessions])]) {
      const sessions = [];
      try {
        for (let i = 1; i <= n; i++) sessions.push(await startSession(`${siteUrl}/animated`, `cpu ${n}.${i}`));
        await sleep(SETTLE_MS);
        const a = sessions.map((s) => s.host.counts());
        const usage = await usageOver(cpuSeconds * 1000);
        sessions.forEach((s) => s.host.check());
        const fps = sessions.map((s, i) => rate(a[i], s.host.counts()).fps);
        loads.push({ n, ...usage, fps: fps.reduce((x, y) => x + y, 0) / n });
      } finally {
        await Promise.all(sessions.map(endSession));
        await browsersGone();
      }
    }
    const idleAfter = await usageOver(cpuSeconds * 1000);
    const idle = {
      cpu: {
        seconds: idleBefore.cpu.seconds + idleAfter.cpu.seconds,
        totalTicks: idleBefore.cpu.totalTicks + idleAfter.cpu.totalTicks,
        server: (idleBefore.cpu.server + idleAfter.cpu.server) / 2,
        browsers: (idleBefore.cpu.browsers + idleAfter.cpu.browsers) / 2,
        total: (idleBefore.cpu.total + idleAfter.cpu.total) / 2,
      },
      memory: {
        server: (idleBefore.memory.server + idleAfter.memory.server) / 2,
        browsers: (idleBefore.memory.browsers + idleAfter.memory.browsers) / 2,
        total: (idleBefore.memory.total + idleAfter.memory.total) / 2,
      },
    };
    console.log(`  baseline: idle, no session   CPU ${pct(idle.cpu.total)} of a core (before ${pct(idleBefore.cpu.total)}, after ${pct(idleAfter.cpu.total)}); ${MEMORY} ${mib(idle.memory.total)}`);
    for (const l of loads) {
      l.cpuPerSession = (l.cpu.total - idle.cpu.total) / l.n;
      l.memoryPerSession = (l.memory.total - idle.memory.total) / l.n;
      console.log(
        `  ${l.n} session${l.n === 1 ? ' ' : 's'} (${l.fps.toFixed(1)} fps each): CPU ${pct(l.cpu.total)} ` +
          `(server ${pct(l.cpu.server)}, browsers ${pct(l.cpu.browsers)}); ${MEMORY} ${mib(l.memory.total)} ` +
          `(server ${mib(l.memory.server)}, ${l.memory.processes.toFixed(0)} browser processes ${mib(l.memory.browsers)})`,
      );
      console.log(
        `    per session: CPU ${pct(l.cpuPerSession)} of a core, ${MEMORY} ${mib(l.memoryPerSession)}; ` +
          `ratio to idle: CPU ${cpuRatio(l.cpu, idle.cpu)}, memory ${(l.memory.total / idle.memory.total).toFixed(1)}`,
      );
    }
    results.cpu = { idle, loads };
  }

  // ---- figure 4: sessions held at ≥ 10 fps ----------------------------------------------------

  async function mostSessions() {
    const cap = Math.min(maxSessions, SERVER_CAP);
    console.log(`4. Most sessions with every participant at ≥ ${MIN_FPS} fps (animated page; one added at a time, up to ${cap})`);
    console.log('  The browsers and this script share the cores with the server: this bounds the whole machine.');
    const sessions = [];
    let best = 0;
    let bestFlow = null;
    let single = null;
    console.log('     N  lowest fps  mean fps  server CPU  + browsers CPU');
    try {
      for (let n = 1; n <= cap; n++) {
        try {
          sessions.push(await startSession(`${siteUrl}/animated`, `capacity ${n}`));
        } catch (e) {
          console.log(`  ${String(n).padStart(4)}  session ${n} could not start: ${e.message.split('\n')[0]}`);
          break;
        }
        const measure = async () => {
          await sleep(SETTLE_MS);
          const a = sessions.map((s) => s.host.counts());
          const before = pid === null ? null : cpuSnapshot();
          await sleep(CAPACITY_WINDOW_MS);
          const cpu = before ? cpuBetween(before, cpuSnapshot()) : null;
          const fps = sessions.map((s, i) => (s.host.closed || s.host.ended ? 0 : rate(a[i], s.host.counts()).fps));
          return {
            lowest: Math.min(...fps),
            mean: fps.reduce((x, y) => x + y, 0) / fps.length,
            all: fps.every((f) => f >= MIN_FPS),
            cpu,
          };
        };
        let flow = await measure();
        // One more chance: the newcomer's browser may still be warming up.
        if (!flow.all) flow = await measure();
        console.log(
          `  ${String(n).padStart(4)}  ${flow.lowest.toFixed(1).padStart(10)}  ${flow.mean.toFixed(1).padStart(8)}` +
            `  ${pct(flow.cpu?.server).padStart(10)}  ${pct(flow.cpu?.total).padStart(14)}`,
        );
        const gone = sessions.find((s) => s.host.ended || s.host.failure);
        if (gone) console.log(`  ${gone.label}: ${gone.host.ended?.message ?? gone.host.failure}`);
        if (n === 1) single = flow;
        if (!flow.all) break;
        best = n;
        bestFlow = flow;
      }
    } finally {
      await Promise.all(sessions.map(endSession));
      await browsersGone();
    }
    results.capacity = { cap, best, bestFlow, single };
    if (!single) throw new Error('not even one session could start');
    console.log(`  baseline: one session alone   ${single.mean.toFixed(1)} fps`);
    if (best > 0) {
      console.log(
        `  largest N with every participant at ≥ ${MIN_FPS} fps: ${best} of the server's cap of ${SERVER_CAP}; ` +
          `lowest ${bestFlow.lowest.toFixed(1)} fps, ratio to one session ${(bestFlow.lowest / single.mean).toFixed(2)}; ` +
          `frames in all ${(best * bestFlow.mean).toFixed(0)}/s, ratio ${((best * bestFlow.mean) / single.mean).toFixed(2)}`,
      );
    } else {
      console.log(`  not even one session reached ${MIN_FPS} fps`);
    }
  }

  /** The figures side by side, each against its baseline. */
  function summary() {
    const rows = [['figure', 'baseline', 'Rapport', 'ratio']];
    const l = results.latency;
    if (l) {
      rows.push(['1. click → changed frame, p50', `direct ${l.own50.toFixed(1)} ms`, `${l.rap50.toFixed(1)} ms`, (l.rap50 / l.own50).toFixed(2)]);
      rows.push(['   click → changed frame, p95', `direct ${l.own95.toFixed(1)} ms`, `${l.rap95.toFixed(1)} ms`, (l.rap95 / l.own95).toFixed(2)]);
    }
    const f = results.fps;
    if (f) {
      rows.push([`2. frames/s per participant (1+${guests})`, `direct ${f.baseline.fps.toFixed(1)}`, `${f.fps.toFixed(1)} (lowest ${f.lowest.toFixed(1)})`, (f.fps / f.baseline.fps).toFixed(2)]);
      rows.push(['   bytes/s per participant', `direct ${kbs(f.baseline.bps)}`, kbs(f.bps), (f.bps / f.baseline.bps).toFixed(2)]);
    }
    const c = results.cpu;
    if (c) {
      for (const load of c.loads) {
        rows.push([`${load === c.loads[0] ? '3.' : '  '} CPU, ${load.n} session${load.n === 1 ? '' : 's'} (server + browsers)`, `idle ${pct(c.idle.cpu.total)}`, pct(load.cpu.total), cpuRatio(load.cpu, c.idle.cpu)]);
        rows.push(['   CPU per session', '', pct(load.cpuPerSession), '']);
        rows.push([`   ${MEMORY}, ${load.n} session${load.n === 1 ? '' : 's'}`, `idle ${mib(c.idle.memory.total)}`, mib(load.memory.total), (load.memory.total / c.idle.memory.total).toFixed(1)]);
        rows.push([`   ${MEMORY} per session`, '', mib(load.memoryPerSession), '']);
      }
    }
    const m = results.capacity;
    if (m && m.single) {
      rows.push([`4. sessions at ≥ ${MIN_FPS} fps each`, `cap ${SERVER_CAP}`, `${m.best}`, (m.best / SERVER_CAP).toFixed(2)]);
      if (m.bestFlow) {
        rows.push([`   lowest fps at N = ${m.best}`, `1 session ${m.single.mean.toFixed(1)}`, m.bestFlow.lowest.toFixed(1), (m.bestFlow.lowest / m.single.mean).toFixed(2)]);
        rows.push([`   frames/s in all at N = ${m.best}`, `1 session ${m.single.mean.toFixed(1)}`, (m.best * m.bestFlow.mean).toFixed(1), ((m.best * m.bestFlow.mean) / m.single.mean).toFixed(2)]);
      }
    }
    if (rows.length === 1) return;
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    console.log('');
    console.log(`Co-browsing figures (CPU in % of one core; ${clockTicks} clock ticks/s; browsers share the server's cores)`);
    rows.forEach((r, k) => {
      console.log(`  ${r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('   ')}`);
      if (k === 0) console.log(`  ${widths.map((w) => '-'.repeat(w)).join('   ')}`);
    });
  }

  // ---- the run ---------------------------------------------------------------------------------

  if (pid !== null && !procStat(pid)) throw new Error(`RAPPORT_PID ${pid} is not a running process`);
  // What the server has under it before any session (normally nothing).
  const idleProcesses = pid === null ? 0 : descendants(pid).size;

  /** A loopback port nobody listens on now, for the script's browser's DevTools. */
  const freePort = () =>
    new Promise((resolve, reject) => {
      const probe = createNetServer();
      probe.once('error', reject);
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address();
        probe.close(() => resolve(port));
      });
    });

  let browser = null;
  let devtools = null;
  let failed = false;
  let cleaning = false;
  async function cleanUp() {
    if (cleaning) return;
    cleaning = true;
    await Promise.all([...liveSessions].map(endSession));
    for (const p of [...openSockets]) p.close();
    devtools?.close();
    if (browser) await browser.close().catch(() => undefined);
    const closed = new Promise((resolve) => site.close(resolve));
    site.closeAllConnections();
    await closed;
    await decoder.terminate();
  }
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      console.log(`\n${signal}: ending the sessions`);
      const force = setTimeout(() => process.exit(130), 15_000);
      force.unref();
      cleanUp().finally(() => process.exit(130));
    });
  }

  try {
    // The baseline's browser: Playwright starts it with the browser tests'
    // flags (playwright.config.ts), and a DevTools port for the script's own
    // client, so that the baseline talks to it as Rapport talks to its own.
    const debugPort = await freePort();
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        `--remote-debugging-port=${debugPort}`,
        '--remote-debugging-address=127.0.0.1',
      ],
    });
    const version = await fetch(`http://127.0.0.1:${debugPort}/json/version`, { signal: AbortSignal.timeout(15_000) }).then(
      (r) => r.json(),
    );
    devtools = await DevTools.connect(version.webSocketDebuggerUrl);
    const own = { browser, devtools };
    console.log(
      `Co-browsing benchmark against ${base}: server pid ${pid ?? 'unknown'}, test site ${siteUrl}, ` +
        `${availableParallelism()} cores shared by the server, its browsers, this script and its browser`,
    );
    for (const [key, figure] of [
      ['1', () => inputLatency(own)],
      ['2', () => framesPerParticipant(own)],
      ['3', perSession],
      ['4', mostSessions],
    ]) {
      if (!figures.includes(key)) continue;
      try {
        await figure();
      } catch (e) {
        failed = true;
        console.log(`  FAILED: ${e.stack ?? e}`);
      }
    }
    summary();
  } finally {
    await cleanUp();
  }
  if (failed) process.exitCode = 1;
}
