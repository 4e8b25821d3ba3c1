(function () {
  "use strict";
  // Every name and text below comes from the user's files: it enters the page as text nodes
  // (append of a string, textContent), never as markup.
  var model = JSON.parse(document.getElementById("data").textContent);
  var PAGE = 50;
  var view = [];
  var page = 0;
  var opened = null;

  function el(tag, className) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    for (var k = 2; k < arguments.length; k++) {
      var child = arguments[k];
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }

  function cosineText(value) {
    return value === null ? "-" : value.toFixed(3);
  }

  function byId(id) {
    return document.getElementById(id);
  }

  function filtered() {
    var least = Number(byId("min-size").value) || 2;
    var below = Number(byId("below").value);
    if (!(below >= 0)) below = 1.01;
    var name = byId("name").value.toLowerCase();
    var chosen = model.clusters.filter(function (c) {
      if (c.size < least) return false;
      if (c.least !== null && c.least >= below) return false;
      if (c.least === null && below <= 1) return false;
      if (name) {
        return c.members.some(function (m) { return String(m.id).toLowerCase().indexOf(name) >= 0; });
      }
      return true;
    });
    var sort = byId("sort").value;
    var key = {
      size: function (c) { return -c.size; },
      small: function (c) { return c.size; },
      least: function (c) { return c.least === null ? 2 : c.least; },
      most: function (c) { return c.least === null ? 2 : -c.least; }
    }[sort];
    return chosen
      .map(function (c, k) { return [key(c), c.number, c]; })
      .sort(function (x, y) { return x[0] - y[0] || x[1] - y[1]; })
      .map(function (x) { return x[2]; });
  }

  function renderCluster(cluster) {
    var kept = cluster.members[0];
    var box = el("section", "cluster");
    box.id = "cluster-" + cluster.number;
    box.dataset.cluster = String(cluster.number);
    box.append(el("h3", null, "cluster " + cluster.number + " · " + cluster.size + " members · kept: ", kept.id));
    var table = el("table");
    var head = el("tr", null, el("th", null, "member"), el("th", "num", "cosine to kept"), el("th", null, "action"), el("th"));
    table.append(head);
    cluster.members.forEach(function (member, index) {
      var row = el("tr", member.kept ? "kept member" : "member");
      row.dataset.member = String(index);
      var action = member.action || (member.kept ? "kept" : "duplicate");
      row.append(el("td", "id", member.id), el("td", "num", member.kept ? "kept" : cosineText(member.cosine)),
        el("td", "action-" + action, action));
      var cell = el("td");
      if (member.detail !== null) {
        var button = el("button", "open", "compare");
        button.addEventListener("click", function () { openMember(cluster.number, index, true); });
        cell.append(button);
      }
      row.append(cell);
      if (opened && opened[0] === cluster.number && opened[1] === index) row.classList.add("open");
      table.append(row);
    });
    box.append(table);
    return box;
  }

  function render() {
    var pages = Math.max(1, Math.ceil(view.length / PAGE));
    page = Math.min(Math.max(page, 0), pages - 1);
    var list = byId("clusters");
    list.replaceChildren();
    view.slice(page * PAGE, (page + 1) * PAGE).forEach(function (c) { list.append(renderCluster(c)); });
    byId("page").textContent = "page " + (page + 1) + " of " + pages;
    byId("shown").textContent = view.length.toLocaleString("en") + " of " +
      model.clusters.length.toLocaleString("en") + " clusters";
    byId("previous").disabled = page === 0;
    byId("next").disabled = page >= pages - 1;
  }

  function refilter() {
    view = filtered();
    page = 0;
    render();
  }

  function featureTable(title, items, side) {
    var box = el("div", null, el("h4", null, title));
    var table = el("table");
    var label = side ? "share of its length²" : "share of cosine";
    var head = side ? el("tr", null, el("th", null, "feature"), el("th", "num", "weight"), el("th", "num", label))
      : el("tr", null, el("th", null, "feature"), el("th", "num", "kept"), el("th", "num", "member"), el("th", "num", label));
    table.append(head);
    items.forEach(function (c) {
      var row = el("tr", null, el("td", "id", c.feature));
      if (side) row.append(el("td", "num", String(side === "a" ? c.a : c.b)));
      else row.append(el("td", "num", String(c.a)), el("td", "num", String(c.b)));
      row.append(el("td", "num", c.share === null ? "-" : c.share.toFixed(3)));
      table.append(row);
    });
    if (!items.length) table.append(el("tr", null, el("td", "muted", "none")));
    box.append(table);
    return box;
  }

  function renderDetail(cluster, member) {
    var kept = cluster.members[0];
    var detail = model.details[member.detail];
    var e = detail.explain;
    var box = byId("detail");
    box.replaceChildren();
    box.dataset.cluster = String(cluster.number);
    box.append(el("p", null, el("b", null, member.id), " against the kept ", el("b", null, kept.id)));
    var numbers = el("table", "numbers");
    function line(name, value) { numbers.append(el("tr", null, el("th", null, name), el("td", null, value))); }
    line("hamming distance", e.hamming + " of " + model.summary.bits + " bits");
    line("estimated cosine", cosineText(e.estimated_cosine) + " = cos(π · h / b)");
    line("true cosine", cosineText(e.cosine));
    line("features", e.shared_features + " shared, " + e.only_a + " only in the kept one, " + e.only_b + " only in this one");
    e.blocks.forEach(function (m) {
      var verdict = m.candidate ? el("span", "yes", "a candidate") : el("span", "no", "not a candidate");
      var shared = m.shared.length ? "shares block" + (m.shared.length > 1 ? "s " : " ") + m.shared.join(", ") + ": " : "shares no block: ";
      line(m.blocks + (m.blocks > 1 ? " blocks" : " block") + " of " + m.width + " bits", el("span", null, shared, verdict));
    });
    box.append(numbers);
    if (e.cosine !== null || e.costing_a.length || e.costing_b.length) {
      box.append(el("div", "features", featureTable("Features that carry the cosine", e.carrying, null),
        featureTable("Only in the kept one", e.costing_a, "a"), featureTable("Only in this one", e.costing_b, "b")));
    }
    if (detail.diff === null) {
      box.append(el("p", "muted", "No text to compare (see the notes in the summary)."));
      return;
    }
    var left = el("pre", "kept-text"), right = el("pre", "member-text");
    detail.diff.forEach(function (s) {
      var op = s[0], a = s[1], b = s.length > 2 ? s[2] : s[1];
      if (op === "e") { left.append(a); right.append(b); return; }
      if (a) left.append(el("span", "del", a));
      if (b) right.append(el("span", "ins", b));
    });
    box.append(el("div", "diff", el("div", null, el("h4", null, "kept: ", kept.id), left),
      el("div", null, el("h4", null, "member: ", member.id), right)));
    if (detail.cut) box.append(el("p", "muted", "The texts were cut short for the diff."));
  }

  function openMember(number, index, scroll) {
    var cluster = model.clusters.find(function (c) { return c.number === number; });
    if (!cluster || !cluster.members[index] || cluster.members[index].detail === null) return false;
    opened = [number, index];
    var at = view.indexOf(cluster);
    if (at < 0) { view = model.clusters.slice(); at = view.indexOf(cluster); }
    page = Math.floor(at / PAGE);
    render();
    renderDetail(cluster, cluster.members[index]);
    history.replaceState(null, "", "#cluster=" + number + "&member=" + index);
    if (scroll) byId("detail-card").scrollIntoView();
    return true;
  }

  function fromHash() {
    var wanted = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var kv = part.split("=");
      if (kv.length === 2) wanted[kv[0]] = Number(kv[1]);
    });
    if (wanted.cluster >= 0 && openMember(wanted.cluster, wanted.member || 1, false)) return;
    if (wanted.page >= 1) { page = wanted.page - 1; render(); }
  }

  ["sort", "min-size", "below", "name"].forEach(function (id) {
    byId(id).addEventListener("input", refilter);
  });
  byId("previous").addEventListener("click", function () { page -= 1; render(); });
  byId("next").addEventListener("click", function () { page += 1; render(); });
  view = filtered();
  render();
  fromHash();
  document.body.dataset.ready = "1";
  document.body.dataset.readyMs = String(Math.round(performance.now()));
})();
