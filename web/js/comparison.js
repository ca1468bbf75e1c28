// The comparison table of a job page: a row per workload x params x metric,
// one line each, so a job of 120 rows reads in a screen or two.
//
// What a row shows on its line: the case (its params less those every row
// shares, which the table names once above), the metric and its class, each
// side's value, the change, the CI, p and p adj., the verdict and the boots.
// Its button opens a details line below it with the rest: the whole params,
// unit and direction, the spread and boots of each side, how p was computed
// and adjusted, the change the job could have detected, the verdict's
// reason, the outliers. Text too long for its column is cut with an
// ellipsis (table-layout: fixed, widths in app.css) and is whole in the
// details line and in the cell's title.
//
// The headline rows come first, then those that changed (regressions,
// improvements, neutral changes, inconclusive), then the rest; the rest
// (same, unavailable, context) are folded until "show all". A sorted column
// orders every row, ties in that first order.
import { esc, DASH, num, pct, pval, ci, verdictHtml } from './util.js';

const FOLDED = new Set(['same', 'unavailable', 'context']);
const VERDICT_RANK = { regression: 0, improvement: 1, changed: 2, inconclusive: 3, same: 4, unavailable: 5, context: 6 };
// What each class's numbers are, from the API (the comparison's
// rules.classes: one row per class, daemon/analysis/class_*.c): emulated
// instructions are not hardware cycles, and a reader must not take one for
// the other. {name: "name: legend"}; {} for a comparison stored before the
// list (its rules.classes is the whole line, shown as it is).
export function classTitles(cmp) {
	const list = cmp && cmp.rules && Array.isArray(cmp.rules.classes) ? cmp.rules.classes : [];
	return Object.fromEntries(list.map((c) => [c.name, `${c.name}: ${c.legend}`]));
}

function classLegend(cmp) {
	const classes = cmp.rules && cmp.rules.classes;
	if (typeof classes === 'string') return classes;
	return Object.values(classTitles(cmp)).join('; ');
}
const P_ADJ = { holm: 'Holm over the headline rows', bh: 'Benjamini-Hochberg over the counter rows' };

const COLUMNS = [
	// key, label, sort value, default direction
	['workload', 'Workload', (r) => r.workload, 1],
	['params', 'Params', (r) => r.params_text, 1],
	['metric', 'Metric', (r) => r.metric, 1],
	['class', 'Class', (r) => r.class || '', 1],
	['base', 'Base', (r) => r.base.center, -1],
	['patched', 'Patched', (r) => r.patched.center, -1],
	['change', 'Change', (r) => r.change_pct, -1],
	['ci', 'CI', (r) => (r.ci ? r.ci[0] : null), -1],
	['p', 'p', (r) => r.p, 1],
	['p_adj', 'p adj.', (r) => r.p_adj, 1],
	['verdict', 'Verdict', (r) => VERDICT_RANK[r.verdict] ?? 9, 1],
	['n', 'Boots', (r) => Math.min(r.base.n, r.patched.n), -1],
];
const NUMERIC = new Set(['base', 'patched', 'change', 'ci', 'p', 'p_adj', 'n']);

// params_text without "workload=..." (the workload has its own column)
export function shortParams(t) {
	return (t || '').split(' ').filter((kv) => !kv.startsWith('workload=')).join(' ');
}

const folds = (r) => !r.headline && FOLDED.has(r.verdict);

// The first order: headline rows, changed rows by verdict, the rest; the
// API's order within each.
function firstOrder(rows) {
	const group = (r) => (r.headline ? 0 : FOLDED.has(r.verdict) ? 2 : 1);
	return rows.map((_, i) => i).sort((a, b) => {
		const x = rows[a], y = rows[b];
		return group(x) - group(y) || (group(x) === 1 ? VERDICT_RANK[x.verdict] - VERDICT_RANK[y.verdict] : 0) || a - b;
	});
}

// The params every row has (as "key=value" of params_text): named once above
// the table, left out of the rows' Params cells.
function commonParams(rows) {
	if (!rows.length) return [];
	const sets = rows.map((r) => new Set(shortParams(r.params_text).split(' ').filter(Boolean)));
	return [...sets[0]].filter((kv) => sets.every((s) => s.has(kv)));
}

function direction(r) {
	return `${r.direction} is ${r.direction === 'lower' || r.direction === 'higher' ? 'better' : 'neither'}`;
}

function classTag(r, titles) {
	if (!r.class) return DASH;
	const score = r.role === 'score' ? '; the time score, not the job\'s verdict here' : '';
	return `<span class="cls cls-${esc(r.class)}" title="${esc(titles[r.class] || r.class)}${score}">${esc(r.class)}</span>`;
}

function spread(s) {
	return s.spread_pct === null || s.spread_pct === undefined ? '' : `\u00b1${s.spread_pct.toFixed(1)}%`;
}

// the value of a side; its spread is in the title and the details line
function sideCell(s, key) {
	if (!s || s.center === null || s.center === undefined) return `<td class="num muted c-${key}">${DASH}</td>`;
	const sp = spread(s);
	return `<td class="num c-${key}"${sp ? ` title="spread ${sp} (stddev / mean) over ${s.n} boots"` : ''}>${num(s.center)}</td>`;
}

function rowHtml(r, i, view) {
	const open = view.open.has(i);
	const note = r.reason || r.note || '';
	const params = shortParams(r.params_text).split(' ').filter((kv) => kv && !view.common.has(kv)).join(' ');
	const line = `<tr class="r-${esc(r.verdict)}${folds(r) ? ' fold' : ''}" data-i="${i}">` +
		`<td class="c-open"><button type="button" class="open" data-row-link aria-expanded="${open}" aria-controls="cmp-d-${i}" ` +
		`title="details" aria-label="details of ${esc(r.metric)} ${esc(params)}"></button></td>` +
		`<td class="c-workload" title="${esc(r.workload)}">${esc(r.workload)}</td>` +
		`<td class="params" title="${esc(shortParams(r.params_text))}">${esc(params)}</td>` +
		`<td class="metric${r.headline ? ' headline' : ''}" title="${esc(r.metric)}: ${esc(r.unit || '')}; ${direction(r)}">${esc(r.metric)}</td>` +
		`<td class="c-class">${classTag(r, view.titles)}</td>` +
		sideCell(r.base, 'base') + sideCell(r.patched, 'patched') +
		`<td class="num change">${changeText(r)}</td>` +
		`<td class="num ci">${changeCi(r)}</td>` +
		`<td class="num c-p">${pval(r.p)}</td>` +
		`<td class="num c-padj" title="${esc(P_ADJ[r.p_adj_method] || '')}">${pval(r.p_adj)}</td>` +
		`<td class="c-verdict"${note ? ` title="${esc(note)}"` : ''}>${verdictHtml(r.verdict)}${note ? ' <span class="note-mark" aria-hidden="true">*</span>' : ''}</td>` +
		`<td class="num c-boots">${r.base.n}/${r.patched.n}</td>` +
		'</tr>';
	return open ? line + detailHtml(r, i, view) : line;
}

// A row's change: in %, or for a row from a base near 0 (p_method "welch,
// absolute") in its unit, with its interval
function changeText(r) {
	if (typeof r.change_abs === 'number')
		return `${r.change_abs >= 0 ? '+' : ''}${num(r.change_abs)} ${esc(r.unit || '')}`;
	return pct(r.change_pct);
}

function changeCi(r) {
	if (typeof r.change_abs === 'number' && Array.isArray(r.ci_abs) && r.ci_abs.length === 2)
		return `${num(r.ci_abs[0])}..${num(r.ci_abs[1])} ${esc(r.unit || '')}`;
	return ci(r.ci);
}

// The level of a comparison's intervals: its rules' (a lab may set ci_level),
// 95% when it has none.
const ciLevelOf = (cmp) => (cmp.rules && typeof cmp.rules.ci_level === 'number' ? cmp.rules.ci_level : 0.95);

// The details line of an opened row: everything the row's line has no room
// for. A row's own ci_level (a bootstrap of so few boots that its interval
// cannot reach the rules' level) says the level it has.
function detailHtml(r, i, view) {
	const level = view.ciLevel;
	const side = (s) => (s.center === null || s.center === undefined ? `${DASH} (${s.n} boots)`
		: `${num(s.center)} ${esc(r.unit || '')}${spread(s) ? `, spread ${spread(s)}` : ''} over ${s.n} boots`);
	const items = [
		['case', `${esc(r.workload)} <span class="params">${esc(shortParams(r.params_text))}</span>`],
		['metric', `${esc(r.metric)} (${esc(r.unit || 'no unit')}; ${direction(r)})${r.role ? `, ${esc(r.role)} row` : ''}`],
		['class', `${classTag(r, view.titles)} ${esc(view.titles[r.class] || '')}`],
		['base', side(r.base)],
		['patched', side(r.patched)],
		['change', `${changeText(r)}, ${Math.round(100 * (r.ci_level || level))}% CI ${changeCi(r)}`],
		['p', `${pval(r.p)}${r.p_method ? ` (${esc(r.p_method)})` : ''}; adjusted ${pval(r.p_adj)}${P_ADJ[r.p_adj_method] ? ` (${P_ADJ[r.p_adj_method]})` : ''}`],
		['detectable', `${r.mde_pct === null || r.mde_pct === undefined ? DASH : '\u00b1' + r.mde_pct.toFixed(1) + '%'}: ` +
			esc(r.mde_note || 'the change this job would have caught with 80% power at this row\'s noise')],
		['verdict', `${verdictHtml(r.verdict)} ${esc(r.reason || r.note || '')}`],
		['boots', `${r.base.n} base, ${r.patched.n} patched` +
			(r.outliers ? `; ${r.outliers} outlier${r.outliers === 1 ? '' : 's'} among the per-boot samples, flagged and kept` : '')],
	];
	return `<tr class="detail r-${esc(r.verdict)}${folds(r) ? ' fold' : ''}" data-of="${i}" id="cmp-d-${i}"><td></td><td colspan="${COLUMNS.length}">` +
		`<dl class="kv row-detail">${items.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl></td></tr>`;
}

function compareValues(a, b) {
	const an = a === null || a === undefined, bn = b === null || b === undefined;
	if (an || bn) return an === bn ? 0 : an ? 1 : -1;	// missing values last either way
	if (typeof a === 'string') return a.localeCompare(b);
	return a - b;
}

export function comparisonSection(cmp) {
	const rows = cmp.rows;
	const folded = rows.filter(folds).length;
	const common = commonParams(rows);
	const view = { open: new Set(), common: new Set(common), ciLevel: ciLevelOf(cmp), titles: classTitles(cmp) };
	const head = COLUMNS.map(([key, label]) =>
		`<th scope="col" aria-sort="none" data-key="${key}"${NUMERIC.has(key) ? ' class="num"' : ''}><button type="button" class="sort" data-sort="${key}">${label}<span class="arrow" aria-hidden="true"></span></button></th>`).join('');
	return `
<section id="comparison" aria-labelledby="h-comparison">
<h2 id="h-comparison">Comparison <span class="muted small">${rows.length} rows</span></h2>
<div class="table-tools">
  <label>Filter <input type="search" id="cmp-filter" data-filter placeholder="metric, workload, params" size="28" autocomplete="off"></label>
  <button type="button" id="fold-toggle" data-fold-toggle aria-controls="cmp-table" aria-expanded="false"${folded ? '' : ' disabled'}>
    Show all ${rows.length} rows</button>
  <span class="muted small">The headline rows come first, then those that changed; the other ${folded} (verdict <em>same</em>, <em>unavailable</em>
  or <em>context</em>, not tested) are folded. Sort by a column with its header; open a row (<span aria-hidden="true">\u25b8</span>) for its details;
  <span aria-hidden="true">*</span> the verdict has a reason.</span>
</div>
<p class="muted small" id="class-legend">Classes: ${esc(classLegend(cmp))}</p>
${common.length ? `<p class="muted small" id="cmp-common">Every row: <span class="params">${esc(common.join(' '))}</span>; the Params column has the rest.</p>` : ''}
<div class="table-wrap">
<table class="data cmp folded" id="cmp-table">
<thead><tr><th scope="col"><span class="sr-only">Details</span></th>${head}</tr></thead>
<tbody>${firstOrder(rows).map((i) => rowHtml(rows[i], i, view)).join('')}</tbody>
</table>
</div>
<p class="muted small" id="cmp-shown"></p>
</section>`;
}

export function wireComparison(root, cmp) {
	const rows = cmp.rows;
	const table = root.querySelector('#cmp-table');
	const tbody = table.tBodies[0];
	const toggle = root.querySelector('#fold-toggle');
	const filter = root.querySelector('#cmp-filter');
	const shown = root.querySelector('#cmp-shown');
	const folded = rows.filter(folds).length;
	const text = rows.map((r) => `${r.workload} ${r.params_text} ${r.metric} ${r.verdict}`.toLowerCase());
	const first = firstOrder(rows);
	const rank = new Map(first.map((i, k) => [i, k]));
	// the rows opened, kept through a sort
	const view = { open: new Set(), common: new Set(commonParams(rows)), ciLevel: ciLevelOf(cmp), titles: classTitles(cmp) };
	let order = first;
	let sort = { key: null, dir: 1 };

	const isFolded = () => table.classList.contains('folded');
	const count = () => {
		const visible = [...tbody.rows].filter((tr) => tr.dataset.i !== undefined && !tr.hidden && !(isFolded() && tr.classList.contains('fold'))).length;
		shown.textContent = `${visible} of ${rows.length} rows shown` + (isFolded() && folded ? `, ${folded} unchanged folded` : '');
	};
	const applyFilter = () => {
		const q = filter.value.trim().toLowerCase();
		for (const tr of tbody.rows) tr.hidden = q !== '' && !text[+(tr.dataset.i ?? tr.dataset.of)].includes(q);
		count();
	};
	const draw = () => {
		tbody.innerHTML = order.map((i) => rowHtml(rows[i], i, view)).join('');
		applyFilter();
	};
	toggle.addEventListener('click', () => {
		const open = table.classList.toggle('folded') === false;
		toggle.setAttribute('aria-expanded', String(open));
		toggle.textContent = open ? 'Show the headline and changed rows only' : `Show all ${rows.length} rows`;
		count();
	});
	filter.addEventListener('input', applyFilter);
	// a row's details line is made when it is opened: a 500-row table is not
	// built twice over for the few rows a reader opens
	tbody.addEventListener('click', (ev) => {
		const b = ev.target.closest('button.open');
		if (!b) return;
		const tr = b.closest('tr'), i = +tr.dataset.i;
		if (view.open.delete(i)) {
			tbody.querySelector(`tr[data-of="${i}"]`)?.remove();
		} else {
			view.open.add(i);
			tr.insertAdjacentHTML('afterend', detailHtml(rows[i], i, view));
			tr.nextElementSibling.hidden = tr.hidden;
		}
		b.setAttribute('aria-expanded', String(view.open.has(i)));
	});
	table.tHead.addEventListener('click', (ev) => {
		const b = ev.target.closest('button[data-sort]');
		if (!b) return;
		const col = COLUMNS.find((c) => c[0] === b.dataset.sort);
		sort = sort.key === col[0] ? { key: col[0], dir: -sort.dir } : { key: col[0], dir: col[3] };
		const val = col[2];
		// rows without a value go last whichever way; ties keep the first order
		order = rows.map((_, i) => i).sort((x, y) => {
			const c = compareValues(val(rows[x]), val(rows[y]));
			const missing = val(rows[x]) === null || val(rows[x]) === undefined || val(rows[y]) === null || val(rows[y]) === undefined;
			return (missing ? c : c * sort.dir) || rank.get(x) - rank.get(y);
		});
		for (const th of table.tHead.rows[0].cells)
			if (th.dataset.key) th.setAttribute('aria-sort', th.dataset.key === sort.key ? (sort.dir > 0 ? 'ascending' : 'descending') : 'none');
		draw();
	});
	count();
}
