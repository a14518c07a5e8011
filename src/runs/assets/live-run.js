// The run page, live: while the run is unfinished, its new trace events are appended (read with `after`,
// never the whole trace again) and its state kept current. The rows come rendered by the server, as the
// page's own (src/runs/trace-view.ts), escaped there. When the run ends, the page's content is read once
// more and put in place, to show its outcome.
(function () {
  const trace = document.getElementById('trace');
  const state = document.getElementById('run-state');
  if (!trace || !state) return;
  const rowsAt = `/console/runs/${encodeURIComponent(trace.dataset.run)}/trace-rows`;
  let after = Number(trace.dataset.after || 0);

  async function showEnded() {
    const page = await fetch(location.href, { credentials: 'same-origin' });
    const fresh = new DOMParser().parseFromString(await page.text(), 'text/html').querySelector('main');
    if (page.ok && fresh) document.querySelector('main').replaceWith(fresh);
  }

  /** Appends the rows after the last one shown; answers how long to wait for the next turn, or null once the run ended. */
  async function turn() {
    const answer = await fetch(`${rowsAt}?after=${after}`, { credentials: 'same-origin', headers: { accept: 'text/html' } });
    // A page other than the rows (sign-in, once the session ended) has no such body: the next turn tries again.
    const rows = answer.ok ? new DOMParser().parseFromString(await answer.text(), 'text/html').querySelector('tbody[data-state]') : null;
    if (!rows) return 1000;
    trace.append(...rows.rows);
    after = Number(rows.dataset.after);
    state.textContent = rows.dataset.state;
    if (rows.dataset.ended === 'true') return null;
    return rows.dataset.more === 'true' ? 0 : 1000;
  }

  async function poll() {
    let wait = 1000;
    try {
      wait = await turn();
      if (wait === null) return void (await showEnded());
    } catch {
      // the next turn tries again
    }
    setTimeout(poll, wait);
  }
  setTimeout(poll, 1000);
})();
