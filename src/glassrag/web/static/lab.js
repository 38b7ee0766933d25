// glassrag lab: optional comforts over server-rendered forms (every page works without it).
// Sliders show their value and re-submit their form when released; the exhibits a visitor
// opened are remembered in this browser's localStorage only. Nothing is sent anywhere else.
(function () {
  "use strict";
  var KEY = "glassrag-lab-visited";
  function visited() {
    try { return JSON.parse(window.localStorage.getItem(KEY) || "{}"); } catch (e) { return {}; }
  }
  var form = document.querySelector("form.lab-form");
  if (form && form.dataset.exhibit) {
    var seen = visited();
    seen[form.dataset.exhibit] = new Date().toISOString();
    try { window.localStorage.setItem(KEY, JSON.stringify(seen)); } catch (e) { /* storage off */ }
  }
  document.querySelectorAll("ol.exhibits li[data-exhibit]").forEach(function (li) {
    if (visited()[li.dataset.exhibit]) {
      var mark = li.querySelector(".visited");
      if (mark) { mark.hidden = false; }
    }
  });
  document.querySelectorAll("form.lab-form input[type=range]").forEach(function (range) {
    var out = document.getElementById(range.id + "-out");
    range.addEventListener("input", function () { if (out) { out.textContent = range.value; } });
    range.addEventListener("change", function () { range.form.requestSubmit(); });
  });
  document.querySelectorAll("form.lab-form select").forEach(function (select) {
    select.addEventListener("change", function () { select.form.requestSubmit(); });
  });
})();
