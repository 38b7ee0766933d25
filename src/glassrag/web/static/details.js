// Opens the <details> a link points into (/development#x-NAME: the experiments are folded by
// verdict, issue 49 item 7), on load and on every change of the address's #fragment. Chromium
// opens a folded target on find-in-page, not on a fragment link. Without JavaScript the target
// is still scrolled to, folded.
(function () {
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    for (; el; el = el.parentElement) {
      if (el.tagName === 'DETAILS') { el.open = true; }
    }
    if (id && document.getElementById(id)) { document.getElementById(id).scrollIntoView(); }
  }
  window.addEventListener('hashchange', openTarget);
  if (document.readyState === 'loading') { document.addEventListener('DOMContentLoaded', openTarget); }
  else { openTarget(); }
})();
