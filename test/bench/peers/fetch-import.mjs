// The service docs' recipe, as a peer for `cardboard import`: one `fetch` after another, each row posted
// and its answer read before the next. Usage: node fetch-import.mjs file.csv maxRows (env CARDBOARD_*).
// The bench CSV has no quoted fields, so splitting lines on commas reads it correctly.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

const [file, max] = process.argv.slice(2);
const { CARDBOARD_BASE_URL: base, CARDBOARD_BOARD: board, CARDBOARD_TOKEN: token } = process.env;
const url = `${base}/api/aptlet/${encodeURIComponent(board)}`;
let header;
let sent = 0;
for await (const line of createInterface({ input: createReadStream(file) })) {
  if (header === undefined) {
    header = line.split(',');
    continue;
  }
  if (sent >= Number(max)) break;
  const values = line.split(',');
  const card = Object.fromEntries(header.map((h, i) => [h, values[i]]));
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-token': token }, body: JSON.stringify(card) });
  await res.json();
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  sent++;
}
process.stdout.write(`${sent}\n`);
