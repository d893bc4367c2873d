/* mhttp daemon's status page (served as /status.js): polls the daemon's own JSON-RPC (POST
 * /jsonrpc, the secret as every call's first parameter, as aria2's front ends send it) and shows
 * every value through textContent, never as markup. */
'use strict';

const RPC = 'jsonrpc';  /* relative: the page is served at / and /status */
const EVERY_MS = 1000;
const KEYS = ['gid', 'status', 'totalLength', 'completedLength', 'downloadSpeed', 'files',
              'errorMessage'];
const ACTIONS = {pause: 'aria2.pause', resume: 'aria2.unpause', remove: 'aria2.remove',
                 forget: 'aria2.removeDownloadResult'};
const STORE = 'mhttp-daemon-token';

let token = '';
let seq = 0;
let timer = 0;
let busy = false, again = false;
const rows = new Map();   /* key (gid, or gid|iface|address for a path) -> its <tr> */

const $ = id => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function size(n) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Number(n) || 0, i = 0;
  for (; v >= 1024 && i < u.length - 1; i++) v /= 1024;
  return (i ? v.toFixed(1) : String(v)) + ' ' + u[i];
}

function say(text, bad) {
  $('msg').textContent = text;
  $('msg').className = bad ? 'bad' : '';
}

function state(text, bad) {
  $('state').textContent = text;
  $('state').className = bad ? 'bad' : '';
}

/* One POST carrying calls ([method, params] each): their answers in the same order, each
 * {result} or {error}. The token goes first in every call's params (none when empty). */
async function batch(calls) {
  if (!calls.length) return [];
  const body = calls.map(([method, p]) =>
    ({jsonrpc: '2.0', id: String(++seq), method, params: token ? ['token:' + token, ...p] : p}));
  const r = await fetch(RPC, {method: 'POST', body: JSON.stringify(body), cache: 'no-store',
                              credentials: 'omit', headers: {'Content-Type': 'application/json'}});
  const ans = await r.json();
  if (!Array.isArray(ans)) throw new Error(ans.error ? ans.error.message : 'unexpected answer');
  const byId = new Map(ans.map(a => [a.id, a]));
  return body.map(b => byId.get(b.id) || {error: {message: 'no answer'}});
}

async function call(method, params) {
  const [a] = await batch([[method, params]]);
  if (a.error) throw new Error(a.error.message);
  return a.result;
}

function name(d) {
  const f = (d.files || [])[0] || {};
  if (f.path) return f.path.split('/').pop();
  const u = (f.uris || [])[0];
  return u ? u.uri : d.gid;
}

/* the row of a download, made once and updated in place (its buttons stay clickable) */
function dlRow(gid) {
  let tr = rows.get(gid);
  if (tr) return tr;
  tr = el('tr', 'dl');
  tr.dataset.gid = gid;
  const prog = el('td', 'progress');
  prog.append(el('progress'), el('span'));
  const act = el('td', 'actions');
  act.append(el('button', 'toggle'), el('button', 'remove', 'Remove'));
  tr.append(el('td', 'name'), el('td', 'status'), prog, el('td', 'speed'), el('td', 'srtt'), act);
  rows.set(gid, tr);
  return tr;
}

function fillDl(tr, d) {
  const total = Number(d.totalLength), done = Number(d.completedLength);
  const stopped = !['active', 'waiting', 'paused'].includes(d.status);
  tr.dataset.status = d.status;
  tr.querySelector('.name').textContent = name(d);
  tr.querySelector('.name').title = name(d);
  tr.querySelector('.status').textContent = d.status + (d.errorMessage ? ': ' + d.errorMessage : '');
  const bar = tr.querySelector('progress');
  bar.max = total || 1;
  bar.value = total ? done : 0;
  tr.querySelector('.progress span').textContent = size(done) + ' / ' + (total ? size(total) : '?') +
    (total ? ' (' + (100 * done / total).toFixed(1) + ' %)' : '');
  tr.querySelector('.speed').textContent = d.status === 'active' ? size(d.downloadSpeed) + '/s' : '';
  const toggle = tr.querySelector('.toggle');
  toggle.hidden = stopped;
  toggle.dataset.action = d.status === 'paused' ? 'resume' : 'pause';
  toggle.textContent = d.status === 'paused' ? 'Resume' : 'Pause';
  tr.querySelector('.remove').dataset.action = stopped ? 'forget' : 'remove';
}

/* one (interface, server) path of an active download: its rate, share and SRTT */
function pathRow(gid, s, sum) {
  const key = gid + '|' + s.interface + '|' + s.address;
  let tr = rows.get(key);
  if (!tr) {
    tr = el('tr', 'path');
    tr.dataset.gid = gid;
    tr.dataset.iface = s.interface;
    tr.append(el('td', 'iface'), el('td', 'address'), el('td', 'share'), el('td', 'speed'),
              el('td', 'srtt'), el('td'));
    rows.set(key, tr);
  }
  const rate = Number(s.downloadSpeed);
  tr.querySelector('.iface').textContent = 'via ' + s.interface;
  tr.querySelector('.address').textContent = s.address;
  tr.querySelector('.share').textContent = sum ? (100 * rate / sum).toFixed(0) + ' %' : '-';
  tr.querySelector('.speed').textContent = size(rate) + '/s';
  tr.querySelector('.srtt').textContent = (Number(s.srttUs) / 1000).toFixed(1) + ' ms';
  return tr;
}

/* puts the rows in order in the table, moving a row only when it is out of place, and drops
 * the rows of downloads and paths that are gone */
function place(order) {
  const body = $('rows');
  order.forEach((tr, i) => {
    if (body.children[i] !== tr) body.insertBefore(tr, body.children[i] || null);
  });
  while (body.children.length > order.length) body.lastChild.remove();
  const keep = new Set(order);
  for (const [k, tr] of rows) if (!keep.has(tr)) rows.delete(k);
}

function render(dls, servers) {
  const order = [];
  for (const d of dls) {
    const tr = dlRow(d.gid);
    fillDl(tr, d);
    order.push(tr);
    const paths = servers.get(d.gid) || [];
    const sum = paths.reduce((a, s) => a + Number(s.downloadSpeed), 0);
    for (const s of paths) order.push(pathRow(d.gid, s, sum));
  }
  place(order);
}

async function poll() {
  const [stat, act, wait, stop] = await batch([
    ['aria2.getGlobalStat', []], ['aria2.tellActive', [KEYS]],
    ['aria2.tellWaiting', [0, 1000, KEYS]], ['aria2.tellStopped', [0, 1000, KEYS]]]);
  const bad = [stat, act, wait, stop].find(a => a.error);
  if (bad) throw new Error(bad.error.message);
  const srv = await batch(act.result.map(d => ['aria2.getServers', [d.gid]]));
  /* a download that ended between the two requests has no servers: an error, no rows */
  const servers = new Map(act.result.map((d, i) =>
    [d.gid, srv[i].result ? srv[i].result[0].servers : []]));
  render(act.result.concat(wait.result, stop.result), servers);
  const g = stat.result;
  state(`${g.numActive} active, ${g.numWaiting} waiting, ${g.numStopped} stopped - ` +
        `${size(g.downloadSpeed)}/s`);
}

/* polls now, then every EVERY_MS; a call while a poll runs asks for one more after it */
async function refresh() {
  if (busy) {
    again = true;
    return;
  }
  busy = true;
  clearTimeout(timer);
  try {
    await poll();
  } catch (e) {
    place([]);  /* nothing is shown that the daemon did not just answer */
    state(e.message === 'Unauthorized' ? 'Unauthorized: enter the daemon\'s secret (--rpc-secret)'
                                       : 'no answer from the daemon: ' + e.message, true);
  }
  busy = false;
  if (again) {
    again = false;
    refresh();
  } else {
    timer = setTimeout(refresh, EVERY_MS);
  }
}

async function act(ev) {
  const b = ev.target.closest('button[data-action]');
  if (!b) return;
  const gid = b.closest('tr').dataset.gid;
  try {
    await call(ACTIONS[b.dataset.action], [gid]);
    say(b.dataset.action + ' ' + gid);
  } catch (e) {
    say(e.message, true);
  }
  refresh();
}

async function add(ev) {
  ev.preventDefault();
  const uri = $('uri').value.trim();
  try {
    const gid = await call('aria2.addUri', [[uri]]);
    say('added ' + gid);
    $('uri').value = '';
  } catch (e) {
    say(e.message, true);
  }
  refresh();
}

function useToken(ev) {
  ev.preventDefault();
  token = $('token').value;
  $('token').value = '';
  try { sessionStorage.setItem(STORE, token); } catch (e) { /* storage off: this load only */ }
  refresh();
}

/* The secret comes from the form, or from the address's fragment (#token=...), which the
 * browser never sends, and which is taken out of the address bar at once. */
function init() {
  const m = /^#token=(.*)$/.exec(location.hash);
  try {
    token = m ? decodeURIComponent(m[1]) : sessionStorage.getItem(STORE) || '';
    if (m) sessionStorage.setItem(STORE, token);
  } catch (e) { /* a malformed escape, or storage off */ }
  if (m) history.replaceState(null, '', location.pathname + location.search);
  $('token-form').addEventListener('submit', useToken);
  $('add-form').addEventListener('submit', add);
  $('rows').addEventListener('click', act);
  refresh();
}

init();
