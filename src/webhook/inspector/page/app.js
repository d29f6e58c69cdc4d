// The inspector page: a live list of deliveries from the event stream, a detail pane, a filter and Replay.
// Every piece of delivery content (ids, field names, values, headers, bodies, answers) is put in the page
// with textContent: a sender's text is never read as HTML.
'use strict';

(() => {
  const MAX_ROWS = 1000;
  const SUMMARY_CHARS = 200;
  // Class names come from this list only, never from a delivery.
  const EVENTS = new Set(['new', 'changed', 'unchanged', 'deleted', 'comment', 'other']);
  // The page's key is its own path: /<token>/.
  const token = location.pathname.split('/')[1] || '';
  const base = `/${token}/`;

  const $ = (id) => document.getElementById(id);
  const rowsEl = $('rows');
  const emptyEl = $('empty');
  const statusEl = $('status');
  const filterEl = $('filter');
  const detailEl = $('detail');
  const replayLabel = $('replay-to');
  const replayInput = $('replay-url');

  /** seq → { entry, row } in arrival order. */
  const entries = new Map();
  let ready = null;
  let stats = null;
  let connected = false;
  let selected = null;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function valueText(value) {
    if (value === undefined) return '—';
    return typeof value === 'string' ? value : JSON.stringify(value);
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

  function forwardText(forward) {
    if (!forward) return '';
    const what = forward.status !== null ? String(forward.status) : forward.error || 'no answer';
    return `${forward.ok ? '✓' : '✗'} ${what} · ${forward.ms} ms${forward.attempt > 1 ? ` (try ${forward.attempt})` : ''}`;
  }

  function showStatus() {
    const parts = [connected ? 'live' : 'disconnected, retrying…'];
    if (stats) parts.push(`${stats.delivered} delivered`, `${stats.refused} refused`);
    parts.push(`${entries.size} shown`);
    if (ready && ready.dropped > 0) parts.push(`${ready.dropped} older dropped`);
    if (ready && ready.forwardTo) parts.push(`forwarding to ${ready.forwardTo}`);
    statusEl.textContent = parts.join(' · ');
    emptyEl.hidden = entries.size > 0;
  }

  function matches(entry, query) {
    if (!query) return true;
    const change = entry.change;
    const texts = [change.cardId || '', change.name || '', summary(change), entry.preview, entry.path];
    for (const f of change.changes) texts.push(f.field);
    return texts.some((t) => t.toLowerCase().includes(query));
  }

  function applyFilter(item) {
    item.row.hidden = !matches(item.entry, filterEl.value.trim().toLowerCase());
  }

  function fillRow(row, entry) {
    row.replaceChildren(
      el('td', 'seq', `#${entry.seq}`),
      el('td', 'time', entry.receivedAt.slice(11, 23)),
      el('td', 'card', entry.change.cardId || ''),
      el('td', `change ev-${EVENTS.has(entry.change.event) ? entry.change.event : 'other'}`, cut(summary(entry.change), SUMMARY_CHARS)),
      el('td', 'size', `${entry.size} B`),
      el('td', 'verified', entry.verified ? 'yes' : 'no'),
      el('td', entry.forward ? (entry.forward.ok ? 'fwd ok' : 'fwd fail') : 'fwd', forwardText(entry.forward)),
    );
    row.title = `${entry.receivedAt}${entry.recorded ? ' (from the record file)' : ''}`;
    row.classList.toggle('recorded', entry.recorded);
  }

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
      rowsEl.prepend(row);
    }
    const item = { entry, row };
    entries.set(entry.seq, item);
    fillRow(row, entry);
    applyFilter(item);
    row.classList.toggle('selected', selected === entry.seq);
    while (entries.size > MAX_ROWS) {
      const [seq, first] = entries.entries().next().value;
      first.row.remove();
      entries.delete(seq);
    }
    showStatus();
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

  function renderDetail(detail) {
    const change = detail.change;
    const parts = [el('h2', '', `#${detail.seq} · ${detail.method} ${detail.path}`)];
    const meta = [
      ['received', detail.receivedAt],
      ['card', change.cardId || '—'],
      ['event', change.name !== undefined ? `${change.event} (${change.name})` : change.event],
      ['size', `${detail.size} B`],
    ];
    if (detail.forward) meta.push(['forward', forwardText(detail.forward)]);
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

    const replay = el('div', 'replay');
    const button = el('button', '', 'Replay');
    button.type = 'button';
    const answer = el('div', 'answer');
    button.addEventListener('click', () => void doReplay(detail.seq, button, answer));
    replay.append(button, el('span', 'muted', ready && ready.forwardTo ? ` to ${replayInput.value.trim() || ready.forwardTo}` : ' to the URL under “Replay to”'), answer);
    parts.push(el('h3', '', 'Replay'), replay);

    parts.push(el('h3', '', 'Headers'));
    parts.push(table('headers', ['name', 'value'], Object.keys(detail.headers).map((k) => [k, detail.headers[k]])));

    parts.push(el('h3', '', detail.bodyTruncated ? `Body (first 1 MiB of ${detail.size} B)` : 'Body'));
    parts.push(bodyView(detail));
    detailEl.replaceChildren(...parts);
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
      pre.textContent = typeof detail.body === 'string' ? detail.body : JSON.stringify(detail.body, null, 2);
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

  async function doReplay(seq, button, answer) {
    const url = replayInput.value.trim();
    if (!url && !(ready && ready.forwardTo)) {
      answer.replaceChildren(el('p', 'error', 'Enter the URL to replay to under “Replay to” (listen has no --forward-to).'));
      replayInput.focus();
      return;
    }
    button.disabled = true;
    answer.replaceChildren(el('p', 'muted', 'sending…'));
    try {
      const res = await fetch(`${base}replay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-cardboard-token': token },
        body: JSON.stringify(url ? { seq, url } : { seq }),
      });
      const data = await res.json();
      if (!res.ok) {
        answer.replaceChildren(el('p', 'error', data && data.error ? data.error : `HTTP ${res.status}`));
        return;
      }
      const line = `${data.url}: ${data.status !== null ? data.status : data.error || 'no answer'} in ${data.ms} ms`;
      const nodes = [el('p', data.status !== null && data.status >= 200 && data.status < 300 ? 'ok' : 'error', line)];
      if (data.body) nodes.push(el('pre', 'body', data.body));
      answer.replaceChildren(...nodes);
    } catch (err) {
      answer.replaceChildren(el('p', 'error', `Replay failed: ${err}`));
    } finally {
      button.disabled = false;
    }
  }

  function parse(e) {
    try {
      return JSON.parse(e.data);
    } catch {
      return null;
    }
  }

  const stream = new EventSource(`${base}events`);
  stream.addEventListener('open', () => {
    // The server sends every kept entry again on each connection.
    connected = true;
    for (const item of entries.values()) item.row.remove();
    entries.clear();
    showStatus();
  });
  stream.addEventListener('error', () => {
    connected = false;
    showStatus();
  });
  stream.addEventListener('entry', (e) => {
    const entry = parse(e);
    if (entry) addEntry(entry);
  });
  stream.addEventListener('ready', (e) => {
    ready = parse(e);
    replayLabel.hidden = false;
    replayInput.placeholder = ready && ready.forwardTo ? `default: ${ready.forwardTo}` : 'http://localhost:3000/hooks';
    showStatus();
  });
  stream.addEventListener('forward', (e) => {
    const forwardEvent = parse(e);
    const item = forwardEvent && entries.get(forwardEvent.seq);
    if (!item) return;
    item.entry.forward = { attempt: forwardEvent.attempt, ok: forwardEvent.ok, status: forwardEvent.status, ms: forwardEvent.ms, error: forwardEvent.error };
    fillRow(item.row, item.entry);
  });
  stream.addEventListener('stats', (e) => {
    stats = parse(e);
    showStatus();
  });
  filterEl.addEventListener('input', () => {
    for (const item of entries.values()) applyFilter(item);
  });
  showStatus();
})();
