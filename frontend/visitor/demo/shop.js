// The demo shop's own script: a cart counter, single-page category filters
// (history.pushState, which the visitor script counts as page views) and buttons
// that drive the Rapport script API. It works whether or not Rapport loads.
(function () {
  var count = Number(sessionStorage.getItem('demo-cart') || 0);
  var cart = document.getElementById('cart-count');
  function showCart() { if (cart) cart.textContent = String(count); }
  showCart();
  document.addEventListener('click', function (e) {
    var target = e.target.closest('[data-action]');
    if (!target) return;
    var action = target.getAttribute('data-action');
    if (action === 'add') {
      count++;
      sessionStorage.setItem('demo-cart', String(count));
      showCart();
    } else if (action === 'chat') {
      // Function-call style works before the loader has arrived (the inline stub queues it).
      window.Rapport && window.Rapport('open');
    } else if (action === 'identify') {
      window.Rapport && window.Rapport('identify', { externalId: 'demo-42', email: 'eve@example.com', firstName: 'Eve', lastName: 'Demo' });
      target.textContent = 'Signed in as Eve';
    } else if (action === 'vip') {
      window.Rapport && window.Rapport('tag', 'vip');
    } else if (action === 'error') {
      // An uncaught error, for the script-error report.
      throw new Error('Demo checkout failed: coupon service timed out');
    } else if (action === 'filter') {
      var category = target.getAttribute('data-category');
      history.pushState({ category: category }, '', '?category=' + category);
      filter(category);
    }
  });
  function filter(category) {
    document.querySelectorAll('.product').forEach(function (p) {
      p.hidden = category !== 'all' && p.getAttribute('data-category') !== category;
    });
  }
  window.addEventListener('popstate', function () {
    filter(new URLSearchParams(location.search).get('category') || 'all');
  });
  if (location.search) filter(new URLSearchParams(location.search).get('category') || 'all');
})();
