// xce dashboard: the job page. The job from GET /ui/v1/jobs/{job}; its
// history (GET /v1/jobs/{id}/history), its forecast and counterfactuals
// (GET /v1/jobs/{id}/why, a simulation that may take seconds: asked
// once, and again on request) and the kill (POST /v1/jobs/{id}/kill)
// from the API itself.
'use strict';

(() => {
  const {h, fmt} = xce;

  function kv(pairs) {
    return h('dl', {class: 'kv'}, pairs.filter((p) => p && p[1] !== undefined && p[1] !== null && p[1] !== '').map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  }

  function hostsText(m) {
    return Object.entries(m || {}).map(([host, n]) => `${n}*${host}`).join(' ');
  }

  // request shows what the job asked for.
  function request(p) {
    const r = p.request, j = p.job;
    return kv([
      ['Queue', r.queue], ['Project', r.project],
      ['Tasks', r.tasks_min === r.tasks_max ? String(r.tasks_min) : `${r.tasks_min} to ${r.tasks_max}`],
      ['Resource requirement', r.resreq ? h('code', {}, r.resreq) : ''], ['GPUs', r.gpu ? h('code', {}, r.gpu) : ''],
      ['Run limit', r.estimate ? fmt.dur(r.estimate) : ''],
      ['Command', r.command ? h('code', {}, r.command.join(' ')) : ''], ['Script', r.script ? h('pre', {}, r.script) : ''],
      ['Working directory', h('code', {}, r.cwd)], ['Output', r.stdout ? h('code', {}, r.stdout) : ''], ['Errors', r.stderr ? h('code', {}, r.stderr) : ''],
      ['Environment', `${r.env} variables (not shown)`],
      ['Depends on', r.depend ? h('code', {}, r.depend) : ''], ['Array', r.array ? h('code', {}, r.array) : ''],
      ['Options', [r.rerunnable ? 'rerunnable (-r)' : '', r.exclusive ? 'exclusive (-x)' : ''].filter(Boolean).join(', ')],
      ['User', j.user], ['Submitted', fmt.time(j.submit_time)],
    ]);
  }

  function allocation(p) {
    if (!p.alloc || !p.alloc.length) return h('p', {}, p.job.state === 'PEND' ? 'Nothing yet: the job pends.' : 'Nothing.');
    return h('table', {'aria-label': 'Allocation'},
      h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Host'), h('th', {scope: 'col', class: 'num'}, 'Slots'),
        h('th', {scope: 'col'}, 'Resources'), h('th', {scope: 'col'}, 'GPUs'))),
      h('tbody', {}, p.alloc.map((a) => h('tr', {},
        h('td', {}, a.host), h('td', {class: 'num'}, a.slots),
        h('td', {}, Object.entries(a.res || {}).map(([k, v]) => `${k}=${v}`).join(' ')),
        h('td', {}, (a.gpus || []).join(', '))))),
      p.shared ? h('caption', {}, 'Shared: ' + Object.entries(p.shared).map(([k, v]) => `${k}=${v}`).join(' ')) : null);
  }

  // pending shows the main reason and, counted, each host's.
  function pending(p) {
    const j = p.job;
    if (j.state !== 'PEND' && j.state !== 'SUSP') return null;
    const rs = j.host_reasons || [];
    return h('section', {'aria-labelledby': 'pend-title', id: 'pending'},
      h('h2', {id: 'pend-title'}, j.state === 'SUSP' ? 'Why it is suspended' : 'Why it pends'),
      j.reason ? h('p', {}, h('strong', {class: 'reason', id: 'pend-reason'}, j.reason), ': ', p.reason_text || j.detail || '')
        : h('p', {id: 'pend-reason'}, 'No cycle has looked at it yet.'),
      rs.length ? h('table', {'aria-label': 'Host reasons', id: 'host-reasons'},
        h('thead', {}, h('tr', {}, h('th', {scope: 'col', class: 'num'}, 'Hosts'), h('th', {scope: 'col'}, 'Why they could not take it'))),
        h('tbody', {}, rs.map((r) => h('tr', {}, h('td', {class: 'num'}, r.hosts), h('td', {}, r.reason))))) : null,
      p.reserved ? h('p', {}, `Reserved from ${fmt.time(p.reserved.start)} on ${hostsText(p.reserved.hosts)}.`) : null);
  }

  function outcome(j) {
    if (j.state !== 'DONE' && j.state !== 'EXIT') return null;
    return kv([['Ended', fmt.time(j.end_time)], ['Exit code', String(j.exit_code)], ['Signal', j.signal], ['Why', j.end_reason]]);
  }

  // why fills in the forecast and the changes that would start it sooner.
  async function why(p, box) {
    xce.put(box, h('p', {}, 'Simulating the cluster forward…'));
    const w = await xce.api(`/v1/jobs/${encodeURIComponent(p.name)}/why`);
    const j = w.job, start = j.forecast_start;
    const rows = (w.suggestions || []).map((s) => h('li', {},
      h('code', {}, s.change), ' ', s.what, ': ', s.now ? 'starts now' : 'starts ' + fmt.time(s.start)));
    xce.put(box,
      h('p', {id: 'forecast'}, start === null || start === undefined ? 'Forecast: it never starts while the cluster stays as it is.'
        : `Forecast: starts ${start <= w.now ? 'now' : 'in ' + fmt.dur(start - w.now) + ' (' + fmt.time(start) + ')'} on ${hostsText(j.forecast_hosts)}.`),
      rows.length ? [h('p', {}, 'It would start sooner with any one of these changes, each checked by simulating the cluster with it:'), h('ul', {id: 'suggestions'}, rows)]
        : h('p', {}, 'No change of its request found that starts it sooner.'),
      w.partial ? h('p', {}, 'The search ran out of time: there may be more.') : null);
  }

  async function history(p, box) {
    const r = await xce.api(`/v1/jobs/${encodeURIComponent(p.name)}/history`);
    xce.put(box, h('table', {'aria-label': 'History', id: 'history'},
      h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Time'), h('th', {scope: 'col'}, 'Event'), h('th', {scope: 'col'}, 'What happened'))),
      h('tbody', {}, r.events.map((e) => h('tr', {},
        h('td', {}, fmt.time(e.time / 1e9) + '.' + String(Math.floor((e.time / 1e6) % 1000)).padStart(3, '0')),
        h('td', {}, h('code', {}, e.type)), h('td', {}, e.what))))));
  }

  // killControl is the kill button, shown to the owner and administrators
  // only, with a confirmation in place (no dialog).
  function killControl(p, refresh) {
    if (!p.can_kill) return null;
    const box = h('div', {class: 'kill', id: 'kill-box'});
    const ask = () => xce.put(box,
      h('button', {type: 'button', id: 'kill', class: 'danger', onclick: () => confirm()}, 'Kill job ' + p.name));
    const confirm = () => {
      const yes = h('button', {type: 'button', id: 'kill-confirm', class: 'danger', onclick: () => kill()}, 'Yes, kill job ' + p.name);
      xce.put(box, h('span', {}, 'Kill it? '), yes, ' ', h('button', {type: 'button', id: 'kill-cancel', onclick: () => { ask(); box.firstChild.focus(); }}, 'Cancel'));
      yes.focus();
    };
    const kill = async () => {
      try {
        await xce.api(`/v1/jobs/${encodeURIComponent(p.name)}/kill`, {method: 'POST'});
        xce.status(`Job ${p.name} killed.`);
        await refresh();
        const heading = document.querySelector('#view h1');
        if (heading) heading.focus();
      } catch (e) { xce.status(`Job ${p.name}: ${e.message}`, true); ask(); }
    };
    ask();
    return box;
  }

  const view = {
    every: 500,
    async render(root, params) {
      this.id = params.job;
      this.root = root;
      this.state = null;
      this.last = null;
      this.hist = null;
      this.whyBox = null;
      await this.draw();
      const heading = root.querySelector('h1');
      if (heading) heading.focus();
    },
    async draw() {
      const p = await xce.api('/ui/v1/jobs/' + encodeURIComponent(this.id));
      const sig = JSON.stringify(p);
      if (sig === this.last) return; // nothing of this job changed
      this.last = sig;
      const changed = this.state !== p.job.state;
      this.state = p.job.state;
      const root = this.root;
      if (!root.isConnected) return;
      const j = p.job;
      const hist = this.hist || h('div', {id: 'history-box'});
      const whyBox = this.whyBox || h('div', {id: 'why-box'});
      this.hist = hist;
      this.whyBox = whyBox;
      xce.put(root,
        h('p', {}, h('a', {href: '#/jobs'}, '← All jobs')),
        h('h1', {tabindex: '-1'}, `Job ${p.name}`, j.name ? ` (${j.name})` : '', ' ', xce.state(j.state)),
        killControl(p, () => this.draw()),
        h('div', {class: 'cols'},
          h('section', {'aria-labelledby': 'req-title'}, h('h2', {id: 'req-title'}, 'Request'), request(p)),
          h('section', {'aria-labelledby': 'alloc-title'}, h('h2', {id: 'alloc-title'}, p.job.state === 'PEND' ? 'Allocation' : `Allocation (attempt ${p.attempt})`),
            allocation(p), kv([['Started', fmt.time(j.start_time)], ['Process', j.pid ? String(j.pid) : '']]), outcome(j),
            p.killed_by ? h('p', {}, 'Killed by ' + p.killed_by + '.') : null)),
        pending(p),
        j.state === 'PEND' ? h('section', {'aria-labelledby': 'why-title'}, h('h2', {id: 'why-title'}, 'Forecast and what would start it sooner'),
          h('button', {type: 'button', id: 'why-again', onclick: () => why(p, whyBox).catch((e) => xce.put(whyBox, h('p', {class: 'error'}, e.message)))}, 'Simulate again'),
          whyBox) : null,
        h('section', {'aria-labelledby': 'hist-title'}, h('h2', {id: 'hist-title'}, 'History'), hist));
      await history(p, hist);
      if (j.state === 'PEND' && changed) why(p, whyBox).catch((e) => xce.put(whyBox, h('p', {class: 'error'}, e.message)));
    },
    async refresh(c) {
      if (!c.jobs || !this.root || !this.root.isConnected) return;
      const focusedID = document.activeElement && document.activeElement.id;
      await this.draw();
      if (focusedID) { const el = document.getElementById(focusedID); if (el) el.focus(); }
    },
  };
  xce.views.job = view;
})();
