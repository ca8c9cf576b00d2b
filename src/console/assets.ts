/**
 * The console's stylesheet and its one script, served from the worker (no CDN, no inline code:
 * the CSP allows only files from the worker itself).
 */

export const CONSOLE_CSS = `
:root { --fg:#1d2530; --muted:#5f6b7a; --line:#dde2e8; --bg:#f5f7fa; --card:#fff; --accent:#2457c5;
  --bad:#b42318; --bad-bg:#fef0ee; --good:#1a7f37; --warn-bg:#fff4d6; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:var(--bg); }
a { color:var(--accent); }
.top { display:flex; align-items:center; gap:1.5rem; padding:.6rem 1.5rem; background:#162033; color:#fff; }
.top a { color:#c9d6ee; text-decoration:none; padding:.2rem 0; }
.top a.current { color:#fff; border-bottom:2px solid #fff; }
.top nav { display:flex; gap:1.2rem; }
.brand { font-weight:600; }
.spacer { flex:1; }
.refreshed { color:#9fb0cc; font-size:.85rem; }
main { max-width:1200px; margin:0 auto; padding:1rem 1.5rem 3rem; }
h1 { font-size:1.4rem; margin:.6rem 0 1rem; }
h2 { font-size:1.05rem; margin:0 0 .6rem; }
h3 { font-size:.95rem; margin:1rem 0 .3rem; }
.grid { display:grid; grid-template-columns:repeat(auto-fill,minmax(270px,1fr)); gap:1rem; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:1rem 1.1rem; margin-bottom:1rem; }
.grid .card { margin:0; }
.wide { grid-column:1/-1; }
.numbers td:not(:first-child), .numbers th:not(:first-child) { text-align:right; font-variant-numeric:tabular-nums; }
table { border-collapse:collapse; width:100%; }
th, td { padding:.35rem .5rem; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
th { font-weight:600; color:var(--muted); font-size:.85rem; }
tr.bad td { color:var(--bad); font-weight:600; }
.big { font-size:1.6rem; font-weight:600; margin:.2rem 0; }
.muted { color:var(--muted); font-size:.88rem; font-weight:normal; }
.mono { font-family:ui-monospace,SFMono-Regular,Menlo,monospace; font-size:.88em; }
.clip { max-width:100%; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
.nowrap { white-space:nowrap; }
dl { display:grid; grid-template-columns:minmax(0,1fr) minmax(0,1fr); gap:.25rem .8rem; margin:0; }
dt { color:var(--muted); } dd { margin:0; min-width:0; }
meter { width:100%; height:1rem; }
.chart svg { width:100%; height:auto; display:block; }
.chart .bar { fill:var(--accent); }
.chart .axis { font-size:9px; fill:var(--muted); text-anchor:middle; }
.chart figcaption { margin-top:.3rem; }
figure { margin:0; }
.warnings { list-style:none; padding:0; margin:0 0 1rem; }
.warnings li { background:var(--bad-bg); border:1px solid #f3b8b0; color:var(--bad); padding:.6rem .9rem; border-radius:6px; margin-bottom:.5rem; font-weight:600; }
.notice { background:#e8f3ec; border:1px solid #b4dcc0; padding:.6rem .9rem; border-radius:6px; }
.error { background:var(--bad-bg); border-left:4px solid var(--bad); padding:.4rem .8rem; margin:.6rem 0; }
.hint { background:var(--warn-bg); padding:.4rem .8rem; border-radius:4px; }
.good { color:var(--good); font-weight:600; }
.pill { display:inline-block; padding:.05rem .55rem; border-radius:999px; background:#e9edf3; font-size:.85rem; }
.pill.bad, .state-failed { background:var(--bad-bg); color:var(--bad); }
.state-written_back { background:#e3f4e8; color:var(--good); }
.state-skipped { background:#eee; color:var(--muted); }
button { font:inherit; background:var(--accent); color:#fff; border:0; border-radius:6px; padding:.4rem .9rem; cursor:pointer; }
button.link { background:none; color:#c9d6ee; padding:0; }
input, select { font:inherit; padding:.35rem .5rem; border:1px solid #b9c2cf; border-radius:6px; }
.row { display:flex; flex-wrap:wrap; gap:.6rem; align-items:center; }
.search input { flex:1; min-width:260px; }
form.inline { display:inline; }
.login { max-width:420px; margin:3rem auto; display:flex; flex-direction:column; gap:.8rem; }
.login label { display:flex; flex-direction:column; gap:.3rem; }
.rejected, .problems { margin:.3rem 0 0; padding-left:1.1rem; color:var(--muted); font-size:.88rem; }
pre { background:#f0f3f7; padding:.6rem; border-radius:6px; overflow:auto; font-size:.82rem; max-height:24rem; }
`;

/**
 * Refreshes the page's content every 15 s while it is visible, unless the admin is typing or a
 * form is being sent; a lapsed sign-in shows the sign-in page.
 */
export const CONSOLE_JS = `
(function () {
  if (document.body.dataset.refresh !== 'on') return;
  var busy = false;
  document.addEventListener('submit', function () { busy = true; });
  function stamp() {
    var el = document.getElementById('refreshed');
    if (el) el.textContent = 'updated ' + new Date().toISOString().slice(11, 19) + ' UTC';
  }
  stamp();
  setInterval(function () {
    var active = document.activeElement;
    if (busy || document.visibilityState !== 'visible') return;
    if (active && /^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName)) return;
    fetch(location.href, { credentials: 'same-origin' }).then(function (res) {
      if (res.redirected && /\\/console\\/login/.test(res.url)) { location.assign(res.url); return null; }
      return res.ok ? res.text() : null;
    }).then(function (html) {
      if (!html || busy) return;
      var next = new DOMParser().parseFromString(html, 'text/html').getElementById('main');
      var main = document.getElementById('main');
      if (next && main) { main.replaceWith(next); stamp(); }
    }).catch(function () {});
  }, 15000);
})();
`;
