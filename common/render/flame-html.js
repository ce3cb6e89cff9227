/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The flame-graph page's script (see flame-html.c for the data and the
 * markup): the graph (FgFlameView, flame-view.js, embedded before this),
 * the function table, and the view kept in the URL. Embedded verbatim at
 * build time; it must never contain a closing script tag or a comment
 * opener, which embed.py checks.
 */
(function () {
"use strict";

var t0 = performance.now();
var ROW_LIMIT = 500;

var D = JSON.parse(document.getElementById("fg-data").textContent);
var M = D.meta;
var names = D.names;
var tableEl = document.getElementById("table");
var tableNote = document.getElementById("tablenote");
var filterEl = document.getElementById("filter");
document.body.style.fontFamily = M.fontType;

var view = FgFlameView(FgFlameView.elements(), M, {
	onchange: updateUrl,
	onsearch: function () { selectRow(-1); },
});
var fmtCount = view.fmtCount, pct = view.pct;

/* The view lives in the URL, ?n=..&s=..&i=1, so a link shares it. */
var urlParams = FgFlameView.urlParams;

function updateUrl() {
	var p = urlParams();
	if (!p)
		return;
	view.saveTo(p);
	FgFlameView.replaceUrl(p);
}

/*
 * The function table.
 */
var FN = D.fn, FSELF = D.fself, FTOTAL = D.ftotal;
var columns = [
	{ key: "name", label: "Function", num: false, get: function (i) { return names[FN[i]]; } },
	{ key: "self", label: "Self", num: true, get: function (i) { return FSELF[i]; } },
	{ key: "selfpct", label: "Self %", num: true, pct: true, get: function (i) { return FSELF[i]; } },
	{ key: "total", label: "Total", num: true, get: function (i) { return FTOTAL[i]; } },
	{ key: "totalpct", label: "Total %", num: true, pct: true, get: function (i) { return FTOTAL[i]; } },
];
if (M.diff) {
	var otherName = M.otherIsAfter ? "after" : "before";
	columns.push({ key: "selfother", label: "Self (" + otherName + ")", num: true,
		       get: function (i) { return D.fselfOther[i]; } });
	columns.push({ key: "totalother", label: "Total (" + otherName + ")", num: true,
		       get: function (i) { return D.ftotalOther[i]; } });
}
var sortKey = "self", sortDesc = true, filterText = "", selected = -1;

function columnOf(key) {
	for (var c = 0; c < columns.length; c++)
		if (columns[c].key === key)
			return columns[c];
	return columns[0];
}

function buildHeader() {
	var tr = tableEl.tHead.rows[0];
	columns.forEach(function (col) {
		var th = document.createElement("th");
		th.textContent = col.label;
		th.setAttribute("data-key", col.key);
		th.addEventListener("click", function () {
			if (sortKey === col.key) {
				sortDesc = !sortDesc;
			} else {
				sortKey = col.key;
				sortDesc = col.num;
			}
			renderTable();
		});
		tr.appendChild(th);
	});
}

function renderTable() {
	var col = columnOf(sortKey), rows = [], i;
	for (i = 0; i < FN.length; i++)
		if (!filterText || names[FN[i]].toLowerCase().indexOf(filterText) >= 0)
			rows.push(i);
	rows.sort(function (a, b) {
		var x = col.get(a), y = col.get(b), c = x < y ? -1 : x > y ? 1 : 0;
		if (sortDesc)
			c = -c;
		return c || a - b;
	});
	Array.prototype.forEach.call(tableEl.tHead.rows[0].cells, function (th) {
		var on = th.getAttribute("data-key") === sortKey;
		th.className = on ? (sortDesc ? "desc" : "asc") : "";
		th.setAttribute("aria-sort", on ? (sortDesc ? "descending" : "ascending") : "none");
	});
	var body = document.createElement("tbody"), shown = Math.min(rows.length, ROW_LIMIT);
	for (var r = 0; r < shown; r++) {
		i = rows[r];
		var tr = document.createElement("tr");
		tr.setAttribute("data-index", String(i));
		tr.setAttribute("data-name", names[FN[i]]);
		tr.setAttribute("data-self", String(FSELF[i]));
		tr.setAttribute("data-total", String(FTOTAL[i]));
		if (i === selected)
			tr.className = "selected";
		columns.forEach(function (c) {
			var td = document.createElement("td"), v = c.get(i);
			td.className = c.num ? "num" : "name";
			td.textContent = !c.num ? v : c.pct ? pct(v, M.total) + "%" : fmtCount(v);
			if (!c.num)
				td.title = v; /* whole, where the cell ends in an ellipsis */
			tr.appendChild(td);
		});
		body.appendChild(tr);
	}
	tableEl.replaceChild(body, tableEl.tBodies[0]);
	tableNote.textContent = "Showing " + shown + " of " + rows.length + " functions" +
		(FN.length < M.functions ? " (the top " + FN.length + " of " + M.functions +
		 " by self and by total)" : "");
}

function selectRow(i) {
	selected = i;
	Array.prototype.forEach.call(tableEl.tBodies[0].rows, function (tr) {
		tr.classList.toggle("selected", tr.getAttribute("data-index") === String(i));
	});
}

function escapeRegExp(s) {
	return s.replace(/[\\^$.*+?()[\]{}|\/-]/g, "\\$&");
}

filterEl.addEventListener("input", function () {
	filterText = filterEl.value.toLowerCase();
	renderTable();
});
tableEl.addEventListener("click", function (e) {
	for (var el = e.target; el && el !== tableEl; el = el.parentNode) {
		if (el.tagName === "TR" && el.parentNode && el.parentNode.tagName === "TBODY") {
			var i = parseInt(el.getAttribute("data-index"), 10);
			view.search("^" + escapeRegExp(names[FN[i]]) + "$");
			selectRow(i);
			updateUrl();
			return;
		}
	}
});
window.addEventListener("keydown", view.searchKey);

/* Test hooks (see flame-html.c). */
window.fgFlame = {
	loadMs: 0,
	get drawMs() { return view.drawMs; },
	get drawCount() { return view.drawCount; },
	frames: view.frames,
	frameRect: view.frameRect,
	state: view.state,
};

buildHeader();
renderTable();
view.setData({
	names: names, name: D.name, depth: D.depth, gap: D.gap, value: D.value, other: D.other,
	color: D.color,
	colors: D.colors.map(function (c) {
		return "rgb(" + (c >> 16 & 255) + "," + (c >> 8 & 255) + "," + (c & 255) + ")";
	}),
	total: M.total, treeTotal: M.treeTotal, totalOther: M.totalOther, maxDepth: M.maxDepth,
	diff: M.diff, otherIsAfter: M.otherIsAfter,
});
(function () {
	var p = urlParams();
	if (p)
		view.restoreFrom(p);
})();

/*
 * Taller than the window, a flame graph opens at its base, where its roots
 * are and where it is read from, as the SVG does: the row of the frame the
 * URL zoomed into, else the root's, with the details line under it, at the
 * bottom of the window. An icicle graph's base is its top, and a URL with
 * a #fragment has asked for a place of its own.
 */
(function () {
	if (M.inverted || window.location.hash || !D.name.length)
		return;
	var canvas = document.getElementById("flame");
	var row = canvas.getBoundingClientRect().top + view.rowTop(D.depth[view.state().zoomed]);
	var below = row + M.frameHeight + document.getElementById("status").offsetHeight - window.innerHeight;
	if (below > 0)
		window.scrollTo(0, window.scrollY + below);
})();
window.fgFlame.loadMs = performance.now() - t0;
})();
