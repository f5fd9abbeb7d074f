// Runs first, inline in the page's head: keeps what the user does before the
// app has hydrated, and replays it once it has (the app then sets
// data-hydrated on <html>). Forms and links work without the app, so their
// clicks go ahead as they are; a button that does nothing without it (Copy,
// say) would otherwise swallow the click. Typing into a field the app filters
// on is replayed as input and change events, so the app reads what is already
// in the field.
(() => {
  const root = document.documentElement;
  const hydrated = () => root.dataset.hydrated === 'true';
  const clicks = [];
  const edited = new Set();
  document.addEventListener('click', (event) => {
    if (hydrated() || !event.isTrusted || !(event.target instanceof Element)) return;
    const button = event.target.closest('button[type="button"]');
    if (!button) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    clicks.push(button);
  }, true);
  for (const type of ['input', 'change']) {
    document.addEventListener(type, (event) => {
      if (!hydrated() && event.isTrusted) edited.add(event.target);
    }, true);
  }
  new MutationObserver((_, observer) => {
    if (!hydrated()) return;
    observer.disconnect();
    for (const field of edited) {
      if (!field.isConnected) continue;
      field.dispatchEvent(new Event('input', { bubbles: true }));
      field.dispatchEvent(new Event('change', { bubbles: true }));
    }
    for (const button of clicks) {
      if (button.isConnected) button.click();
    }
  }).observe(root, { attributes: true, attributeFilter: ['data-hydrated'] });
})();
