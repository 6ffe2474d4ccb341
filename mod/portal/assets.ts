/**
 * The portal's one stylesheet and one script, served from /static/ (the CSP allows no inline
 * script or style). The script is progressive enhancement only: every page works without it.
 */

/** The stylesheet: readable type, a single column on a phone, visible focus. */
export const STYLE = `
:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fdfdfc; --muted: #5c5c5c;
  --line: #d0d0cc; --accent: #0b57a4; --bad: #a3190f; --good: #1d6b2c; --card: #f3f3f0; }
@media (prefers-color-scheme: dark) { :root { --fg: #ececec; --bg: #161616; --muted: #b0b0b0;
  --line: #444; --accent: #8ab8f0; --bad: #ff8a80; --good: #8fd19e; --card: #222; } }
* { box-sizing: border-box; }
body { margin: 0; font: 1rem/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .5rem; }
header { border-bottom: 1px solid var(--line); padding: .5rem 1rem; }
header p { margin: 0; font-weight: 600; }
nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin: .25rem 0 0; padding: 0; }
nav a { display: inline-block; padding: .5rem 0; }
nav a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
main { max-width: 64rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; margin: 0 0 1rem; }
.card h2, .card h3 { margin-top: 0; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .5rem 0; }
dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--bg); border: 1px solid var(--line); padding: .5rem; margin: .5rem 0; }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; align-items: end; }
.actions form { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: 0; }
label { display: block; } input, select, textarea { font: inherit; padding: .4rem; max-width: 100%; }
form.card label { margin: .5rem 0; }
form.card label > input, form.card label > textarea, form.card label > select { display: block; margin-top: .2rem; width: 100%; max-width: 40rem; }
button { font: inherit; padding: .45rem 1rem; border-radius: 4px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); cursor: pointer; min-height: 2.5rem; }
button.approve { background: var(--good); color: #fff; border-color: var(--good); }
button.refuse, button.danger, a.button.danger { background: var(--bad); color: #fff; border-color: var(--bad); }
a.button { display: inline-block; padding: .45rem 1rem; border-radius: 4px; border: 1px solid var(--line); text-decoration: none; line-height: 1.5; }
.notice { border-left: 4px solid var(--accent); padding: .5rem 1rem; background: var(--card); }
.error { border-left: 4px solid var(--bad); padding: .5rem 1rem; background: var(--card); }
.ok { color: var(--good); font-weight: 600; } .bad { color: var(--bad); font-weight: 600; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: break-word; }
td code { overflow-wrap: anywhere; }
.table { overflow-x: auto; }
code { overflow-wrap: anywhere; }
/* A task's text in the order it is stored: no right-to-left letter can reorder what it shows. */
pre, code, .data { direction: ltr; unicode-bidi: isolate-override; }
.data { overflow-wrap: anywhere; }
p.more { margin: -.5rem 0 1rem; color: var(--muted); } nav.pages { margin: 1rem 0; }
.help { display: block; color: var(--muted); font-size: .85rem; }
dl.fields { margin: 0; gap: 0 .75rem; } ul.waiting { margin: 0; padding-left: 1.2rem; }
ul.keys, ol.journal { padding: 0; } ul.keys { list-style: none; } ol.journal { list-style-position: inside; }
@media (max-width: 40rem) {
  table.stack thead { position: absolute; left: -9999px; }
  table.stack tr { display: block; border-bottom: 1px solid var(--line); padding: .25rem 0; }
  table.stack td { display: block; border: 0; padding: .1rem 0; }
  table.stack td::before { content: attr(data-label) ": "; color: var(--muted); }
  dl { grid-template-columns: 1fr; } dd { margin-bottom: .35rem; }
}
`;

/**
 * The script: on the Approvals page, listens to /events/approvals (with the page's own query: its
 * task and page number) and, whenever a pending approval is added or answered, brings the list in
 * line with the server's fresh rendering element by element: new cards are inserted, answered ones
 * removed, a card being filled in is left untouched, and the notes of how many more a task has and
 * the page links are replaced. On a task page, listens to /events/tasks/ID (with the page's query:
 * its journal page) and replaces the part that changes (#task-live: state, spend, waiting
 * approvals, journal, audit records) with the server's fresh rendering.
 */
export const SCRIPT = `
"use strict";
(function () {
  var list = document.getElementById("approvals");
  if (!list || !window.EventSource) return;
  var source = new EventSource("/events/approvals" + window.location.search);
  source.addEventListener("approvals", function (event) {
    var doc = new DOMParser().parseFromString(event.data, "text/html");
    var fresh = doc.getElementById("approvals");
    if (!fresh) return;
    var heading = list.querySelector("h2");
    var freshHeading = fresh.querySelector("h2");
    if (heading && freshHeading) heading.textContent = freshHeading.textContent;
    var wanted = {};
    var order = [];
    fresh.querySelectorAll("[data-live]").forEach(function (element) {
      wanted[element.id] = element;
      order.push(element.id);
    });
    list.querySelectorAll("[data-live]").forEach(function (element) {
      if (!wanted[element.id] || element.getAttribute("data-live") === "note") element.remove();
    });
    var previous = heading;
    order.forEach(function (id) {
      var element = document.getElementById(id);
      if (!element) {
        element = document.importNode(wanted[id], true);
        if (previous) previous.after(element); else list.prepend(element);
      }
      previous = element;
    });
  });
  window.addEventListener("pagehide", function () { source.close(); });
})();
(function () {
  var live = document.getElementById("task-live");
  if (!live || !window.EventSource) return;
  var source = new EventSource("/events" + window.location.pathname + window.location.search);
  source.addEventListener("task", function (event) {
    var doc = new DOMParser().parseFromString(event.data, "text/html");
    var fresh = doc.getElementById("task-live");
    if (!fresh) return;
    live.replaceChildren.apply(live, Array.prototype.map.call(fresh.childNodes, function (node) {
      return document.importNode(node, true);
    }));
  });
  window.addEventListener("pagehide", function () { source.close(); });
})();
`;
