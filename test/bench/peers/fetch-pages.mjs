// A sequential `fetch` loop over the pages (spec 4.5: page=0, 1, … until `[]`), writing each card as one
// NDJSON line to stdout: the peer of `cardboard card list --all --format ndjson`. Env CARDBOARD_*.
const { CARDBOARD_BASE_URL: base, CARDBOARD_BOARD: board, CARDBOARD_TOKEN: token } = process.env;
const url = `${base}/api/aptlet/${encodeURIComponent(board)}`;
for (let page = 0; ; page++) {
  const res = await fetch(`${url}?page=${page}`, { headers: { 'x-token': token } });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const cards = await res.json();
  if (cards.length === 0) break;
  let chunk = '';
  for (const card of cards) chunk += `${JSON.stringify(card)}\n`;
  // Wait for the write when it is buffered, as a well-behaved writer must (stdout may be a slow pipe).
  if (!process.stdout.write(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve));
}
