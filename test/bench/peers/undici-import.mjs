// The HTTP library alone, as a peer for `cardboard import`: the CSV's rows posted with undici `request()`
// (what cardboard uses) by N workers sharing one keep-alive Agent, with no mapping, journal or pacing.
// It splits the gap to the load generator into the library's share and cardboard's own.
// Usage: node undici-import.mjs file.csv connections (env CARDBOARD_*). The bench CSV has no quoted fields.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';

const [file, connections] = process.argv.slice(2);
const { CARDBOARD_BASE_URL: base, CARDBOARD_BOARD: board, CARDBOARD_TOKEN: token } = process.env;
const url = `${base}/api/aptlet/${encodeURIComponent(board)}`;
const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
const lines = createInterface({ input: createReadStream(file) })[Symbol.asyncIterator]();
const header = (await lines.next()).value.split(',');
let sent = 0;

async function worker() {
  for (let next = await lines.next(); !next.done; next = await lines.next()) {
    const values = next.value.split(',');
    const card = Object.fromEntries(header.map((h, i) => [h, values[i]]));
    const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-token': token }, body: JSON.stringify(card), dispatcher });
    await res.body.json();
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    sent++;
  }
}

await Promise.all(Array.from({ length: Number(connections) }, worker));
process.stdout.write(`${sent}\n`);
await dispatcher.close();
