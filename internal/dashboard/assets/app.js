// xce dashboard: the core. Plain JavaScript, no library, no build step.
// It builds every element with DOM calls (no HTML from data: job names
// and commands are the users'), reads the server's JSON, and refreshes
// the view shown when the server's live-update stream says something
// it shows changed (docs/dashboard.md).
'use strict';

const xce = (window.xce = {
  me: null,          // GET /ui/v1/me
  views: {},         // name -> {render(params), refresh(change)}
  current: null,     // the view shown: {name, params}
  timings: {},       // what the browser tests read: view -> ms
});

// h makes an element: h('a', {href: '#/jobs', class: 'x'}, 'text', child, ...).
// Attributes on, on*: event listeners; text children are text nodes.
xce.h = function h(tag, attrs, ...children) {
  const el = document.createElementNS(tag === 'svg' || xce.h.svg.has(tag) ? 'http://www.w3.org/2000/svg' : 'http://www.w3.org/1999/xhtml', tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
};
// put replaces el's children with children: nodes, text, arrays of
// them; null, undefined and false are left out.
xce.put = function put(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : document.createTextNode(String(c)))));
  return el;
};
xce.h.svg = new Set(['g', 'path', 'line', 'polyline', 'rect', 'text', 'title', 'desc']);

// api fetches a JSON route of the server; a change (not GET) carries the
// session's anti-forgery token. It throws the server's message.
xce.api = async function api(path, opts = {}) {
  const o = {credentials: 'same-origin', cache: 'no-store', ...opts, headers: {Accept: 'application/json', ...(opts.headers || {})}};
  if (o.method && o.method !== 'GET' && xce.me && xce.me.csrf) o.headers['X-Xce-Csrf'] = xce.me.csrf;
  const r = await fetch(path, o);
  let body = {};
  try { body = await r.json(); } catch (e) { body = {}; }
  if (r.status === 401) { xce.showLogin(body.error || 'log in again'); throw new Error(body.error || 'not logged in'); }
  if (!r.ok) throw new Error(body.error || r.status + ' ' + r.statusText);
  return body;
};

// Formatting.
xce.fmt = {
  num: (n) => Number(n).toLocaleString('en-US'),
  time(sec) {
    if (!sec) return '—';
    const d = new Date(sec * 1000), p = (x) => String(x).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  },
  dur(sec) {
    sec = Math.max(0, Math.round(sec));
    if (sec < 60) return sec + ' s';
    if (sec < 3600) return Math.floor(sec / 60) + ' min ' + (sec % 60) + ' s';
    if (sec < 86400) return Math.floor(sec / 3600) + ' h ' + Math.floor((sec % 3600) / 60) + ' min';
    return Math.floor(sec / 86400) + ' d ' + Math.floor((sec % 86400) / 3600) + ' h';
  },
  name: (j) => (j.array_index ? `${j.id}[${j.array_index}]` : String(j.id)),
};

// state returns a job state's badge: its name, coloured.
xce.state = (s) => xce.h('span', {class: 'state ' + s}, s);

// status shows a message for everyone, screen readers included.
xce.status = function status(msg, error) {
  const el = document.getElementById('status');
  el.textContent = msg || '';
  el.className = 'status' + (error ? ' error' : '');
};

// Routes: #/jobs?user=..., #/job/12, #/hosts, #/queues, #/charts.
xce.route = function route() {
  const hash = location.hash.replace(/^#\/?/, '') || 'jobs';
  const [path, query] = hash.split('?');
  const parts = path.split('/');
  const params = Object.fromEntries(new URLSearchParams(query || ''));
  if (parts[0] === 'job' && parts[1]) params.job = parts[1];
  const name = xce.views[parts[0]] ? parts[0] : 'jobs';
  return {name, params};
};

xce.go = function go(hash) { if (location.hash !== hash) location.hash = hash; else xce.show(); };

// show renders the view the address names.
xce.show = function show() {
  if (!xce.me || !xce.me.user) return;
  const r = xce.route();
  xce.current = r;
  xce.status('');
  for (const a of document.querySelectorAll('#nav a')) {
    const on = a.dataset.view === r.name || (r.name === 'job' && a.dataset.view === 'jobs');
    if (on) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const view = document.getElementById('view');
  view.replaceChildren();
  xce.views[r.name].render(view, r.params).catch((e) => xce.status(e.message, true));
};

// The summary line: jobs by state, hosts by status, slots.
xce.summary = async function summary() {
  const s = await xce.api('/ui/v1/summary');
  const j = s.jobs, hs = s.hosts, f = xce.fmt.num;
  document.getElementById('summary').textContent =
    `${f(j.PEND)} pending, ${f(j.RUN)} running, ${f(j.SUSP)} suspended · ` +
    `hosts ${f(hs.ok)} ok, ${f(hs.closed)} closed, ${f(hs.unavail)} unavail · ` +
    `slots ${f(s.used)} of ${f(s.slots)} used`;
};

// Live updates: one EventSource; a change refreshes what is shown, at most
// once per view's interval (a burst of changes makes one refetch).
xce.live = {
  source: null, pending: null, timer: null, last: 0,
  start() {
    const es = new EventSource('/ui/v1/stream');
    this.source = es;
    const mark = (on) => {
      const el = document.getElementById('live');
      el.textContent = on ? 'live' : 'reconnecting';
      el.className = 'live' + (on ? '' : ' off');
    };
    es.addEventListener('hello', () => { mark(true); this.change({jobs: true, hosts: true, reset: true}); });
    es.addEventListener('change', (ev) => { this.change(JSON.parse(ev.data)); });
    es.onerror = () => mark(false);
  },
  change(c) {
    const p = this.pending || {};
    for (const k of ['jobs', 'hosts', 'config', 'reset']) p[k] = p[k] || !!c[k];
    p.index = Math.max(p.index || 0, c.index || 0);
    this.pending = p;
    if (this.timer) return;
    const view = xce.current && xce.views[xce.current.name];
    const every = (view && view.every) || 250;
    const wait = Math.max(0, this.last + every - Date.now());
    this.timer = setTimeout(() => this.flush(), wait);
  },
  flush() {
    const c = this.pending;
    this.pending = null;
    this.timer = null;
    this.last = Date.now();
    xce.summary().catch(() => {});
    const view = xce.current && xce.views[xce.current.name];
    if (!view || !view.refresh) return;
    // Keep the keyboard's place: after the redraw, the element of the
    // same id, or else of the same tag and text, takes the focus again.
    const had = document.activeElement, main = document.getElementById('view');
    const id = had && main.contains(had) ? had.id : null;
    const sig = had && main.contains(had) ? had.tagName + '\u0000' + had.textContent : null;
    view.refresh(c).then(() => {
      const now = document.activeElement;
      if (!sig || (now && now !== document.body && main.contains(now))) return;
      const again = (id && document.getElementById(id)) ||
        [...main.querySelectorAll(had.tagName)].find((el) => el.tagName + '\u0000' + el.textContent === sig);
      if (again) again.focus();
    }).catch((e) => xce.status(e.message, true));
  },
};

xce.showLogin = function showLogin(msg) {
  document.getElementById('login').hidden = false;
  document.getElementById('nav').hidden = true;
  document.getElementById('view').replaceChildren();
  document.getElementById('login-error').textContent = msg || '';
};

async function login(ev) {
  ev.preventDefault();
  const token = document.getElementById('token').value.trim();
  const r = await fetch('/ui/login', {method: 'POST', credentials: 'same-origin', headers: {Accept: 'application/json'},
    body: new URLSearchParams({token})});
  if (!r.ok) {
    let msg = r.statusText;
    try { msg = (await r.json()).error; } catch (e) { /* keep the status */ }
    document.getElementById('login-error').textContent = msg;
    return;
  }
  document.getElementById('token').value = '';
  history.replaceState(null, '', location.pathname + '#/jobs');
  await start();
}

async function logout() {
  await xce.api('/ui/logout', {method: 'POST'});
  location.replace('/');
}

// start finds out who the page acts as: the login form, or the views.
async function start() {
  xce.me = await xce.api('/ui/v1/me');
  if (!xce.me.user) {
    // A link printed by `xce serve --dev` carries a token after #token=.
    const m = location.hash.match(/^#token=([A-Za-z0-9._-]+)$/);
    if (m) {
      document.getElementById('token').value = m[1];
      history.replaceState(null, '', location.pathname);
      return login(new Event('submit'));
    }
    xce.showLogin('');
    document.getElementById('token').focus();
    return;
  }
  document.getElementById('login').hidden = true;
  document.getElementById('nav').hidden = false;
  document.getElementById('user').textContent = xce.me.user + (xce.me.admin ? ' (administrator)' : '');
  document.getElementById('logout').hidden = !xce.me.session;
  if (!xce.live.source) xce.live.start();
  xce.summary().catch(() => {});
  xce.show();
}

document.addEventListener('DOMContentLoaded', () => {
  document.getElementById('login-form').addEventListener('submit', (ev) => login(ev).catch((e) => {
    document.getElementById('login-error').textContent = e.message;
  }));
  document.getElementById('logout').addEventListener('click', () => logout().catch((e) => xce.status(e.message, true)));
  window.addEventListener('hashchange', () => {
    if (xce.me && xce.me.user) xce.show();
    else start().catch((e) => xce.status(e.message, true)); // a login link opened on the login form
  });
  start().catch((e) => xce.status(e.message, true));
});
