// Copy buttons: a button with `data-copy="<input id>"` puts that input's value on the clipboard.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', async () => {
    const input = document.getElementById(button.dataset.copy);
    if (!input) return;
    try {
      await navigator.clipboard.writeText(input.value);
      button.textContent = 'Copied';
    } catch {
      input.select(); // the owner copies by hand where the clipboard is refused
    }
  });
}
