// Bisections: /bisections lists them (newest first: range, metric, state,
// steps measured and left, what each found or does now); /bisections/N is
// one, step by step: each commit measured, its outcome and its two
// verdicts (against the good and the bad end), the job that measured it,
// the estimate of what is left, and the plain-text report the webhook
// carries. A running one refreshes itself.
import { api, storedToken } from './api.js';
import { esc, DASH, num, pct, pval, timeHtml, jobLink } from './util.js';

const REFRESH_MS = 5000;

function short(c) {
	return c ? `<code title="${esc(c)}">${esc(c.slice(0, 12))}</code>` : DASH;
}

function minutes(s) {
	return s === null || s === undefined ? DASH : s < 90 ? `${Math.round(s)} s` : `${Math.round(s / 60)} min`;
}

function row(b) {
	return `<tr data-bisection="${esc(b.id)}"><td class="num"><a href="/bisections/${esc(b.id)}">${esc(b.id)}</a></td>` +
		`<td><span class="badge s-${esc(b.state)}">${esc(b.state)}</span></td><td>${esc(b.tree)}</td>` +
		`<td>${short(b.good)}..${short(b.bad)}</td><td class="wrap">${esc(b.metric)}${b.workload ? `<div class="small muted">${esc(b.workload)}</div>` : ''}</td>` +
		`<td class="num">${esc(b.steps_measured)}</td><td class="num">${esc(b.steps_left ?? DASH)}</td>` +
		`<td class="wrap">${b.first_bad ? `first bad ${short(b.first_bad)}` : esc(b.result || b.status || DASH)}` +
		`${b.track ? `<div class="small muted">track ${esc(b.track)}, alert ${esc(b.alert)}</div>` : ''}</td></tr>`;
}

async function listPage(ctx) {
	ctx.main.innerHTML = `<h1>Bisections</h1>
<p class="status-line muted" id="b-count">Loading\u2026</p>
<div class="table-wrap"><table class="data" id="bisections-table">
<thead><tr><th scope="col">Id</th><th scope="col">State</th><th scope="col">Tree</th><th scope="col">Range</th>
<th scope="col">Metric</th><th scope="col">Steps</th><th scope="col">Left</th><th scope="col">Result</th></tr></thead>
<tbody></tbody></table></div>
<p class="small muted">A bisection measures both ends, then the commit in the middle of what is left, each compared with
both ends by the A/B rule; commits that do not build or boot are skipped. <code>tlblab bisect TREE GOOD BAD --suite S
--metric M</code> starts one; a track's confirmed regression starts one by itself.</p>`;
	const tbody = ctx.main.querySelector('#bisections-table tbody');
	const load = async () => {
		const d = await api('/bisections?limit=100', { signal: ctx.signal });
		tbody.innerHTML = d.bisections.length ? d.bisections.map(row).join('')
			: '<tr><td colspan="8" class="empty" id="bisections-none">No bisections yet.</td></tr>';
		ctx.main.querySelector('#b-count').textContent = `${d.total} bisections \u00b7 refreshed every ${REFRESH_MS / 1000} s`;
	};
	await load();
	ctx.every(REFRESH_MS, load);
}

function verdictCell(v) {
	if (!v) return DASH;
	return `${esc(v.verdict)} ${pct(v.change_pct)}<div class="small muted">p ${pval(v.p)}</div>`;
}

function stepRow(s, subjects) {
	const ev = s.evidence || {};
	const level = ev.vs_good ? ev.vs_good.patched : null;
	return `<tr data-step="${esc(s.id)}" class="role-${esc(s.role)}"><td>${esc(s.role === 'step' ? 'step' : `${s.role} end`)}</td>` +
		`<td class="wrap">${short(s.commit)}<div class="small muted">${esc(subjects[s.commit] || '')}</div></td>` +
		`<td>${s.outcome ? `<span class="badge o-${esc(s.outcome)}">${esc(s.outcome)}</span>` : esc(s.job_state || DASH)}</td>` +
		`<td class="num">${level ? `${num(level.center)}<div class="small muted">${esc(level.n)} boots</div>` : DASH}</td>` +
		`<td>${verdictCell(ev.vs_good)}</td><td>${verdictCell(ev.vs_bad)}</td>` +
		`<td class="wrap">${esc(ev.failed || (ev.good_to_bad ? `the ends: ${ev.good_to_bad.verdict} ${pct(ev.good_to_bad.change_pct)}` : ''))}</td>` +
		`<td>${jobLink(s.job)}</td></tr>`;
}

async function onePage(ctx, id) {
	ctx.main.innerHTML = `<h1>Bisection ${esc(id)}</h1><p><a href="/bisections">All bisections</a></p>
<dl class="facts" id="b-facts"></dl>
<h2>Steps</h2>
<div class="table-wrap"><table class="data" id="steps-table"><thead><tr><th scope="col">Role</th><th scope="col">Commit</th>
<th scope="col">Outcome</th><th scope="col">Median</th><th scope="col">Against good</th><th scope="col">Against bad</th>
<th scope="col">Evidence</th><th scope="col">Job</th></tr></thead><tbody></tbody></table></div>
<p id="b-actions"></p>
<h2>Report</h2><pre class="report" id="b-report"></pre>`;
	const load = async () => {
		const b = await api(`/bisections/${encodeURIComponent(id)}`, { signal: ctx.signal });
		const text = await api(`/bisections/${encodeURIComponent(id)}/report.txt`, { signal: ctx.signal, text: true });
		const subjects = Object.fromEntries((b.commits || []).map((c) => [c.commit, c.subject]));
		const params = Object.entries(b.params || {}).map(([k, v]) => `${k}=${v}`).join(' ');
		ctx.main.querySelector('#b-facts').innerHTML =
			`<dt>State</dt><dd id="b-state">${esc(b.state)}${b.state === 'running' ? ` \u00b7 ${esc(b.status || '')}` : ''}</dd>` +
			`<dt>Range</dt><dd>${short(b.good)}..${short(b.bad)} in ${esc(b.tree)} (${esc((b.commits || []).length)} commits)</dd>` +
			`<dt>Metric</dt><dd>${esc(b.metric)} of ${esc(b.workload || DASH)} ${esc(params)} on ${esc(b.machine)}, suite ${esc(b.suite)}, ${esc(b.boots)} boots a step</dd>` +
			(b.track ? `<dt>From</dt><dd>track <a href="/tracks/${encodeURIComponent(b.track)}">${esc(b.track)}</a>, alert ${esc(b.alert)}</dd>` : '') +
			`<dt>Change</dt><dd>${esc(b.change || DASH)}</dd>` +
			(b.state === 'running' ? `<dt>Left</dt><dd id="b-left">at most ${esc(b.steps_left ?? '?')} steps, about ${minutes(b.eta_s)}</dd>` : '') +
			`<dt>Result</dt><dd id="b-result">${b.first_bad ? `first bad commit ${short(b.first_bad)} ${esc(subjects[b.first_bad] || '')}<br>` : ''}${esc(b.result || DASH)}</dd>` +
			`<dt>Started</dt><dd>${timeHtml(b.created)}${b.finished ? `, ended ${timeHtml(b.finished)}` : ''}</dd>`;
		ctx.main.querySelector('#steps-table tbody').innerHTML = b.steps.length ? b.steps.map((s) => stepRow(s, subjects)).join('')
			: '<tr><td colspan="8" class="empty">No steps yet: the builder is asked for the commits between.</td></tr>';
		ctx.main.querySelector('#b-actions').innerHTML = b.state === 'running' ? '<button type="button" id="b-cancel">Cancel</button>' : '';
		ctx.main.querySelector('#b-report').textContent = text;
		return b.state === 'running';
	};
	ctx.main.addEventListener('click', async (ev) => {
		const btn = ev.target.closest('#b-cancel');
		if (!btn) return;
		if (!storedToken()) {
			ctx.error(new Error('this needs a token: set it on the Submit page'));
			return;
		}
		btn.disabled = true;
		try {
			await api(`/bisections/${encodeURIComponent(id)}/cancel`, { method: 'POST', signal: ctx.signal });
			await load();
		} catch (e) {
			btn.disabled = false;
			ctx.error(e, 'cancel');
		}
	});
	if (await load()) ctx.every(REFRESH_MS, load);
}

export async function render(ctx) {
	const [id] = ctx.params;
	ctx.title(id ? `bisection ${id}` : 'bisections');
	return id ? onePage(ctx, id) : listPage(ctx);
}
