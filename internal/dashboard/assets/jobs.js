// xce dashboard: the jobs view. The server filters, sorts and pages
// (GET /ui/v1/jobs): the page holds one page of rows, whatever the number
// of jobs.
'use strict';

(() => {
  const {h, fmt} = xce;
  const STATES = [['', 'any'], ['active', 'pending or running'], ['PEND', 'PEND'], ['RUN', 'RUN'], ['SUSP', 'SUSP'],
    ['DONE', 'DONE'], ['EXIT', 'EXIT'], ['ended', 'ended']];
  const COLUMNS = [['id', 'Job', 'num'], ['name', 'Name'], ['user', 'User'], ['queue', 'Queue'], ['state', 'State'],
    ['slots', 'Slots', 'num'], [null, 'Hosts'], ['submit', 'Submitted'], ['start', 'Started'], ['end', 'Ended'], ['reason', 'Pending reason']];
  const SIZES = [25, 50, 100, 200, 500];

  // The query the address holds, with its defaults.
  function query(params) {
    return {user: params.user || '', queue: params.queue || '', state: params.state || '', host: params.host || '',
      sort: params.sort || '-id', offset: Number(params.offset) || 0, limit: Number(params.limit) || 50};
  }

  function hashOf(q) {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) {
      if (v !== '' && !(k === 'sort' && v === '-id') && !(k === 'offset' && v === 0) && !(k === 'limit' && v === 50)) p.set(k, v);
    }
    const s = p.toString();
    return '#/jobs' + (s ? '?' + s : '');
  }

  function select(id, label, value, options, onchange) {
    return h('label', {for: id}, label,
      h('select', {id, onchange}, options.map(([v, text]) => {
        const o = h('option', {value: v}, text);
        if (v === value) o.selected = true;
        return o;
      })));
  }

  // rowOf makes a table row of one job.
  function rowOf(j) {
    return h('tr', {'data-job': j.job},
      h('td', {class: 'num'}, h('a', {href: '#/job/' + j.job, 'aria-label': 'job ' + fmt.name(j)}, fmt.name(j))),
      h('td', {}, j.name || ''), h('td', {}, j.user), h('td', {}, j.queue), h('td', {}, xce.state(j.state)),
      h('td', {class: 'num'}, j.slots || ''), h('td', {}, j.hosts || ''),
      h('td', {}, fmt.time(j.submit)), h('td', {}, fmt.time(j.start)), h('td', {}, fmt.time(j.end)),
      h('td', {class: 'reason'}, j.reason ? j.reason + (j.detail ? ' (' + j.detail + ')' : '') : ''));
  }

  const view = {
    every: 250,
    q: null,
    async render(root, params) {
      const began = performance.now();
      const q = (this.q = query(params));
      const page = await this.fetch(q);
      const go = (change) => xce.go(hashOf({...q, ...change}));
      const users = [['', 'everyone']].concat((page.users || []).map((u) => [u, u]));
      if (q.user && !users.some(([u]) => u === q.user)) users.push([q.user, q.user]);
      const queues = [['', 'any']].concat(page.queues.map((n) => [n, n]));
      const head = h('tr', {}, COLUMNS.map(([key, label, cls]) => {
        if (!key) return h('th', {scope: 'col', class: cls}, label);
        const cur = q.sort.replace(/^-/, ''), desc = q.sort.startsWith('-');
        const sorted = cur === key ? (desc ? 'descending' : 'ascending') : null;
        const next = cur === key && !desc ? '-' + key : (cur === key ? key : (key === 'id' || key === 'submit' ? '-' + key : key));
        return h('th', {scope: 'col', class: cls, 'aria-sort': sorted},
          h('button', {type: 'button', onclick: () => go({sort: next, offset: 0}), 'aria-label': 'sort by ' + label.toLowerCase()}, label));
      }));
      this.body = h('tbody', {id: 'jobs-body'});
      this.pager = h('div', {class: 'pager'});
      root.append(
        h('h1', {}, 'Jobs'),
        h('form', {class: 'filters', role: 'search', 'aria-label': 'Filter jobs', onsubmit: (e) => e.preventDefault()},
          !xce.me.private || xce.me.admin ? select('f-user', 'User', q.user, users, (e) => go({user: e.target.value, offset: 0})) : null,
          select('f-queue', 'Queue', q.queue, queues, (e) => go({queue: e.target.value, offset: 0})),
          select('f-state', 'State', q.state, STATES, (e) => go({state: e.target.value, offset: 0})),
          q.host ? h('p', {}, 'on host ', h('strong', {}, q.host), ' ', h('a', {href: hashOf({...q, host: '', offset: 0})}, 'any host')) : null,
          select('f-limit', 'Per page', String(q.limit), SIZES.map((n) => [String(n), String(n)]), (e) => go({limit: Number(e.target.value), offset: 0}))),
        h('table', {'aria-label': 'Jobs', 'aria-describedby': 'jobs-count'}, h('thead', {}, head), this.body),
        this.pager);
      this.fill(page);
      xce.timings.jobs = performance.now() - began;
    },
    fetch(q) {
      const p = new URLSearchParams({sort: q.sort, offset: q.offset, limit: q.limit});
      for (const k of ['user', 'queue', 'state', 'host']) if (q[k]) p.set(k, q[k]);
      return xce.api('/ui/v1/jobs?' + p);
    },
    fill(page) {
      const q = this.q;
      // Keep the keyboard's place across a refresh: the same job's link.
      const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest('tr[data-job]');
      xce.put(this.body, ...page.jobs.map(rowOf));
      if (focused) {
        const again = this.body.querySelector(`tr[data-job="${focused.dataset.job}"] a`);
        if (again) again.focus();
      }
      if (page.jobs.length === 0) this.body.append(h('tr', {}, h('td', {colspan: COLUMNS.length}, 'No job.')));
      const first = page.total ? q.offset + 1 : 0, last = q.offset + page.jobs.length;
      xce.put(this.pager,
        h('button', {type: 'button', disabled: q.offset === 0, onclick: () => xce.go(hashOf({...q, offset: Math.max(0, q.offset - q.limit)}))}, '← Previous'),
        h('span', {id: 'jobs-count'}, `${fmt.num(first)}–${fmt.num(last)} of ${fmt.num(page.total)} jobs`),
        h('button', {type: 'button', disabled: last >= page.total, onclick: () => xce.go(hashOf({...q, offset: q.offset + q.limit}))}, 'Next →'));
    },
    async refresh(c) {
      if (!c.jobs || !this.body || !this.body.isConnected) return;
      this.fill(await this.fetch(this.q));
    },
  };
  xce.views.jobs = view;
})();
