/* ClawSpec HTML report. Renders the embedded report (the JSON report's data) with DOM calls
   and textContent only: no innerHTML, no network, no external code. */
(function () {
  "use strict";

  var STATUS = {
    pass: ["\u2713", "passed"],
    fail: ["\u2717", "failed"],
    error: ["!", "errored"],
    warn: ["\u26A0", "warned"],
    skip: ["\u25CB", "skipped"],
  };
  var STATUS_ORDER = ["fail", "error", "warn", "pass", "skip"];
  var CHANGES = {
    regressed: ["\u2198", "regressed"],
    fixed: ["\u2197", "fixed"],
    flaky: ["\u223F", "flaky"],
    still_failing: ["\u2717", "still failing"],
    new: ["+", "new"],
    removed: ["\u2212", "removed"],
    unchanged: ["=", "unchanged"],
    not_compared: ["\u2205", "not compared"],
  };
  var JUDGE_TYPES = {};  // from the assertion registry, written beside the report data
  var CONTEXT = JSON.parse(document.getElementById("report-context").textContent);
  CONTEXT.judge.forEach(function (t) {
    JUDGE_TYPES[t] = true;
  });

  // A conversation's turn texts that the page's copy of the report holds cut (Python cuts them
  // to keep the page small; the JSON report keeps them whole): "<scenario>/<turn>/<field>" ->
  // the whole text's length in characters.
  var CUT = {};
  var CUT_LIMIT = CONTEXT.cut ? CONTEXT.cut.limit : null;
  ((CONTEXT.cut && CONTEXT.cut.texts) || []).forEach(function (c) {
    CUT[c.scenario + "/" + c.turn + "/" + c.field] = c.chars;
  });

  var report = JSON.parse(document.getElementById("report-data").textContent);
  var scenarios = report.scenarios || [];
  // A result is keyed by (scenario id, variant), as `ScenarioIdentity.key` keys it; results,
  // comparison entries and trends all carry both fields (variant: null without variants).
  function keyOf(x) {
    return x.variant === null || x.variant === undefined ? x.id : x.id + "\n" + x.variant;
  }
  // The id as shown where the variant matters: `<id> @ <variant>`.
  function labelOf(x) {
    return x.variant === null || x.variant === undefined ? x.id : x.id + " @ " + x.variant;
  }
  // The identity name as shown: `<name> @ <variant>` with a variant.
  function nameOf(s) {
    return s.variant === null || s.variant === undefined ? s.name : s.name + " @ " + s.variant;
  }
  var changeByKey = {};
  ((report.comparison && report.comparison.scenarios) || []).forEach(function (c) {
    changeByKey[keyOf(c)] = c;
  });
  var trendByKey = {};
  (report.trends || []).forEach(function (t) {
    trendByKey[keyOf(t)] = t;
  });

  // -- DOM helpers ------------------------------------------------------------------------

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        var value = attrs[key];
        if (value === null || value === undefined || value === false) return;
        if (key === "text") node.textContent = String(value);
        else if (key === "href") node.setAttribute("href", value);
        else node.setAttribute(key, value === true ? "" : String(value));
      });
    }
    for (var i = 2; i < arguments.length; i++) add(node, arguments[i]);
    return node;
  }

  function add(node, child) {
    if (child === null || child === undefined || child === false) return node;
    if (Array.isArray(child)) {
      child.forEach(function (c) { add(node, c); });
    } else if (typeof child === "object" && child.nodeType) {
      node.appendChild(child);
    } else {
      node.appendChild(document.createTextNode(String(child)));
    }
    return node;
  }

  function svg(tag, attrs) {
    var node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, String(attrs[key])); });
    return node;
  }

  // Only web links become links: a `javascript:` or `data:` URL from a report stays text.
  function link(url, label) {
    if (typeof url === "string" && /^https?:\/\//i.test(url)) {
      return el("a", { href: url, rel: "noopener noreferrer", target: "_blank" }, label || url);
    }
    return url ? el("span", null, label && label !== url ? label + " (" + url + ")" : url) : null;
  }

  function badge(status) {
    var s = STATUS[status] || ["?", String(status)];
    return el("span", { class: "badge st-" + status },
      el("span", { class: "icon", "aria-hidden": "true" }, s[0]), " " + s[1]);
  }

  function changeBadge(change) {
    var c = CHANGES[change] || ["\u2022", String(change)];
    return el("span", { class: "chg chg-" + change },
      el("span", { class: "icon", "aria-hidden": "true" }, c[0]), " " + c[1]);
  }

  function num(n) {
    return n === null || n === undefined ? "\u2013" : Number(n).toLocaleString("en-US");
  }

  function ms(n) {
    if (n === null || n === undefined) return "\u2013";
    return n >= 1000 ? (n / 1000).toFixed(n >= 10000 ? 0 : 1) + " s" : Math.round(n) + " ms";
  }

  function usd(n) {
    if (n === null || n === undefined) return "\u2013";
    // Said as every other output says it (reports/spend.py `usd`): cents when they are exact
    // ($0.01, not $0.0100), else every digit up to the sixth.
    var v = Math.round(n * 1e9) / 1e9;
    var cents = Math.round(v * 100) / 100 === v;
    return "$" + v.toLocaleString("en-US", cents
      ? { minimumFractionDigits: 2, maximumFractionDigits: 2 }
      : { maximumFractionDigits: 6 });
  }

  function pct(x) {
    return x === null || x === undefined ? "\u2013" : Math.round(x * 1000) / 10 + " %";
  }

  function time(iso) {
    var t = iso ? Date.parse(iso) : NaN;
    return isNaN(t) ? null : t;
  }

  // "2026-11-23 13:21:32 UTC": readable, and the same for everyone who opens the artifact.
  function stamp(iso) {
    var t = time(iso);
    return t === null ? iso : new Date(t).toISOString().slice(0, 19).replace("T", " ") + " UTC";
  }

  function section(title, id) {
    var node = el("section", { class: "block", "aria-label": title });
    if (id) node.id = id;
    node.appendChild(el("h3", null, title));
    return node;
  }

  function dl(pairs) {
    var list = el("dl", { class: "meta" });
    pairs.forEach(function (p) {
      if (p[1] === null || p[1] === undefined || p[1] === "") return;
      list.appendChild(el("div", null, el("dt", null, p[0]), el("dd", null, p[1])));
    });
    return list.children.length ? list : null;
  }

  // Deep links: `#<contract>/<identity name>`, `@<variant>` after it when there is one, each
  // part percent-encoded except the contract's `/` (a variant name never holds `@`).
  function anchor(s) {
    var part = function (t) { return encodeURIComponent(t).replace(/%2F/gi, "/"); };
    var variant = s.variant === null || s.variant === undefined ? "" : "@" + encodeURIComponent(s.variant);
    return "#" + part(s.contract) + "/" + encodeURIComponent(s.name) + variant;
  }

  function fromHash(hash) {
    try {
      return decodeURIComponent(hash.replace(/^#/, ""));
    } catch (e) {
      return hash.replace(/^#/, "");
    }
  }

  // -- totals, metadata, changes ----------------------------------------------------------

  function unknownCost(t) {
    var models = (t && t.unpriced) || [];
    return "unknown" + (models.length ? " (no price for " + models.join(", ") + ")" : "");
  }

  function scenarioTokens(s) {
    var total = null;
    runEvidence(s).forEach(function (ev) {
      if (ev && ev.tokens && typeof ev.tokens.total === "number") total = (total || 0) + ev.tokens.total;
    });
    return total;
  }

  // The evidence of a scenario's agent runs: its own, or a conversation's turns' when the
  // scenario has none of its own (never both: that would count the turns twice).
  function runEvidence(s) {
    if (s.evidence || !s.turns) return s.evidence ? [s.evidence] : [];
    return s.turns.map(function (t) { return t.evidence; }).filter(Boolean);
  }

  // Every verdict of a scenario: its own (`given`, scenario-level `then`) and its turns'.
  function allChecks(s) {
    var out = (s.assertions || []).slice();
    (s.turns || []).forEach(function (t) { out = out.concat(t.assertions || []); });
    return out;
  }

  function renderHeader() {
    var t = report.totals || {};
    var header = el("header", { class: "top" });
    header.appendChild(el("h1", null, "ClawSpec report"));
    if (report.interrupted) {
      header.appendChild(el("p", { class: "banner", role: "alert" },
        el("span", { "aria-hidden": "true" }, "\u26A0 "),
        "This run was interrupted: scenarios not run are reported as skipped."));
    }
    var stopped = report.budget && report.budget.stopped;
    if (stopped) {
      header.appendChild(el("p", { class: "banner", role: "alert" },
        el("span", { "aria-hidden": "true" }, "\u26A0 "),
        "Stopped: " + stopped + ". The run fails: a partly checked suite is not green."));
    }
    var totals = el("ul", { class: "totals", id: "totals", "aria-label": "Totals" });
    totals.appendChild(el("li", { class: "total-all", "data-count": t.scenarios || 0 },
      el("strong", null, num(t.scenarios || 0)), " scenarios"));
    [["pass", t.passed], ["fail", t.failed], ["error", t.errored], ["warn", t.warned],
      ["skip", t.skipped]].forEach(function (pair) {
      totals.appendChild(el("li", { class: "total st-" + pair[0], "data-status": pair[0],
        "data-count": pair[1] || 0 },
        el("span", { class: "icon", "aria-hidden": "true" }, STATUS[pair[0]][0]),
        " ", el("strong", null, num(pair[1] || 0)), " " + STATUS[pair[0]][1]));
    });
    header.appendChild(totals);

    // Spend as every other output says it (computed beside the report, in Python).
    var spend = CONTEXT.spend || {};
    var src = report.source || {};
    var pairs = [
      ["Started", stamp(report.started_at)],
      ["Duration", ms(report.duration_ms)],
      ["Run", report.run_id],
      ["ClawSpec", report.version],
      ["Commit", src.commit ? src.commit.slice(0, 12) : null],
      ["Branch", src.branch],
      ["Base branch", src.base_branch],
      ["Pull request", src.pull_request ? "#" + src.pull_request : null],
      ["Event", src.event],
      ["CI", src.ci],
      ["Repository", src.repository],
      ["Job", src.job_url ? link(src.job_url) : null],
      ["Gateway", src.gateway_url ? [src.gateway_url, src.gateway_mode ? " (" + src.gateway_mode + ")" : ""].join("") : src.gateway_mode],
      ["Tokens", spend.tokens || null],
      ["Cost", spend.cost || null],
      ["Budget", spend.budget || null],
      ["Selection", CONTEXT.selection],
    ];
    if (report.shard) {
      pairs.push(["Shard", report.shard.index + " of " + report.shard.total + " (" +
        num(report.shard.selected) + " scenarios in all)"]);
    }
    if (report.merged) {
      var m = report.merged;
      pairs.push(["Merged", "shards " + (m.present || []).join(", ") + " of " + m.total +
        ((m.missing || []).length ? "; missing " + m.missing.join(", ") : "") +
        (m.unreported ? "; " + num(m.unreported) + " scenarios in no report" : "")]);
    }
    var missing = report.comparison && report.comparison.baseline_missing;
    if (missing) pairs.push(["Baseline", "none: " + missing]);
    if (report.baseline) {
      var b = report.baseline;
      pairs.push(["Baseline", [b.source, b.branch, b.commit, b.created_at].filter(Boolean).join(" \u00B7 ")]);
    }
    header.appendChild(dl(pairs));
    return header;
  }

  // The variants side by side: the table Python builds for every output (rows: scenarios,
  // columns: variants, then each variant's totals and its comparison with the reference).
  function renderVariants() {
    var v = CONTEXT.variants;
    if (!v) return null;
    var block = el("section", { class: "changes variants", id: "variants", "aria-label": "Variants side by side" });
    block.appendChild(el("h2", null, "Variants side by side"));
    var table = el("table", { class: "variant-table" });
    var head = el("tr", null, el("th", { scope: "col" }, "Scenario"));
    v.columns.forEach(function (c) { head.appendChild(el("th", { scope: "col", "data-role": c.role }, c.title)); });
    table.appendChild(el("thead", null, head));
    var body = el("tbody", null);
    v.rows.forEach(function (r) {
      var tr = el("tr", null, el("th", { scope: "row" }, r.name, el("span", { class: "muted" }, " " + r.contract + ":" + r.line)));
      r.cells.forEach(function (cell, i) {
        if (!cell) { tr.appendChild(el("td", { class: "muted" }, "\u2013")); return; }
        var target = anchor({ contract: r.contract, name: r.name, variant: v.columns[i].name });
        var td = el("td", { "data-status": cell.status, "data-change": cell.change || "" },
          el("a", { href: target }, el("span", { class: "badge st-" + cell.status },
            el("span", { class: "icon", "aria-hidden": "true" }, (STATUS[cell.status] || ["?"])[0]),
            " " + cell.verdict)));
        if (cell.flaky) td.appendChild(el("span", { class: "muted" }, " flaky"));
        if (cell.change === "regressed" || cell.change === "fixed") {
          td.appendChild(el("span", null, " ", changeBadge(cell.change)));
        }
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    v.totals.forEach(function (pair) {
      var tr = el("tr", { class: "variant-total" }, el("th", { scope: "row" }, pair[0]));
      pair[1].forEach(function (value) { tr.appendChild(el("td", null, value)); });
      body.appendChild(tr);
    });
    table.appendChild(body);
    block.appendChild(el("div", { class: "table-scroll" }, table));
    v.gates.forEach(function (g) {
      block.appendChild(el("p", { "data-required": String(g.required) }, g.text));
      if (g.regressions.length) {
        block.appendChild(el("ul", { class: "regressions" }, g.regressions.map(function (r) { return el("li", null, r); })));
      }
    });
    return block;
  }

  function renderChanges() {
    var cmp = report.comparison;
    if (!cmp || cmp.baseline_missing) return null;  // none found: said in the header, not drawn as "no change"
    var block = el("section", { class: "changes", id: "changes", "aria-label": "Changes against the baseline" });
    block.appendChild(el("h2", null, "Changes against the baseline"));
    var byKind = {};
    (cmp.scenarios || []).forEach(function (c) { (byKind[c.change] = byKind[c.change] || []).push(c); });
    ["regressed", "fixed", "flaky"].forEach(function (kind) {
      var items = byKind[kind] || [];
      var group = el("div", { class: "change-group", "data-change": kind },
        el("h3", null, changeBadge(kind), " (" + items.length + ")"));
      if (!items.length) group.appendChild(el("p", { class: "muted" }, "none"));
      var list = el("ul", null);
      items.forEach(function (c) {
        var s = scenarioByKey[keyOf(c)];
        var label = labelOf(c);
        var item = el("li", null, s ? el("a", { href: anchor(s) }, label) : label);
        if (c.baseline_status || c.status) {
          item.appendChild(el("span", { class: "muted" }, " " + (c.baseline_status || "\u2013") +
            " \u2192 " + (c.status || "\u2013")));
        }
        var rate = (c.details || {}).pass_rate;
        if (rate && typeof rate === "object" && typeof rate.current === "number") {
          item.appendChild(el("span", { class: "muted" }, " \u00B7 pass rate " + pct(rate.current) +
            (typeof rate.baseline === "number" ? " (was " + pct(rate.baseline) + ")" : "")));
        }
        var p = (c.details || {}).p_value;
        if (typeof p === "number") item.appendChild(el("span", { class: "muted" }, " \u00B7 p = " + p.toFixed(3)));
        list.appendChild(item);
      });
      if (items.length) group.appendChild(list);
      block.appendChild(group);
    });
    if ((cmp.regressions || []).length) {
      block.appendChild(el("h3", null, "What fails a regression run"));
      block.appendChild(el("ul", { class: "regressions" }, cmp.regressions.map(function (r) { return el("li", null, r); })));
    }
    var counts = cmp.counts || {};
    var rest = Object.keys(counts).filter(function (k) { return ["regressed", "fixed", "flaky"].indexOf(k) < 0; });
    if (rest.length) {
      block.appendChild(el("p", { class: "muted" },
        rest.map(function (k) { return num(counts[k]) + " " + ((CHANGES[k] || [0, k])[1]); }).join(", ")));
    }
    return block;
  }

  // -- the scenario list and its filters --------------------------------------------------

  var scenarioByKey = {};
  var byAnchor = {};
  var rows = [];
  // Keyed by tag names a user chose: no prototype, or `constructor` would be a tag already.
  var state = { statuses: {}, tags: Object.create(null), query: "" };
  STATUS_ORDER.forEach(function (s) { state.statuses[s] = true; });

  function renderFilters() {
    var form = el("div", { class: "filters", role: "search", "aria-label": "Filter scenarios" });
    var statusGroup = el("div", { class: "chips", role: "group", "aria-label": "Status" },
      el("span", { class: "chips-label" }, "Status"));
    STATUS_ORDER.forEach(function (status) {
      var count = scenarios.filter(function (s) { return s.status === status; }).length;
      if (!count) return;
      var button = el("button", { type: "button", class: "chip st-" + status, "aria-pressed": "true",
        "data-filter-status": status },
        el("span", { class: "icon", "aria-hidden": "true" }, STATUS[status][0]),
        " " + STATUS[status][1] + " (" + count + ")");
      button.addEventListener("click", function () {
        state.statuses[status] = !state.statuses[status];
        button.setAttribute("aria-pressed", String(state.statuses[status]));
        applyFilters();
      });
      statusGroup.appendChild(button);
    });
    form.appendChild(statusGroup);

    var tags = Object.create(null);
    scenarios.forEach(function (s) { (s.tags || []).forEach(function (t) { tags[t] = (tags[t] || 0) + 1; }); });
    var tagNames = Object.keys(tags).sort();
    if (tagNames.length) {
      var tagGroup = el("div", { class: "chips", role: "group", "aria-label": "Tags (any of)" },
        el("span", { class: "chips-label" }, "Tags"));
      tagNames.forEach(function (tag) {
        var button = el("button", { type: "button", class: "chip tag-chip", "aria-pressed": "false",
          "data-filter-tag": tag }, "#" + tag + " (" + tags[tag] + ")");
        button.addEventListener("click", function () {
          state.tags[tag] = !state.tags[tag];
          button.setAttribute("aria-pressed", String(!!state.tags[tag]));
          applyFilters();
        });
        tagGroup.appendChild(button);
      });
      form.appendChild(tagGroup);
    }
    var input = el("input", { type: "search", id: "search", placeholder: "Search names, contracts, messages",
      autocomplete: "off", "aria-describedby": "shown" });
    input.addEventListener("input", function () {
      state.query = input.value.trim().toLowerCase();
      applyFilters();
    });
    input.addEventListener("keydown", function (e) {
      if (e.key === "Escape") { input.value = ""; state.query = ""; applyFilters(); }
    });
    form.appendChild(el("label", { class: "search", for: "search" }, el("span", null, "Search "), input));
    form.appendChild(el("p", { id: "shown", class: "muted", "aria-live": "polite" }));
    return form;
  }

  function searchText(s) {
    var parts = [s.id, nameOf(s), s.contract, s.target, s.message, (s.tags || []).join(" ")];
    allChecks(s).forEach(function (a) { parts.push(a.type, a.message); });
    (s.turns || []).forEach(function (t) { parts.push(t.message, t.say, t.reply || ""); });
    return parts.join("\n").toLowerCase();
  }

  function visible(row) {
    var s = row.scenario;
    if (!state.statuses[s.status]) return false;
    var wanted = Object.keys(state.tags).filter(function (t) { return state.tags[t]; });
    if (wanted.length && !(s.tags || []).some(function (t) { return state.tags[t]; })) return false;
    return !state.query || row.text.indexOf(state.query) >= 0;
  }

  function applyFilters() {
    var shown = 0;
    rows.forEach(function (row) {
      var show = visible(row);
      row.node.hidden = !show;
      if (show) shown++;
    });
    document.getElementById("shown").textContent =
      "Showing " + shown + " of " + rows.length + " scenarios";
  }

  function renderList() {
    var block = el("section", { id: "scenarios", class: "scenarios", "aria-label": "Scenarios", tabindex: "-1" });
    block.appendChild(el("h2", null, "Scenarios"));
    block.appendChild(renderFilters());
    var list = el("ul", { class: "scenario-list", id: "scenario-list" });
    scenarios.forEach(function (s, i) {
      var detailId = "detail-" + i;
      var toggle = el("button", { type: "button", class: "row", "aria-expanded": "false",
        "aria-controls": detailId });
      var title = el("span", { class: "row-title" }, el("span", { class: "name" }, nameOf(s)),
        el("span", { class: "contract" }, s.contract + ":" + s.line));
      var facts = el("span", { class: "row-facts" }, ms(s.duration_ms));
      var tokens = scenarioTokens(s);
      if (tokens !== null) facts.appendChild(el("span", null, " \u00B7 " + num(tokens) + " tok"));
      if (s.flaky) facts.appendChild(el("span", { class: "chg chg-flaky" }, "\u223F flaky"));
      var change = changeByKey[keyOf(s)];
      add(toggle, [badge(s.status), title, change && change.change !== "unchanged" ? changeBadge(change.change) : null, facts]);
      var tagList = (s.tags || []).length
        ? el("span", { class: "tags" }, s.tags.map(function (t) { return el("span", { class: "tag" }, "#" + t); }))
        : null;
      if (tagList) toggle.appendChild(tagList);
      var trend = trendByKey[keyOf(s)];
      if (trend && trend.pass_rates && trend.pass_rates.length > 1) {
        toggle.appendChild(sparkline(trend.pass_rates, "pass rate over the last " + trend.pass_rates.length + " runs", 0, 1));
      }
      var permalink = el("a", { class: "permalink", href: anchor(s), "aria-label": "Link to " + nameOf(s), title: "Link to this scenario" }, "#");
      var detail = el("div", { class: "detail", id: detailId, hidden: true });
      var item = el("li", { class: "scenario st-" + s.status, "data-status": s.status,
        "data-index": i }, el("div", { class: "row-line" }, toggle, permalink), detail);
      var row = { scenario: s, index: i, node: item, toggle: toggle, detail: detail, rendered: false, text: searchText(s) };
      toggle.addEventListener("click", function () {
        var open = toggle.getAttribute("aria-expanded") !== "true";
        setOpen(row, open);
        if (open && history.replaceState) history.replaceState(null, "", anchor(s));
      });
      rows.push(row);
      scenarioByKey[keyOf(s)] = s;
      byAnchor[fromHash(anchor(s))] = row;
      list.appendChild(item);
    });
    block.appendChild(list);
    if (!scenarios.length) block.appendChild(el("p", { class: "muted" }, "No scenarios ran."));
    return block;
  }

  function setOpen(row, open) {
    if (open && !row.rendered) {
      row.detail.appendChild(renderDetail(row.scenario, row.index));
      row.rendered = true;
    }
    row.detail.hidden = !open;
    row.toggle.setAttribute("aria-expanded", String(open));
    row.node.classList.toggle("open", open);
  }

  function openFromHash() {
    if (!location.hash) return;
    var row = byAnchor[fromHash(location.hash)];
    if (!row) return;
    if (!visible(row)) {  // a deep link wins over the filters
      STATUS_ORDER.forEach(function (s) { state.statuses[s] = true; });
      state.tags = Object.create(null);
      state.query = "";
      document.getElementById("search").value = "";
      document.querySelectorAll("[data-filter-status]").forEach(function (b) { b.setAttribute("aria-pressed", "true"); });
      document.querySelectorAll("[data-filter-tag]").forEach(function (b) { b.setAttribute("aria-pressed", "false"); });
      applyFilters();
    }
    setOpen(row, true);
    row.node.scrollIntoView({ block: "start" });
    var heading = row.detail.querySelector("h2");
    if (heading) heading.focus({ preventScroll: true });
  }

  // -- one scenario -----------------------------------------------------------------------

  function renderDetail(s, position) {
    var wrap = el("article", { class: "scenario-detail", "data-scenario-id": s.id });
    wrap.appendChild(el("h2", { tabindex: "-1" }, badge(s.status), " " + nameOf(s)));
    if (s.message) wrap.appendChild(el("p", { class: "message" }, s.message));
    var trace = s.trace;
    wrap.appendChild(dl([
      ["Contract", s.contract + ":" + s.line],
      ["Target", s.target],
      ["Duration", ms(s.duration_ms)],
      ["Run id", s.run_id],
      ["Gateway run id", s.gateway_run_id],
      ["Trace", trace ? (trace.url ? link(trace.url, trace.backend + " " + trace.id) : trace.backend + " " + trace.id) : null],
    ]));
    if (s.attempts) wrap.appendChild(renderAttempts(s));
    var ev = s.evidence;
    if (s.turns) {
      // A conversation: its preconditions, the chat (each turn's work and verdicts between
      // the bubbles), then the verdicts on the whole conversation.
      var given = (s.assertions || []).filter(function (a) { return a.phase === "given"; });
      var then = (s.assertions || []).filter(function (a) { return a.phase !== "given"; });
      if (given.length) wrap.appendChild(renderAssertions(s, given, "Preconditions"));
      wrap.appendChild(renderConversation(s, position));
      wrap.appendChild(renderAssertions(s, then, "Checks on the whole conversation"));
      if (ev) wrap.appendChild(renderTimeline(ev));
    } else {
      wrap.appendChild(renderAssertions(s, s.assertions || [], "Assertions"));
      wrap.appendChild(renderTimeline(ev));
    }
    if (ev && ev.spans && ev.spans.length) wrap.appendChild(renderWaterfall(ev));
    var tokens = renderTokens(s);
    if (tokens) wrap.appendChild(tokens);
    var trend = trendByKey[keyOf(s)];
    if (trend) wrap.appendChild(renderTrend(trend));
    var change = changeByKey[keyOf(s)];
    if (change) wrap.appendChild(renderChange(change));
    return wrap;
  }

  function renderAttempts(s) {
    var a = s.attempts;
    var block = section("Attempts");
    block.appendChild(el("p", null, a.passes + " of " + a.attempts + " attempts passed (pass rate " +
      pct(a.pass_rate) + ", 95 % interval " + pct(a.ci_low) + "\u2013" + pct(a.ci_high) + ")",
      s.flaky ? el("span", { class: "chg chg-flaky" }, " \u223F flaky") : null));
    block.appendChild(dl([
      ["Duration median / p90", a.duration_ms_median !== null && a.duration_ms_median !== undefined ? ms(a.duration_ms_median) + " / " + ms(a.duration_ms_p90) : null],
      ["Tokens median / p90", a.tokens_median !== null && a.tokens_median !== undefined ? num(a.tokens_median) + " / " + num(a.tokens_p90) : null],
    ]));
    if (a.runs && a.runs.length) {
      var list = el("ol", { class: "attempts" });
      a.runs.forEach(function (r) {
        list.appendChild(el("li", null, badge(r.status), " " + ms(r.duration_ms),
          r.tokens !== null && r.tokens !== undefined ? " \u00B7 " + num(r.tokens) + " tokens" : "",
          r.message ? el("span", { class: "muted" }, " \u2014 " + r.message) : null));
      });
      block.appendChild(list);
    }
    return block;
  }

  function renderAssertions(s, list, title) {
    var block = section(title + " (" + list.length + ")");
    if (!list.length) {
      block.appendChild(el("p", { class: "muted" }, "No assertion was evaluated."));
      return block;
    }
    block.appendChild(assertionList(s, list));
    return block;
  }

  function assertionList(s, list) {
    var ol = el("ol", { class: "assertions" });
    list.forEach(function (a) {
      var item = el("li", { class: "assertion st-" + a.status, "data-type": a.type },
        el("div", { class: "assertion-head" }, badge(a.status), " ",
          el("code", null, a.phase + "[" + a.index + "] " + a.type),
          el("span", { class: "where" }, s.contract + ":" + a.line)),
        el("p", { class: "message" }, a.message));
      if (a.attempts) {
        item.appendChild(el("p", { class: "muted" }, "passed " + a.attempts.passes + " of " +
          a.attempts.attempts + " attempts (" + pct(a.attempts.pass_rate) + ")"));
      }
      if (a.type === "artifact_matches_golden") item.appendChild(renderGolden(a));
      else if (JUDGE_TYPES[a.type]) item.appendChild(renderJudge(a));
      else {
        if (a.value !== null && a.value !== undefined || a.limit !== null && a.limit !== undefined) {
          item.appendChild(dl([["Measured", show(a.value)], ["Limit", show(a.limit)]]));
        }
        if (a.details && a.details.length) {
          item.appendChild(el("details", null, el("summary", null, "Details (" + a.details.length + ")"),
            el("ul", { class: "lines" }, a.details.map(function (d) { return el("li", null, d); }))));
        }
      }
      ol.appendChild(item);
    });
    return ol;
  }

  // -- a conversation ---------------------------------------------------------------------

  var BAD = { fail: true, error: true, warn: true };  // a turn shown open and marked

  function plural(n, word) {
    return num(n) + " " + word + (n === 1 ? "" : "s");
  }

  function renderConversation(s, position) {
    var turns = s.turns;
    var block = section("Conversation (" + plural(turns.length, "turn") + ")");
    block.classList.add("conversation");
    if (!turns.length) {
      block.appendChild(el("p", { class: "muted" }, "No turn ran."));
      return block;
    }
    var bad = turns.filter(function (t) { return BAD[t.status]; });
    if (bad.length) {
      block.appendChild(el("p", { class: "muted" }, bad.map(function (t) {
        return "turn " + (t.index + 1) + " " + (STATUS[t.status] || ["", t.status])[1];
      }).join(", ") + " (marked and open below)"));
    }
    var chat = el("ol", { class: "chat", "aria-label": "The conversation, turn by turn" });
    turns.forEach(function (t) { chat.appendChild(renderTurn(s, position, t)); });
    block.appendChild(chat);
    return block;
  }

  function renderTurn(s, position, t) {
    var n = t.index + 1;
    var open = !!BAD[t.status];
    var facts = [ms(t.duration_ms)];
    if (t.tokens !== null && t.tokens !== undefined) facts.push(num(t.tokens) + " tokens");
    var item = el("li", { class: "turn st-" + t.status, "data-turn": n, "data-status": t.status },
      el("div", { class: "turn-head" },
        el("span", { class: "turn-no" }, "Turn " + n), " ", badge(t.status),
        el("span", { class: "muted" }, " " + facts.join(" \u00B7 ")),
        el("span", { class: "where" }, s.contract + ":" + t.line)));
    if (t.message) item.appendChild(el("p", { class: "message turn-message" }, t.message));
    item.appendChild(bubble("user", "User", t.say, CUT[position + "/" + t.index + "/say"]));
    item.appendChild(turnWork(t, open));
    item.appendChild(bubble("agent", "Agent", t.reply, CUT[position + "/" + t.index + "/reply"]));
    item.appendChild(turnChecks(s, t, open));
    return item;
  }

  // A message of the chat; its text is inserted as text (Markdown and HTML stay as written)
  // with its line breaks kept.
  function bubble(kind, who, text, whole) {
    var box = el("div", { class: "bubble bubble-" + kind, "data-role": kind },
      el("div", { class: "who" }, who));
    if (text === null || text === undefined) {
      box.classList.add("none");
      box.appendChild(el("p", { class: "text" }, "no reply"));
      return box;
    }
    // A long text scrolls inside its bubble (the keyboard can scroll it too), so the turns
    // after it stay near.
    var long = text.length > 1500 || text.split("\n").length > 30;
    box.appendChild(el("div", { class: "text" + (long ? " long" : ""), tabindex: long ? "0" : null,
      role: long ? "region" : null, "aria-label": long ? who + " (scrolls)" : null },
      text === "" ? el("span", { class: "muted" }, "(empty)") : text));
    if (whole) {
      box.appendChild(el("p", { class: "cut" }, "\u2702 cut: the first " + num(CUT_LIMIT) + " of " +
        num(whole) + " characters are shown; the JSON report has the whole text"));
    }
    return box;
  }

  // What the agent did for the turn: its tool calls, delegations and tokens, its run and trace.
  function turnWork(t, open) {
    var ev = t.evidence;
    var trace = t.trace;
    if (!ev && !t.gateway_run_id && !trace) {
      return el("p", { class: "turn-work" }, "no log or trace evidence for this turn");
    }
    var tools = (ev && ev.tools) || [];
    var delegations = (ev && ev.delegations) || [];
    var said = [!ev ? "no log or trace evidence" : tools.length ? plural(tools.length, "tool call") : "no tool call"];
    if (delegations.length) said.push("delegated to " + delegations.join(" \u2192 "));
    if (ev && ev.tokens && typeof ev.tokens.total === "number") said.push(num(ev.tokens.total) + " tokens");
    var box = el("details", { class: "turn-work", open: open },
      el("summary", null, said.join(" \u00B7 ")));
    if (tools.length) {
      box.appendChild(el("ol", { class: "tool-list" }, tools.map(function (tool) {
        return el("li", { class: "tool" + (tool.error ? " error" : ""), "data-tool": tool.name },
          el("code", null, tool.name), " ", el("span", { class: "lane-tag" }, tool.agent || "unknown agent"),
          tool.error ? el("span", { class: "err" }, " \u26A0 error") : null,
          argsView(tool));
      })));
    }
    if (delegations.length) box.appendChild(el("p", { class: "delegations" }, "Delegated to: ", delegations.join(" \u2192 ")));
    var tok = ev && ev.tokens;
    if (tok) {
      box.appendChild(el("p", { class: "muted" }, "Tokens (" + tok.source + "): " + num(tok.input) + " in / " +
        num(tok.output) + " out / " + num(tok.total) + " total, cost " +
        (tok.cost_usd === null || tok.cost_usd === undefined ? unknownCost(tok) : usd(tok.cost_usd))));
    }
    if (t.gateway_run_id || trace) {
      box.appendChild(el("p", { class: "muted" }, t.gateway_run_id ? "Gateway run id " + t.gateway_run_id : null,
        t.gateway_run_id && trace ? " \u00B7 " : null,
        trace ? ["Trace ", trace.url ? link(trace.url, trace.backend + " " + trace.id) : trace.backend + " " + trace.id] : null));
    }
    return box;
  }

  // The turn's verdicts, after the reply: open on a turn that did not pass.
  function turnChecks(s, t, open) {
    var list = t.assertions || [];
    if (!list.length) return el("p", { class: "muted turn-checks" }, "no check on this turn");
    var counts = {};
    list.forEach(function (a) { counts[a.status] = (counts[a.status] || 0) + 1; });
    var said = STATUS_ORDER.filter(function (st) { return counts[st]; }).map(function (st) {
      return STATUS[st][0] + " " + counts[st] + " " + STATUS[st][1];
    });
    return el("details", { class: "turn-checks", open: open },
      el("summary", null, plural(list.length, "check") + ": " + said.join(", ")), assertionList(s, list));
  }

  function show(v) {
    if (v === null || v === undefined) return null;
    return typeof v === "string" ? v : JSON.stringify(v);
  }

  function renderGolden(a) {
    var box = el("div", { class: "golden" });
    box.appendChild(el("p", null, "ROUGE-L F1 score ", el("strong", null, show(a.value) || "\u2013"),
      " (threshold " + (show(a.limit) || "\u2013") + ")"));
    var lines = a.details || [];
    if (!lines.length) {
      box.appendChild(el("p", { class: "muted" }, "No diff recorded (the artifact equals the golden file, or the file was missing)."));
      return box;
    }
    var pre = el("pre", { class: "diff", "aria-label": "Unified diff from the golden file to the artifact" });
    lines.forEach(function (line) {
      var kind = /^(\+\+\+|---)/.test(line) ? "file" : line[0] === "+" ? "add" : line[0] === "-" ? "del" : line.indexOf("@@") === 0 ? "hunk" : "ctx";
      var mark = { add: "added: ", del: "removed: " }[kind];
      pre.appendChild(el("span", { class: "dl dl-" + kind }, mark ? el("span", { class: "sr" }, mark) : null, line));
      pre.appendChild(document.createTextNode("\n"));
    });
    box.appendChild(pre);
    return box;
  }

  function renderJudge(a) {
    var box = el("div", { class: "judge" });
    var calls = [];
    var other = [];
    var rubric = null;
    (a.details || []).forEach(function (d) {
      var m = /^call (\d+): score ([^:]+): ([\s\S]*)$/.exec(d);
      if (m) calls.push(m);
      else if (d.indexOf("rubric: ") === 0) rubric = d.slice(8);
      else other.push(d);
    });
    if (rubric) box.appendChild(el("div", { class: "rubric" }, el("h4", null, "Rubric"), el("blockquote", null, rubric)));
    box.appendChild(el("p", null, "Score ", el("strong", null, show(a.value) || "\u2013"),
      " (pass threshold " + (show(a.limit) || "\u2013") + ")"));
    if (calls.length) {
      var ol = el("ol", { class: "judge-calls" });
      calls.forEach(function (m) {
        ol.appendChild(el("li", null, el("strong", null, "call " + m[1] + ": score " + m[2]), " \u2014 ", m[3]));
      });
      box.appendChild(ol);
    }
    other.forEach(function (d) { box.appendChild(el("p", { class: "muted" }, d)); });
    if (a.usage) {
      var u = a.usage;
      box.appendChild(el("p", { class: "muted" }, "Judge " + (u.model || "") + ": " + num(u.calls) + " call(s), " +
        num(u.input_tokens) + " in / " + num(u.output_tokens) + " out tokens, cost " + (typeof u.cost_usd === "number" ? usd(u.cost_usd) : "unknown")));
    }
    return box;
  }

  // A call's arguments (from the run record): pretty JSON as text in a closed <details>, cut
  // for display; null when the report has none (no record read). A cut in the JSON report is
  // said too: `args` is then the start of the arguments' JSON text, not the value.
  var ARGS_CHARS = 2000;
  function argsView(t) {
    if (t.args === null || t.args === undefined) return null;
    var text = t.args_cut ? String(t.args) : JSON.stringify(t.args, null, 2);
    var notes = [];
    if (t.args_cut) {
      notes.push("cut in the report: " + (typeof t.args_bytes === "number" ? num(t.args_bytes) + " bytes in all" : "longer"));
    }
    if (text.length > ARGS_CHARS) {
      notes.push("first " + num(ARGS_CHARS) + " of " + num(text.length) + " characters shown");
      text = text.slice(0, ARGS_CHARS);
    }
    var box = el("details", { class: "tool-args" }, el("summary", null, "arguments",
      notes.length ? el("span", { class: "args-cut" }, " (" + notes.join("; ") + ")") : null));
    box.appendChild(el("pre", null, notes.length ? text + "\u2026" : text));
    return box;
  }

  function renderTimeline(ev) {
    var tools = (ev && ev.tools) || [];
    var block = section("Tool calls (" + tools.length + ")");
    block.classList.add("timeline");
    if (!ev) {
      block.appendChild(el("p", { class: "muted" }, "No log or trace evidence for this run."));
      return block;
    }
    if (!tools.length) {
      block.appendChild(el("p", { class: "muted" }, "No tool was called."));
    } else {
      var starts = tools.map(function (t) { return time(t.started_at); });
      var ends = tools.map(function (t, i) { var e = time(t.ended_at); return e === null ? starts[i] : e; });
      var known = starts.filter(function (x) { return x !== null; });
      var t0 = known.length ? Math.min.apply(null, known) : null;
      var t1 = known.length ? Math.max.apply(null, ends.filter(function (x) { return x !== null; })) : null;
      var span = t0 !== null ? Math.max(t1 - t0, 1) : 1;
      var lanes = [];
      var laneOf = {};
      tools.forEach(function (t) {
        var name = t.agent || "unknown agent";
        if (!(name in laneOf)) { laneOf[name] = lanes.length; lanes.push({ name: name, items: [] }); }
      });
      if (t0 !== null) {
        var chart = el("div", { class: "lanes", role: "img", "aria-label": "Tool calls over time, one lane per agent (the list below has the same calls)" });
        tools.forEach(function (t, i) { lanes[laneOf[t.agent || "unknown agent"]].items.push(i); });
        lanes.forEach(function (lane) {
          var track = el("div", { class: "track" });
          lane.items.forEach(function (i) {
            if (starts[i] === null) return;
            var bar = el("span", { class: "bar tool-bar" + (tools[i].error ? " error" : ""), title: tools[i].name });
            bar.style.left = ((starts[i] - t0) / span * 100).toFixed(2) + "%";
            bar.style.width = Math.max((ends[i] - starts[i]) / span * 100, 0.6).toFixed(2) + "%";
            bar.textContent = tools[i].name;
            track.appendChild(bar);
          });
          chart.appendChild(el("div", { class: "lane" }, el("span", { class: "lane-name" }, lane.name), track));
        });
        block.appendChild(chart);
      }
      var list = el("ol", { class: "tool-list" });
      tools.forEach(function (t, i) {
        var offset = starts[i] !== null && t0 !== null ? "+" + ms(starts[i] - t0) : "";
        var dur = starts[i] !== null && time(t.ended_at) !== null ? ms(time(t.ended_at) - starts[i]) : "";
        list.appendChild(el("li", { class: "tool" + (t.error ? " error" : ""), "data-tool": t.name },
          el("code", null, t.name), " ",
          el("span", { class: "lane-tag" }, t.agent || "unknown agent"),
          offset ? el("span", { class: "muted" }, " " + offset) : null,
          dur ? el("span", { class: "muted" }, " \u00B7 " + dur) : null,
          t.error ? el("span", { class: "err" }, " \u26A0 error") : null,
          argsView(t)));
      });
      block.appendChild(list);
    }
    if (ev.delegations && ev.delegations.length) {
      block.appendChild(el("p", null, "Delegated to: ", ev.delegations.join(" \u2192 ")));
    }
    return block;
  }

  function renderWaterfall(ev) {
    var spans = ev.spans;
    var block = section("Trace (" + spans.length + " spans)");
    block.classList.add("waterfall");
    var ids = {};
    spans.forEach(function (sp) { ids[sp.id] = sp; });
    var children = {};
    var roots = [];
    spans.forEach(function (sp) {
      if (sp.parent_id && ids[sp.parent_id] && sp.parent_id !== sp.id) (children[sp.parent_id] = children[sp.parent_id] || []).push(sp);
      else roots.push(sp);
    });
    var starts = spans.map(function (sp) { return sp.start_ms; }).filter(function (x) { return typeof x === "number"; });
    var endsKnown = spans.map(function (sp) { return typeof sp.end_ms === "number" ? sp.end_ms : sp.start_ms; })
      .filter(function (x) { return typeof x === "number"; });
    var t0 = starts.length ? Math.min.apply(null, starts) : 0;
    var total = endsKnown.length ? Math.max(Math.max.apply(null, endsKnown) - t0, 1) : 1;
    var rowsBox = el("div", { class: "spans", role: "list" });
    var seen = {};
    function walk(sp, depth) {
      if (seen[sp.id]) return;
      seen[sp.id] = true;
      var label = el("span", { class: "span-label" });
      label.style.paddingLeft = Math.min(depth, 12) * 0.9 + "em";
      add(label, [el("span", { class: "span-type" }, sp.type), " ", el("span", { class: "span-name" }, sp.name)]);
      if (sp.model) label.appendChild(el("span", { class: "muted" }, " \u00B7 " + sp.model));
      if (sp.input_tokens !== null && sp.input_tokens !== undefined || sp.output_tokens !== null && sp.output_tokens !== undefined) {
        label.appendChild(el("span", { class: "muted" }, " \u00B7 " + num(sp.input_tokens) + " in / " + num(sp.output_tokens) + " out"));
      }
      var dur = typeof sp.start_ms === "number" && typeof sp.end_ms === "number" ? sp.end_ms - sp.start_ms : null;
      label.appendChild(el("span", { class: "muted" }, " \u00B7 " + ms(dur)));
      if (sp.error) label.appendChild(el("span", { class: "err" }, " \u26A0 error: " + sp.error));
      var track = el("span", { class: "track" });
      var bar = el("span", { class: "bar span-bar type-" + sp.type + (sp.error ? " error" : ""), "data-span-id": sp.id });
      if (typeof sp.start_ms === "number") {
        bar.style.left = ((sp.start_ms - t0) / total * 100).toFixed(2) + "%";
        bar.style.width = Math.max((dur || 0) / total * 100, 0.4).toFixed(2) + "%";
      } else {
        bar.classList.add("unknown");
      }
      track.appendChild(bar);
      rowsBox.appendChild(el("div", { class: "span-row" + (sp.error ? " error" : ""), role: "listitem" }, label, track));
      (children[sp.id] || []).forEach(function (c) { walk(c, depth + 1); });
    }
    roots.forEach(function (r) { walk(r, 0); });
    spans.forEach(function (sp) { walk(sp, 0); });  // spans caught in a parent cycle
    block.appendChild(rowsBox);
    if (ev.spans_omitted) {
      block.appendChild(el("p", { class: "muted" }, ev.spans_omitted + " more spans left out to keep the report small."));
    }
    return block;
  }

  function renderTokens(s) {
    var ev = s.evidence;
    var rowsOut = [];
    if (ev && ev.tokens) {
      var t = ev.tokens;
      rowsOut.push(["Agent run (" + t.source + ")", num(t.input), num(t.output), num(t.total),
        t.cost_usd === null || t.cost_usd === undefined ? unknownCost(t) : usd(t.cost_usd)]);
    }
    (s.turns || []).forEach(function (turn) {
      var tt = turn.evidence && turn.evidence.tokens;
      if (!tt) {
        // Only the chat answer's total is known (no run record read for the turn).
        if (typeof turn.tokens === "number") {
          rowsOut.push(["Turn " + (turn.index + 1) + " (chat response)", "", "", num(turn.tokens), unknownCost(null)]);
        }
        return;
      }
      rowsOut.push(["Turn " + (turn.index + 1) + " (" + tt.source + ")", num(tt.input), num(tt.output), num(tt.total),
        tt.cost_usd === null || tt.cost_usd === undefined ? unknownCost(tt) : usd(tt.cost_usd)]);
    });
    var models = {};
    ((ev && ev.spans) || []).forEach(function (sp) {
      if (sp.type !== "llm") return;
      var key = sp.model || "unknown model";
      var m = models[key] = models[key] || { calls: 0, input: 0, output: 0, cost: null };
      m.calls++;
      m.input += sp.input_tokens || 0;
      m.output += sp.output_tokens || 0;
      if (typeof sp.cost_usd === "number") m.cost = (m.cost || 0) + sp.cost_usd;
    });
    Object.keys(models).forEach(function (key) {
      var m = models[key];
      rowsOut.push(["LLM spans: " + key + " (" + m.calls + ")", num(m.input), num(m.output), num(m.input + m.output), usd(m.cost)]);
    });
    allChecks(s).forEach(function (a) {
      if (!a.usage) return;
      var u = a.usage;
      rowsOut.push(["Judge: " + (a.turn === null || a.turn === undefined ? "" : "turn " + (a.turn + 1) + ", ") + a.phase + "[" + a.index + "] " + (u.model || ""), num(u.input_tokens), num(u.output_tokens),
        num((u.input_tokens || 0) + (u.output_tokens || 0)),
        typeof u.cost_usd === "number" ? usd(u.cost_usd) : unknownCost(null)]);
    });
    if (!rowsOut.length) return null;
    var block = section("Tokens and cost");
    var table = el("table", { class: "tokens" },
      el("thead", null, el("tr", null, ["Where", "Input", "Output", "Total", "Cost"].map(function (h) { return el("th", { scope: "col" }, h); }))),
      el("tbody", null, rowsOut.map(function (r) {
        return el("tr", null, el("th", { scope: "row" }, r[0]), r.slice(1).map(function (c) { return el("td", null, c); }));
      })));
    block.appendChild(el("div", { class: "scroll" }, table));
    // The plugin's events counted otherwise than OpenClaw's run record: said, never resolved.
    var differ = [];
    if (ev && ev.tokens && ev.tokens.disagreement) differ.push(ev.tokens.disagreement);
    (s.turns || []).forEach(function (turn) {
      var tt = turn.evidence && turn.evidence.tokens;
      if (tt && tt.disagreement) differ.push("turn " + (turn.index + 1) + ": " + tt.disagreement);
    });
    differ.forEach(function (d) {
      block.appendChild(el("p", { class: "muted token-disagreement" },
        "Counted from the run record; " + d));
    });
    return block;
  }

  function sparkline(values, label, lo, hi) {
    var nums = values.filter(function (v) { return typeof v === "number"; });
    var box = svg("svg", { class: "spark", viewBox: "0 0 100 24", width: 80, height: 20, role: "img", preserveAspectRatio: "none" });
    var title = svg("title");
    var last = nums.length ? nums[nums.length - 1] : null;
    title.textContent = label + (last !== null ? "; latest " + (hi === 1 ? pct(last) : num(last)) : "");
    box.appendChild(title);
    box.setAttribute("aria-label", title.textContent);
    if (nums.length < 2) return box;
    var min = lo !== undefined ? lo : Math.min.apply(null, nums);
    var max = hi !== undefined ? hi : Math.max.apply(null, nums);
    var range = max - min || 1;
    var step = 100 / Math.max(values.length - 1, 1);
    var points = [];
    values.forEach(function (v, i) {
      if (typeof v === "number") points.push((i * step).toFixed(1) + "," + (22 - (v - min) / range * 20).toFixed(1));
    });
    box.appendChild(svg("polyline", { points: points.join(" "), fill: "none", class: "spark-line" }));
    return box;
  }

  function renderTrend(trend) {
    var block = section("Trend over the last " + (trend.runs || []).length + " runs");
    block.appendChild(el("p", null, "Pass rate ", sparkline(trend.pass_rates || [], "pass rate", 0, 1),
      " " + (trend.pass_rates || []).map(pct).join(", ")));
    if ((trend.tokens || []).some(function (t) { return typeof t === "number"; })) {
      block.appendChild(el("p", null, "Tokens ", sparkline(trend.tokens, "tokens"), " " + trend.tokens.map(num).join(", ")));
    }
    if ((trend.runs || []).length) block.appendChild(el("p", { class: "muted" }, "Runs: " + trend.runs.join(", ")));
    return block;
  }

  function renderChange(change) {
    var block = section("Against the baseline");
    block.appendChild(el("p", null, changeBadge(change.change), " " + (change.baseline_status || "\u2013") + " \u2192 " + (change.status || "\u2013")));
    var d = change.details || {};
    var keys = Object.keys(d);
    if (keys.length) {
      block.appendChild(dl(keys.map(function (k) { return [k.replace(/_/g, " "), show(d[k])]; })));
    }
    return block;
  }

  // -- start ------------------------------------------------------------------------------

  var app = document.getElementById("app");
  app.textContent = "";
  app.appendChild(renderHeader());
  var list = renderList();  // fills scenarioByKey, which the changes section links through
  var changes = renderChanges();
  if (changes) app.appendChild(changes);
  var variants = renderVariants();
  if (variants) app.appendChild(variants);
  app.appendChild(list);
  app.appendChild(el("footer", { class: "muted" }, "Written by ClawSpec " + report.version +
    ". Keys: / searches, Escape clears the search; every scenario has a link (#)."));
  applyFilters();
  openFromHash();
  window.addEventListener("hashchange", openFromHash);
  document.addEventListener("keydown", function (e) {
    var target = e.target;
    var typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA");
    if (e.key === "/" && !typing) {
      e.preventDefault();
      document.getElementById("search").focus();
    }
  });
  document.documentElement.setAttribute("data-ready-ms", String(Math.round(performance.now())));
  document.documentElement.setAttribute("data-ready", "true");
})();
