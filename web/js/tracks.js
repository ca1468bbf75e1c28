// Tracks: the lab's nightly tracks (their branch, schedule, next run, the
// head last found and what came of it), a run asked for now, and the
// alerts (change points of one commit) with their triage and bisection. /tracks/NAME
// lists a track's series; /series/ID charts one (charts.js, seriesChart),
// its change points marked.
import { api, storedToken } from './api.js';
import { esc, DASH, num, pct, pval, timeHtml, jobLink } from './util.js';
import { seriesChart } from './charts.js';

const REFRESH_MS = 10000;
const STATES = ['acknowledged', 'ignored', 'fixed', 'intended'];

function short(c) {
	return c ? `<code title="${esc(c)}">${esc(c.slice(0, 12))}</code>` : DASH;
}

function trackRow(t) {
	const c = t.config || {};
	return `<tr data-track="${esc(t.name)}"><th scope="row"><a href="/tracks/${encodeURIComponent(t.name)}">${esc(t.name)}</a>` +
		`${t.in_config ? '' : ' <span class="muted">(no longer configured)</span>'}</th>` +
		`<td class="wrap">${esc(c.branch || DASH)}${c.url ? `<div class="small muted">${esc(c.url)}</div>` : ''}<div class="small muted">tree ${esc(c.tree || DASH)}, suite ${esc(c.suite || DASH)}, ${esc(c.boots ?? '?')} boots on ${esc((c.machines || []).join(', '))}</div></td>` +
		`<td><code>${esc(c.schedule || DASH)}</code><div class="small muted">next ${timeHtml(t.next_due)}</div></td>` +
		`<td>${short(t.last_head)}<div class="small muted">${timeHtml(t.last_run)}</div></td>` +
		`<td class="wrap">${esc(t.last_result || DASH)}</td>` +
		`<td class="num">${esc(t.points)}</td><td class="num">${esc(t.alerts_open)}</td>` +
		`<td>${t.in_config ? `<button type="button" data-run="${esc(t.name)}">Run now</button>` : ''}</td></tr>`;
}

function alertRow(a) {
	const buttons = STATES.filter((s) => s !== a.state).map((s) =>
		`<button type="button" data-alert="${esc(a.id)}" data-state="${s}">${s === 'acknowledged' ? 'ack' : s}</button>`).join(' ');
	return `<tr data-alert-row="${esc(a.id)}" id="alert-${esc(a.id)}"><td class="num">${esc(a.id)}</td><td>${esc(a.track)}</td>` +
		`<td><span class="badge k-${esc(a.kind)}">${esc(a.kind)}</span></td><td class="wrap">${short(a.bad_commit)} ${esc(a.subject || '')}` +
		`<div class="small muted">after ${short(a.good_commit)}</div></td>` +
		`<td class="num">${esc(a.change_points)}</td>` +
		`<td>${a.bisection ? `<a href="/bisections/${esc(a.bisection)}">#${esc(a.bisection)}</a>` : DASH}</td>` +
		`<td>${esc(a.state)}${a.state_by ? `<div class="small muted">by ${esc(a.state_by)}, ${timeHtml(a.state_at)}</div>` : ''}</td>` +
		`<td>${buttons}</td></tr>`;
}

async function listPage(ctx) {
	ctx.main.innerHTML = `<h1>Tracks</h1>
<p class="status-line muted" id="t-count">Loading\u2026</p>
<div class="table-wrap"><table class="data" id="tracks-table">
<thead><tr><th scope="col">Track</th><th scope="col">Branch</th><th scope="col">Schedule</th><th scope="col">Last head</th>
<th scope="col">Last result</th><th scope="col">Points</th><th scope="col">Open alerts</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
<tbody></tbody></table></div>
<h2>Alerts</h2>
<div class="table-wrap"><table class="data" id="alerts-table">
<thead><tr><th scope="col">Alert</th><th scope="col">Track</th><th scope="col">Kind</th><th scope="col">Commit</th>
<th scope="col">Changes</th><th scope="col">Bisection</th><th scope="col">State</th><th scope="col"><span class="sr-only">Triage</span></th></tr></thead>
<tbody></tbody></table></div>
<p class="small muted">A track builds each new head of its branch on its schedule and measures it; each series is searched for
change points (E-Divisive means with a permutation test). Running a track now and triage need a token (set on the Submit page);
<em>intended</em> restarts the track's series at that commit.</p>`;
	const tbody = ctx.main.querySelector('#tracks-table tbody');
	const abody = ctx.main.querySelector('#alerts-table tbody');
	const draw = (tr, al) => {
		tbody.innerHTML = tr.tracks.length ? tr.tracks.map(trackRow).join('')
			: '<tr><td colspan="8" class="empty" id="tracks-none">No tracks: a <code>tracks:</code> section in the lab\'s configuration makes one.</td></tr>';
		abody.innerHTML = al.alerts.length ? al.alerts.map(alertRow).join('')
			: '<tr><td colspan="8" class="empty">No alerts.</td></tr>';
		ctx.main.querySelector('#t-count').textContent = `${tr.tracks.length} tracks, ${al.total} alerts \u00b7 refreshed every ${REFRESH_MS / 1000} s`;
	};
	const load = async () => draw(await api('/tracks', { signal: ctx.signal }), await api('/alerts?limit=100', { signal: ctx.signal }));
	await load();
	ctx.main.addEventListener('click', async (ev) => {
		const b = ev.target.closest('button[data-run], button[data-alert]');
		if (!b) return;
		if (!storedToken()) {
			ctx.error(new Error('this needs a token: set it on the Submit page'));
			return;
		}
		b.disabled = true;
		try {
			if (b.dataset.run)
				await api(`/tracks/${encodeURIComponent(b.dataset.run)}/run`, { method: 'POST', signal: ctx.signal });
			else
				await api(`/alerts/${encodeURIComponent(b.dataset.alert)}/state`, { method: 'POST', body: { state: b.dataset.state, by: 'dashboard' }, signal: ctx.signal });
			await load();
		} catch (e) {
			b.disabled = false;
			ctx.error(e, b.dataset.run ? 'track run' : 'alert triage');
		}
	});
	ctx.every(REFRESH_MS, load);
}

async function trackPage(ctx, name) {
	const d = await api(`/tracks/${encodeURIComponent(name)}/series`, { signal: ctx.signal });
	ctx.main.innerHTML = `<h1>Track ${esc(name)}</h1><p><a href="/tracks">All tracks</a></p>
<div class="table-wrap"><table class="data" id="series-table"><thead><tr><th scope="col">Series</th><th scope="col">Machine</th>
<th scope="col">Workload</th><th scope="col">Parameters</th><th scope="col">Metric</th><th scope="col">Points</th><th scope="col">Change points</th></tr></thead>
<tbody>${d.series.length ? d.series.map((s) => `<tr><td><a href="/series/${esc(s.id)}">#${esc(s.id)}</a></td><td>${esc(s.machine)}</td>` +
		`<td>${esc(s.workload)}</td><td class="wrap">${esc(Object.entries(s.params || {}).map(([k, v]) => `${k}=${v}`).join(' '))}</td>` +
		`<td>${esc(s.metric)}</td><td class="num">${esc(s.points)}</td><td class="num">${esc(s.change_points)}</td></tr>`).join('')
		: '<tr><td colspan="7" class="empty">No series yet: a point makes them when its job is done.</td></tr>'}</tbody></table></div>`;
}

async function seriesPage(ctx, id) {
	const s = await api(`/series/${encodeURIComponent(id)}`, { signal: ctx.signal });
	const params = Object.entries(s.params || {}).map(([k, v]) => `${k}=${v}`).join(' ');
	ctx.main.innerHTML = `<h1>${esc(s.metric)}</h1>
<p>${esc(s.workload)} ${esc(params)} on ${esc(s.machine)}, track <a href="/tracks/${encodeURIComponent(s.track)}">${esc(s.track)}</a>
\u00b7 ${esc(s.direction)} is better${s.unit ? ` \u00b7 ${esc(s.unit)}` : ''}</p>
<figure class="chart"><div id="series-chart" class="chart-box"></div><figcaption class="small muted" id="series-caption">
Each point is one commit: the median of its boots' medians, the band their range; change points are marked.
Drag to zoom, double-click to reset; hover for the commit.</figcaption></figure>
<h2>Change points</h2>
<div class="table-wrap"><table class="data" id="cp-table"><thead><tr><th scope="col">Commit</th><th scope="col">Before</th><th scope="col">After</th>
<th scope="col">Change</th><th scope="col">p</th><th scope="col">Direction</th><th scope="col">Status</th><th scope="col">A/B check</th><th scope="col">Alert</th><th scope="col">Bisection</th></tr></thead>
<tbody>${s.change_points.length ? s.change_points.map((c) => `<tr data-cp="${esc(c.id)}"><td>${short(c.commit)} ${jobLink(c.job)}</td><td class="num">${num(c.before)}</td>` +
		`<td class="num">${num(c.after)}</td><td class="num">${pct(100 * c.magnitude)}</td><td class="num">${pval(c.p)}</td>` +
		`<td>${esc(c.direction)}</td><td>${esc(c.status)}</td><td>${esc(c.ab_verdict || DASH)}${c.ab_p !== null && c.ab_p !== undefined ? ` (p ${pval(c.ab_p)})` : ''}</td>` +
		`<td class="num">${c.alert ? `<a href="/tracks#alert-${esc(c.alert)}">${esc(c.alert)}</a>` : DASH}</td>` +
		`<td>${c.bisection ? `<a href="/bisections/${esc(c.bisection)}">#${esc(c.bisection)}</a>` : DASH}</td></tr>`).join('') : '<tr><td colspan="10" class="empty">None found.</td></tr>'}</tbody></table></div>
<h2>Points</h2>
<div class="table-wrap"><table class="data" id="values-table"><thead><tr><th scope="col">Commit</th><th scope="col">Subject</th>
<th scope="col">Value</th><th scope="col">Range</th><th scope="col">Boots</th><th scope="col">Job</th></tr></thead>
<tbody>${s.values.map((v) => `<tr><td>${short(v.commit)}</td><td class="wrap">${esc(v.subject || '')}</td><td class="num">${num(v.value)}</td>` +
		`<td class="num">${num(v.lo)} \u2013 ${num(v.hi)}</td><td class="num">${esc(v.boots)}</td><td>${jobLink(v.job)}</td></tr>`).join('')}</tbody></table></div>`;
	if (s.values.length) {
		const u = await seriesChart(ctx.main.querySelector('#series-chart'), s);
		ctx.cleanup(() => u.destroy());
	}
}

export async function render(ctx) {
	const [name, id] = ctx.params;
	ctx.title(id ? `series ${id}` : name ? `track ${name}` : 'tracks');
	if (id) return seriesPage(ctx, id);
	if (name) return trackPage(ctx, name);
	return listPage(ctx);
}
