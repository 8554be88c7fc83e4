// xce dashboard: the hosts view. Every host is one cell of a grid,
// filled by how many of its slots run jobs, and marked by status with a
// pattern and a letter as well as a colour; the grid is one tab stop
// (arrow keys move, Enter opens a host), a table lists the same hosts a
// page at a time. GET /ui/v1/hosts gives them as parallel arrays; a
// refresh changes only the cells that changed.
'use strict';

(() => {
  const {h, fmt} = xce;
  const STATUS = {o: 'ok', c: 'closed', u: 'unavail'};
  const PAGE = 100;
  const BLOCK = 500; // hosts per block of the grid (drawn only when in sight)

  // level is how full a host is, 0 (idle) to 5 (every slot used).
  function level(used, slots) {
    if (!used) return 0;
    if (used >= slots) return 5;
    return Math.min(4, 1 + Math.floor((4 * used) / slots));
  }
  const label = (v, i) => `${v.names[i]}: ${STATUS[v.status[i]]}, ${v.used[i]} of ${v.slots[i]} slots used`;
  const cls = (v, i) => `cell u${level(v.used[i], v.slots[i])} st-${v.status[i]}`;

  const view = {
    every: 1000,
    async render(root, params) {
      const began = performance.now();
      const v = await xce.api('/ui/v1/hosts');
      const fetched = performance.now();
      this.v = v;
      this.active = 0;
      this.filter = {name: '', status: ''};
      this.page = 0;
      this.summary = h('p', {id: 'hosts-summary'});
      this.grid = h('div', {class: 'grid', id: 'host-grid', role: 'listbox', tabindex: '0', 'aria-label': 'Hosts: arrow keys move, Enter shows the host',
        onkeydown: (e) => this.key(e), onclick: (e) => this.click(e)});
      this.info = h('div', {class: 'hostinfo', id: 'host-info', 'aria-live': 'polite'}, 'Choose a host: click it, or move with the arrow keys and press Enter.');
      this.table = h('div', {id: 'host-table'});
      const cells = document.createDocumentFragment();
      this.cells = [];
      let block = null;
      for (let i = 0; i < v.names.length; i++) {
        if (i % BLOCK === 0) {
          block = document.createElement('div');
          block.className = 'block';
          block.setAttribute('role', 'presentation');
          cells.append(block);
        }
        const c = document.createElement('div');
        c.id = 'hc-' + i;
        c.className = cls(v, i);
        c.setAttribute('role', 'option');
        c.setAttribute('aria-selected', 'false');
        c.setAttribute('aria-label', label(v, i));
        c.title = label(v, i);
        c.dataset.status = STATUS[v.status[i]];
        block.append(c);
        this.cells.push(c);
      }
      this.grid.append(cells);
      const legend = h('div', {class: 'legend', 'aria-label': 'Legend'},
        [0, 1, 2, 3, 4, 5].map((u) => h('span', {}, h('span', {class: `cell u${u}`, 'aria-hidden': 'true'}),
          ['idle', 'up to a quarter used', 'up to half used', 'up to three quarters used', 'nearly full', 'full'][u])),
        h('span', {}, h('span', {class: 'cell u0 st-c', 'aria-hidden': 'true'}), 'closed (stripes, C)'),
        h('span', {}, h('span', {class: 'cell u0 st-u', 'aria-hidden': 'true'}), 'unavail (crossed, U)'));
      root.append(h('h1', {}, 'Hosts'), this.summary,
        h('form', {class: 'filters', role: 'search', 'aria-label': 'Filter hosts', onsubmit: (e) => e.preventDefault()},
          h('label', {for: 'h-name'}, 'Name contains', h('input', {id: 'h-name', type: 'search', oninput: (e) => this.setFilter({name: e.target.value})})),
          h('label', {for: 'h-status'}, 'Status', h('select', {id: 'h-status', onchange: (e) => this.setFilter({status: e.target.value})},
            [['', 'any'], ['o', 'ok'], ['c', 'closed'], ['u', 'unavail']].map(([k, t]) => h('option', {value: k}, t))))),
        legend, this.grid, this.info, h('h2', {}, 'As a table'), this.table);
      this.counts();
      this.drawTable();
      const built = performance.now();
      // Drawn: the frame after the cells were added (style, layout, paint).
      requestAnimationFrame(() => setTimeout(() => {
        xce.timings.hosts = {fetch: fetched - began, render: built - fetched, drawn: performance.now() - began, hosts: v.names.length};
      }, 0));
    },
    counts() {
      const v = this.v, n = {o: 0, c: 0, u: 0};
      let used = 0, slots = 0;
      for (let i = 0; i < v.names.length; i++) { n[v.status[i]]++; used += v.used[i]; slots += v.slots[i]; }
      this.summary.textContent = `${fmt.num(v.names.length)} hosts: ${fmt.num(n.o)} ok, ${fmt.num(n.c)} closed, ${fmt.num(n.u)} unavail; ${fmt.num(used)} of ${fmt.num(slots)} slots used.`;
    },
    visible(i) {
      const v = this.v, f = this.filter;
      return (!f.name || v.names[i].includes(f.name)) && (!f.status || v.status[i] === f.status);
    },
    setFilter(change) {
      Object.assign(this.filter, change);
      const cells = this.cells;
      for (let i = 0; i < cells.length; i++) cells[i].classList.toggle('hidden', !this.visible(i));
      this.page = 0;
      this.drawTable();
    },
    drawTable() {
      const v = this.v, rows = [];
      for (let i = 0; i < v.names.length; i++) if (this.visible(i)) rows.push(i);
      const pages = Math.max(1, Math.ceil(rows.length / PAGE));
      this.page = Math.min(this.page, pages - 1);
      const shown = rows.slice(this.page * PAGE, (this.page + 1) * PAGE);
      const move = (d) => { this.page += d; this.drawTable(); };
      xce.put(this.table,
        h('table', {'aria-label': 'Hosts, a page at a time'},
          h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Host'), h('th', {scope: 'col'}, 'Status'),
            h('th', {scope: 'col', class: 'num'}, 'Used'), h('th', {scope: 'col', class: 'num'}, 'Slots'), h('th', {scope: 'col'}, 'Jobs'))),
          h('tbody', {}, shown.map((i) => h('tr', {}, h('td', {}, v.names[i]), h('td', {}, STATUS[v.status[i]]),
            h('td', {class: 'num'}, v.used[i]), h('td', {class: 'num'}, v.slots[i]),
            h('td', {}, h('a', {href: '#/jobs?host=' + encodeURIComponent(v.names[i]) + '&state=active'}, 'jobs on ' + v.names[i])))))),
        h('div', {class: 'pager'},
          h('button', {type: 'button', disabled: this.page === 0, onclick: () => move(-1)}, '← Previous'),
          h('span', {}, `page ${this.page + 1} of ${pages} (${fmt.num(rows.length)} hosts)`),
          h('button', {type: 'button', disabled: this.page >= pages - 1, onclick: () => move(1)}, 'Next →')));
    },
    // key moves the active cell: arrows, Home, End; Enter or Space shows it.
    key(e) {
      const n = this.v.names.length;
      if (!n) return;
      const cells = this.cells;
      const first = cells[0].getBoundingClientRect();
      let cols = 1;
      while (cols < n && cells[cols].getBoundingClientRect().top === first.top) cols++;
      const step = {ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols, Home: -n, End: n}[e.key];
      if (step !== undefined) {
        e.preventDefault();
        let i = Math.max(0, Math.min(n - 1, this.active + step));
        const dir = step > 0 ? 1 : -1;
        while (i > 0 && i < n - 1 && !this.visible(i)) i += dir; // skip hidden hosts
        this.select(i, false);
      } else if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        this.select(this.active, true);
      }
    },
    click(e) {
      const c = e.target.closest('.cell');
      if (!c || !c.id.startsWith('hc-')) return;
      this.grid.focus();
      this.select(Number(c.id.slice(3)), true);
    },
    select(i, open) {
      const old = this.cells[this.active];
      if (old) { old.classList.remove('active'); old.setAttribute('aria-selected', 'false'); }
      this.active = i;
      const c = this.cells[i];
      c.classList.add('active');
      c.setAttribute('aria-selected', 'true');
      this.grid.setAttribute('aria-activedescendant', c.id);
      c.scrollIntoView({block: 'nearest'});
      if (open) this.show(i).catch((err) => xce.status(err.message, true));
    },
    // show fills the host's panel: its numbers and the jobs running there.
    async show(i) {
      const v = this.v, name = v.names[i];
      const page = await xce.api('/ui/v1/jobs?state=active&limit=20&host=' + encodeURIComponent(name));
      xce.put(this.info,
        h('h2', {}, name), h('p', {}, `${STATUS[v.status[i]]}, ${v.used[i]} of ${v.slots[i]} slots used.`),
        page.jobs.length ? h('ul', {}, page.jobs.map((j) => h('li', {}, h('a', {href: '#/job/' + j.job}, 'job ' + fmt.name(j)),
          ` ${j.user}, ${j.slots} slots in all`))) : h('p', {}, 'No job runs here.'),
        page.total > page.jobs.length ? h('p', {}, h('a', {href: '#/jobs?state=active&host=' + encodeURIComponent(name)}, `all ${page.total} jobs`)) : null);
      this.shown = i;
    },
    async refresh(c) {
      if (!(c.hosts || c.reset) || !this.grid || !this.grid.isConnected) return;
      const v = await xce.api('/ui/v1/hosts');
      if (c.config || v.names.length !== this.v.names.length || v.names.some((n, i) => n !== this.v.names[i])) {
        return xce.show(); // another configuration: draw it afresh
      }
      const cells = this.cells;
      for (let i = 0; i < v.names.length; i++) {
        if (v.used[i] === this.v.used[i] && v.status[i] === this.v.status[i] && v.slots[i] === this.v.slots[i]) continue;
        const cell = cells[i];
        cell.className = cls(v, i) + (this.visible(i) ? '' : ' hidden') + (i === this.active && cell.classList.contains('active') ? ' active' : '');
        cell.setAttribute('aria-label', label(v, i));
        cell.title = label(v, i);
        cell.dataset.status = STATUS[v.status[i]];
      }
      this.v = v;
      this.counts();
      this.drawTable();
      if (this.shown !== undefined) await this.show(this.shown);
    },
  };
  xce.views.hosts = view;
})();
