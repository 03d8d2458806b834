// Copy buttons for secrets shown once: a button with data-copy-target="<id>" copies the text of
// that element. The buttons stay hidden where the clipboard cannot be written (no JavaScript, an
// older browser, a page not served over https): the text can still be selected and copied.
(function () {
  'use strict';
  if (!navigator.clipboard || !window.isSecureContext) return;
  var buttons = document.querySelectorAll('button[data-copy-target]');
  Array.prototype.forEach.call(buttons, function (button) {
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener('click', function () {
      var source = document.getElementById(button.getAttribute('data-copy-target'));
      if (!source) return;
      navigator.clipboard.writeText(source.textContent.trim()).then(function () {
        button.textContent = 'Copied';
      }, function () {
        button.textContent = 'Select and copy it';
      });
      setTimeout(function () { button.textContent = label; }, 2500);
    });
  });
})();
