// Times in the owner's own time zone: each <time datetime> of a console page shows its local value; the
// UTC value the server wrote stays on hover (its title). Without this script the page reads in UTC.
const format = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
function localise(root) {
  for (const time of root.querySelectorAll('time[datetime]')) {
    const at = new Date(time.dateTime);
    if (!Number.isNaN(at.getTime())) time.textContent = format.format(at);
  }
}
localise(document);
// Rows a script adds later (a live trace) and content put in place (a finished run) are localised too.
new MutationObserver((changes) => changes.forEach((change) => change.addedNodes.forEach((node) => node.querySelectorAll && localise(node.parentNode ?? node)))).observe(document.body, { childList: true, subtree: true });
