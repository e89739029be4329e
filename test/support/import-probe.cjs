// A fresh process that imports one entry point of prazo's dist/ and reports, as one JSON line,
// whether the import changed undici's global dispatcher slots and whether the global fetch (and the
// application's undici, when it has one) still works afterwards against a local node:http server.
//
//   node import-probe.cjs <entry file> <esm|cjs> <scenario> [application undici dir]
//
// Scenarios: `none` (nothing set before prazo), `app-first` (the application's undici, from the
// given directory, loads before prazo), `app-after` (the application's undici loads after prazo:
// the given directory is prazo's own copy when npm dedupes the two), `fetch-first` (the global
// fetch ran once before prazo, so Node's bundled undici set the slots).
// CommonJS on purpose: on Node 22 and later, an ES module importing `node:http` loads Node's bundled
// undici, which fills the slots before the probe could see them empty.
const { createServer } = require('node:http');
const { createRequire } = require('node:module');
const { pathToFileURL } = require('node:url');

const [entry, format, scenario, undiciDir] = process.argv.slice(2);
const SLOTS = [Symbol.for('undici.globalDispatcher.1'), Symbol.for('undici.globalDispatcher.2')];
const problems = [];
const snapshot = () => SLOTS.map((slot) => Object.getOwnPropertyDescriptor(globalThis, slot));
const describe = (slots) =>
  slots.map((d) => (d === undefined ? 'absent' : `${d.value?.constructor?.name ?? String(d.value)}`));
const same = (a, b) =>
  a.every((d, i) => {
    const e = b[i];
    if (d === undefined || e === undefined) return d === e;
    return d.value === e.value && d.writable === e.writable && d.configurable === e.configurable;
  });
const loadApplicationUndici = async () => {
  const file = createRequire(`${undiciDir}/`).resolve('undici');
  return format === 'cjs' ? require(file) : import(pathToFileURL(file).href);
};

async function main() {
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;

  let application;
  if (scenario === 'app-first') application = await loadApplicationUndici();
  if (scenario === 'fetch-first') await (await fetch(`${origin}/before`)).text();

  const before = snapshot();
  if (format === 'cjs') require(entry);
  else await import(pathToFileURL(entry).href);
  const after = snapshot();
  if (!same(before, after))
    problems.push(`import changed the slots: ${describe(before).join(', ')} → ${describe(after).join(', ')}`);

  if (scenario === 'app-after') {
    application = await loadApplicationUndici();
    if (application.getGlobalDispatcher() === undefined)
      problems.push("the application's undici, loaded after prazo, has no global dispatcher");
  }
  if (application !== undefined) {
    const res = await application.request(`${origin}/app`);
    const text = await res.body.text();
    if (res.statusCode !== 200 || text !== 'ok')
      problems.push(`the application's undici.request(): ${res.statusCode} ${text}`);
  }

  const res = await fetch(`${origin}/after`);
  const text = await res.text();
  if (res.status !== 200 || text !== 'ok') problems.push(`the global fetch: ${res.status} ${text}`);

  // With nothing set before, the global fetch must run on Node's own undici, not on prazo's copy.
  if (scenario === 'none') {
    const root = createRequire(entry).resolve('undici');
    const prazoAgent = require(root).Agent;
    const onPrazo = SLOTS.filter((slot) => globalThis[slot] instanceof prazoAgent);
    if (onPrazo.length > 0) problems.push(`the global fetch runs on prazo's undici (${onPrazo.map(String)})`);
  }

  server.close();
  console.log(JSON.stringify({ node: process.version, slots: describe(snapshot()), problems }));
}

main().then(
  () => process.exit(0),
  (error) => {
    console.log(
      JSON.stringify({ node: process.version, slots: [], problems: [String(error?.stack ?? error)] }),
    );
    process.exit(0);
  },
);
