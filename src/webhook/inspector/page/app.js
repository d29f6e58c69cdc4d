// The inspector page: a live list of deliveries from the event stream, a detail pane (the request beside
// the app's answer), a filter, Replay, an editor to replay a changed delivery, and "Copy as curl".
// Every piece of delivery content (ids, names, field names, values, headers, bodies, answers) is put in the
// page with textContent or a form field's value: a sender's text is never read as HTML.
'use strict';

(() => {
  const MAX_ROWS = 1000;
  const SUMMARY_CHARS = 200;
  // Class names come from this list only, never from a delivery.
  const EVENTS = new Set(['new', 'changed', 'unchanged', 'deleted', 'comment', 'other']);
  // Headers the listener sets itself on a replay (the key, the length) or that belong to one connection.
  const NOT_EDITED = new Set(['x-signingkey', 'content-length', 'host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'expect']);
  // A header name as HTTP allows it (RFC 9110 token).
  const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
  // What curl is given for the key: the shell reads it from the environment when the command runs.
  const KEY_PLACEHOLDER = '$CARDBOARD_SIGNING_KEY';
  const URL_KEY = 'cardboard-inspector-replay-url';
  // The stream is opened again after this long when the browser gave it up (an HTTP error, not a network one).
  const RECONNECT_MS = [500, 1000, 2000, 4000];
  // The page's key is its own path: /<token>/.
  const token = location.pathname.split('/')[1] || '';
  const base = `/${token}/`;

  const $ = (id) => document.getElementById(id);
  const listEl = $('list');
  const rowsEl = $('rows');
  const emptyEl = $('empty');
  const statusEl = $('status');
  const filterEl = $('filter');
  const detailEl = $('detail');
  const replayLabel = $('replay-to');
  const replayInput = $('replay-url');

  /** seq → { entry, row, stale } in arrival order. */
  const entries = new Map();
  let ready = null;
  let stats = null;
  let selected = null;
  /** The open detail: its seq, the delivery as loaded, and the pane showing the app's answer. */
  let shown = null;
  /** The stream: 'connecting', 'live', 'lost' (reconnecting), 'stale' (the token is refused); opens counts its openings. */
  let state = 'connecting';
  let opens = 0;
  let reconnectedAt = null;
  let stream = null;
  let retries = 0;
  let historyDone = false;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function button(text, onClick, className) {
    const b = el('button', className || '', text);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }

  function valueText(value) {
    if (value === undefined) return '—';
    return typeof value === 'string' ? value : JSON.stringify(value);
  }

  function bodyText(body) {
    if (body === undefined || body === null) return '';
    return typeof body === 'string' ? body : JSON.stringify(body, null, 2);
  }

  function cut(text, n) {
    return text.length > n ? `${text.slice(0, n - 1)}…` : text;
  }

  function summary(change) {
    switch (change.event) {
      case 'new':
        return 'new card';
      case 'changed':
        return change.changes.map((c) => `${c.field}: ${valueText(c.before)} → ${valueText(c.after)}`).join('; ');
      case 'unchanged':
        return 'no change';
      case 'deleted':
        return 'deleted';
      case 'comment':
        return change.comment && change.comment.content !== undefined ? `comment: ${change.comment.content}` : 'comment';
      default:
        if (change.unread) return 'not read (large body)';
        return change.name !== undefined ? change.name : 'other';
    }
  }

  function cardNameOf(entry) {
    return entry.cardName !== undefined ? entry.cardName : entry.change.cardName;
  }

  /** An answer as `✓ 200 in 12 ms`, `✗ 500 in 3 ms` or `✗ ECONNREFUSED`. */
  function answerText(a, ok) {
    const mark = ok ? '✓' : '✗';
    if (a.status === null || a.status === undefined) return `${mark} ${a.error || 'no answer'}`;
    return `${mark} ${a.status} in ${a.ms} ms`;
  }

  function forwardText(forward) {
    return `${answerText(forward, forward.ok)}${forward.attempt > 1 ? ` (try ${forward.attempt})` : ''}`;
  }

  /** Where a delivery goes: its routes (a filtered run), else --forward-to, else nowhere ([]). */
  function routesOf(entry) {
    if (Array.isArray(entry.routes)) return entry.routes;
    return ready && ready.forwardTo ? [ready.forwardTo] : [];
  }

  /** Whether this run forwards at all: the forward column is shown only then. */
  function runForwards() {
    if (ready && ready.forwardTo) return true;
    for (const item of entries.values()) if (Array.isArray(item.entry.routes)) return true;
    return false;
  }

  /**
   * The forward cell of each row. The listener forwards in arrival order, one at a time per URL: the oldest
   * delivery not yet answered 2xx is the one being forwarded, those after it wait.
   */
  function forwardCells() {
    const busy = new Set();
    const cells = new Map();
    for (const [seq, item] of entries) {
      const entry = item.entry;
      const routes = routesOf(entry);
      if (Array.isArray(entry.routes) && entry.routes.length === 0) cells.set(seq, { text: 'not forwarded', cls: 'skipped', title: 'filtered out: no --forward-to route takes this delivery' });
      else if (entry.forward) {
        const f = entry.forward;
        const title = `${f.url ? `${f.url}: ` : ''}${f.ok ? 'forwarded' : `try ${f.attempt} failed; the listener tries again`}`;
        cells.set(seq, { text: forwardText(f), cls: f.ok ? 'ok' : 'fail', title });
      } else if (routes.length === 0) cells.set(seq, { text: '', cls: 'none', title: '' });
      else if (entry.recorded) cells.set(seq, { text: '—', cls: 'unknown', title: 'from the record file: no forward of it seen in this run' });
      else cells.set(seq, busy.has(routes[0]) ? { text: 'waiting', cls: 'pending', title: `waits for the deliveries before it (${routes.join(', ')})` } : { text: 'forwarding', cls: 'pending', title: `being sent to ${routes.join(', ')}` });
      if (routes.length > 0 && !(entry.forward && entry.forward.ok) && !(entry.recorded && !entry.forward)) for (const r of routes) busy.add(r);
    }
    return cells;
  }

  function showForwards() {
    listEl.classList.toggle('no-forward', !runForwards());
    const cells = forwardCells();
    for (const [seq, item] of entries) {
      const cell = item.row.lastChild;
      const c = cells.get(seq);
      if (!cell || !c) continue;
      if (cell.textContent !== c.text) cell.textContent = c.text;
      cell.className = `fwd ${c.cls}`;
      cell.title = c.title;
    }
  }

  function showStatus() {
    let head;
    if (state === 'live') head = reconnectedAt ? `live · reconnected at ${reconnectedAt}` : 'live';
    else if (state === 'lost') head = opens > 0 ? 'listener unreachable: reconnecting…' : 'connecting…';
    else if (state === 'stale') head = "this page's token is no longer the listener's (it restarted without --record): open the URL it printed; retrying…";
    else head = 'connecting…';
    const parts = [head];
    if (state === 'live') {
      if (stats) parts.push(`${stats.delivered} delivered`, `${stats.refused} refused`);
      parts.push(`${entries.size} shown`);
      if (ready && ready.dropped > 0) parts.push(`${ready.dropped} older dropped`);
      if (ready && ready.forwardTo) parts.push(`forwarding to ${cut(ready.forwardTo, 60)}`);
    }
    statusEl.textContent = parts.join(' · ');
    statusEl.title = ready && ready.forwardTo ? `forwarding to ${ready.forwardTo}` : '';
    statusEl.className = `status ${state}`;
    emptyEl.hidden = entries.size > 0;
  }

  function matches(entry, query) {
    if (!query) return true;
    const change = entry.change;
    const texts = [change.cardId || '', cardNameOf(entry) || '', change.name || '', summary(change), entry.preview, entry.path];
    for (const f of change.changes) texts.push(f.field);
    return texts.some((t) => t.toLowerCase().includes(query));
  }

  function applyFilter(item) {
    item.row.hidden = !matches(item.entry, filterEl.value.trim().toLowerCase());
  }

  function cardCell(entry) {
    const td = el('td', 'card');
    const name = cardNameOf(entry);
    const id = entry.change.cardId;
    if (name) td.append(el('span', 'card-name', name));
    if (id) td.append(el('span', 'card-id', id));
    if (!name && !id) td.append(el('span', 'card-id', '—'));
    td.title = [name, id].filter(Boolean).join(' · ');
    return td;
  }

  function timeCell(entry) {
    const td = el('td', 'time');
    td.append(el('span', 'time-text', entry.receivedAt.slice(11, 23)), el('span', 'seq-tag', `#${entry.seq}`));
    return td;
  }

  function fillRow(row, entry) {
    const text = summary(entry.change);
    const change = el('td', `change ev-${EVENTS.has(entry.change.event) ? entry.change.event : 'other'}`, cut(text, SUMMARY_CHARS));
    if (text.length > SUMMARY_CHARS) change.title = cut(text, 2000);
    row.replaceChildren(
      el('td', 'seq', `#${entry.seq}`),
      timeCell(entry),
      cardCell(entry),
      change,
      el('td', 'size', `${entry.size} B`),
      el('td', 'verified', entry.verified ? 'yes' : 'no'),
      el('td', 'fwd'),
    );
    row.title = `#${entry.seq} · ${entry.receivedAt}${entry.recorded ? ' (from the record file)' : ''}`;
    row.classList.toggle('recorded', entry.recorded);
  }

  /** Add or replace (by seq: the stream sends every kept entry again when it reconnects) a delivery. */
  function addEntry(entry) {
    const old = entries.get(entry.seq);
    const row = old ? old.row : el('tr', 'row');
    if (!old) {
      row.tabIndex = 0;
      row.addEventListener('click', () => select(entry.seq));
      row.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          select(entry.seq);
        }
      });
      // Newest first: before the first row with a lower seq.
      let after = null;
      for (const [seq, item] of entries) if (seq > entry.seq && (after === null || seq < after.seq)) after = { seq, row: item.row };
      if (after) after.row.after(row);
      else rowsEl.prepend(row);
    }
    const item = { entry, row, stale: false };
    entries.set(entry.seq, item);
    fillRow(row, entry);
    applyFilter(item);
    row.classList.toggle('selected', selected === entry.seq);
    while (entries.size > MAX_ROWS) {
      const [seq, first] = entries.entries().next().value;
      first.row.remove();
      entries.delete(seq);
    }
  }

  function select(seq) {
    selected = seq;
    for (const [s, item] of entries) item.row.classList.toggle('selected', s === seq);
    void loadDetail(seq).then(() => {
      // On a narrow screen the detail is below the list.
      if (selected === seq && window.matchMedia('(max-width: 800px)').matches) detailEl.scrollIntoView({ block: 'start' });
    });
  }

  function table(className, head, rows) {
    const tableEl = el('table', className);
    const tr = el('tr');
    for (const h of head) tr.append(el('th', '', h));
    tableEl.append(el('thead'));
    tableEl.tHead.append(tr);
    const body = el('tbody');
    for (const cells of rows) {
      const rowEl = el('tr');
      for (const c of cells) rowEl.append(el('td', '', c));
      body.append(rowEl);
    }
    tableEl.append(body);
    return tableEl;
  }

  async function loadDetail(seq) {
    detailEl.replaceChildren(el('p', 'empty', `Loading #${seq}…`));
    let res;
    let data;
    try {
      res = await fetch(`${base}deliveries/${seq}`, { cache: 'no-store' });
      data = await res.json();
    } catch (err) {
      detailEl.replaceChildren(el('p', 'error', `Could not load #${seq}: ${err}`));
      return;
    }
    if (selected !== seq) return;
    if (!res.ok) {
      detailEl.replaceChildren(el('p', 'error', data && data.error ? data.error : `HTTP ${res.status}`));
      return;
    }
    renderDetail(data);
  }

  function replayTarget() {
    return replayInput.value.trim() || (ready && ready.forwardTo) || '';
  }

  function targetText() {
    const url = replayTarget();
    return url ? ` to ${url}` : ' to the URL under “Replay to”';
  }

  function renderDetail(detail) {
    const change = detail.change;
    const item = entries.get(detail.seq);
    const name = item ? cardNameOf(item.entry) : change.cardName;
    const parts = [el('h2', '', `#${detail.seq} · ${detail.method} ${detail.path}`)];
    const meta = [
      ['received', detail.receivedAt],
      ['card', [name, change.cardId].filter(Boolean).join(' · ') || '—'],
      ['event', change.name !== undefined ? `${change.event} (${change.name})` : change.event],
      ['size', `${detail.size} B`],
    ];
    const dl = el('dl', 'meta');
    for (const [k, v] of meta) dl.append(el('dt', '', k), el('dd', '', v));
    parts.push(dl);

    parts.push(el('h3', '', 'Change'));
    if (change.changes.length > 0) {
      parts.push(table('changes', ['field', 'before', '', 'after'], change.changes.map((f) => [f.field, valueText(f.before), '→', valueText(f.after)])));
    } else if (change.event === 'comment' && change.comment) {
      parts.push(el('p', 'comment', `${change.comment.author ? `${change.comment.author}: ` : ''}${change.comment.content || ''}`));
    } else {
      parts.push(el('p', 'muted', summary(change)));
    }

    // Replay as received; edit then replay; copy as curl.
    const answer = el('div', 'answer');
    const replay = el('div', 'replay');
    const replayButton = button('Replay', () => void doReplay(detail.seq, replayButton, answer, null));
    replay.append(replayButton, el('span', 'muted target', targetText()), answer);
    const editorSlot = el('div', 'editor-slot');
    const curlSlot = el('div', 'curl-slot');
    const tools = el('div', 'actions tools');
    tools.append(
      button('Edit and replay…', () => openEditor(detail, editorSlot, answer), 'secondary edit'),
      button('Copy as curl', () => copyCurl(detail, editorSlot, curlSlot), 'secondary copy-curl'),
    );
    parts.push(el('h3', '', 'Replay'), replay, tools, editorSlot, curlSlot);

    // The request beside the app's answer.
    const request = el('section', 'request');
    request.append(el('h3', '', 'Request headers'));
    request.append(table('headers', ['name', 'value'], Object.keys(detail.headers).map((k) => [k, detail.headers[k]])));
    request.append(el('h3', '', detail.bodyTruncated ? `Request body (first 1 MiB of ${detail.size} B)` : 'Request body'));
    request.append(bodyView(detail));
    const appAnswer = el('section', 'app-answer');
    const exchange = el('div', 'exchange');
    exchange.append(request, appAnswer);
    parts.push(exchange);
    shown = { seq: detail.seq, detail, appAnswer };
    fillAppAnswer();
    detailEl.replaceChildren(...parts);
  }

  /** The app's answer to the last forward of the delivery shown: status, headers and the start of its body. */
  function fillAppAnswer() {
    if (!shown) return;
    const item = entries.get(shown.seq);
    // The list's view of the last try has no headers or body: the detail's is used while it is of the same try.
    const listed = item && item.entry.forward;
    const detailed = shown.detail.forward;
    const forward = detailed && (!listed || (listed.attempt === detailed.attempt && listed.status === detailed.status && listed.url === detailed.url)) ? detailed : listed;
    const nodes = [el('h3', '', "App's answer")];
    if (forward) {
      nodes.push(el('p', forward.ok ? 'ok status-line' : 'error status-line', `${forwardText(forward)}${forward.url ? ` · ${forward.url}` : ''}`));
      if (forward.headers) nodes.push(table('answer-headers', ['name', 'value'], Object.keys(forward.headers).map((k) => [k, forward.headers[k]])));
      if (forward.body !== undefined && forward.body !== null && forward.body !== '') {
        nodes.push(el('h3', '', forward.bodyTruncated ? 'Answer body (its start)' : 'Answer body'));
        nodes.push(el('pre', 'answer-body', bodyText(forward.body)));
      }
    } else {
      const cell = item && item.row.querySelector('td.fwd');
      const what = cell && cell.textContent ? cell.textContent : '';
      nodes.push(el('p', 'muted', what === 'not forwarded' ? 'Not forwarded: no --forward-to route takes it.' : what === 'waiting' || what === 'forwarding' ? `${what}…` : 'No forward of it in this run. Replay it to see an answer.'));
    }
    shown.appAnswer.replaceChildren(...nodes);
  }

  /** The app's answer (its headers and body come with the detail only) of the delivery shown, after a forward of it. */
  async function refreshAnswer(seq) {
    try {
      const res = await fetch(`${base}deliveries/${seq}`, { cache: 'no-store' });
      const data = await res.json();
      if (!res.ok || !shown || shown.seq !== seq || !data.forward) return;
      shown.detail.forward = data.forward;
      fillAppAnswer();
    } catch {
      // The list still shows the forward; the answer's headers show on the next click.
    }
  }

  /**
   * The body pretty-printed. A card's body is shown as a diff against the card's delivery before it: a
   * changed field's old value on a line marked "-" above its new one marked "+", a field not seen before
   * marked "+". Each line is its own element, its text set with textContent.
   */
  function bodyView(detail) {
    const pre = el('pre', 'body');
    const change = detail.change;
    const card = detail.body;
    const isCard = !detail.bodyTruncated && card !== null && typeof card === 'object' && !Array.isArray(card) && card._id === change.cardId && (change.event === 'changed' || change.event === 'new');
    if (!isCard) {
      pre.textContent = bodyText(detail.body);
      return pre;
    }
    const byField = new Map(change.changes.map((f) => [f.field, f]));
    const keys = Object.keys(card);
    const line = (mark, cls, text) => pre.append(el('span', `line${cls ? ` ${cls}` : ''}`, `${mark} ${text}\n`));
    const field = (key, value, comma) => `  ${JSON.stringify(key)}: ${JSON.stringify(value, null, 2).replace(/\n/g, '\n    ')}${comma}`;
    line(' ', '', '{');
    keys.forEach((key, i) => {
      const comma = i < keys.length - 1 ? ',' : '';
      const f = byField.get(key);
      if (f && 'before' in f) line('-', 'del', field(key, f.before, comma));
      line(f && change.event === 'changed' ? '+' : ' ', f && change.event === 'changed' ? 'add' : '', field(key, card[key], comma));
    });
    line(' ', '', '}');
    return pre;
  }

  /** The headers a replay of the delivery sends besides the key and the length, as `name: value` lines. */
  function headerLines(detail) {
    return Object.keys(detail.headers)
      .filter((k) => !NOT_EDITED.has(k.toLowerCase()))
      .map((k) => `${k}: ${detail.headers[k]}`)
      .join('\n');
  }

  /** The body's text as received (a JSON body compact, as the service sends it). */
  function rawBody(detail) {
    return typeof detail.body === 'string' ? detail.body : JSON.stringify(detail.body);
  }

  function isJsonType(headers) {
    for (const k of Object.keys(headers)) {
      if (k.toLowerCase() !== 'content-type') continue;
      const type = headers[k].split(';')[0].trim().toLowerCase();
      return type === 'application/json' || type.endsWith('+json');
    }
    return false;
  }

  /** `name: value` lines as an object; throws an Error naming the line to fix. */
  function parseHeaders(text) {
    const out = {};
    const seen = new Set();
    text.split('\n').forEach((raw, i) => {
      const line = raw.replace(/\r$/, '');
      if (line.trim() === '') return;
      const colon = line.indexOf(':');
      const name = colon === -1 ? '' : line.slice(0, colon).trim();
      const value = colon === -1 ? '' : line.slice(colon + 1).trim();
      if (!HEADER_NAME.test(name)) throw new Error(`Headers, line ${i + 1}: expected “name: value” with a header name (letters, digits, - and the like), got ${JSON.stringify(cut(line, 60))}`);
      if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) throw new Error(`Headers, line ${i + 1}: ${name}'s value has a control character`);
      if (NOT_EDITED.has(name.toLowerCase())) throw new Error(`Headers, line ${i + 1}: ${name} is set by the listener on a replay; remove the line`);
      if (seen.has(name.toLowerCase())) throw new Error(`Headers, line ${i + 1}: ${name} is given twice`);
      seen.add(name.toLowerCase());
      out[name] = value;
    });
    return out;
  }

  /** Where JSON.parse stopped, as a character offset, when its message says (V8: "… at position N …"). */
  function jsonErrorAt(message, text) {
    const m = /position (\d+)/.exec(message);
    if (m) return Number(m[1]);
    return /end of JSON|Unexpected end/i.test(message) ? text.length : -1;
  }

  /** The editor's headers and body, checked: a JSON content type needs a body that parses. Throws { message, field, at }. */
  function editedRequest(headersArea, bodyArea) {
    let headers;
    try {
      headers = parseHeaders(headersArea.value);
    } catch (err) {
      throw { message: err.message, field: headersArea, at: -1 };
    }
    const body = bodyArea.value;
    if (isJsonType(headers)) {
      try {
        JSON.parse(body);
      } catch (err) {
        const at = jsonErrorAt(String(err.message), body);
        let where = '';
        if (at >= 0) {
          const before = body.slice(0, at).split('\n');
          where = ` (line ${before.length}, column ${before[before.length - 1].length + 1})`;
        }
        // V8 adds its own "(line N column M)"; the page's is given for every browser.
        const why = String(err.message).replace(/ \(line \d+ column \d+\)/, '');
        throw { message: `Body is not valid JSON${where}: ${why}. Fix it, or change the content-type header.`, field: bodyArea, at };
      }
    }
    return { headers, body };
  }

  function openEditor(detail, slot, answer) {
    if (slot.firstChild) {
      slot.querySelector('textarea').focus();
      return;
    }
    const form = el('div', 'editor');
    const headersArea = el('textarea', 'edit-headers');
    headersArea.id = 'edit-headers';
    headersArea.rows = Math.min(12, Math.max(3, Object.keys(detail.headers).length + 1));
    headersArea.spellcheck = false;
    headersArea.value = headerLines(detail);
    const bodyArea = el('textarea', 'edit-body');
    bodyArea.id = 'edit-body';
    bodyArea.rows = 12;
    bodyArea.spellcheck = false;
    bodyArea.value = typeof detail.body === 'string' ? detail.body : JSON.stringify(detail.body, null, 2);
    const headersLabel = el('label', '', 'Headers, one “name: value” a line (the listener adds x-signingKey with its key, and content-length)');
    headersLabel.htmlFor = headersArea.id;
    const bodyLabel = el('label', '', detail.bodyTruncated ? 'Body (only its first 1 MiB was kept for the page)' : 'Body');
    bodyLabel.htmlFor = bodyArea.id;
    const error = el('p', 'error edit-error');
    error.hidden = true;
    error.setAttribute('role', 'alert');
    const send = button('Send', () => {
      headersArea.classList.remove('invalid');
      bodyArea.classList.remove('invalid');
      let edited;
      try {
        edited = editedRequest(headersArea, bodyArea);
      } catch (bad) {
        error.textContent = bad.message;
        error.hidden = false;
        bad.field.classList.add('invalid');
        bad.field.focus();
        if (bad.at >= 0) bad.field.setSelectionRange(bad.at, Math.min(bad.at + 1, bad.field.value.length));
        return;
      }
      error.hidden = true;
      void doReplay(detail.seq, send, answer, edited);
    }, 'send');
    const cancel = button('Close', () => slot.replaceChildren(), 'secondary');
    const buttons = el('div', 'buttons');
    buttons.append(send, cancel, el('span', 'muted target', targetText()));
    form.append(headersLabel, headersArea, bodyLabel, bodyArea, error, buttons);
    slot.replaceChildren(form);
    bodyArea.focus();
  }

  /** A shell word that is the exact string: single-quoted, each ' written as '\'' (nothing inside is expanded). */
  function shellQuote(text) {
    return `'${String(text).replace(/'/g, "'\\''")}'`;
  }

  /**
   * The delivery as a curl command: the editor's headers and body when it is open, else as received. The key
   * is never written: `"$CARDBOARD_SIGNING_KEY"` is read from the environment when the command runs.
   */
  function curlCommand(detail, slot) {
    const headersArea = slot.querySelector('textarea.edit-headers');
    const bodyArea = slot.querySelector('textarea.edit-body');
    let headers;
    let body;
    if (headersArea && bodyArea) {
      ({ headers, body } = editedRequest(headersArea, bodyArea));
    } else {
      headers = {};
      for (const k of Object.keys(detail.headers)) if (!NOT_EDITED.has(k.toLowerCase())) headers[k] = detail.headers[k];
      body = rawBody(detail);
    }
    const url = replayTarget();
    const words = ['curl', '-X', shellQuote(detail.method), url ? shellQuote(url) : '"$WEBHOOK_URL"'];
    for (const k of Object.keys(headers)) words.push('-H', shellQuote(`${k}: ${headers[k]}`));
    words.push('-H', `"x-signingKey: ${KEY_PLACEHOLDER}"`);
    // --data-raw: with --data-binary a body starting with @ names a file curl would read and send instead.
    words.push('--data-raw', shellQuote(body));
    // One option a line, as curl commands are usually shown.
    const lines = [words.slice(0, 4).join(' ')];
    for (let i = 4; i < words.length; i += 2) lines.push(`  ${words[i]} ${words[i + 1]}`);
    return lines.join(' \\\n');
  }

  function copyCurl(detail, editorSlot, slot) {
    let text;
    try {
      text = curlCommand(detail, editorSlot);
    } catch (bad) {
      slot.replaceChildren(el('p', 'error', bad.message));
      return;
    }
    const box = el('div', 'curl');
    const area = el('textarea', 'curl-text');
    area.readOnly = true;
    area.spellcheck = false;
    area.rows = Math.min(14, text.split('\n').length + 1);
    area.value = text;
    const note = el('p', 'muted curl-note', `The key is read from CARDBOARD_SIGNING_KEY when the command runs${replayTarget() ? '' : '; set WEBHOOK_URL or type a URL under “Replay to”'}.`);
    const said = el('p', 'muted curl-said', 'Copying…');
    box.append(said, area, note);
    slot.replaceChildren(box);
    const selectIt = () => {
      area.focus();
      area.select();
    };
    // The clipboard API needs the page's permission; without it the text is selected for Ctrl+C.
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(
        () => {
          said.textContent = 'Copied to the clipboard:';
        },
        () => {
          said.textContent = 'Select and copy (the browser did not allow the clipboard):';
          selectIt();
        },
      );
    } else {
      said.textContent = 'Select and copy:';
      selectIt();
    }
  }

  async function doReplay(seq, control, answer, edited) {
    const url = replayInput.value.trim();
    if (!url && !(ready && ready.forwardTo)) {
      answer.replaceChildren(el('p', 'error', 'Enter the URL to replay to under “Replay to” (listen has no --forward-to).'));
      replayInput.focus();
      return;
    }
    control.disabled = true;
    answer.replaceChildren(el('p', 'muted', 'sending…'));
    const request = { seq };
    if (url) request.url = url;
    if (edited) {
      request.headers = edited.headers;
      request.body = edited.body;
    }
    try {
      const res = await fetch(`${base}replay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-cardboard-token': token },
        body: JSON.stringify(request),
      });
      const data = await res.json();
      if (!res.ok) {
        answer.replaceChildren(el('p', 'error', data && data.error ? data.error : `HTTP ${res.status}`));
        return;
      }
      const ok = data.status !== null && data.status >= 200 && data.status < 300;
      const what = data.status !== null ? `${data.status} in ${data.ms} ms` : `${data.error || 'no answer'} after ${data.ms} ms`;
      const nodes = [el('p', ok ? 'ok' : 'error', `${data.url}: ${what}${edited ? ' (edited)' : ''}`)];
      if (data.headers && Object.keys(data.headers).length > 0) nodes.push(table('answer-headers', ['name', 'value'], Object.keys(data.headers).map((k) => [k, data.headers[k]])));
      if (data.body !== undefined && data.body !== '') nodes.push(el('pre', 'answer-body', bodyText(data.body)));
      answer.replaceChildren(...nodes);
    } catch (err) {
      answer.replaceChildren(el('p', 'error', `Replay failed: ${err}`));
    } finally {
      control.disabled = false;
    }
  }

  function parse(e) {
    try {
      return JSON.parse(e.data);
    } catch {
      return null;
    }
  }

  function timeNow() {
    return new Date().toISOString().slice(11, 19);
  }

  /**
   * The event stream. The browser reconnects by itself after a network error (the listener stopped); after
   * an HTTP error (a restarted listener with another token answers 403) it gives up, so the page opens the
   * stream again itself. Each opening sends every kept entry again: entries are replaced by seq, and those
   * the listener no longer keeps are removed once its `ready` says the history is complete.
   */
  function connect() {
    const es = new EventSource(`${base}events`);
    stream = es;
    es.addEventListener('open', () => {
      if (stream !== es) return;
      retries = 0;
      if (opens > 0) reconnectedAt = timeNow();
      opens++;
      state = 'live';
      historyDone = false;
      for (const item of entries.values()) item.stale = true;
      showStatus();
    });
    es.addEventListener('error', () => {
      if (stream !== es) return;
      if (es.readyState === EventSource.CLOSED) {
        es.close();
        void checkToken();
        setTimeout(connect, RECONNECT_MS[Math.min(retries++, RECONNECT_MS.length - 1)]);
      } else if (state !== 'stale') state = 'lost';
      showStatus();
    });
    es.addEventListener('entry', (e) => {
      const entry = parse(e);
      if (!entry) return;
      addEntry(entry);
      // The history sent on opening is shown in one go at its `ready`.
      if (historyDone) {
        showForwards();
        showStatus();
      }
      if (shown && shown.seq === entry.seq) fillAppAnswer();
    });
    es.addEventListener('ready', (e) => {
      ready = parse(e);
      historyDone = true;
      for (const [seq, item] of [...entries]) {
        if (!item.stale) continue;
        item.row.remove();
        entries.delete(seq);
      }
      replayLabel.hidden = false;
      replayInput.placeholder = ready && ready.forwardTo ? `default: ${ready.forwardTo}` : 'http://localhost:3000/hooks';
      showForwards();
      showStatus();
    });
    es.addEventListener('forward', (e) => {
      const forwardEvent = parse(e);
      const item = forwardEvent && entries.get(forwardEvent.seq);
      if (!item) return;
      const view = Object.assign({}, forwardEvent);
      delete view.seq;
      item.entry.forward = view;
      showForwards();
      if (shown && shown.seq === forwardEvent.seq) {
        fillAppAnswer();
        void refreshAnswer(forwardEvent.seq);
      }
    });
    es.addEventListener('cleared', () => {
      // The listener forgot what it kept (its JSON API's clear): so does the page.
      for (const item of entries.values()) item.row.remove();
      entries.clear();
      selected = null;
      shown = null;
      detailEl.replaceChildren(el('p', 'empty', 'Cleared. New deliveries appear in the list as they come.'));
      showForwards();
      showStatus();
    });
    es.addEventListener('stats', (e) => {
      stats = parse(e);
      showStatus();
    });
  }

  /** Why the stream was refused: a 403 means this page's token is not the running listener's. */
  async function checkToken() {
    try {
      const res = await fetch(base, { method: 'HEAD', cache: 'no-store' });
      state = res.status === 403 ? 'stale' : 'lost';
    } catch {
      state = 'lost';
    }
    showStatus();
  }

  // The replay URL is typed once and kept for this tab's session.
  try {
    const kept = sessionStorage.getItem(URL_KEY);
    if (kept) replayInput.value = kept;
  } catch {
    // No storage (a strict browser setting): the URL lasts as long as the page.
  }
  replayInput.addEventListener('input', () => {
    try {
      sessionStorage.setItem(URL_KEY, replayInput.value.trim());
    } catch {
      // As above.
    }
    for (const target of detailEl.querySelectorAll('.target')) target.textContent = targetText();
  });
  filterEl.addEventListener('input', () => {
    for (const item of entries.values()) applyFilter(item);
  });
  showStatus();
  connect();
})();
