// Downloads with progress on the policy-log page. A link with data-download="export" (and
// data-format="csv|ndjson") is fetched here instead of followed: its body is read as it streams,
// its entries counted against the X-Total-Entries header into the <progress> of the box named by
// data-progress-box ("12,345 of 50,000 entries"), then saved as a file (a Blob and a temporary
// <a download>). The form with data-download="verify" is posted the same way (its fields, the CSRF
// token among them: starting a verification is a POST), the report saved, and what it says shown
// in #verify-result. Without this script (or without streams in the browser) the links and the
// form are plain downloads. Nothing from a response is written as HTML: text only.
(function () {
  'use strict';
  if (!window.fetch || !window.TextDecoder || !window.Blob || !window.URL || !URL.createObjectURL) return;
  if (!window.ReadableStream || !('body' in Response.prototype)) return;
  var links = document.querySelectorAll('a[data-download], form[data-download]');
  if (links.length === 0) return;
  var busy = false;

  function number(n) {
    return Number(n).toLocaleString('en-US');
  }

  function entries(n) {
    return n === 1 ? 'entry' : 'entries';
  }

  function parts(link) {
    var box = document.getElementById(link.getAttribute('data-progress-box'));
    if (!box) return null;
    return { box: box, bar: box.querySelector('[data-role="bar"]'), status: box.querySelector('[data-role="status"]') };
  }

  function say(p, text) {
    if (p.status) p.status.textContent = text;
  }

  /** The file name of a Content-Disposition header, or a fallback. */
  function fileName(response, fallback) {
    var match = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') || '');
    return match ? match[1] : fallback;
  }

  function save(chunks, type, name) {
    var url = URL.createObjectURL(new Blob(chunks, { type: type }));
    var a = document.createElement('a');
    a.href = url;
    a.download = name;
    a.hidden = true;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () {
      URL.revokeObjectURL(url);
      a.remove();
    }, 2000);
  }

  /** Why a download did not start, in words, by the answer's status. */
  function refusal(response, what) {
    if (response.type === 'opaqueredirect' || response.status === 0 || response.status === 303) return 'Your session has ended. Reload the page and sign in again.';
    if (response.status === 403) return 'Your role does not allow this.';
    if (response.status === 400) return 'The filters were not understood. Correct them and try again.';
    if (response.status === 429 && what === 'verify') return 'A verification of your log is already running. Its report downloads when it is done; try again after that.';
    if (response.status === 429) return 'Too many requests just now. Wait a minute and try again.';
    return 'The ' + (what === 'verify' ? 'verification' : 'download') + ' could not start just now. Try again in a moment.';
  }

  function request(url) {
    return fetch(url, { credentials: 'same-origin', cache: 'no-store', redirect: 'manual' });
  }

  /** Posts a form's fields (url-encoded, as the browser would). */
  function post(form) {
    var body = new URLSearchParams();
    Array.prototype.forEach.call(form.elements, function (el) {
      if (el.name && !el.disabled) body.append(el.name, el.value);
    });
    return fetch(form.action, { method: 'POST', body: body, credentials: 'same-origin', cache: 'no-store', redirect: 'manual' });
  }

  function exportWithProgress(link, p) {
    var csv = link.getAttribute('data-format') === 'csv';
    var total = null;
    var rows = 0;
    var newlines = 0;
    var quoted = false;
    var chunks = [];
    var decoder = new TextDecoder();
    if (p.bar) {
      p.bar.max = 1;
      p.bar.value = 0;
    }
    say(p, 'Starting the download…');
    return request(link.href).then(function (response) {
      if (!response.ok || !response.body) throw new Error(refusal(response, 'export'));
      var header = response.headers.get('x-total-entries');
      total = header !== null && /^\d+$/.test(header) ? Number(header) : null;
      var type = response.headers.get('content-type') || 'application/octet-stream';
      var name = fileName(response, csv ? 'policy-log.csv' : 'policy-log.ndjson');
      var reader = response.body.getReader();
      function show() {
        if (total !== null && p.bar) {
          p.bar.max = Math.max(total, 1);
          p.bar.value = Math.min(rows, total);
        }
        say(p, number(rows) + (total !== null ? ' of ' + number(total) : '') + ' ' + entries(total !== null ? total : rows));
      }
      show();
      function pump() {
        return reader.read().then(function (step) {
          if (step.done) return;
          chunks.push(step.value);
          var text = decoder.decode(step.value, { stream: true });
          // A CSV record ends at a line break outside quotes; an NDJSON entry at every line break.
          for (var i = 0; i < text.length; i++) {
            var c = text.charCodeAt(i);
            if (csv && c === 34) quoted = !quoted;
            else if (c === 10 && !quoted) newlines++;
          }
          rows = csv ? Math.max(newlines - 1, 0) : newlines;
          show();
          return pump();
        });
      }
      return pump().then(
        function () {
          if (total !== null && rows !== total) throw new Error('The download was cut short (' + number(rows) + ' of ' + number(total) + ' ' + entries(total) + '). Nothing was saved. Try again.');
          save(chunks, type, name);
          if (p.bar) p.bar.value = p.bar.max;
          say(p, number(rows) + ' of ' + number(total !== null ? total : rows) + ' ' + entries(rows) + '. Saved as ' + name + '.');
        },
        function () {
          throw new Error('The download was interrupted after ' + number(rows) + (total !== null ? ' of ' + number(total) : '') + ' ' + entries(total !== null ? total : rows) + '. Nothing was saved. Try again.');
        }
      );
    });
  }

  function showReport(report, name) {
    var root = document.getElementById('verify-result');
    if (!root || !report || typeof report !== 'object') return;
    var verdict = root.querySelector('[data-role="verdict"]');
    var checked = root.querySelector('[data-role="checked"]');
    var summary = root.querySelector('[data-role="summary"]');
    var list = root.querySelector('[data-role="divergences"]');
    if (verdict) {
      verdict.textContent = report.ok === true ? 'Intact' : 'Problems found';
      verdict.className = 'status ' + (report.ok === true ? 'good' : 'bad');
    }
    if (checked) checked.textContent = String(report.checked_at || '').replace('T', ' ').replace(/\.\d+Z$/, ' UTC') + ' · saved as ' + name;
    if (summary) summary.textContent = String(report.summary || '');
    if (list) {
      while (list.firstChild) list.removeChild(list.firstChild);
      var found = Array.isArray(report.divergences) ? report.divergences : [];
      found.slice(0, 20).forEach(function (d) {
        var li = document.createElement('li');
        li.textContent = (d.log_id !== null && d.log_id !== undefined ? 'Log id ' + d.log_id : 'A send of yours') + (d.field ? ' (' + d.field + ')' : '') + ': ' + (d.meaning || d.check);
        list.appendChild(li);
      });
      if (found.length > 20) {
        var more = document.createElement('li');
        more.textContent = 'and ' + number(found.length - 20) + ' more in the file.';
        list.appendChild(more);
      }
    }
    root.hidden = false;
  }

  function verifyWithProgress(form, p) {
    // No total to count against: an indeterminate bar while the gateway checks.
    if (p.bar) p.bar.removeAttribute('value');
    say(p, 'Checking your log… this can take a few minutes. Keep this page open.');
    return post(form).then(function (response) {
      if (!response.ok) throw new Error(refusal(response, 'verify'));
      var name = fileName(response, 'policy-log-verification.json');
      var type = response.headers.get('content-type') || 'application/json';
      return response.text().then(function (text) {
        var report = null;
        try {
          report = JSON.parse(text);
        } catch (e) {
          throw new Error('The report could not be read. Try again in a moment.');
        }
        save([text], type, name);
        if (p.bar) p.bar.value = p.bar.max = 1;
        say(p, 'Done. Saved as ' + name + '.');
        showReport(report, name);
      });
    });
  }

  function start(link, p) {
    busy = true;
    p.box.hidden = false;
    var button = link.tagName === 'FORM' ? link.querySelector('button') : link;
    if (button) button.setAttribute('aria-disabled', 'true');
    var run = link.getAttribute('data-download') === 'verify' ? verifyWithProgress : exportWithProgress;
    run(link, p)
      .catch(function (error) {
        if (p.bar) {
          p.bar.max = 1;
          p.bar.value = 0;
        }
        say(p, error && error.message ? error.message : 'The download failed. Try again.');
      })
      .then(function () {
        busy = false;
        if (button) button.removeAttribute('aria-disabled');
      });
  }

  Array.prototype.forEach.call(links, function (link) {
    if (link.tagName === 'FORM') {
      link.addEventListener('submit', function (event) {
        var p = parts(link);
        if (event.defaultPrevented || !p) return;
        event.preventDefault();
        if (!busy) start(link, p);
      });
      return;
    }
    link.addEventListener('click', function (event) {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      var p = parts(link);
      if (!p) return;
      event.preventDefault();
      if (!busy) start(link, p);
    });
  });
})();
