// erpgate's one script: copy buttons, and buttons held for a moment.
//
// A button with data-copy="<id>" copies the text of the element with that
// id. Buttons are hidden until this script shows them, so a page without
// JavaScript shows none; the values stay on the page to select and copy by
// hand.
//
// A button with data-hold (Approve, the sign-in consent) does nothing for
// a second after the page is shown or made visible again: a page
// elsewhere may open this one in a pop-up under the pointer on the first
// click of a double-click, so that the second lands here (clickjacking
// without a frame, which the pages already refuse).
"use strict";
(function () {
  var held = document.querySelectorAll("button[data-hold]");
  if (!held.length) { return; }
  var timer = 0;
  function set(disabled) {
    held.forEach(function (button) { button.disabled = disabled; });
  }
  // The stylesheet's hold, which covered the time before this script ran,
  // ends here: from now on the script holds the buttons (below).
  held.forEach(function (button) { button.setAttribute("data-hold", "script"); });
  function hold() {
    set(true);
    clearTimeout(timer);
    if (document.visibilityState === "visible") {
      timer = setTimeout(function () { set(false); }, 1000);
    }
  }
  // Not on focus: a click into a window that was not focused would focus
  // it first, and a person's own click would press nothing.
  document.addEventListener("visibilitychange", hold);
  window.addEventListener("pageshow", hold);
  hold();
})();
(function () {
  var status = document.getElementById("copy-status");
  function say(text) {
    if (status) { status.textContent = text; }
  }
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    if (!target || !navigator.clipboard) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = target.textContent.trim();
      navigator.clipboard.writeText(text).then(function () {
        button.textContent = "Copied";
        say("Copied " + (button.getAttribute("aria-label") || "").replace(/^Copy /, "") + " to the clipboard.");
        setTimeout(function () { button.textContent = "Copy"; }, 2000);
      }, function () {
        say("Your browser did not allow copying; select the text and copy it instead.");
      });
    });
  });
})();
