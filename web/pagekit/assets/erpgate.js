// erpgate's one script: copy buttons. A button with data-copy="<id>" copies
// the text of the element with that id. Buttons are hidden until this
// script shows them, so a page without JavaScript shows none; the values
// stay on the page to select and copy by hand.
"use strict";
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
