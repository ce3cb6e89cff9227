/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The flame-graph page's script (see flame-html.c for the data and the
 * markup). Embedded verbatim at build time; it must never contain a closing
 * script tag or a comment opener, which embed.py checks.
 *
 * Frames are kept in typed arrays indexed in pre-order, so a frame's
 * subtree is the range [i, end[i]). Drawing walks the zoomed frame's
 * subtree and skips the subtree of any frame narrower than MIN_DRAW px, so
 * its cost follows what is visible.
 */
(function () {
"use strict";

var t0 = performance.now();
var XPAD = 10, MIN_DRAW = 0.1, ROW_LIMIT = 500;
var SEARCH_FILL = "rgb(230,0,230)";

var D = JSON.parse(document.getElementById("fg-data").textContent);
var M = D.meta;
var names = D.names, N = D.name.length;
var nameOf = Int32Array.from(D.name), depth = Int32Array.from(D.depth);
var value = Float64Array.from(D.value);
var other = D.other ? Float64Array.from(D.other) : value;
var colorOf = Int32Array.from(D.color);
var start = new Float64Array(N), parent = new Int32Array(N), end = new Int32Array(N);
var colors = D.colors.map(function (c) {
	return "rgb(" + (c >> 16 & 255) + "," + (c >> 8 & 255) + "," + (c & 255) + ")";
});

/* Starts from the gaps, parents and subtree ends from the depths (see flame-html.c). */
(function () {
	var next = new Float64Array(M.maxDepth + 2), open = [];
	for (var i = 0; i < N; i++) {
		var d = depth[i];
		start[i] = next[d] + D.gap[i];
		next[d] = start[i] + value[i];
		next[d + 1] = start[i];
		while (open.length > d)
			end[open.pop()] = i;
		parent[i] = open.length ? open[open.length - 1] : -1;
		open.push(i);
	}
	while (open.length)
		end[open.pop()] = N;
})();

var W = M.width, FULL = W - 2 * XPAD, FH = M.frameHeight, FPAD = FH >= 4 ? 1 : 0;

/* What the full width stands for: a zoomed frame, or the 100% figure (--total). */
function span(z) {
	return z > 0 ? value[z] : Math.max(value[0], M.total);
}
var H = (N ? M.maxDepth + 1 : 1) * FH + 4;
var FONT = M.fontSize + "px " + M.fontType;

var canvas = document.getElementById("flame");
var ctx = canvas.getContext("2d");
var details = document.getElementById("details");
var matchedEl = document.getElementById("matched");
var unzoomBtn = document.getElementById("unzoom");
var searchBtn = document.getElementById("search");
var icBtn = document.getElementById("ignorecase");
var filterEl = document.getElementById("filter");
var tableEl = document.getElementById("table");
var tableNote = document.getElementById("tablenote");
document.body.style.fontFamily = M.fontType;

var zoomed = 0, hovered = -1, searching = null, ignorecase = false;
var matched = null; /* Uint8Array per frame while searching */
var dpr = 1, background = null;
/* The frames of the last draw, for hit-testing by hooks. */
var nDrawn = 0, dIdx = new Int32Array(N), dX = new Float64Array(N), dW = new Float64Array(N);
var dFaded = new Uint8Array(N);
var drawMs = 0, drawCount = 0;

function fmtCount(v) {
	var s = v === Math.floor(v) ? v.toFixed(0) : v.toFixed(2);
	var dot = s.indexOf("."), ip = dot < 0 ? s : s.substring(0, dot), rest = dot < 0 ? "" : s.substring(dot);
	var out = "";
	for (var i = 0; i < ip.length; i++) {
		if (i > 0 && (ip.length - i) % 3 === 0)
			out += ",";
		out += ip[i];
	}
	return out + rest;
}

function pct(part, whole) {
	return (whole > 0 ? 100 * part / whole : 0).toFixed(2);
}

/* The label for a frame w px wide, cut with ".." as the SVG renderer cuts it. */
function fit(name, w) {
	var chars = Math.floor(w / (M.fontSize * M.fontWidth));
	if (chars < 3)
		return "";
	var cps = Array.from(name);
	if (cps.length <= chars)
		return name;
	return cps.slice(0, chars - 2).join("") + "..";
}

function frameTop(d) {
	return M.inverted ? 2 + d * FH : H - 2 - (d + 1) * FH + FPAD;
}

function setupCanvas() {
	dpr = Math.max(0.1, Math.min(window.devicePixelRatio || 1, 32767 / H, 32767 / W));
	canvas.width = Math.round(W * dpr);
	canvas.height = Math.round(H * dpr);
	canvas.style.width = W + "px";
	canvas.style.height = H + "px";
	background = ctx.createLinearGradient(0, 0, 0, H);
	background.addColorStop(0.05, M.bgTop);
	background.addColorStop(0.95, M.bgBottom);
}

function fillOf(i) {
	return matched && matched[i] ? SEARCH_FILL : colors[colorOf[i]];
}

function drawFrame(i, x, w, faded) {
	var y = frameTop(depth[i]);
	ctx.globalAlpha = faded ? 0.5 : 1;
	ctx.fillStyle = fillOf(i);
	ctx.fillRect(x, y, w, FH - FPAD);
	var label = fit(names[nameOf[i]], w);
	if (label) {
		ctx.fillStyle = "#000";
		ctx.fillText(label, x + 3, y + (FH - FPAD) / 2);
	}
	dIdx[nDrawn] = i;
	dX[nDrawn] = x;
	dW[nDrawn] = w;
	dFaded[nDrawn] = faded ? 1 : 0;
	nDrawn++;
}

function draw() {
	var t = performance.now();
	ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	ctx.globalAlpha = 1;
	ctx.fillStyle = background;
	ctx.fillRect(0, 0, W, H);
	ctx.font = FONT;
	ctx.textBaseline = "middle";
	nDrawn = 0;
	if (N > 0) {
		/* The zoomed frame's ancestors stay as faded full-width bars. */
		for (var p = parent[zoomed]; p >= 0; p = parent[p])
			drawFrame(p, XPAD, FULL, true);
		var z0 = start[zoomed], scale = FULL / span(zoomed);
		for (var j = zoomed, e = end[zoomed]; j < e;) {
			var w = value[j] * scale;
			if (!(w >= MIN_DRAW)) {
				j = end[j];
				continue;
			}
			drawFrame(j, XPAD + (start[j] - z0) * scale, w, false);
			j++;
		}
		if (hovered >= 0) {
			for (var k = 0; k < nDrawn; k++)
				if (dIdx[k] === hovered) {
					ctx.globalAlpha = 1;
					ctx.strokeStyle = "#000";
					ctx.lineWidth = 0.5;
					ctx.strokeRect(dX[k], frameTop(depth[hovered]), dW[k], FH - FPAD);
				}
		}
	}
	drawMs = performance.now() - t;
	drawCount++;
}

var drawPending = false;
function redraw() {
	if (drawPending)
		return;
	drawPending = true;
	window.requestAnimationFrame(function () {
		drawPending = false;
		draw();
	});
}

/* The frame drawn at (px, py) in CSS px within the canvas, or -1. */
function hit(px, py) {
	if (N === 0)
		return -1;
	var d = M.inverted ? Math.floor((py - 2) / FH) : Math.floor((H - 2 - py) / FH);
	if (d < 0 || d > M.maxDepth || px < XPAD || px >= XPAD + FULL)
		return -1;
	var top = frameTop(d);
	if (py < top || py >= top + FH - FPAD)
		return -1;
	if (d < depth[zoomed]) {
		var a = zoomed;
		while (depth[a] > d)
			a = parent[a];
		return a;
	}
	var scale = FULL / span(zoomed), x = start[zoomed] + (px - XPAD) / scale, n = zoomed;
	while (depth[n] < d) {
		var c = n + 1, found = -1;
		while (c < end[n]) {
			if (x >= start[c] && x < start[c] + value[c]) {
				found = c;
				break;
			}
			c = end[c];
		}
		if (found < 0)
			return -1;
		n = found;
	}
	return value[n] * scale >= MIN_DRAW ? n : -1;
}

function detailsOf(i) {
	var s = M.nameType + " " + names[nameOf[i]] + " (" + fmtCount(value[i]) + " " + M.countName +
		", " + pct(value[i], M.total) + "%";
	if (M.diff) {
		var theirs = M.totalOther > 0 ? other[i] / M.totalOther : 0;
		var grown = M.otherIsAfter ? other[i] - value[i] : value[i] - other[i];
		var change = M.treeTotal > 0 ? 100 * grown / M.treeTotal : 0;
		s += "; " + (M.otherIsAfter ? "after" : "before") + ": " + fmtCount(other[i]) + ", " +
			(100 * theirs).toFixed(2) + "%; change " + (change >= 0 ? "+" : "") + change.toFixed(2) + "%";
	}
	if (zoomed > 0 && i >= zoomed && i < end[zoomed])
		s += ", " + pct(value[i], value[zoomed]) + "% of zoomed frame";
	return s + ")";
}

function setHovered(k) {
	if (k === hovered)
		return;
	hovered = k;
	details.textContent = k >= 0 ? detailsOf(k) : " ";
	redraw();
}

function zoom(k) {
	zoomed = k > 0 && k < N ? k : 0;
	unzoomBtn.hidden = zoomed === 0;
	draw();
}

/* The view lives in the URL, ?n=..&s=..&i=1, so a link shares it. */
function urlParams() {
	try {
		return new URLSearchParams(window.location.search);
	} catch (err) {
		return null;
	}
}

function updateUrl() {
	var p = urlParams();
	if (!p)
		return;
	["n", "s", "i"].forEach(function (k) { p.delete(k); });
	if (zoomed > 0)
		p.set("n", String(zoomed));
	if (searching !== null)
		p.set("s", searching);
	if (ignorecase)
		p.set("i", "1");
	var q = p.toString();
	try {
		history.replaceState(null, "", window.location.pathname + (q ? "?" + q : "") + window.location.hash);
	} catch (err) {
		/* Some viewers forbid it; the view still works. */
	}
}

function restoreUrl() {
	var p = urlParams();
	if (!p)
		return;
	ignorecase = p.get("i") === "1";
	showIgnorecase();
	var n = p.get("n");
	if (n !== null && /^[0-9]+$/.test(n))
		zoomed = parseInt(n, 10) < N ? parseInt(n, 10) : 0;
	unzoomBtn.hidden = zoomed === 0;
	if (p.get("s"))
		search(p.get("s"), false);
}

function showIgnorecase() {
	icBtn.classList.toggle("show", ignorecase);
	icBtn.setAttribute("aria-pressed", ignorecase ? "true" : "false");
}

function resetSearch() {
	matched = null;
	searching = null;
	searchBtn.classList.remove("show");
	searchBtn.textContent = "Search";
	matchedEl.textContent = " ";
	selectRow(-1);
}

/* Highlights every match; the percentage counts each sample once, so a
 * match inside a matched frame's subtree adds nothing. */
function search(term, redrawNow) {
	var re;
	try {
		re = new RegExp(term, ignorecase ? "i" : "");
	} catch (err) {
		matchedEl.textContent = "Invalid regexp";
		return;
	}
	var hitName = new Uint8Array(names.length);
	for (var k = 0; k < names.length; k++)
		hitName[k] = re.test(names[k]) ? 1 : 0;
	matched = new Uint8Array(N);
	var sum = 0, until = 0;
	for (var j = 0; j < N; j++) {
		if (!hitName[nameOf[j]])
			continue;
		matched[j] = 1;
		if (j >= until) {
			sum += value[j];
			until = end[j];
		}
	}
	searching = term;
	searchBtn.classList.add("show");
	searchBtn.textContent = "Reset Search";
	matchedEl.textContent = "Matched: " + (N && M.total > 0 ? 100 * sum / M.total : 0).toFixed(1) + "%";
	if (redrawNow !== false)
		draw();
}

function searchPrompt() {
	var term = prompt("Enter a search term (regexp allowed, eg: ^ext4_)" +
			  (ignorecase ? ", ignoring case" : "") + "; Ctrl-I toggles case", "");
	if (term !== null && term !== "") {
		selectRow(-1);
		search(term);
		updateUrl();
	}
}

function toggleIgnorecase() {
	ignorecase = !ignorecase;
	showIgnorecase();
	if (searching !== null)
		search(searching);
	updateUrl();
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

/*
 * Events.
 */
function canvasPoint(e) {
	var r = canvas.getBoundingClientRect();
	return [e.clientX - r.left, e.clientY - r.top];
}

canvas.addEventListener("mousemove", function (e) {
	var p = canvasPoint(e);
	setHovered(hit(p[0], p[1]));
});
canvas.addEventListener("mouseleave", function () {
	setHovered(-1);
});
canvas.addEventListener("click", function (e) {
	var p = canvasPoint(e), k = hit(p[0], p[1]);
	if (k < 0)
		return;
	zoom(k);
	details.textContent = detailsOf(k);
	updateUrl();
});
unzoomBtn.addEventListener("click", function () {
	zoom(0);
	updateUrl();
});
searchBtn.addEventListener("click", function () {
	if (searching !== null) {
		resetSearch();
		draw();
		updateUrl();
	} else {
		searchPrompt();
	}
});
icBtn.addEventListener("click", toggleIgnorecase);
filterEl.addEventListener("input", function () {
	filterText = filterEl.value.toLowerCase();
	renderTable();
});
tableEl.addEventListener("click", function (e) {
	for (var el = e.target; el && el !== tableEl; el = el.parentNode) {
		if (el.tagName === "TR" && el.parentNode && el.parentNode.tagName === "TBODY") {
			var i = parseInt(el.getAttribute("data-index"), 10);
			search("^" + escapeRegExp(names[FN[i]]) + "$");
			selectRow(i);
			updateUrl();
			return;
		}
	}
});
window.addEventListener("keydown", function (e) {
	/* Ctrl-F and F3 search the graph instead of the browser's find bar; Ctrl-I toggles case. */
	if (e.keyCode === 114 || (e.ctrlKey && (e.keyCode === 70 || e.key === "f" || e.key === "F"))) {
		e.preventDefault();
		searchPrompt();
	} else if (e.ctrlKey && (e.keyCode === 73 || e.key === "i" || e.key === "I")) {
		e.preventDefault();
		toggleIgnorecase();
	}
});
window.addEventListener("resize", function () {
	if ((window.devicePixelRatio || 1) !== dpr) {
		setupCanvas();
		draw();
	}
});

/*
 * Test hooks: what was drawn, where, and the view's state.
 */
function drawnFrame(k) {
	var i = dIdx[k];
	return { index: i, name: names[nameOf[i]], depth: depth[i], x: dX[k], y: frameTop(depth[i]),
		 width: dW[k], height: FH - FPAD, fill: fillOf(i), label: fit(names[nameOf[i]], dW[k]),
		 faded: dFaded[k] === 1, value: value[i] };
}

window.fgFlame = {
	loadMs: 0,
	get drawMs() { return drawMs; },
	get drawCount() { return drawCount; },
	frames: function () {
		var out = [];
		for (var k = 0; k < nDrawn; k++)
			out.push(drawnFrame(k));
		return out;
	},
	/* The viewport box of the first drawn frame named name, or null. */
	frameRect: function (name) {
		var r = canvas.getBoundingClientRect();
		for (var k = 0; k < nDrawn; k++) {
			if (names[nameOf[dIdx[k]]] !== name)
				continue;
			var f = drawnFrame(k);
			return { x: r.left + f.x, y: r.top + f.y, width: f.width, height: f.height,
				 cx: r.left + f.x + f.width / 2, cy: r.top + f.y + f.height / 2 };
		}
		return null;
	},
	state: function () {
		return { zoomed: zoomed, search: searching, ignorecase: ignorecase,
			 matched: matchedEl.textContent, details: details.textContent,
			 frames: N, names: names.length };
	},
};

buildHeader();
renderTable();
setupCanvas();
restoreUrl();
draw();
window.fgFlame.loadMs = performance.now() - t0;
})();
