// The run page, live: while the run is unfinished, its new trace events are appended (read with `after`,
// never the whole trace again) and its state kept current, through the API with the owner's session.
// When the run ends, the page's content is read once more and put in place, to show its outcome.
(function () {
  const trace = document.getElementById('trace');
  const state = document.getElementById('run-state');
  if (!trace || !state) return;
  const runId = trace.dataset.run;
  let after = Number(trace.dataset.after || 0);
  const TERMINAL = ['succeeded', 'failed', 'timed_out', 'canceled'];
  // Each cell carries its column's name, as the page's own rows do (the cards of a narrow screen show it).
  const labels = [...trace.closest('table').querySelectorAll('thead th')].map((th) => th.textContent);
  const api = (path) => fetch(`/api/v1/runs/${encodeURIComponent(runId)}${path}`, { credentials: 'same-origin', headers: { accept: 'application/json' } });

  function cell(row, text, pre) {
    const td = row.insertCell();
    if (pre) {
      const block = document.createElement('pre');
      block.textContent = text;
      td.appendChild(block);
    } else td.textContent = text;
  }

  function append(event) {
    const row = trace.insertRow();
    cell(row, String(event.seq));
    const time = document.createElement('time');
    time.dateTime = event.at;
    time.title = event.at;
    time.textContent = `${event.at.replace('T', ' ').slice(0, 19)} UTC`; // as time() in console-layout.ts writes it
    row.insertCell().appendChild(time);
    cell(row, event.type);
    const data = event.data;
    cell(row, event.type === 'agent_output' && data && typeof data.text === 'string' ? data.text : data == null ? '' : JSON.stringify(data), true);
    [...row.cells].forEach((td, i) => (td.dataset.label = labels[i] ?? ''));
    after = event.seq;
  }

  async function showEnded() {
    const page = await fetch(location.href, { credentials: 'same-origin' });
    const fresh = new DOMParser().parseFromString(await page.text(), 'text/html').querySelector('main');
    if (page.ok && fresh) document.querySelector('main').replaceWith(fresh);
  }

  async function poll() {
    try {
      const events = await api(`/trace?after=${after}&limit=100`);
      if (events.ok) (await events.json()).forEach(append);
      const run = await api('');
      if (run.ok) {
        const { state: now } = await run.json();
        state.textContent = now;
        if (TERMINAL.includes(now)) return void showEnded();
      }
    } catch {
      // the next turn tries again
    }
    setTimeout(poll, 1000);
  }
  setTimeout(poll, 1000);
})();
