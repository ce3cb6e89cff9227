/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The heat map page's script (see heatmap-html.h for the data and the
 * markup): the subsecond-offset heat map on a canvas, and under it the
 * flame graph of the range selected on it (FgFlameView, flame-view.js,
 * embedded before this). Embedded verbatim at build time; it must never
 * contain a closing script tag or a comment opener, which embed.py checks.
 *
 * A sample's time is the ms it was taken in. In "us" profiles a sample
 * stands for the weight µs that ended with that ms (an off-CPU block), and
 * a cell or a range gets the part of it that lies inside, as common/profile/timed.c
 * and common/render/heatmap.c count it.
 */
(function () {
"use strict";

var t0 = performance.now();
var D = JSON.parse(document.getElementById("fg-data").textContent);
var M = D.meta, F = M.flame;
var US = M.unit === "us";
var LEFT = 56, TOP = 4, BOTTOM = 22, RIGHT = 8;
var SUFFIXES = ["_[k]", "_[j]", "_[i]", "_[w]"];
var MAX_FRAMES = 200000;

/* Names as the graph shows them: without their annotation; "all" for the root last. */
var rawNames = D.names, nNames = rawNames.length;
var names = rawNames.map(function (s) {
	for (var k = 0; k < SUFFIXES.length; k++)
		if (s.length > SUFFIXES[k].length && s.endsWith(SUFFIXES[k]))
			return s.substring(0, s.length - SUFFIXES[k].length);
	return s;
});
names.push("all");
var ROOT_NAME = nNames;
var nameCss = D.color.map(cssOf);
nameCss.push("rgb(250,250,250)");

var stacks = D.stacks, nStacks = stacks.length;
var rootOf = new Int32Array(nStacks);
for (var si = 0; si < nStacks; si++)
	rootOf[si] = stacks[si].length ? stacks[si][0] : -1;

var n = D.s.length;
var time = new Float64Array(n), stackOf = Int32Array.from(D.s);
var weight = D.w ? Float64Array.from(D.w) : null, maxWeight = 1;
(function () {
	var acc = M.base;
	for (var i = 0; i < n; i++) {
		acc += D.t[i];
		time[i] = acc;
		if (weight && weight[i] > maxWeight)
			maxWeight = weight[i];
	}
})();

var BUCKET = M.bucketMs, ROWS = M.rows, COLS = M.columns, START = M.start;
var CW = Math.max(2, Math.min(20, Math.floor(1100 / Math.max(COLS, 1))));
var CH = Math.max(3, Math.min(16, Math.floor(400 / ROWS)));

var mapCanvas = document.getElementById("heatmap"), mctx = mapCanvas.getContext("2d");
var cellEl = document.getElementById("cell"), rangeEl = document.getElementById("range");
var scaleEl = document.getElementById("scale"), isolateEl = document.getElementById("isolate");
var diffEl = document.getElementById("diff"), clearEl = document.getElementById("clear");
document.body.style.fontFamily = F.fontType;

var view = FgFlameView(FgFlameView.elements(), F, { onchange: updateUrl });

var isolate = -1;       /* the root name id shown alone, or -1 */
var scale = M.scale;    /* "linear" or "rank" */
var cells = null, cellMax = 0, ranked = null;
var sel = null;         /* the range selected: {lo, hi} in ms, or null */
var pending = null;     /* the first cell of a range being selected by clicks */
var anchor = null, dragTo = null;

function cssOf(c) {
	return "rgb(" + (c >> 16 & 255) + "," + (c >> 8 & 255) + "," + (c & 255) + ")";
}

function fmtCount(v) {
	return view.fmtCount(Math.round(v * 1000) / 1000);
}

/* As common/render/heatmap.c: light yellow, orange, red, dark red. */
var STOPS = [[255, 255, 178], [254, 204, 92], [253, 141, 60], [240, 59, 32], [189, 0, 38]];
function heatColor(v) {
	var x = Math.min(Math.max(v, 0), 1) * (STOPS.length - 1), i = Math.min(Math.floor(x), STOPS.length - 2);
	var f = x - i, c = [0, 1, 2].map(function (k) {
		return Math.round(STOPS[i][k] + f * (STOPS[i + 1][k] - STOPS[i][k]));
	});
	return "rgb(" + c[0] + "," + c[1] + "," + c[2] + ")";
}

/* The differential colour of common/render/palette.c: white, red for growth, blue for a decline. */
function diffColor(delta, maxDelta) {
	if (!(maxDelta > 0) || delta === 0)
		return "rgb(255,255,255)";
	var f = Math.min(1, Math.abs(delta) / maxDelta), c = Math.floor(210 * (1 - f));
	return delta > 0 ? "rgb(255," + c + "," + c + ")" : "rgb(" + c + "," + c + ",255)";
}

function kept(i) {
	return isolate < 0 || rootOf[stackOf[i]] === isolate;
}

/* Sample i's part of [lo, hi) ms. */
function share(i, lo, hi) {
	var w = weight ? weight[i] : 1;
	if (!US)
		return time[i] >= lo && time[i] < hi ? w : 0;
	var end = (time[i] + 1) * 1000, a = Math.max(end - w, lo * 1000), b = Math.min(end, hi * 1000);
	return b > a ? b - a : 0;
}

/* The first sample at or after ms t. */
function firstAt(t) {
	var lo = 0, hi = n;
	while (lo < hi) {
		var mid = (lo + hi) >>> 1;
		if (time[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Calls fn(i, part) for every kept sample with a part of [lo, hi). */
function eachIn(lo, hi, fn) {
	var last = US ? hi + maxWeight / 1000 + 1 : hi;
	for (var i = firstAt(lo); i < n && time[i] < last; i++) {
		if (!kept(i))
			continue;
		var p = share(i, lo, hi);
		if (p > 0)
			fn(i, p);
	}
}

function cellStart(c) {
	return START + c.col * 1000 + c.row * BUCKET;
}

function cellEnd(c) {
	return Math.min(cellStart(c) + BUCKET, START + c.col * 1000 + 1000);
}

/* Spreads µs [lo, hi) over the cells they cross, as common/render/heatmap.c does. */
function spread(lo, hi) {
	var origin = START * 1000;
	while (lo < hi) {
		var rel = lo - origin, sec = Math.floor(rel / 1e6), inSec = rel - sec * 1e6;
		var row = Math.min(Math.floor(inSec / (BUCKET * 1000)), ROWS - 1);
		var cellEndUs = origin + sec * 1e6 + Math.min((row + 1) * BUCKET * 1000, 1e6);
		var part = Math.min(hi, cellEndUs) - lo;
		if (sec >= 0 && sec < COLS && part > 0)
			cells[sec * ROWS + row] += part;
		lo = cellEndUs > lo ? cellEndUs : lo + 1e-6;
	}
}

function computeCells() {
	cells = new Float64Array(COLS * ROWS);
	for (var i = 0; i < n; i++) {
		if (!kept(i))
			continue;
		var w = weight ? weight[i] : 1;
		if (!US) {
			if (time[i] < M.since || time[i] >= M.until)
				continue;
			var rel = time[i] - START;
			cells[Math.floor(rel / 1000) * ROWS + Math.floor((rel % 1000) / BUCKET)] += w;
		} else {
			var end = (time[i] + 1) * 1000;
			spread(Math.max(end - w, M.since * 1000), Math.min(end, M.until * 1000));
		}
	}
	cellMax = 0;
	var nz = [];
	for (var k = 0; k < cells.length; k++) {
		if (cells[k] > cellMax)
			cellMax = cells[k];
		if (cells[k] > 0)
			nz.push(cells[k]);
	}
	ranked = Float64Array.from(nz).sort();
}

/* A cell's place on the colour scale, in [0, 1]. */
function scaled(v) {
	if (scale !== "rank" || ranked.length < 2)
		return cellMax > 0 ? v / cellMax : 0;
	var lo = 0, hi = ranked.length;
	while (lo < hi) {
		var mid = (lo + hi) >>> 1;
		if (ranked[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo / (ranked.length - 1);
}

function inRange(c, r) {
	return r && cellStart(c) >= r.lo && cellEnd(c) <= r.hi;
}

/* The range of cells a to b, in time order, both included. */
function rangeOf(a, b) {
	var x = cellStart(a) <= cellStart(b) ? a : b, y = x === a ? b : a;
	return { lo: cellStart(x), hi: cellEnd(y) };
}

function drawMap() {
	var W = LEFT + COLS * CW + RIGHT, H = TOP + ROWS * CH + BOTTOM;
	var dpr = Math.max(0.1, Math.min(window.devicePixelRatio || 1, 32767 / W, 32767 / H));
	mapCanvas.width = Math.round(W * dpr);
	mapCanvas.height = Math.round(H * dpr);
	mapCanvas.style.width = W + "px";
	mapCanvas.style.height = H + "px";
	mctx.setTransform(dpr, 0, 0, dpr, 0, 0);
	mctx.fillStyle = "#fff";
	mctx.fillRect(0, 0, W, H);
	mctx.fillStyle = "#f4f4f4";
	mctx.fillRect(LEFT, TOP, COLS * CW, ROWS * CH);
	var shown = dragTo && anchor ? rangeOf(anchor, dragTo) : sel;
	for (var c = 0; c < COLS; c++)
		for (var r = 0; r < ROWS; r++) {
			var v = cells[c * ROWS + r], cell = { col: c, row: r };
			if (v > 0) {
				mctx.fillStyle = heatColor(scaled(v));
				mctx.fillRect(LEFT + c * CW, TOP + r * CH, CW, CH);
			}
			if (inRange(cell, shown)) {
				mctx.fillStyle = "rgba(0,90,255,0.35)";
				mctx.fillRect(LEFT + c * CW, TOP + r * CH, CW, CH);
			}
		}
	if (pending) {
		mctx.strokeStyle = "rgb(0,60,200)";
		mctx.lineWidth = 2;
		mctx.strokeRect(LEFT + pending.col * CW + 1, TOP + pending.row * CH + 1, CW - 2, CH - 2);
	}
	mctx.fillStyle = "#000";
	mctx.font = "11px " + F.fontType;
	mctx.textBaseline = "middle";
	mctx.textAlign = "right";
	for (var ms = 0; ms < 1000; ms += 200)
		mctx.fillText(ms + " ms", LEFT - 4, TOP + (ms / BUCKET) * CH + CH / 2);
	mctx.textAlign = "center";
	var steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600], every = 1;
	for (var si = 0; si < steps.length && steps[si] * CW < 40; si++)
		every = steps[Math.min(si + 1, steps.length - 1)];
	for (var col = 0; col < COLS; col += every)
		mctx.fillText(String(col), LEFT + (col + 0.5) * CW, TOP + ROWS * CH + BOTTOM / 2);
}

function pad(v, w) {
	var s = String(v);
	while (s.length < w)
		s = "0" + s;
	return s;
}

/* ms on the profile's clock as the page shows it. */
function fmtTime(ms) {
	if (M.clock === "unix") {
		var d = new Date(ms);
		return pad(d.getHours(), 2) + ":" + pad(d.getMinutes(), 2) + ":" + pad(d.getSeconds(), 2) +
			"." + pad(d.getMilliseconds(), 3);
	}
	return (Math.floor(ms / 1000)) + "." + pad(((ms % 1000) + 1000) % 1000, 3) + " s";
}

/* The processes with the most of [lo, hi), most first: [[root name id, amount]]. */
function topProcesses(lo, hi, k) {
	var by = new Map();
	eachIn(lo, hi, function (i, p) {
		var root = rootOf[stackOf[i]];
		by.set(root, (by.get(root) || 0) + p);
	});
	return Array.from(by.entries()).sort(function (a, b) {
		return b[1] - a[1] || a[0] - b[0];
	}).slice(0, k);
}

function cellAt(e) {
	var r = mapCanvas.getBoundingClientRect();
	var col = Math.floor((e.clientX - r.left - LEFT) / CW), row = Math.floor((e.clientY - r.top - TOP) / CH);
	return col >= 0 && col < COLS && row >= 0 && row < ROWS ? { col: col, row: row } : null;
}

function describeCell(c) {
	if (!c)
		return " ";
	var lo = cellStart(c), hi = cellEnd(c), v = cells[c.col * ROWS + c.row];
	var s = fmtTime(lo) + " (second " + c.col + ", +" + (c.row * BUCKET) + " ms): " + fmtCount(v) + " " + M.unit;
	var top = topProcesses(lo, hi, 3);
	if (top.length)
		s += "; " + top.map(function (e) {
			return names[e[0]] + " " + fmtCount(e[1]);
		}).join(", ");
	return s;
}

/*
 * The range's flame graph, and with the differential toggle, its frames
 * coloured by how their share of the range differs from their share of the
 * rest of the period (red: more in the range).
 */
function stackCounts(lo, hi) {
	var counts = new Float64Array(nStacks);
	eachIn(lo, hi, function (i, p) {
		counts[stackOf[i]] += p;
	});
	return counts;
}

function buildGraph(counts, rest) {
	var kids = [new Map()], val = [0], oth = [0], nm = [ROOT_NAME];
	for (var s = 0; s < nStacks; s++) {
		var c = counts[s], o = rest ? rest[s] : 0;
		if (!(c > 0) && !(o > 0))
			continue;
		var node = 0;
		val[0] += c;
		oth[0] += o;
		for (var k = 0; k < stacks[s].length; k++) {
			var f = stacks[s][k], next = kids[node].get(f);
			if (next === undefined) {
				next = nm.length;
				nm.push(f);
				kids.push(new Map());
				val.push(0);
				oth.push(0);
				kids[node].set(f, next);
			}
			node = next;
			val[node] += c;
			oth[node] += o;
		}
	}
	var total = val[0], minValue = 0;
	if (nm.length > MAX_FRAMES) {
		var sorted = Float64Array.from(val).sort();
		minValue = sorted[sorted.length - MAX_FRAMES];
	}
	var out = { names: names, name: [], depth: [], gap: [], value: [], other: rest ? [] : null,
		    color: [], colors: [], total: total, treeTotal: total, totalOther: oth[0],
		    maxDepth: 0, diff: !!rest, otherIsAfter: false, otherName: "rest" };
	if (!(total > 0))
		return out;
	var next = [0], maxDelta = 0;
	/* Pre-order, children by name as the folded model orders frames. */
	(function walk(node, d, start) {
		if (val[node] < minValue || !(val[node] > 0))
			return;
		while (next.length < d + 2)
			next.push(0);
		out.name.push(nm[node]);
		out.depth.push(d);
		out.gap.push(start - next[d]);
		out.value.push(val[node]);
		if (rest) {
			out.other.push(oth[node]);
			if (node > 0)
				maxDelta = Math.max(maxDelta, Math.abs(val[node] - oth[node]));
		}
		next[d] = start + val[node];
		next[d + 1] = start;
		if (d > out.maxDepth)
			out.maxDepth = d;
		var ch = Array.from(kids[node].values()).sort(function (a, b) {
			var x = rawNames[nm[a]], y = rawNames[nm[b]];
			return x < y ? -1 : x > y ? 1 : 0;
		});
		var at = start;
		for (var j = 0; j < ch.length; j++) {
			walk(ch[j], d + 1, at);
			at += val[ch[j]];
		}
	})(0, 0, 0);
	if (rest) {
		out.colors = out.value.map(function (v, i) {
			return diffColor(v - out.other[i], maxDelta);
		});
		out.color = out.value.map(function (v, i) { return i; });
	} else {
		out.colors = nameCss;
		out.color = out.name.slice();
	}
	return out;
}

function updateFlame() {
	var lo = sel ? sel.lo : M.since, hi = sel ? sel.hi : M.until;
	var counts = stackCounts(lo, hi), rest = null, total = 0;
	for (var s = 0; s < nStacks; s++)
		total += counts[s];
	if (diffEl.checked && sel) {
		var whole = stackCounts(M.since, M.until), restTotal = 0;
		rest = new Float64Array(nStacks);
		for (var k = 0; k < nStacks; k++) {
			rest[k] = Math.max(0, whole[k] - counts[k]);
			restTotal += rest[k];
		}
		/* The rest scaled to the range's total: shares are compared, not amounts. */
		for (var j = 0; j < nStacks && restTotal > 0; j++)
			rest[j] *= total / restTotal;
	}
	view.setData(buildGraph(counts, rest));
	var what = sel ? fmtTime(sel.lo) + " to " + fmtTime(sel.hi) + " (" + (sel.hi - sel.lo) + " ms)"
		: "the whole period";
	rangeEl.textContent = (total > 0 ? "Flame graph of " + what + ": " + fmtCount(total) + " " + M.unit
			       : "No samples in " + what) +
		(isolate >= 0 ? ", " + names[isolate] + " alone" : "") +
		(rest ? "; red: more of the range than of the rest, blue: less" : "");
	clearEl.hidden = !sel;
}

var urlParams = FgFlameView.urlParams;

function updateUrl() {
	var p = urlParams();
	if (!p)
		return;
	["r", "p", "c", "d"].forEach(function (k) { p.delete(k); });
	if (sel)
		p.set("r", sel.lo + "_" + sel.hi);
	if (isolate >= 0)
		p.set("p", rawNames[isolate]);
	if (scale === "rank")
		p.set("c", "rank");
	if (diffEl.checked)
		p.set("d", "1");
	view.saveTo(p);
	FgFlameView.replaceUrl(p);
}

function select(r) {
	sel = r;
	pending = null;
	drawMap();
	updateFlame();
	updateUrl();
}

mapCanvas.addEventListener("mousemove", function (e) {
	var c = cellAt(e);
	cellEl.textContent = describeCell(c);
	if (anchor && c && (c.col !== anchor.col || c.row !== anchor.row)) {
		dragTo = c;
		drawMap();
	}
});
mapCanvas.addEventListener("mouseleave", function () {
	cellEl.textContent = " ";
});
mapCanvas.addEventListener("mousedown", function (e) {
	anchor = cellAt(e);
	dragTo = null;
	e.preventDefault();
});
window.addEventListener("mouseup", function (e) {
	var a = anchor, c = cellAt(e);
	anchor = null;
	dragTo = null;
	if (!a || !c) {
		drawMap();
		return;
	}
	if (c.col !== a.col || c.row !== a.row) {
		select(rangeOf(a, c));
	} else if (pending) {
		select(rangeOf(pending, c));
	} else {
		pending = c;
		rangeEl.textContent = "From " + fmtTime(cellStart(c)) + ": click the last cell of the range";
		drawMap();
	}
});
scaleEl.addEventListener("change", function () {
	scale = scaleEl.value;
	drawMap();
	updateUrl();
});
isolateEl.addEventListener("change", function () {
	isolate = isolateEl.value === "" ? -1 : parseInt(isolateEl.value, 10);
	computeCells();
	drawMap();
	updateFlame();
	updateUrl();
});
diffEl.addEventListener("change", function () {
	updateFlame();
	updateUrl();
});
clearEl.addEventListener("click", function () {
	select(null);
});
window.addEventListener("keydown", function (e) {
	if (!view.searchKey(e) && e.key === "Escape" && (sel || pending))
		select(null);
});

/* The processes for the isolate menu, most first over the whole period. */
var processes = topProcesses(M.since, M.until, Infinity);
processes.forEach(function (e) {
	var opt = document.createElement("option");
	opt.value = String(e[0]);
	opt.textContent = names[e[0]] + " (" + fmtCount(e[1]) + ")";
	isolateEl.appendChild(opt);
});

/* Restores the view a URL kept. */
(function () {
	var p = urlParams();
	if (p) {
		if (p.get("c") === "rank")
			scale = "rank";
		if (p.get("d") === "1")
			diffEl.checked = true;
		var iso = p.get("p");
		if (iso !== null)
			for (var k = 0; k < processes.length; k++)
				if (rawNames[processes[k][0]] === iso)
					isolate = processes[k][0];
		var r = /^(-?[0-9]+)_(-?[0-9]+)$/.exec(p.get("r") || "");
		if (r && parseInt(r[1], 10) < parseInt(r[2], 10))
			sel = { lo: parseInt(r[1], 10), hi: parseInt(r[2], 10) };
	}
	scaleEl.value = scale;
	isolateEl.value = isolate < 0 ? "" : String(isolate);
	computeCells();
	drawMap();
	updateFlame();
	if (p)
		view.restoreFrom(p);
})();

/* Test hooks. */
window.fgHeatmap = {
	loadMs: performance.now() - t0,
	columns: COLS,
	rows: ROWS,
	/* Every cell's value, a column's rows together, as drawn now (isolate applied). */
	cells: function () { return Array.from(cells); },
	/* The viewport box of a cell, for pointer events. */
	cellRect: function (col, row) {
		var r = mapCanvas.getBoundingClientRect();
		return { x: r.left + LEFT + col * CW, y: r.top + TOP + row * CH, width: CW, height: CH,
			 cx: r.left + LEFT + (col + 0.5) * CW, cy: r.top + TOP + (row + 0.5) * CH };
	},
	selection: function () { return sel ? { lo: sel.lo, hi: sel.hi } : null; },
	/* Selects [lo, hi) ms as a drag would (null: none); returns the ms it took to draw. */
	select: function (lo, hi) {
		var t = performance.now();
		select(lo === null ? null : { lo: lo, hi: hi });
		return performance.now() - t;
	},
	/* Isolates a process (its root name id, or -1); returns the ms it took. */
	isolate: function (id) {
		var t = performance.now();
		isolateEl.value = id < 0 ? "" : String(id);
		isolateEl.dispatchEvent(new Event("change"));
		return performance.now() - t;
	},
	pending: function () { return pending ? { col: pending.col, row: pending.row } : null; },
	processes: function () {
		return processes.map(function (e) { return { id: e[0], name: rawNames[e[0]], total: e[1] }; });
	},
	cellText: function () { return cellEl.textContent; },
	rangeText: function () { return rangeEl.textContent; },
	frames: view.frames,
	frameRect: view.frameRect,
	state: view.state,
};
})();
