// Builds the visitor script: `node build.mjs <outdir> [--dev]`.
// Each entry is its own minified IIFE (no ES modules: a cross-origin module script
// would need CORS on Rapport's static files): loader.js, which customers embed,
// and the chunks it loads (chat.js, recorder.js, and rules.js, the action
// rules' evaluator), which register on window.__rapportChunks. replay.js and replay.css are the dashboard's session
// replay and live view, built here because they share rrweb with the recorder;
// meet.js and meet.css are the join page's video call (issue 24);
// cobrowse.js and cobrowse.css are universal co-browsing's page (issue 25).
// Prints each file's raw and gzip size and fails when a budget of issue 23 is
// exceeded (the replay and the call have none: only Rapport's own pages load them).
// `cargo xtask` runs `npm ci` then `node build.mjs $CARGO_TARGET_DIR/site/visitor`.

import { build } from 'esbuild';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const args = process.argv.slice(2);
const dev = args.includes('--dev');
const outdir = args.find((a) => !a.startsWith('--'));
if (!outdir) {
  console.error('usage: node build.mjs <outdir> [--dev]');
  process.exit(2);
}

// Entry points by output name. The visitor's files count towards the budgets.
const visitorEntries = {
  loader: 'src/loader.ts',
  chat: 'src/chat/chat.ts',
  recorder: 'src/recorder/recorder.ts',
  rules: 'src/rules/rules.ts',
};
// Dashboard-only entries: only Rapport's own pages load them.
const entries = { ...visitorEntries, replay: 'src/replay/replay.ts', meet: 'src/meet/meet.ts', cobrowse: 'src/universal_cobrowse/page.ts' };
// Gzip budgets in bytes: the loader alone, and everything together.
const LOADER_BUDGET = 5 * 1024;
const TOTAL_BUDGET = 60 * 1024;

const here = new URL('.', import.meta.url).pathname;
mkdirSync(outdir, { recursive: true });
await build({
  absWorkingDir: here,
  entryPoints: entries,
  outdir,
  bundle: true,
  format: 'iife',
  target: 'es2019',
  minify: !dev,
  sourcemap: dev ? 'inline' : false,
  legalComments: 'none',
  charset: 'utf8',
  logLevel: 'warning',
});

const size = (file) => {
  const bytes = readFileSync(join(outdir, file));
  const gzip = gzipSync(bytes, { level: 9 }).length;
  console.log(`${file.padEnd(12)} ${String(bytes.length).padStart(7)} B raw  ${String(gzip).padStart(6)} B gzip`);
  return gzip;
};
let total = 0;
let failed = false;
for (const name of Object.keys(visitorEntries)) {
  const gzip = size(`${name}.js`);
  total += gzip;
  if (name === 'loader' && !dev && gzip > LOADER_BUDGET) {
    console.error(`loader.js is over its budget of ${LOADER_BUDGET} B gzip`);
    failed = true;
  }
}
console.log(`${'total'.padEnd(12)} ${' '.repeat(14)}${String(total).padStart(6)} B gzip (budget ${TOTAL_BUDGET}, loader ${LOADER_BUDGET})`);
console.log('dashboard only, no budget:');
size('replay.js');
size('replay.css');
size('meet.js');
size('meet.css');
size('cobrowse.js');
size('cobrowse.css');
if (!dev && total > TOTAL_BUDGET) {
  console.error('the visitor script is over its total budget');
  failed = true;
}
process.exit(failed ? 1 : 0);
