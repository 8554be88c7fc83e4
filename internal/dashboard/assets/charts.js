// xce dashboard: queues and limits (GET /v1/queues, /v1/limits, the
// API's own routes), and the charts of utilization and queue length over
// time, folded by the server from the event log (GET /ui/v1/series),
// drawn as SVG.
'use strict';

(() => {
  const {h, fmt} = xce;

  function bar(used, max) {
    const pct = max > 0 ? Math.min(100, (100 * used) / max) : 0;
    const fill = h('span', {});
    fill.style.width = pct.toFixed(1) + '%';
    return h('div', {class: 'bar', role: 'img', 'aria-label': `${used} of ${max} used (${pct.toFixed(0)}%)`}, fill);
  }

  xce.views.queues = {
    every: 1000,
    async render(root) {
      this.root = root;
      await this.draw();
    },
    async draw() {
      const [q, l, s] = await Promise.all([xce.api('/v1/queues'), xce.api('/v1/limits'), xce.api('/ui/v1/summary')]);
      if (!this.root.isConnected) return;
      xce.put(this.root,
        h('h1', {}, 'Queues & limits'),
        h('table', {'aria-label': 'Queues', id: 'queues'},
          h('thead', {}, h('tr', {}, ['Queue', 'Priority', 'Policy', 'Status', 'Pending', 'Running', 'Slots held', 'Share of the cluster\'s slots']
            .map((t, i) => h('th', {scope: 'col', class: i >= 4 && i <= 6 ? 'num' : null}, t)))),
          h('tbody', {}, q.queues.map((x) => h('tr', {},
            h('td', {}, h('a', {href: '#/jobs?queue=' + encodeURIComponent(x.name) + '&state=active'}, x.name)),
            h('td', {}, x.priority), h('td', {}, x.policy), h('td', {}, x.status),
            h('td', {class: 'num'}, fmt.num(x.pend)), h('td', {class: 'num'}, fmt.num(x.run)), h('td', {class: 'num'}, fmt.num(x.slots)),
            h('td', {}, bar(x.slots, s.slots), ` ${x.slots} of ${s.slots}`))))),
        h('h2', {}, 'Limits'),
        l.limits.length === 0 ? h('p', {}, 'No limit is configured.') :
          h('table', {'aria-label': 'Limits', id: 'limits'},
            h('thead', {}, h('tr', {}, ['Limit', 'Users', 'Queues', 'Hosts', 'Projects', 'Resource', 'Used', 'Usage'].map((t) => h('th', {scope: 'col'}, t)))),
            h('tbody', {}, l.limits.flatMap((x) => x.usage.map((u, i) => h('tr', {},
              h('td', {}, i === 0 ? x.name : ''), h('td', {}, i === 0 ? x.users : ''), h('td', {}, i === 0 ? x.queues : ''),
              h('td', {}, i === 0 ? x.hosts : ''), h('td', {}, i === 0 ? x.projects : ''),
              h('td', {}, u.resource), h('td', {class: 'num'}, `${u.used} of ${u.max}`), h('td', {}, bar(u.used, u.max))))))));
    },
    async refresh() {
      if (this.root && this.root.isConnected) await this.draw();
    },
  };

  const W = 1000, H = 200, L = 56, R = 12, T = 12, B = 30;

  // chart draws lines (each {name, values, cls}) over the points' times,
  // y from 0 to top, with a title and a text summary for screen readers.
  function chart(id, title, s, lines, top, unit, from) {
    const n = s.pending.length;
    const t0 = s.start + from * s.step, t1 = s.now;
    // A point stands at the middle of its step (of the part gone by, for the last).
    const mid = (i) => Math.min(s.start + (i + 0.5) * s.step, (s.start + i * s.step + t1) / 2);
    const x = (i) => Math.min(W - R, Math.max(L, L + ((mid(i) - t0) / Math.max(t1 - t0, 1e-9)) * (W - L - R)));
    const y = (v) => T + (1 - v / top) * (H - T - B);
    const svg = h('svg', {class: 'chart', id, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': id + '-t ' + id + '-d'});
    const last = lines.map((l) => `${l.name} ${l.values.length ? fmt.num(l.values[l.values.length - 1]) : 0}${unit}`).join(', ');
    svg.append(h('title', {id: id + '-t'}, title), h('desc', {id: id + '-d'}, `From ${fmt.time(t0)} to ${fmt.time(t1)}; latest: ${last}.`));
    for (let k = 0; k <= 4; k++) {
      const v = (top * k) / 4, yy = y(v);
      svg.append(h('line', {class: 'gridline', x1: L, x2: W - R, y1: yy, y2: yy}),
        h('text', {x: L - 6, y: yy + 4, 'text-anchor': 'end'}, (Math.round(v * 10) / 10) + unit));
    }
    svg.append(h('line', {class: 'axis', x1: L, x2: L, y1: T, y2: H - B}), h('line', {class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B}));
    let prev = '';
    for (let k = 0; k <= 4; k++) {
      const t = t0 + ((t1 - t0) * k) / 4;
      const xx = L + (k / 4) * (W - L - R);
      const span = t1 - t0, full = fmt.time(t);
      const text = span < 600 ? full.slice(11, 19) : span < 2 * 86400 ? full.slice(11, 16) : full.slice(5, 16);
      if (text === prev) continue; // a short history: one label a second
      prev = text;
      svg.append(h('text', {x: xx, y: H - 10, 'text-anchor': k === 0 ? 'start' : k === 4 ? 'end' : 'middle'}, text));
    }
    for (const l of lines) {
      const pts = [];
      for (let i = from; i < n; i++) pts.push(`${x(i).toFixed(1)},${y(l.values[i]).toFixed(1)}`);
      if (pts.length === 1) pts.push(`${(W - R).toFixed(1)},${pts[0].split(',')[1]}`);
      svg.append(h('polyline', {class: l.cls, points: pts.join(' ')}));
    }
    return [h('h2', {}, title), h('div', {class: 'key', 'aria-hidden': 'true'}, lines.map((l) => h('span', {class: l.cls}, l.name))), svg];
  }

  const RANGES = [['3600', 'last hour'], ['21600', 'last 6 hours'], ['86400', 'last day'], ['0', 'everything']];

  xce.views.charts = {
    every: 5000,
    range: '0',
    async render(root) {
      this.root = root;
      await this.draw();
    },
    async draw() {
      const s = await xce.api('/ui/v1/series');
      if (!this.root.isConnected) return;
      const n = s.pending.length;
      let from = 0;
      if (this.range !== '0' && n) from = Math.max(0, Math.floor((s.now - Number(this.range) - s.start) / s.step));
      const util = s.used.map((u, i) => (s.capacity[i] > 0 ? (100 * u) / s.capacity[i] : 0));
      const maxQ = Math.max(1, ...s.pending.slice(from), ...s.running.slice(from));
      const picker = h('label', {for: 'c-range'}, 'Show ', h('select', {id: 'c-range', onchange: (e) => { this.range = e.target.value; this.draw(); }},
        RANGES.map(([v, t]) => { const o = h('option', {value: v}, t); if (v === this.range) o.selected = true; return o; })));
      xce.put(this.root, h('h1', {}, 'Charts'),
        h('p', {}, `From the event log: one point per ${fmt.dur(s.step)}, each the mean over its time.`,
          s.complete ? '' : ' Still reading the log from its start…', s.error ? ' ' + s.error : ''),
        h('form', {class: 'filters', onsubmit: (e) => e.preventDefault()}, picker),
        n === 0 ? h('p', {}, 'Nothing yet.') : [
          chart('chart-util', 'Utilization: job slots used', s, [{name: 'slots used', values: util, cls: 's0'}], 100, '%', from),
          chart('chart-queue', 'Queue length', s, [{name: 'pending', values: s.pending, cls: 's1'}, {name: 'running', values: s.running, cls: 's2'}],
            4 * Math.ceil((maxQ * 1.1) / 4), '', from)]);
      const sel = document.getElementById('c-range');
      if (this.focusRange && sel) sel.focus();
    },
    async refresh() {
      if (!this.root || !this.root.isConnected) return;
      this.focusRange = document.activeElement && document.activeElement.id === 'c-range';
      await this.draw();
    },
  };
})();
