// Video-call figures of issue 24, measured against a running release server
// (`cargo xtask bench conference` builds and starts it, creates an API key and
// runs this). Every participant is a browser context of one headless Chromium
// with a fake camera and microphone (Chromium's moving test pattern, asked for
// at 640×360, and a beep), joining an appointment's link /join/{token} as a
// guest and sending its media to Rapport's SFU over loopback. Each figure is a
// ratio against a baseline measured in the same run, since the machine is
// shared and noisy.
//
// 1. Join to first remote frame: one participant is already in the call; a
//    fresh guest context opens the link, waits for its camera preview, types
//    its name, and the time runs from its click on Join until the first
//    decoded frame of any remote video (getStats inbound-rtp video
//    framesDecoded > 0, polled in the page every 10 ms); then it leaves. p50
//    and p95 over BENCH_JOINS rounds. Baseline in the same run, in rounds
//    interleaved with those: the same click-to-first-frame measure on a direct
//    peer-to-peer RTCPeerConnection between two pages of the same browser over
//    loopback, no server at all (the SDP, with all its candidates, is passed
//    through Playwright's evaluate): what WebRTC itself costs. One unmeasured
//    warm-up round of each comes first.
// 2. SFU CPU per forwarded video stream: the server process's CPU time
//    (utime + stime of /proc/RAPPORT_PID/stat, all its threads, in clock ticks)
//    over BENCH_CPU_SECONDS with nobody in a call (idle, measured before and
//    after, averaged), then with BENCH_CPU_PARTICIPANTS people in one call, so
//    N·(N−1) video streams (and as many audio streams) are forwarded; every
//    page must receive the N−1 others' video first. Reports CPU % of one core
//    idle and loaded, (loaded − idle) per forwarded video stream, and the
//    ratio loaded / idle.
// 3. Most participants with every stream flowing: people join one call one at
//    a time, up to BENCH_MAX_PARTICIPANTS (the server's per-room cap is 12);
//    about 5 s after each join, every participant must receive every other
//    participant's video at ≥ 10 frames per second (delta framesDecoded over
//    2 s; one more try 5 s later before giving up). The largest N where all
//    flowed, against the cap, and the server's CPU % at that N against idle.
//    The browser pages encode and decode all that video on the same cores as
//    the server, so this bounds the whole machine, not the SFU alone.
//
// Environment: BASE_URL, API_TOKEN_FILE, CHROMIUM_PATH, RAPPORT_PID (the
// server's process id; without it the CPU figures are skipped); BENCH_JOINS
// (default 15), BENCH_CPU_SECONDS (default 10), BENCH_CPU_PARTICIPANTS
// (default 4), BENCH_MAX_PARTICIPANTS (default 12), BENCH_FIGURES (which to
// run, default "1,2,3").
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { chromium } from '@playwright/test';

const base = (process.env.BASE_URL ?? 'http://127.0.0.1:3000').replace(/\/$/, '');
// A tenant API key, read from a file so that it is never on a command line.
const token = readFileSync(process.env.API_TOKEN_FILE, 'utf8').trim();
const pid = process.env.RAPPORT_PID ? Number(process.env.RAPPORT_PID) : null;
const joins = Number(process.env.BENCH_JOINS ?? 15);
const cpuSeconds = Number(process.env.BENCH_CPU_SECONDS ?? 10);
const cpuParticipants = Number(process.env.BENCH_CPU_PARTICIPANTS ?? 4);
const maxParticipants = Number(process.env.BENCH_MAX_PARTICIPANTS ?? 12);
const figures = (process.env.BENCH_FIGURES ?? '1,2,3').split(',').map((f) => f.trim());
const SERVER_CAP = 12; // MAX_PARTICIPANTS in server/src/media/signal.rs
const MIN_FPS = 10;
const SETTLE_MS = 5_000;
const FPS_WINDOW_MS = 2_000;

const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)))];
}

// ---- the server's CPU ------------------------------------------------------------

const clockTicks = (() => {
  try {
    return Number(execSync('getconf CLK_TCK', { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of the server process (all threads), in clock ticks. */
function cpuTicks() {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name is in parentheses and may hold spaces: count fields after
  // it. What follows ") " is field 3 (state); utime is field 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Starts a CPU window; `stop()` returns the server's CPU % of one core over it. */
function cpuMeter() {
  if (pid === null) return { stop: () => null };
  const ticks = cpuTicks();
  const t0 = performance.now();
  return {
    stop() {
      const seconds = (performance.now() - t0) / 1000;
      const used = cpuTicks() - ticks;
      return { percent: (100 * used) / clockTicks / seconds, ticks: used, seconds };
    },
  };
}

async function cpuOver(ms) {
  const meter = cpuMeter();
  await sleep(ms);
  return meter.stop();
}

const pct = (cpu) => (cpu ? `${cpu.percent.toFixed(1)} %` : 'n/a');

/** loaded / idle; idle that rounds to no tick at all counts as one tick. */
function cpuRatio(loaded, idle) {
  if (!loaded || !idle) return 'n/a';
  if (idle.ticks > 0) return (loaded.percent / idle.percent).toFixed(1);
  const floor = (100 / clockTicks) / idle.seconds;
  return `> ${(loaded.percent / floor).toFixed(0)}`;
}

// ---- Rapport: appointments and participants ---------------------------------------

/** Schedules an appointment that starts now and returns its join link's path. */
async function appointment(title) {
  const response = await fetch(`${base}/rest/v1/appointment`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      title: `${title} ${Date.now()}`,
      date: new Date().toISOString(),
      durationInMinutes: 30,
      timezoneId: 'Europe/Berlin',
      validType: 'HOURS',
      validBefore: 1,
      validAfter: 1,
      permissions: { enableWaitingRoom: false },
    }),
  });
  if (response.status !== 201) throw new Error(`POST /appointment: ${response.status} ${await response.text()}`);
  return new URL((await response.json()).joinLink).pathname;
}

/** A fresh browser context (nobody signed in) and its page. */
async function newPage(browser) {
  const context = await browser.newContext();
  context.setDefaultTimeout(60_000);
  return { context, page: await context.newPage() };
}

/** Opens the join link and gets ready to click Join: the page hydrated, the
 * camera preview playing, the name typed. */
async function prepare(page, link, name) {
  await page.goto(`${base}${link}`);
  await page.getByText('The conference is open.').waitFor();
  await page.waitForFunction(() => document.documentElement.dataset.hydrated === 'true');
  await page.getByRole('heading', { name: 'Join the call' }).waitFor();
  await page.waitForFunction(
    () => document.querySelector('video[aria-label="Your camera preview"]')?.readyState === 4,
  );
  await page.getByLabel('Your name').fill(name);
}

const joinButton = (page) => page.getByRole('button', { name: 'Join', exact: true });

/** Joins and waits until the call shows. */
async function enter(page, link, name) {
  await prepare(page, link, name);
  await joinButton(page).click();
  await page.getByRole('button', { name: 'Leave' }).waitFor();
}

/** Leaves the call: the server drops the participant. */
async function leave(page) {
  await page.getByRole('button', { name: 'Leave' }).click();
  await page.getByText('You left the call.').waitFor();
}

/** Waits until `page` shows `count` people's tiles (itself included). */
async function tiles(page, count) {
  await page.waitForFunction(
    (n) =>
      document.querySelectorAll('[data-rapport-meet] figure.rapport-meet__tile:not(.rapport-meet__tile--screen)')
        .length === n,
    count,
    { timeout: 30_000 },
  );
}

/** Installed in a page before its Join click: from the (trusted) click on a
 * button reading "Join", polls the call's peer connection every 10 ms until a
 * remote video has a decoded frame; `window.benchFirstFrame` resolves to the
 * milliseconds in between. The same probe serves Rapport's page ("rapport":
 * window.RapportMeet.pc()) and the peer-to-peer baseline ("p2p": window.benchPc). */
function installProbe(which) {
  const pcOf = which === 'p2p' ? () => window.benchPc : () => window.RapportMeet?.pc();
  window.benchFirstFrame = new Promise((resolve, reject) => {
    let started = false;
    document.addEventListener(
      'click',
      (event) => {
        const button = event.target?.closest?.('button');
        if (started || !button || button.textContent.trim() !== 'Join') return;
        started = true;
        const t0 = performance.now();
        let busy = false;
        const timer = setInterval(async () => {
          const pc = pcOf();
          if (busy || !pc) return;
          busy = true;
          try {
            let decoded = false;
            (await pc.getStats()).forEach((r) => {
              if (r.type === 'inbound-rtp' && r.kind === 'video' && r.framesDecoded > 0) decoded = true;
            });
            if (decoded) {
              clearInterval(timer);
              resolve(performance.now() - t0);
            }
          } catch {
            // The connection closed under us: the timeout below tells.
          } finally {
            busy = false;
          }
        }, 10);
        setTimeout(() => {
          clearInterval(timer);
          reject(new Error('no remote video frame within 60 s of the click'));
        }, 60_000);
      },
      { capture: true },
    );
  });
  // Nobody may await it if the round fails elsewhere.
  window.benchFirstFrame.catch(() => undefined);
}

/** The video `page` receives over 2 s (or `ms`): frames per second and kbit/s
 * by the name on the tile that shows it (the other participants' cameras). */
function received(page, ms = FPS_WINDOW_MS) {
  return page.evaluate(async (ms) => {
    const pc = window.RapportMeet?.pc();
    if (!pc) return {};
    const names = new Map();
    document
      .querySelectorAll(
        '[data-rapport-meet] figure.rapport-meet__tile:not(.rapport-meet__tile--screen):not(.rapport-meet__tile--self)',
      )
      .forEach((figure) => {
        const track = figure.querySelector('video')?.srcObject?.getVideoTracks?.()[0];
        if (track) names.set(track.id, figure.querySelector('figcaption')?.textContent ?? '');
      });
    const snapshot = async () => {
      const byTrack = new Map();
      (await pc.getStats()).forEach((r) => {
        if (r.type === 'inbound-rtp' && r.kind === 'video') {
          byTrack.set(r.trackIdentifier, { frames: r.framesDecoded ?? 0, bytes: r.bytesReceived ?? 0, at: r.timestamp });
        }
      });
      return byTrack;
    };
    const before = await snapshot();
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, ms));
    const after = await snapshot();
    const wall = (performance.now() - t0) / 1000;
    const videos = {};
    for (const [id, name] of names) {
      const a = before.get(id);
      const b = after.get(id);
      if (!a || !b) {
        videos[name] = { fps: 0, kbps: 0 };
        continue;
      }
      const seconds = b.at > a.at ? (b.at - a.at) / 1000 : wall;
      videos[name] = { fps: (b.frames - a.frames) / seconds, kbps: (8 * (b.bytes - a.bytes)) / 1000 / seconds };
    }
    return videos;
  }, ms);
}

/** Measures every participant's received video at once: for each of them and
 * each other participant, the frames per second; the lowest, the mean, how many
 * of the N·(N−1) streams reach `minFps`, and the total kbit/s. */
async function flows(people, ms = FPS_WINDOW_MS, minFps = MIN_FPS) {
  const seen = await Promise.all(people.map((p) => received(p.page, ms).catch(() => ({}))));
  let lowest = Infinity;
  let sum = 0;
  let ok = 0;
  let kbps = 0;
  let streams = 0;
  people.forEach((p, i) => {
    for (const other of people) {
      if (other === p) continue;
      const video = seen[i][other.name] ?? { fps: 0, kbps: 0 };
      streams++;
      lowest = Math.min(lowest, video.fps);
      sum += video.fps;
      kbps += video.kbps;
      if (video.fps >= minFps) ok++;
    }
  });
  return { streams, ok, all: ok === streams, lowest: streams ? lowest : 0, mean: streams ? sum / streams : 0, kbps };
}

// ---- the peer-to-peer baseline ----------------------------------------------------

// The baseline's page, served by Playwright itself (no server behind it), on a
// loopback origin so that it is a secure context that may use the camera.
const P2P_URL = 'http://127.0.0.1/rapport-bench-p2p';
const P2P_PAGE = `<!doctype html><html lang="en"><title>Peer-to-peer baseline</title>
<button type="button">Join</button>
<video id="preview" autoplay playsinline muted></video><video id="remote" autoplay playsinline></video></html>`;

/** A baseline page with its camera and microphone open and previewed, as
 * Rapport's pre-join has them before the click; it answers offers
 * (`window.benchAnswer`) and, on the Join click, makes one
 * (`window.benchOffer`). Offers and answers carry every ICE candidate. */
async function p2pPage(browser) {
  const { context, page } = await newPage(browser);
  await context.route(P2P_URL, (route) => route.fulfill({ contentType: 'text/html', body: P2P_PAGE }));
  await page.goto(P2P_URL);
  await page.evaluate(async () => {
    const gathered = (pc) =>
      new Promise((resolve) => {
        if (pc.iceGatheringState === 'complete') return resolve();
        pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && resolve());
        setTimeout(resolve, 2000);
      });
    const local = await navigator.mediaDevices.getUserMedia({
      audio: true,
      video: { width: { ideal: 640 }, height: { ideal: 360 } },
    });
    const preview = document.getElementById('preview');
    preview.srcObject = local;
    await new Promise((r) => (preview.readyState === 4 ? r() : preview.addEventListener('canplay', r, { once: true })));
    const connect = () => {
      const pc = new RTCPeerConnection({ bundlePolicy: 'max-bundle' });
      pc.ontrack = (event) => {
        const remote = document.getElementById('remote');
        remote.srcObject = event.streams[0] ?? new MediaStream([event.track]);
        remote.play().catch(() => undefined);
      };
      return pc;
    };
    window.benchAnswer = async (sdp) => {
      window.benchPeer?.close();
      const pc = connect();
      window.benchPeer = pc;
      await pc.setRemoteDescription({ type: 'offer', sdp });
      for (const track of local.getTracks()) pc.addTrack(track, local);
      await pc.setLocalDescription(await pc.createAnswer());
      await gathered(pc);
      return pc.localDescription.sdp;
    };
    document.querySelector('button').addEventListener('click', () => {
      window.benchOffer = (async () => {
        const pc = connect();
        window.benchPc = pc;
        for (const track of local.getTracks()) pc.addTrack(track, local);
        await pc.setLocalDescription(await pc.createOffer());
        await gathered(pc);
        return pc.localDescription.sdp;
      })();
    });
  });
  return { context, page };
}

/** One baseline round: a fresh page joins the one in `present` directly. */
async function p2pRound(browser, present) {
  const { context, page } = await p2pPage(browser);
  try {
    await page.evaluate(installProbe, 'p2p');
    await page.getByRole('button', { name: 'Join', exact: true }).click();
    const offer = await page.evaluate(() => window.benchOffer);
    const answer = await present.evaluate((sdp) => window.benchAnswer(sdp), offer);
    await page.evaluate((sdp) => window.benchPc.setRemoteDescription({ type: 'answer', sdp }), answer);
    return await page.evaluate(() => window.benchFirstFrame);
  } finally {
    await context.close();
    await present.evaluate(() => window.benchPeer?.close());
  }
}

/** One Rapport round: a fresh guest joins the call `host` is in, and leaves. */
async function sfuRound(browser, link, host, name) {
  const { context, page } = await newPage(browser);
  try {
    await prepare(page, link, name);
    await page.evaluate(installProbe, 'rapport');
    await joinButton(page).click();
    const ms = await page.evaluate(() => window.benchFirstFrame);
    await leave(page);
    return ms;
  } finally {
    await context.close();
    // The one in the call is alone again before the next round.
    await tiles(host, 1);
  }
}

// ---- the figures ------------------------------------------------------------------

const results = {};

async function joinToFirstFrame(browser) {
  console.log(`1. Join to first remote video frame (click on Join until a remote frame is decoded; n = ${joins})`);
  const link = await appointment('Bench join');
  const host = await newPage(browser);
  const present = await p2pPage(browser);
  try {
    await enter(host.page, link, 'Present');
    const sfu = [];
    const p2p = [];
    for (let round = 0; round <= joins; round++) {
      const direct = await p2pRound(browser, present.page);
      const viaSfu = await sfuRound(browser, link, host.page, `Guest ${round}`);
      const label = round === 0 ? 'warm-up' : `round ${round}/${joins}`;
      console.log(`  ${label.padEnd(12)} peer-to-peer ${direct.toFixed(0).padStart(5)} ms   Rapport ${viaSfu.toFixed(0).padStart(5)} ms`);
      if (round === 0) continue;
      p2p.push(direct);
      sfu.push(viaSfu);
    }
    p2p.sort((a, b) => a - b);
    sfu.sort((a, b) => a - b);
    const r = {
      p2p50: percentile(p2p, 50),
      p2p95: percentile(p2p, 95),
      sfu50: percentile(sfu, 50),
      sfu95: percentile(sfu, 95),
    };
    results.join = r;
    console.log(`  baseline: direct peer-to-peer over loopback   p50 ${r.p2p50.toFixed(0)} ms  p95 ${r.p2p95.toFixed(0)} ms`);
    console.log(`  through Rapport (page, signalling, SFU)       p50 ${r.sfu50.toFixed(0)} ms  p95 ${r.sfu95.toFixed(0)} ms`);
    console.log(`  ratio p50: ${(r.sfu50 / r.p2p50).toFixed(2)}; ratio p95: ${(r.sfu95 / r.p2p95).toFixed(2)}`);
  } finally {
    await host.context.close();
    await present.context.close();
  }
}

/** Joins `n` guests to `link` one after another; returns them as {name, page, context}. */
async function crowd(browser, link, n, people = []) {
  for (let i = people.length; i < n; i++) {
    const { context, page } = await newPage(browser);
    const name = `Participant ${i + 1}`;
    people.push({ name, page, context });
    await enter(page, link, name);
  }
  return people;
}

async function cpuPerStream(browser) {
  const n = cpuParticipants;
  const streams = n * (n - 1);
  console.log(`2. SFU CPU per forwarded 640×360 video stream (${n} people, ${streams} video streams, ${cpuSeconds} s windows)`);
  if (pid === null) {
    console.log('  skipped: RAPPORT_PID is not set');
    return;
  }
  await sleep(2000); // the previous figure's calls wind down
  const idleBefore = await cpuOver(cpuSeconds * 1000);
  const link = await appointment('Bench CPU');
  const people = [];
  let loaded;
  let flow;
  try {
    await crowd(browser, link, n, people);
    // Every page receives the N−1 others' video before the window opens.
    const deadline = Date.now() + 60_000;
    for (;;) {
      flow = await flows(people, FPS_WINDOW_MS, 1);
      if (flow.all) break;
      if (Date.now() > deadline) throw new Error(`only ${flow.ok} of ${flow.streams} video streams arrive`);
    }
    const meter = cpuMeter();
    flow = await flows(people, cpuSeconds * 1000, 1);
    loaded = meter.stop();
  } finally {
    for (const p of people) await p.context.close();
  }
  await sleep(2000);
  const idleAfter = await cpuOver(cpuSeconds * 1000);
  const idle = {
    percent: (idleBefore.percent + idleAfter.percent) / 2,
    ticks: idleBefore.ticks + idleAfter.ticks,
    seconds: idleBefore.seconds + idleAfter.seconds,
  };
  const perStream = (loaded.percent - idle.percent) / streams;
  results.cpu = { n, streams, idle, loaded, perStream, flow };
  console.log(`  baseline: idle, nobody in a call       ${pct(idle)} of a core (before ${pct(idleBefore)}, after ${pct(idleAfter)})`);
  console.log(`  loaded: ${n} people, ${streams} video streams   ${pct(loaded)} of a core`);
  console.log(`    (video received during the window: ${flow.ok}/${flow.streams} streams flowing, mean ${flow.mean.toFixed(1)} fps, lowest ${flow.lowest.toFixed(1)} fps, ${(flow.kbps / 1000).toFixed(1)} Mbit/s in all; the audio is forwarded too)`);
  console.log(`  per forwarded video stream: ${perStream.toFixed(2)} % of a core`);
  console.log(`  ratio loaded / idle: ${cpuRatio(loaded, idle)}`);
}

async function mostParticipants(browser) {
  const cap = Math.min(maxParticipants, SERVER_CAP);
  console.log(`3. Most participants with every video flowing at ≥ ${MIN_FPS} fps (one joins at a time, up to ${cap})`);
  console.log('  The browser pages encode and decode on the same cores as the server: this bounds the');
  console.log('  whole machine (browsers and SFU together), not the SFU alone.');
  await sleep(2000); // the previous figure's calls wind down
  const idle = pid === null ? null : await cpuOver(Math.min(cpuSeconds, 5) * 1000);
  const link = await appointment('Bench capacity');
  const people = [];
  let best = 1;
  let bestCpu = null;
  console.log('     N  streams  flowing  lowest fps  mean fps  server CPU');
  try {
    for (let n = 1; n <= cap; n++) {
      try {
        await crowd(browser, link, n, people);
      } catch (e) {
        console.log(`  ${String(n).padStart(4)}  participant ${n} could not join: ${e.message.split('\n')[0]}`);
        break;
      }
      if (n === 1) continue;
      await sleep(SETTLE_MS);
      let meter = cpuMeter();
      let flow = await flows(people);
      let cpu = meter.stop();
      if (!flow.all) {
        // One more chance: the newcomer's streams may still be ramping up.
        await sleep(SETTLE_MS);
        meter = cpuMeter();
        flow = await flows(people);
        cpu = meter.stop();
      }
      console.log(
        `  ${String(n).padStart(4)}  ${String(flow.streams).padStart(7)}  ${String(flow.ok).padStart(7)}` +
          `  ${flow.lowest.toFixed(1).padStart(10)}  ${flow.mean.toFixed(1).padStart(8)}  ${pct(cpu).padStart(10)}`,
      );
      if (!flow.all) break;
      best = n;
      bestCpu = cpu;
    }
  } finally {
    for (const p of people) await p.context.close();
  }
  results.capacity = { cap, best, bestCpu, idle };
  console.log(`  largest N with all ${best * (best - 1)} video streams at ≥ ${MIN_FPS} fps: ${best} of the server's cap of ${SERVER_CAP}`);
  console.log(`  server CPU at N = ${best}: ${pct(bestCpu)} of a core (idle ${pct(idle)}; ratio ${cpuRatio(bestCpu, idle)})`);
}

/** The figures side by side, each against its baseline. */
function summary() {
  const rows = [['figure', 'baseline', 'Rapport', 'ratio']];
  const j = results.join;
  if (j) {
    rows.push(['1. join → first remote frame, p50', `P2P ${j.p2p50.toFixed(0)} ms`, `${j.sfu50.toFixed(0)} ms`, (j.sfu50 / j.p2p50).toFixed(2)]);
    rows.push(['   join → first remote frame, p95', `P2P ${j.p2p95.toFixed(0)} ms`, `${j.sfu95.toFixed(0)} ms`, (j.sfu95 / j.p2p95).toFixed(2)]);
  }
  const c = results.cpu;
  if (c) {
    rows.push([`2. server CPU, ${c.n} people (${c.streams} videos)`, `idle ${pct(c.idle)}`, pct(c.loaded), cpuRatio(c.loaded, c.idle)]);
    rows.push(['   per forwarded video stream', '', `${c.perStream.toFixed(2)} %`, '']);
  }
  const m = results.capacity;
  if (m) {
    rows.push(['3. most people, all video ≥ 10 fps', `cap ${SERVER_CAP}`, `${m.best} (${m.best * (m.best - 1)} videos)`, (m.best / SERVER_CAP).toFixed(2)]);
    rows.push([`   server CPU at N = ${m.best}`, `idle ${pct(m.idle)}`, pct(m.bestCpu), cpuRatio(m.bestCpu, m.idle)]);
  }
  if (rows.length === 1) return;
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  console.log('');
  console.log(`Conference figures (CPU in % of one core; ${clockTicks} clock ticks/s; browsers share the server's cores)`);
  rows.forEach((r, k) => {
    console.log(`  ${r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('   ')}`);
    if (k === 0) console.log(`  ${widths.map((w) => '-'.repeat(w)).join('   ')}`);
  });
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--use-fake-device-for-media-stream',
    '--use-fake-ui-for-media-stream',
    '--allow-loopback-in-peer-connection',
  ],
});
console.log(
  `Conference benchmark against ${base}: server pid ${pid ?? 'unknown'}, ${availableParallelism()} cores shared by the server and every browser page`,
);
let failed = false;
try {
  for (const [key, figure] of [
    ['1', joinToFirstFrame],
    ['2', cpuPerStream],
    ['3', mostParticipants],
  ]) {
    if (!figures.includes(key)) continue;
    try {
      await figure(browser);
    } catch (e) {
      failed = true;
      console.log(`  FAILED: ${e.stack ?? e}`);
    }
  }
  summary();
} finally {
  await browser.close();
}
if (failed) process.exitCode = 1;
