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

  function valueText(v) {
    if (v === undefined) return '—';
    return typeof v === 'string' ? v : JSON.stringify(v);
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

  function forwardText(f) {
    if (!f) return '';
    const what = f.status !== null ? String(f.status) : f.error || 'no answer';
    return `${f.ok ? '✓' : '✗'} ${what} · ${f.ms} ms${f.attempt > 1 ? ` (try ${f.attempt})` : ''}`;
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
    const c = entry.change;
    const texts = [c.cardId || '', c.name || '', summary(c), entry.preview, entry.path];
    for (const f of c.changes) texts.push(f.field);
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
    const t = el('table', className);
    const tr = el('tr');
    for (const h of head) tr.append(el('th', '', h));
    t.append(el('thead'));
    t.tHead.append(tr);
    const body = el('tbody');
    for (const cells of rows) {
      const r = el('tr');
      for (const c of cells) r.append(el('td', '', c));
      body.append(r);
    }
    t.append(body);
    return t;
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

  function renderDetail(d) {
    const c = d.change;
    const parts = [el('h2', '', `#${d.seq} · ${d.method} ${d.path}`)];
    const meta = [
      ['received', d.receivedAt],
      ['card', c.cardId || '—'],
      ['event', c.name !== undefined ? `${c.event} (${c.name})` : c.event],
      ['size', `${d.size} B`],
    ];
    if (d.forward) meta.push(['forward', forwardText(d.forward)]);
    const dl = el('dl', 'meta');
    for (const [k, v] of meta) dl.append(el('dt', '', k), el('dd', '', v));
    parts.push(dl);

    parts.push(el('h3', '', 'Change'));
    if (c.changes.length > 0) {
      parts.push(table('changes', ['field', 'before', '', 'after'], c.changes.map((f) => [f.field, valueText(f.before), '→', valueText(f.after)])));
    } else if (c.event === 'comment' && c.comment) {
      parts.push(el('p', 'comment', `${c.comment.author ? `${c.comment.author}: ` : ''}${c.comment.content || ''}`));
    } else {
      parts.push(el('p', 'muted', summary(c)));
    }

    const replay = el('div', 'replay');
    const button = el('button', '', 'Replay');
    button.type = 'button';
    const answer = el('div', 'answer');
    button.addEventListener('click', () => void doReplay(d.seq, button, answer));
    replay.append(button, el('span', 'muted', ready && ready.forwardTo ? ` to ${replayInput.value.trim() || ready.forwardTo}` : ' to the URL under “Replay to”'), answer);
    parts.push(el('h3', '', 'Replay'), replay);

    parts.push(el('h3', '', 'Headers'));
    parts.push(table('headers', ['name', 'value'], Object.keys(d.headers).map((k) => [k, d.headers[k]])));

    parts.push(el('h3', '', d.bodyTruncated ? `Body (first 1 MiB of ${d.size} B)` : 'Body'));
    parts.push(bodyView(d));
    detailEl.replaceChildren(...parts);
  }

  /**
   * The body pretty-printed. A card's body is shown as a diff against the card's delivery before it: a
   * changed field's old value on a line marked "-" above its new one marked "+", a field not seen before
   * marked "+". Each line is its own element, its text set with textContent.
   */
  function bodyView(d) {
    const pre = el('pre', 'body');
    const c = d.change;
    const card = d.body;
    const isCard = !d.bodyTruncated && card !== null && typeof card === 'object' && !Array.isArray(card) && card._id === c.cardId && (c.event === 'changed' || c.event === 'new');
    if (!isCard) {
      pre.textContent = typeof d.body === 'string' ? d.body : JSON.stringify(d.body, null, 2);
      return pre;
    }
    const byField = new Map(c.changes.map((f) => [f.field, f]));
    const keys = Object.keys(card);
    const line = (mark, cls, text) => pre.append(el('span', `line${cls ? ` ${cls}` : ''}`, `${mark} ${text}\n`));
    const field = (key, value, comma) => `  ${JSON.stringify(key)}: ${JSON.stringify(value, null, 2).replace(/\n/g, '\n    ')}${comma}`;
    line(' ', '', '{');
    keys.forEach((key, i) => {
      const comma = i < keys.length - 1 ? ',' : '';
      const f = byField.get(key);
      if (f && 'before' in f) line('-', 'del', field(key, f.before, comma));
      line(f && c.event === 'changed' ? '+' : ' ', f && c.event === 'changed' ? 'add' : '', field(key, card[key], comma));
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
    const f = parse(e);
    const item = f && entries.get(f.seq);
    if (!item) return;
    item.entry.forward = { attempt: f.attempt, ok: f.ok, status: f.status, ms: f.ms, error: f.error };
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
