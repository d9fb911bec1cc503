// erpgate's one script: copy buttons, and buttons held for a moment.
//
// A button with data-copy="<id>" copies the text of the element with that
// id. Buttons are hidden until this script shows them, so a page without
// JavaScript shows none; the values stay on the page to select and copy by
// hand.
//
// A button with data-hold (Approve, the sign-in consent) does nothing for
// a second after the page is shown or made visible again, or its window
// is focused, and nothing while its window is not focused: a page
// elsewhere may open this one in a pop-up under the pointer on the first
// click of a double-click, or bring a window it opened to the front under
// the pointer, so that the second lands here (clickjacking without a
// frame, which the pages already refuse). A click into a window that was
// not focused therefore presses nothing; the person clicks again a second
// later. A held button that had the keyboard's focus gets it back when
// the hold ends, so Enter still approves.
"use strict";
(function () {
  var held = document.querySelectorAll("button[data-hold]");
  if (!held.length) { return; }
  var timer = 0;
  var blurred = false; // the window lost focus and has not had it back
  var focused = null;  // the held button that had the keyboard's focus
  function set(disabled) {
    if (disabled && document.activeElement && document.activeElement.hasAttribute("data-hold")) {
      focused = document.activeElement;
    }
    held.forEach(function (button) { button.disabled = disabled; });
    if (!disabled && focused) {
      if (!document.activeElement || document.activeElement === document.body) { focused.focus(); }
      focused = null;
    }
  }
  // The stylesheet's hold, which covered the time before this script ran,
  // ends here: from now on the script holds the buttons (below).
  held.forEach(function (button) { button.setAttribute("data-hold", "script"); });
  function hold() {
    set(true);
    clearTimeout(timer);
    if (document.visibilityState === "visible" && !blurred) {
      timer = setTimeout(function () { set(false); }, 1000);
    }
  }
  document.addEventListener("visibilitychange", hold);
  window.addEventListener("pageshow", hold);
  // The window's own focus and blur only (an element's do not bubble).
  window.addEventListener("focus", function (e) {
    if (e.target === window) { blurred = false; hold(); }
  });
  window.addEventListener("blur", function (e) {
    if (e.target === window) { blurred = true; hold(); }
  });
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
