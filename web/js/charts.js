// Charts with uPlot (web/node_modules/uplot, installed by `npm ci`; of
// node_modules/, tlblabd serves these two files only: daemon/api/web.c). uPlot and its CSS are loaded on the
// first chart, after the comparison table is on screen. Colours come from
// the page's CSS variables, so charts follow the light or dark scheme.
import { num } from './util.js';

const UPLOT_JS = '/node_modules/uplot/dist/uPlot.esm.js';
const UPLOT_CSS = '/node_modules/uplot/dist/uPlot.min.css';
let loading = null;

function loadUPlot() {
	if (!loading) {
		const css = new Promise((resolve, reject) => {
			const l = document.createElement('link');
			l.rel = 'stylesheet';
			l.href = UPLOT_CSS;
			l.onload = resolve;
			l.onerror = () => reject(new Error(`cannot load ${UPLOT_CSS} (run npm ci in web/)`));
			document.head.appendChild(l);
		});
		const js = import(UPLOT_JS).then((m) => m.default, (e) => {
			throw new Error(`cannot load uPlot from ${UPLOT_JS} (run npm ci in web/): ${e.message}`);
		});
		loading = Promise.all([js, css]).then(([u]) => u);
		loading.catch(() => {
			loading = null;
		});
	}
	return loading;
}

function palette() {
	const cs = getComputedStyle(document.documentElement);
	const v = (n) => cs.getPropertyValue(n).trim();
	return {
		base: v('--c-base'), patched: v('--c-patched'),
		baseBand: v('--c-base-band'), patchedBand: v('--c-patched-band'),
		axis: v('--muted'), grid: v('--c-grid'), fg: v('--fg'),
	};
}

function axes(c, xLabel, yLabel) {
	const common = { stroke: c.axis, grid: { stroke: c.grid, width: 1 }, ticks: { stroke: c.grid, width: 1 } };
	return [
		{ ...common, label: xLabel },
		{ ...common, label: yLabel, size: 72, values: (u, vals) => vals.map((v) => num(v)) },
	];
}

// Keeps the chart as wide as its box.
function fit(u, el, height) {
	const ro = new ResizeObserver(() => {
		const w = Math.max(280, Math.floor(el.clientWidth));
		if (Math.abs(w - u.width) > 4) u.setSize({ width: w, height });
	});
	ro.observe(el);
	const destroy = u.destroy.bind(u);
	u.destroy = () => {
		ro.disconnect();
		destroy();
	};
	return u;
}

// A series drawn but not shown: the edge of a band.
const HIDDEN = { stroke: 'transparent', width: 0, points: { show: false } };

// What every chart's options share: as wide as its box, without uPlot's
// own legend (legend() draws one below).
function frame(el, height, width, rest) {
	return { width: Math.max(280, el.clientWidth || width), height, legend: { show: false }, ...rest };
}

function legend(el, items) {
	const div = document.createElement('div');
	div.className = 'chart-legend small';
	for (const [label, color, dash] of items) {
		const s = document.createElement('span');
		const sw = document.createElement('span');
		sw.className = 'swatch' + (dash ? ' dashed' : '');
		sw.style.borderColor = color;
		s.append(sw, label);
		div.append(s);
	}
	el.after(div);
}

// A sweep: x = workers, or the guest's vCPUs of a suite's guest_cpus
// (sweep.axis; log2), base and patched medians with a band of +- the
// spread (from the matching comparison rows); a point whose verdict is a
// regression or an improvement gets a ring, named in the legend.
export async function sweepChart(el, sweep, rows) {
	const uPlot = await loadUPlot();
	const c = palette();
	const byKey = new Map();
	for (const r of rows) if (r.spec === sweep.spec && r.metric === sweep.metric) byKey.set(r.case, r);
	const at = (r) => r.x ?? r.workers;
	const pts = [...sweep.rows].sort((a, b) => at(a) - at(b));
	const x = [], b = [], p = [], bl = [], bh = [], pl = [], ph = [], called = [];
	const band = (center, s) => {
		if (center === null || !s || s.spread_pct === null || s.spread_pct === undefined) return [center, center];
		const d = Math.abs(center) * s.spread_pct / 100;
		return [center - d, center + d];
	};
	for (const r of pts) {
		const row = byKey.get(r.case);
		x.push(at(r));
		b.push(r.base);
		p.push(r.patched);
		called.push(r.verdict === 'regression' || r.verdict === 'improvement' ? r.patched : null);
		const [lo1, hi1] = band(r.base, row && row.base);
		const [lo2, hi2] = band(r.patched, row && row.patched);
		bl.push(lo1);
		bh.push(hi1);
		pl.push(lo2);
		ph.push(hi2);
	}
	const height = 240;
	const axis = sweep.axis === 'cpus' ? 'vCPUs' : 'workers';
	const u = new uPlot(frame(el, height, 520, {
		cursor: { drag: { x: false, y: false } },
		scales: { x: { time: false, distr: x[0] > 0 ? 3 : 1, log: 2 } },
		axes: axes(c, axis, sweep.unit || sweep.metric),
		series: [
			{ label: axis },
			{ label: 'base', stroke: c.base, width: 2, points: { show: true, size: 6, fill: c.base } },
			{ label: 'patched', stroke: c.patched, width: 2, dash: [6, 4], points: { show: true, size: 6, fill: c.patched } },
			{ label: 'base lo', ...HIDDEN }, { label: 'base hi', ...HIDDEN },
			{ label: 'patched lo', ...HIDDEN }, { label: 'patched hi', ...HIDDEN },
			{ label: 'called', stroke: c.patched, width: 0, points: { show: true, size: 13, width: 2, stroke: c.patched, fill: 'transparent' } },
		],
		bands: [{ series: [4, 3], fill: c.baseBand }, { series: [6, 5], fill: c.patchedBand }],
	}), [x, b, p, bl, bh, pl, ph, called], el);
	legend(el, [['base', c.base, false], ['patched', c.patched, true], ['\u00b1 spread', c.baseBand, false],
		['\u25cb regression or improvement at that point', c.patched, false]]);
	el.dataset.series = '2';
	el.dataset.called = String(called.filter((v) => v !== null).length);
	return fit(u, el, height);
}

function stats(values) {
	let sum = 0, n = 0, peak = -Infinity, at = -1;
	values.forEach((v, i) => {
		if (v === null || !Number.isFinite(v)) return;
		sum += v;
		n++;
		if (v > peak) {
			peak = v;
			at = i;
		}
	});
	return n ? { avg: sum / n, peak, at } : null;
}

// Shootdowns per second over the run, base and patched overlaid, with each
// side's average (a thin dashed line) and peak (a ring) marked.
export async function shootdownChart(el, sd, caption) {
	const uPlot = await loadUPlot();
	const c = palette();
	const sides = Object.keys(sd.sides).sort((a, b) => (a === 'base' ? -1 : b === 'base' ? 1 : a.localeCompare(b)));
	const len = Math.max(...sides.map((s) => sd.sides[s].values.length));
	const x = Array.from({ length: len }, (_, i) => i);
	const color = (s) => (s === 'patched' ? c.patched : c.base);
	const data = [x], series = [{ label: 's' }], words = [];
	for (const s of sides) {
		const v = sd.sides[s].values;
		data.push(x.map((i) => (v[i] === undefined ? null : v[i])));
		series.push({ label: s, stroke: color(s), width: 1.5, dash: s === 'patched' ? [6, 4] : undefined, spanGaps: false, points: { show: false } });
	}
	for (const s of sides) {
		const st = stats(sd.sides[s].values);
		if (!st) continue;
		data.push(x.map(() => st.avg));
		series.push({ label: `${s} average`, stroke: color(s), width: 1, dash: [2, 3], points: { show: false } });
		data.push(x.map((i) => (i === st.at ? st.peak : null)));
		series.push({ label: `${s} peak`, stroke: color(s), width: 0, points: { show: true, size: 11, width: 2, stroke: color(s), fill: 'transparent' } });
		words.push(`${s}: average ${num(st.avg)}/s, peak ${num(st.peak)}/s at ${st.at} s (median of ${sd.sides[s].stages} boot${sd.sides[s].stages === 1 ? '' : 's'})`);
	}
	caption.classList.remove('muted');
	caption.innerHTML = '';
	const strong = document.createElement('strong');
	strong.textContent = `${sd.name} per second`;
	const rest = document.createElement('span');
	rest.className = 'muted';
	rest.textContent = ` over each run stage (seconds since its first sample, warm-up included). ${words.join('; ')}.`;
	caption.append(strong, rest);
	const height = 260;
	const u = new uPlot(frame(el, height, 800, {
		cursor: { drag: { x: true, y: false } },
		scales: { x: { time: false } },
		axes: axes(c, 'seconds into the run', 'shootdowns/s'),
		series,
	}), data, el);
	const items = [];
	for (const s of sides) items.push([s, color(s), s === 'patched'], [`${s} average`, color(s), true]);
	legend(el, items.concat([['\u25cb peak', c.axis, false]]));
	el.dataset.series = String(sides.length);
	return fit(u, el, height);
}

// A nightly series: x = the points in order, the value (median of the
// point's boots) with its boots' range as a band, and its change points as
// rings (confirmed filled). Drag to zoom; hovering a point names its
// commit and subject in the caption's first line.
export async function seriesChart(el, s) {
	const uPlot = await loadUPlot();
	const c = palette();
	const vals = s.values;
	const x = vals.map((_, i) => i);
	const at = new Map(vals.map((v, i) => [v.point, i]));
	const cps = new Map(s.change_points.filter((p) => p.status !== 'rejected').map((p) => [at.get(p.point), p]));
	const data = [x, vals.map((v) => v.value), vals.map((v) => v.lo), vals.map((v) => v.hi),
		x.map((i) => (cps.has(i) ? vals[i].value : null))];
	const hover = document.createElement('div');
	hover.className = 'small series-hover';
	hover.textContent = '\u00a0';
	el.before(hover);
	const height = 280;
	const u = new uPlot(frame(el, height, 800, {
		cursor: { drag: { x: true, y: false } },
		scales: { x: { time: false } },
		axes: axes(c, 'points (commits, oldest first)', s.unit || s.metric),
		series: [
			{ label: 'point' },
			{ label: s.metric, stroke: c.base, width: 2, points: { show: true, size: 5, fill: c.base } },
			{ label: 'lo', ...HIDDEN }, { label: 'hi', ...HIDDEN },
			{ label: 'change point', stroke: c.patched, width: 0, points: { show: true, size: 13, width: 2, stroke: c.patched, fill: 'transparent' } },
		],
		bands: [{ series: [3, 2], fill: c.baseBand }],
		hooks: {
			setCursor: [(uu) => {
				const i = uu.cursor.idx;
				if (i === null || i === undefined || !vals[i]) return;
				const v = vals[i], cp = cps.get(i);
				hover.textContent = `${(v.commit || '').slice(0, 12)} ${v.subject || ''}: ${num(v.value)} (${num(v.lo)} \u2013 ${num(v.hi)}, ${v.boots} boots)` +
					(cp ? ` \u00b7 change point: ${num(cp.before)} \u2192 ${num(cp.after)}, ${cp.direction}, ${cp.status}` : '');
			}],
		},
	}), data, el);
	legend(el, [[s.metric, c.base, false], ['boots\u2019 range', c.baseBand, false], ['\u25cb change point', c.patched, false]]);
	el.dataset.series = '1';
	el.dataset.changePoints = String(cps.size);
	return fit(u, el, height);
}
